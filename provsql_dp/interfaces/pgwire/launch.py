"""``provsql-dp serve``'s options for the wire server, and starting it beside the explorer.

>>> import argparse
>>> p = argparse.ArgumentParser(); add_arguments(p)
>>> a = p.parse_args(["--pg-port", "0", "--max-concurrent", "2"])
>>> a.pg_port, a.max_concurrent, a.statement_timeout, a.tls_cert
(0, 2, None, None)
"""

from __future__ import annotations

import argparse
import sys

from ..web import accounts
from ..web.engine import MAX_CONCURRENT, Engine
from . import spark_engine
from .server import WireServer, tls_context

__all__ = ["add_arguments", "engine_for", "check_spark", "spark_for", "start", "no_accounts_hint"]


def _positive(kind):
    def parse(text: str):
        try:
            v = kind(text)
        except ValueError:
            v = 0
        if not v > 0:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
        return v
    return parse


def add_arguments(serve) -> None:
    """The wire server's options on the ``serve`` sub-command."""
    serve.add_argument("--pg-port", type=int, default=5433, metavar="PORT",
                       help="port of the PostgreSQL wire protocol (psql, psycopg, JDBC…; default 5433; "
                            "-1: none), on --host")
    serve.add_argument("--tls-cert", metavar="PEM", help="certificate chain for TLS on the wire port")
    serve.add_argument("--tls-key", metavar="PEM", help="private key of --tls-cert")
    serve.add_argument("--require-tls", action="store_true", help="refuse wire clients without TLS")
    serve.add_argument("--max-concurrent", type=_positive(int), default=MAX_CONCURRENT, metavar="N",
                       help=f"statements one analyst may run at once (default {MAX_CONCURRENT})")
    serve.add_argument("--statement-timeout", type=_positive(float), default=None, metavar="S",
                       help="seconds any statement may run (default: none beyond --release-time-limit); "
                            "private releases stop their work by then and release their fallback")
    spark_engine.add_arguments(serve)


def engine_for(args, spark=None, **options) -> Engine:
    """The one engine of ``serve`` (``options``: the guard rails' limits, every connection's;
    ``spark``: the server's SparkSession on ``--engine spark``, see :func:`spark_for`)."""
    engine = Engine(args.database, args.max_capture_rows, args.release_seconds, args.lp_gap,
                    args.release_time_limit, max_concurrent=args.max_concurrent,
                    statement_timeout=args.statement_timeout, spark=spark, **options)
    if spark is not None:
        spark_engine.report(engine, spark.sparkContext.master)
    return engine


def check_spark(parser, args) -> dict | None:
    """Before anything is opened or written: on ``--engine spark``, a clear error when Spark
    cannot start here (naming what to install) or the options do not fit; the session's
    properties (None on DuckDB)."""
    if getattr(args, "engine", "duckdb") != "spark":
        return None
    why = spark_engine.missing()
    if why:
        parser.error(why)
    if args.example:
        parser.error("--example fills the database file with DuckDB tables; on --engine spark "
                     "attach Spark tables as the curator instead (ATTACH SPARK TABLE name FROM "
                     "'source')")
    try:
        return spark_engine.spark_conf(args)
    except ValueError as e:
        parser.error(str(e))


def spark_for(parser, args):
    """The server's SparkSession on ``--engine spark`` (None on DuckDB)."""
    conf = check_spark(parser, args)
    return None if conf is None else spark_engine.start_session(args.spark_master, conf)


def no_accounts_hint(database: str) -> str:
    return (f"warning: {database} has no accounts yet, so nobody can sign in (explorer or wire). "
            f"Create one with: provsql-dp serve {database} --add-account NAME --role curator "
            "(it asks for the password), or start on an empty file with --example")


def _tls_words(tls) -> str:
    if tls is None:
        return "no TLS: give --tls-cert/--tls-key to encrypt"
    if getattr(tls, "channel_binding", None) is None:
        return "TLS offered; no channel binding: the certificate's signature hash is not one RFC 5929 names"
    return "TLS offered, with channel binding (SCRAM-SHA-256-PLUS)"


def start(parser, args, engine: Engine) -> WireServer | None:
    """Check the accounts, then start the wire server on a background thread (None: --pg-port -1)."""
    duck = engine.duck
    try:
        if not accounts.has_accounts(duck):
            print(no_accounts_hint(args.database), file=sys.stderr)
    finally:
        duck.close()
    if args.pg_port < 0:
        return None
    if bool(args.tls_cert) != bool(args.tls_key):
        parser.error("TLS needs both --tls-cert and --tls-key")
    try:
        tls = tls_context(args.tls_cert, args.tls_key) if args.tls_cert else None
    except (OSError, ValueError) as e:
        parser.error(f"cannot load the TLS certificate and key: {e}")
    if args.require_tls and tls is None:
        parser.error("--require-tls needs --tls-cert and --tls-key")
    try:
        server = WireServer(engine, args.host, args.pg_port, tls=tls, require_tls=args.require_tls)
    except OSError as e:
        parser.error(f"cannot listen on {args.host}:{args.pg_port} for the wire protocol: {e}")
    print(f"provsql_dp wire server on postgresql://{args.host}:{server.port}/ "
          f"({_tls_words(tls)}; e.g. "
          f"psql -h {args.host} -p {server.port} -U NAME)", flush=True)
    return server.start()
