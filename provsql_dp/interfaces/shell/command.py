"""The ``provsql-dp shell`` command: open a connection, then run a script file (``-f FILE`` or
the positional SCRIPT), ``-c SQL``, a script on stdin, or the interactive loop (prompts, readline editing and history) when stdin and stdout are
terminals; the exit status says whether every statement succeeded.

>>> import io
>>> main(command="SELECT 42 AS answer;", mode="csv", stdout=io.StringIO(), stderr=io.StringIO())
0
>>> main(command="SELEC 1;", stdout=io.StringIO(), stderr=io.StringIO())
1
"""

from __future__ import annotations

import os
import sys

from ...errors import Error
from ..._deadline import RELEASE_TIME_LIMIT
from ...provenance.capture import DEFAULT_MAX_ROWS
from .dot_commands import ShellError
from .formatting import first_line
from .session import Shell

__all__ = ["main", "HISTORY_ENV", "PROMPT", "CONTINUE"]

HISTORY_ENV = "PROVSQL_DP_HISTORY"
PROMPT = "provsql_dp> "
CONTINUE = "      ...> "


def _history_path() -> str | None:
    env = os.environ.get(HISTORY_ENV)
    if env is not None:
        return env or None
    return os.path.join(os.path.expanduser("~"), ".provsql_dp_history")


def _interactive(shell: Shell, stdin, banner: str) -> None:
    """The read-eval-print loop on a terminal, with readline when available."""
    history = _history_path()
    try:
        import readline
    except ImportError:  # pragma: no cover - e.g. Windows without pyreadline
        readline = None
    if readline is not None:
        from .completion import install

        install(shell, readline)
    if readline is not None and history:
        try:
            readline.read_history_file(history)
        except OSError:
            pass
        readline.set_history_length(2000)
    print(banner, file=shell.out, flush=True)
    buf: list[str] = []
    try:
        while not shell.stopped:
            try:
                line = input(CONTINUE if buf else PROMPT)
            except EOFError:
                print(file=shell.out, flush=True)
                break
            except KeyboardInterrupt:
                print("^C", file=shell.out, flush=True)
                buf = []
                continue
            shell.bail = False  # never leave an interactive session on an error
            buf = shell.feed(buf, line)
    finally:
        if readline is not None and history:
            try:
                readline.write_history_file(history)
            except OSError:
                pass


def _open(database: str, role: str, user: str | None, read_only: bool,
          max_capture_rows: int | None = DEFAULT_MAX_ROWS, release_seconds: float | None = None,
          lp_gap: float | None = None, release_time_limit: float | None = RELEASE_TIME_LIMIT,
          **options):
    """A connection for the shell: every statement commits at once, as in the duckdb and
    sqlite3 shells (explicit BEGIN … COMMIT still groups statements)."""
    from ... import connect

    con = connect(database, role=role, user=user, read_only=read_only,
                  max_capture_rows=max_capture_rows, release_seconds=release_seconds,
                  lp_gap=lp_gap, release_time_limit=release_time_limit, **options)
    con.autocommit = True
    con.client = "shell"  # as the audit log records it
    return con


def main(database: str = ":memory:", *, role: str = "curator", user: str | None = None,
         read_only: bool = False, command: str | None = None, bail: bool = False,
         mode: str = "table", script: str | None = None, headers: bool = True,
         stdin=None, stdout=None, stderr=None,
         max_capture_rows: int | None = DEFAULT_MAX_ROWS,
         release_seconds: float | None = None, lp_gap: float | None = None,
         release_time_limit: float | None = RELEASE_TIME_LIMIT, server: str | None = None,
         password: str | None = None, **options) -> int:
    """Run the shell; returns the exit status (see the module docstring). ``script`` (a file)
    runs before ``command``; with either, the shell exits after them. ``max_capture_rows``,
    ``release_seconds``, ``lp_gap``, ``release_time_limit`` and ``options`` (the guard rails'
    and the statement limits, such as ``memory_limit``) are the connection's
    (:func:`provsql_dp.connect`). ``server`` (``HOST:PORT``): sign in to a running ``provsql-dp
    serve`` as ``user`` instead of opening ``database`` (:mod:`.remote`; the role is the
    account's; ``password`` else ``$PROVSQL_DP_PASSWORD``/``$PGPASSWORD`` else a prompt)."""
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr

    def opener(path: str):  # the shell's .open: a local database with the command's options
        return _open(path, role, user, read_only, max_capture_rows, release_seconds, lp_gap,
                     release_time_limit, **options)

    try:
        if server is not None:
            from .remote import connect_remote

            con = connect_remote(server, user, password, stdin=stdin)
            database = con.database
        else:
            con = opener(database)
    except (Error, ShellError) as e:
        print(f"Error: {first_line(e)}", file=stderr, flush=True)
        return 1
    shell = None
    try:
        shell = Shell(con, stdout, stderr, mode=mode, bail=bail)
        shell.opener = opener
        shell.headers = headers
        if script is not None or command is not None:
            if script is not None:
                shell.dot(f".read {script}")
            if command is not None and not shell.stopped:
                shell.run_lines(command.split("\n"))
            shell.redirect(None)  # close an .output file
            return 1 if shell.failed else 0
        if stdin.isatty() and stdout.isatty():
            from ... import __version__

            who = f"{shell.role}" + (f" {getattr(con, 'user', user)!r}" if user else "")
            where = "an in-memory database" if database == ":memory:" else database
            banner = (f"provsql_dp {__version__} shell on {where} as {who}\n"
                      "Enter \".help\" for usage hints; statements end with ';'.")
            _interactive(shell, stdin, banner)
            shell.redirect(None)
            return 0
        shell.run_lines(stdin)
        shell.redirect(None)
        return 1 if shell.failed else 0
    finally:
        (shell.con if shell is not None else con).close()  # .open may have replaced it
