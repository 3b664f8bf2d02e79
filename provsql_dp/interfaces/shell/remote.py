"""``provsql-dp shell --server HOST:PORT``: the shell as a client of a running ``serve``.

A database that ``provsql-dp serve`` holds cannot be opened by another process (DuckDB's file
lock), and an analyst should not hold the file anyway (the trust boundary is a process
boundary). With ``--server`` the shell signs in to the server's PostgreSQL wire port instead
(SCRAM-SHA-256, TLS when the server offers it: libpq's ``sslmode=prefer``), as the account's
role, and every statement passes through to the server's session — ``WITH EPSILON``, ``EXPLAIN
PRIVACY``, ``SHOW PRIVACY BUDGET`` and the rest run there, on the server's ledger. Private answers
come back with the wire's interval columns (``<col>_low``, ``<col>_high``) and the server's
notice of the release (mechanism, ε charged, budget left), which the shell prints after the rows.

:class:`RemoteConnection` gives the shell what it uses of a provsql_dp connection (``cursor()``,
``role``, ``user``, ``protected()``, ``cancel()``, ``close()``); errors come back as provsql_dp's
PEP 249 classes, chosen by the SQLSTATE the server sent (:func:`error_for`).

It needs psycopg (libpq's client): ``pip install 'provsql_dp[client]'``; without it
:func:`connect_remote` says so.

>>> parse_address("db.example.org:5433"), parse_address("[::1]:6000"), parse_address("localhost")
(('db.example.org', 5433), ('::1', 6000), ('localhost', 5433))
>>> type(error_for("53400", "budget")).__name__, type(error_for("42501", "no")).__name__
('BudgetExceededError', 'PrivacyError')
"""

from __future__ import annotations

import getpass
import os

from ... import errors as e
from ..pgwire._sqlstate import _BY_CLASS, INTERNAL, PROTOCOL, QUERY_CANCELED

__all__ = ["RemoteConnection", "connect_remote", "parse_address", "error_for", "PASSWORD_ENVS"]

#: where the password is read from, in this order, before asking on the terminal
PASSWORD_ENVS = ("PROVSQL_DP_PASSWORD", "PGPASSWORD")
DEFAULT_PORT = 5433


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` for an IPv6 address; the port defaults to 5433)."""
    text = text.strip()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest.lstrip(":")
    elif text.count(":") == 1:
        host, port = text.split(":")
    else:
        host, port = text, ""
    if not host:
        raise ValueError(f"--server takes HOST:PORT, got {text!r}")
    try:
        number = int(port) if port else DEFAULT_PORT
    except ValueError:
        raise ValueError(f"--server takes HOST:PORT with a numeric port, got {text!r}") from None
    if not 0 < number < 65536:
        raise ValueError(f"--server: port {number} is out of range (1-65535)")
    return host, number


_CLASS_OF = {}
for _cls, _code in reversed(_BY_CLASS):  # the most specific class of each code wins
    _CLASS_OF[_code] = _cls
_CLASS_OF.update({"0A000": e.NotSupportedError, INTERNAL: e.InternalError, PROTOCOL: e.InterfaceError})


def error_for(code: str | None, message: str) -> e.Error:
    """The provsql_dp error for a server error with SQLSTATE ``code`` (see
    :mod:`provsql_dp.interfaces.pgwire._sqlstate`, the server's side of the mapping)."""
    code = code or ""
    if code in _CLASS_OF:
        return _CLASS_OF[code](message)
    if code == QUERY_CANCELED:
        return e.OperationalError(message)
    if code.startswith("42"):
        return e.ProgrammingError(message)
    if code.startswith("22"):
        return e.DataError(message)
    if code.startswith(("08", "28")):
        return e.InterfaceError(message)
    return e.OperationalError(message)


def _psycopg():
    try:
        import psycopg
    except ImportError:
        raise e.InterfaceError(
            "provsql-dp shell --server needs psycopg (the PostgreSQL client library): "
            "pip install 'provsql_dp[client]'") from None
    return psycopg


class _Protection:
    """A ``SHOW PROTECTED`` row, as the shell's ``.tables`` and ``.schema`` read it."""

    def __init__(self, schema: str, table: str, text: str):
        self.schema, self.table, self._text = schema, table, text

    def describe(self) -> str:
        return self._text


class RemoteCursor:
    """A statement run on the server: ``description`` (name first), ``fetchall()``, and the
    server's ``notices`` during it; ``privacy`` is None (the rows carry the intervals)."""

    privacy = None

    def __init__(self, con: "RemoteConnection"):
        self.connection = con
        self.description = None
        self.rowcount = -1
        self.notices: list[str] = []
        self._rows: list[tuple] = []

    def execute(self, sql: str, parameters=None) -> "RemoteCursor":
        psycopg = _psycopg()
        pg = self.connection._pg
        notes = self.notices = []
        pg.add_notice_handler(handler := (lambda d: notes.append(d.message_primary or "")))
        try:
            # the simple query protocol (as psql): the text as typed; the dot-commands' "?"
            # parameters (never inside a literal there) are bound by psycopg as "%s"
            with psycopg.ClientCursor(pg) as cur:
                if parameters is not None:
                    cur.execute(sql.replace("%", "%%").replace("?", "%s"), list(parameters))
                else:
                    cur.execute(sql)
                self.description = None if cur.description is None else \
                    [(d.name, d.type_code, None, None, None, None, None) for d in cur.description]
                self._rows = cur.fetchall() if cur.description is not None else []
                self.rowcount = cur.rowcount
        except psycopg.Error as err:
            raise error_for(getattr(err, "sqlstate", None),
                            (getattr(err.diag, "message_primary", None) or str(err)).strip()) from None
        finally:
            pg.remove_notice_handler(handler)
        return self

    def fetchall(self) -> list[tuple]:
        rows, self._rows = self._rows, []
        return rows

    def close(self) -> None:
        self._rows = []


class RemoteConnection:
    """A signed-in wire session with the shell's view of a connection."""

    remote = True

    def __init__(self, pg, host: str, port: int):
        self._pg = pg
        self.database = f"server {host}:{port}"
        self.user = pg.info.user
        self.role = self.cursor().execute("SHOW provsql_dp.role").fetchall()[0][0]
        self.default_epsilon = None

    def cursor(self) -> RemoteCursor:
        return RemoteCursor(self)

    def execute(self, sql: str, parameters=None) -> RemoteCursor:
        return self.cursor().execute(sql, parameters)

    def protected(self) -> list[_Protection]:
        cur = self.cursor().execute("SHOW PROTECTED")
        names = [d[0] for d in cur.description]
        out = []
        for row in cur.fetchall():
            r = dict(zip(names, row))
            keys = r.get("key_columns") or r.get("participant") or "rowid"
            out.append(_Protection(r["schema"], r["table"], f"protected (key {keys})"))
        return out

    def cancel(self) -> bool:
        """Ctrl-C: a CancelRequest for the statement under way (the server stops it)."""
        try:
            self._pg.cancel_safe(timeout=5.0)
        except AttributeError:  # psycopg before 3.2
            self._pg.cancel()
        return True

    def close(self) -> None:
        self._pg.close()


def connect_remote(address: str, user: str | None, password: str | None = None, *,
                   stdin=None, sslmode: str | None = None) -> RemoteConnection:
    """Sign in to the wire server at ``address`` (``HOST:PORT``) as ``user``.

    The password is ``password``, else ``$PROVSQL_DP_PASSWORD``, else ``$PGPASSWORD``, else asked
    on the terminal; without a terminal libpq may still find one in ``~/.pgpass``."""
    psycopg = _psycopg()
    try:
        host, port = parse_address(address)
    except ValueError as err:
        raise e.InterfaceError(str(err)) from None
    if not user:
        raise e.InterfaceError("--server needs --user NAME (the account to sign in as)")
    if password is None:
        password = next((os.environ[k] for k in PASSWORD_ENVS if os.environ.get(k)), None)
    if password is None and stdin is not None and stdin.isatty():
        password = getpass.getpass(f"password for {user} on {host}:{port}: ")
    kwargs = {"host": host, "port": port, "user": user, "dbname": "provsql_dp",
              "autocommit": True, "application_name": "provsql-dp shell"}
    if password is not None:
        kwargs["password"] = password
    if sslmode is not None:
        kwargs["sslmode"] = sslmode
    try:
        pg = psycopg.connect(**kwargs, connect_timeout=30)
    except psycopg.Error as err:
        text = " ".join(str(err).split())
        hint = ("; give the password in $PROVSQL_DP_PASSWORD or $PGPASSWORD (or run the shell on "
                "a terminal to be asked)") if password is None else ""
        raise e.InterfaceError(f"cannot sign in to the provsql_dp server at {host}:{port} as "
                               f"{user!r}: {text}{hint}") from None
    try:
        return RemoteConnection(pg, host, port)
    except BaseException:
        pg.close()
        raise
