"""The ``provsql-dp`` command: ``demo`` (the main job), ``shell`` (an SQL shell), ``serve`` (the explorer),
``build-native`` (the native bucket pass, :mod:`provsql_dp.privacy.native`).

``demo`` runs the main job on the embedded example database; ``shell`` opens an SQL shell on a
database (see :mod:`provsql_dp.interfaces.shell`); ``serve`` starts the explorer in the browser
(:mod:`provsql_dp.interfaces.web`, needs the ``web`` extra) and, beside it, the PostgreSQL wire
protocol (:mod:`provsql_dp.interfaces.pgwire`).

>>> main(["--version"])
provsql_dp 0.1.0
0
"""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from .._deadline import RELEASE_TIME_LIMIT
from ..privacy.limits import DEFAULT_MAX_EXPRESSION_DEPTH, DEFAULT_MAX_STATEMENT_BYTES
from ..provenance.capture import DEFAULT_MAX_ROWS
from .shell.formatting import MODES

__all__ = ["main"]


def _capture_rows(text: str) -> int | None:
    """``--max-capture-rows``: a positive whole number, or ``none`` for no limit."""
    if text.strip().lower() == "none":
        return None
    try:
        n = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number or 'none', got {text!r}")
    return n


def _seconds(text: str) -> float:
    """``--release-seconds``: a positive number of seconds."""
    try:
        s = float(text)
    except ValueError:
        s = 0.0
    if not (0 < s < float("inf")):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return s


def _time_limit(text: str) -> float | None:
    """``--release-time-limit``: a positive number of seconds, or ``none`` for no limit."""
    if text.strip().lower() == "none":
        return None
    return _seconds(text)


def _limit(text: str) -> int | None:
    """``--max-statement-bytes`` / ``--max-expression-depth``: a positive whole number (``64KiB``
    style suffixes for bytes), or ``none`` for no limit."""
    t = text.strip().lower().replace("_", "").replace(",", "")
    if t == "none":
        return None
    scale = 1
    for suffix, factor in (("kib", 1024), ("mib", 1024 ** 2), ("kb", 1000), ("mb", 1000 ** 2)):
        if t.endswith(suffix):
            t, scale = t[:-len(suffix)], factor
            break
    try:
        n = int(t) * scale
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number or 'none', got {text!r}")
    return n


def _size(text: str) -> str | None:
    """``--memory-limit`` / ``--temp-directory-limit``: a DuckDB size (``4GB``, ``50%``), or
    ``none`` for DuckDB's default (still locked)."""
    t = text.strip()
    if t.lower() == "none":
        return None
    if not t or not (t[0].isdigit() or t[0] == "."):
        raise argparse.ArgumentTypeError(f"expected a size such as 4GB or 50%, got {text!r}")
    return t


def _add_guard_rails(sub) -> None:
    from .dbapi.connection import DEFAULT_MEMORY_LIMIT, DEFAULT_TEMP_DIRECTORY_LIMIT

    sub.add_argument("--memory-limit", type=_size, default=DEFAULT_MEMORY_LIMIT, metavar="SIZE",
                     help="DuckDB's memory limit on a connection with guard rails (analysts; "
                          "every connection of serve): e.g. 4GB or 50%% (default %(default)s; "
                          "locked, no statement can change it)")
    sub.add_argument("--temp-directory-limit", type=_size, default=DEFAULT_TEMP_DIRECTORY_LIMIT,
                     metavar="SIZE", help="how much such a connection's queries may spill to "
                     f"disk (default {DEFAULT_TEMP_DIRECTORY_LIMIT})")
    sub.add_argument("--max-statement-bytes", type=_limit, default=DEFAULT_MAX_STATEMENT_BYTES,
                     metavar="N", help="the largest analyst statement, in bytes (default "
                     f"{DEFAULT_MAX_STATEMENT_BYTES // 1024}KiB; 'none': no limit); refused "
                     "before it is parsed, nothing charged")
    sub.add_argument("--max-expression-depth", type=_limit, default=DEFAULT_MAX_EXPRESSION_DEPTH,
                     metavar="N", help="the deepest nesting of parentheses in an analyst "
                     f"statement (default {DEFAULT_MAX_EXPRESSION_DEPTH}; 'none': no limit)")


def _guard_options(args) -> dict:
    return {"memory_limit": args.memory_limit, "temp_directory_limit": args.temp_directory_limit,
            "max_statement_bytes": args.max_statement_bytes,
            "max_expression_depth": args.max_expression_depth}


def _gap(text: str) -> float:
    """``--lp-gap``: a nonnegative finite number."""
    try:
        g = float(text)
    except ValueError:
        g = -1.0
    if not (0 <= g < float("inf")):
        raise argparse.ArgumentTypeError(f"expected a nonnegative number, got {text!r}")
    return g


def _add_capture_rows(sub) -> None:
    sub.add_argument("--max-capture-rows", type=_capture_rows, default=DEFAULT_MAX_ROWS, metavar="N",
                     help="derivation rows one provenance capture may bring into memory (default "
                          f"{DEFAULT_MAX_ROWS:,}; 'none': no limit). A private release past it reads "
                          "no data and returns the data-independent fallback")
    sub.add_argument("--release-seconds", type=_seconds, default=None, metavar="S",
                     help="pad every accepted private release to S seconds of wall-clock time, so "
                          "that its running time does not reveal how much protected data it read "
                          "(default: no padding; the releases' work also stops by S, past it "
                          "the data-independent fallback)")
    sub.add_argument("--release-time-limit", type=_time_limit, default=RELEASE_TIME_LIMIT,
                     metavar="S", help="seconds one private release may take as a whole: rows "
                     f"read, LPs and their preparation (default {RELEASE_TIME_LIMIT:g}; 'none': no "
                     "limit); past it the data-independent fallback is released, its ε charged")
    sub.add_argument("--lp-gap", type=_gap, default=None, metavar="G",
                     help="R2T's lp_gap γ for statements that give no OPTIONS (lp_gap = …): each "
                          "truncation LP within γ·τ of its optimum, the noise calibrated to "
                          "(1 + γ)·τ (default: R2T's own, 1/16; 0: every LP exact)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="provsql-dp", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command")
    demo = sub.add_parser("demo", help="private answers next to true answers on the bundled example database")
    demo.add_argument("--epsilon", type=float, default=1.0, help="ε per query (default 1.0)")
    shell = sub.add_parser(
        "shell", help="an SQL shell on a database (interactive, a script file, -c SQL, or stdin)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="An SQL shell with privacy statements and private queries, in the manner of "
                    "the duckdb and sqlite3 shells.\nStatements end with ';'; a line starting "
                    "with '.' is a dot-command (.help lists them and every privacy statement).\n"
                    "It runs SCRIPT or -f FILE, then -c SQL, and exits; without them it reads "
                    "stdin, interactively\n(prompts, history, tab completion) on a terminal.",
        epilog="Exit status: 0 when every statement succeeded, 1 otherwise (the shell continues "
               "after an error\nunless --bail). Ctrl-C interrupts the running statement; ε "
               "already charged for a release stays spent.\n\nexamples:\n"
               "  provsql-dp shell db.duckdb                          interactive, as the curator\n"
               "  provsql-dp shell db.duckdb --role analyst --user ann\n"
               "  provsql-dp shell db.duckdb setup.sql                run a script and exit\n"
               "  provsql-dp shell db.duckdb -c \"SELECT COUNT(*) FROM t WITH EPSILON 0.1; .budget\"\n"
               "  provsql-dp shell db.duckdb -c \".import people.csv people\"   (curator)\n"
               "  provsql-dp shell --server 127.0.0.1:5433 --user ann   a running serve, as account ann")
    shell.add_argument("database", nargs="?", default=":memory:",
                       help="a DuckDB database file (default: an in-memory database)")
    shell.add_argument("script", nargs="?", default=None,
                       help="a file of statements and dot-commands to run (same as -f SCRIPT)")
    shell.add_argument("--role", choices=("curator", "analyst"), default=None,
                       help="curator (default): everything; analyst: private answers and public tables only")
    shell.add_argument("--user", help="whose privacy budget private queries spend (required for an analyst); "
                                      "with --server, the account to sign in as")
    shell.add_argument("--server", metavar="HOST:PORT",
                       help="sign in to a running 'provsql-dp serve' (its wire port, e.g. 127.0.0.1:5433) "
                            "instead of opening a database: the role is the account's; the password comes "
                            "from $PROVSQL_DP_PASSWORD or $PGPASSWORD, else it is asked (needs the client "
                            "extra: pip install 'provsql_dp[client]')")
    shell.add_argument("--read-only", action="store_true", help="open the database read-only")
    shell.add_argument("-c", "--command", dest="sql", metavar="SQL",
                       help="run SQL and exit; statements and dot-commands may share a line, "
                            "separated by ';' (\".mode csv; SELECT 1; .tables\")")
    shell.add_argument("-f", "--file", dest="file", metavar="FILE",
                       help="run the statements and dot-commands of FILE and exit")
    shell.add_argument("--bail", action="store_true", help="stop at the first error")
    shell.add_argument("--mode", choices=MODES, default="table", help="output mode (default table)")
    shell.add_argument("--no-headers", dest="headers", action="store_false",
                       help="leave out column names (as .headers off)")
    _add_capture_rows(shell)
    _add_guard_rails(shell)
    serve = sub.add_parser(
        "serve", help="the explorer in the browser: curator and analyst tabs (needs the web extra)",
        description="Start the explorer on a database file. Accounts are stored in the database: "
                    "--add-account NAME --role ROLE asks for a password (or reads PROVSQL_DP_PASSWORD) "
                    "and exits; --example fills an empty file with the demo data and two accounts.")
    serve.add_argument("database", help="a DuckDB database file")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    serve.add_argument("--add-account", metavar="NAME", help="create or replace an account, then exit")
    serve.add_argument("--role", choices=("curator", "analyst"), default="analyst", help="role of --add-account")
    serve.add_argument("--example", action="store_true",
                       help="fill an empty database with the example data, declarations and accounts first")
    _add_capture_rows(serve)
    _add_guard_rails(serve)
    native = sub.add_parser(
        "build-native", help="build the native bucket pass of unbounded SUMs (a DuckDB extension; "
                             "needs a C compiler) and, with pyspark, its Spark twin (needs a JDK)",
        description="Compile provsql_dp's pdp_buckets aggregate against the headers of PyPI's "
                    "sdist of the installed duckdb (its sha256 checked against PyPI's index) and "
                    "cache it ($PROVSQL_DP_NATIVE_DIR or ~/.cache/provsql_dp/native); every "
                    "connection opened afterwards loads it. With pyspark installed, also compiles the "
                    "Spark pass (a jar, javac against pyspark's jars) into the same directory. "
                    "Prints the files' paths; PROVSQL_DP_NATIVE=0 turns both off at run time.")
    native.add_argument("--sdist", help="a downloaded duckdb sdist to use (still checked)")
    native.add_argument("--force", action="store_true", help="rebuild even if cached")
    from .pgwire.launch import add_arguments as add_wire_arguments

    add_wire_arguments(serve)
    args = parser.parse_args(argv)
    if args.version:
        print(f"provsql_dp {__version__}")
        return 0
    if args.command == "build-native":
        from ..privacy.native import build

        try:
            print(build(args.sdist, force=args.force))
        except (OSError, RuntimeError) as e:
            print(f"provsql-dp build-native: {e}", file=sys.stderr)
            return 1
        try:  # the same pass for Spark, where pyspark is installed (a JDK's javac)
            from ..privacy import _spark_native

            print(_spark_native.build())
        except ImportError:
            pass
        except (OSError, RuntimeError) as e:
            print(f"provsql-dp build-native: the Spark pass was not built ({e}); Spark runs the "
                  "SQL pass", file=sys.stderr)
        return 0
    if args.command == "demo":
        from .demo import run

        if not args.epsilon > 0:
            parser.error("--epsilon must be positive")
        run(epsilon=args.epsilon)
        return 0
    if args.command == "shell":
        from .shell import main as shell_main

        if args.server is not None:
            if args.database != ":memory:" and args.script is None:  # shell --server H:P script.sql
                args.database, args.script = ":memory:", args.database
            if args.role is not None or args.read_only or args.database != ":memory:":
                parser.error("--server signs in to a running server: the role is the account's and the "
                             "server holds the database, so give no --role, --read-only or DATABASE")
            if not args.user:
                parser.error("--server needs --user NAME (the account to sign in as)")
        args.role = args.role or "curator"
        if args.role == "analyst" and not args.user:
            parser.error("an analyst needs --user NAME (budgets are per user)")
        if args.script and args.file:
            parser.error("give the script either as SCRIPT or as -f FILE, not both")
        if args.database.lower().endswith(".sql") and args.script is None:
            parser.error(f"{args.database} looks like a SQL script, not a database: run it with "
                         f"'provsql-dp shell -f {args.database}' (on an in-memory database) or "
                         f"'provsql-dp shell DATABASE {args.database}'")
        return shell_main(args.database, role=args.role, user=args.user, read_only=args.read_only,
                          command=args.sql, bail=args.bail, mode=args.mode,
                          script=args.script or args.file, headers=args.headers,
                          max_capture_rows=args.max_capture_rows,
                          release_seconds=args.release_seconds, lp_gap=args.lp_gap,
                          release_time_limit=args.release_time_limit, server=args.server,
                          **_guard_options(args))
    if args.command == "serve":
        return _serve(parser, args)
    parser.print_help()
    return 2


def _serve(parser, args) -> int:
    try:
        from .web import accounts, app, charting, example
        charting.require()
    except ImportError as e:
        parser.error(f"the explorer needs the web extra: pip install 'provsql_dp[web]' ({e})")
    from .pgwire import launch

    if not args.add_account:
        launch.check_spark(parser, args)  # --engine spark: refused before the file is touched
    if args.add_account:
        import getpass
        import os

        from .. import connect

        password = os.environ.get("PROVSQL_DP_PASSWORD") or getpass.getpass(f"password for {args.add_account}: ")
        con = connect(args.database)
        try:
            accounts.add_account(con._duck, args.add_account, args.role, password)
        except ValueError as e:
            parser.error(str(e))
        finally:
            con.close()
        print(f"account {args.add_account!r} ({args.role}) saved in {args.database}")
        return 0
    if args.example:
        try:
            made = example.prepare(args.database)
        except ValueError as e:
            parser.error(str(e))
        for name, password in made.items():
            print(f"account {name!r}: password {password}")
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"warning: serving on {args.host} over plain HTTP: passwords and session cookies cross the "
              "network unencrypted; put a TLS reverse proxy in front", file=sys.stderr)
    spark = launch.spark_for(parser, args)  # --engine spark: the server's one SparkSession
    try:
        # one engine, one ledger: the explorer and the wire server
        engine = launch.engine_for(args, spark=spark, **_guard_options(args))
        wire = launch.start(parser, args, engine)
        print(f"provsql_dp explorer on http://{args.host}:{args.port}/ (Ctrl-C stops it)", flush=True)
        try:
            app.serve(args.database, host=args.host, port=args.port, engine=engine)
        finally:
            if wire is not None:
                wire.close()
    finally:
        if spark is not None:
            spark.stop()
    return 0


def entry() -> None:
    """Console-script entry point: a closed pipe (``provsql-dp demo | head``) ends quietly."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    sys.exit(code)


if __name__ == "__main__":
    entry()
