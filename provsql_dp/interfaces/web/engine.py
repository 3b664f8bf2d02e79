"""The explorer's way to the engine: the same :func:`provsql_dp.connect` the shell and DB-API use.

:class:`Engine` keeps one provsql_dp connection per (role, user) on the database file — a
curator's is ``connect(db, role="curator", user=name)``, an analyst's ``connect(db,
role="analyst", user=name)`` — so roles, ledger, routes and refusals are exactly the shell's. A
lock serialises statements (a connection is not shared between threads); :meth:`cancel`
stops the running statement of one user from another request (``Connection.cancel``: its
DuckDB query and its LPs).

The server serves analysts, so its DuckDB instance runs with DuckDB's guard rails
(``guard_rails=True`` for every connection it opens, its curator accounts' included:
:mod:`provsql_dp.interfaces.dbapi.engines`): through the explorer a curator cannot read or
write files from SQL (``read_csv``, ``COPY``, ``ATTACH``) nor change DuckDB settings; a
curator's own ``provsql_dp.connect`` in another process keeps that power. ``options`` (such as
``memory_limit``, ``temp_directory_limit``, ``max_statement_bytes``, ``max_expression_depth``)
go to every :func:`provsql_dp.connect`.

Errors reach the page as the shell prints them: ``Error: <text>`` for every PEP 249 error (whose
text the engine already made safe for an analyst, :mod:`provsql_dp.privacy.failures`); anything
else becomes one fixed message, its details going to the server's log only.

>>> eng = Engine(":memory:")
>>> eng.run("curator", "cu", "SELECT 1 + 1").rows
[(2,)]
>>> eng.run("analyst", "ann", "CREATE TABLE t(x INT)")
Traceback (most recent call last):
...
provsql_dp.errors.PrivacyError: an analyst cannot run CREATE: analysts get private answers only (… WITH EPSILON ε) and may read public tables
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from ... import connect
from ...errors import Error
from ..._deadline import RELEASE_TIME_LIMIT
from ...provenance.capture import DEFAULT_MAX_ROWS
from ..shell.formatting import first_line

__all__ = ["Engine", "Result", "error_text", "INTERNAL"]

log = logging.getLogger("provsql_dp.web")
INTERNAL = "Error: the server could not complete this request (an internal error; nothing was released)"


@dataclass
class Result:
    columns: list[str]
    rows: list[tuple]
    privacy: object | None  # cursor.privacy of a private release


def error_text(e: BaseException) -> str:
    """What the page shows for an exception: the shell's text for PEP 249 errors, else fixed."""
    if isinstance(e, Error):
        return f"Error: {first_line(e)}"  # exactly the shell's line
    log.error("internal error in the explorer", exc_info=e)
    return INTERNAL


class Engine:
    """Connections to one database, by (role, user), used under one lock."""

    def __init__(self, database: str, max_capture_rows: int | None = DEFAULT_MAX_ROWS,
                 release_seconds: float | None = None, lp_gap: float | None = None,
                 release_time_limit: float | None = RELEASE_TIME_LIMIT, **options):
        self.database = database
        self.options = {"guard_rails": True, **options}
        self.max_capture_rows = max_capture_rows
        self.release_seconds = release_seconds
        self.lp_gap = lp_gap
        self.release_time_limit = release_time_limit
        self.lock = threading.RLock()
        self._cons: dict[tuple[str, str], object] = {}
        self._running: dict[str, object] = {}

    def connection(self, role: str, user: str):
        key = (role, user)
        with self.lock:
            con = self._cons.get(key)
            if con is None:
                con = self._cons[key] = connect(self.database, role=role, user=user,
                                                     max_capture_rows=self.max_capture_rows,
                                                     release_seconds=self.release_seconds,
                                                     lp_gap=self.lp_gap,
                                                     release_time_limit=self.release_time_limit,
                                                     **self.options)
                con.autocommit = True  # like the shell: every statement commits
            return con

    @property
    def duck(self):
        """The raw DuckDB connection of the server's own curator connection (accounts, history)."""
        return self.connection("curator", "_web")._duck

    def run(self, role: str, user: str, sql: str, parameters=None) -> Result:
        """Execute ``sql`` on the (role, user) connection and fetch everything."""
        con = self.connection(role, user)
        with self.lock:
            self._running[user] = con
            try:
                cur = con.execute(sql, parameters)
                rows = cur.fetchall() if cur.description else []
                cols = [c[0] for c in cur.description or ()]
                return Result(cols, rows, getattr(cur, "privacy", None))
            finally:
                self._running.pop(user, None)

    def cancel(self, user: str) -> bool:
        """Stop ``user``'s running statement (no lock: it is held by that statement)."""
        con = self._running.get(user)
        if con is None:
            return False
        return con.cancel() or True  # between two statements: nothing left to stop

    def close(self) -> None:
        with self.lock:
            for con in self._cons.values():
                con.close()
            self._cons.clear()
