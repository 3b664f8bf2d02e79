"""The server's way to the engine, shared by the explorer and the wire server: connections of the
same :func:`provsql_dp.connect` the shell and DB-API use, run concurrently.

There is **no global lock**. Every statement runs on a provsql_dp connection of its own for the
time it runs: the explorer checks one out of a pool kept per (role, user) (:meth:`Engine.run`),
a wire client holds one for its whole session (:meth:`Engine.open`, state such as ``SET PRIVACY
EPSILON`` is per session as in PostgreSQL). All of them are DuckDB connections to the one database
instance of this process, so two analysts' releases run in parallel; the ledger keeps every charge
exact under concurrency (each charge is one transaction, retried on a write conflict:
:mod:`provsql_dp.privacy.ledger`).

Each running statement is registered (:meth:`Engine.running`) under its user:

* an **analyst** may have at most ``max_concurrent`` statements running at once (the operator's
  ``--max-concurrent``); one more is refused at once (nothing runs, nothing is charged);
* a statement running longer than ``statement_timeout`` seconds is stopped (the connections also
  get it as their ``release_time_limit``, so a private release stops its own work by then and
  releases its data-independent fallback; the watchdog stops whatever else runs, e.g. a scan of a
  public table);
* :meth:`Engine.cancel` stops a user's running statements (the explorer's Cancel, a wire
  client's CancelRequest or disconnect): :func:`interrupt` is the one call site.

With ``spark=`` (``serve --engine spark``, :mod:`provsql_dp.interfaces.pgwire.spark_engine`)
every connection reads the attached tables through the server's one SparkSession, in a Spark
session of its own (``spark.newSession()``); the ledger stays in the DuckDB file.

The server serves analysts, so its DuckDB instance runs with DuckDB's guard rails
(``guard_rails=True`` for every connection it opens, its curator accounts' included:
:mod:`provsql_dp.interfaces.dbapi.engines`): through the server a curator cannot read or
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

import contextlib
import logging
import threading
import weakref
from dataclasses import dataclass

import duckdb

from ... import connect
from ...errors import Error, OperationalError
from ..._deadline import RELEASE_TIME_LIMIT
from ...provenance.capture import DEFAULT_MAX_ROWS
from ..dbapi.audit_failures import audit_failure
from ..shell.formatting import first_line
from ._fatal import DEAD_IN_MEMORY, REOPENED, in_memory, is_fatal

__all__ = ["Engine", "Result", "error_text", "interrupt", "INTERNAL", "TooManyStatements",
           "MAX_CONCURRENT"]

log = logging.getLogger("provsql_dp.web")
INTERNAL = "Error: the server could not complete this request (an internal error; nothing was released)"
MAX_CONCURRENT = 4
_POOL_IDLE = 4  # idle connections kept per (role, user)


class TooManyStatements(OperationalError):
    """An analyst already runs as many statements as the operator allows at once."""


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


def interrupt(con) -> None:
    """Stop what the provsql_dp connection ``con`` runs now: its own ``cancel`` when it has one
    (stopping DuckDB and the release's LPs), else DuckDB's ``interrupt`` (which stops DuckDB's
    work; an LP under way then runs to its own time limit)."""
    stop = getattr(con, "cancel", None)
    try:
        if callable(stop):
            stop()
        else:
            con._duck.interrupt()
    except duckdb.ConnectionException:
        pass  # closed meanwhile: nothing runs on it


class _Running:
    """One statement under way: its connection and whether the watchdog stopped it."""

    def __init__(self, con):
        self.con = con
        self.timed_out = False
        self.cancelled = False
        self.limit: float | None = None  # the watchdog's seconds


class Engine:
    """Connections to one database: pooled per (role, user), run concurrently."""

    def __init__(self, database: str, max_capture_rows: int | None = DEFAULT_MAX_ROWS,
                 release_seconds: float | None = None, lp_gap: float | None = None,
                 release_time_limit: float | None = RELEASE_TIME_LIMIT,
                 max_concurrent: int | None = MAX_CONCURRENT, statement_timeout: float | None = None,
                 spark=None, **options):
        if max_concurrent is not None and max_concurrent < 1:
            raise ValueError(f"max_concurrent must be at least 1, got {max_concurrent!r}")
        if statement_timeout is not None and not statement_timeout > 0:
            raise ValueError(f"statement_timeout must be positive seconds, got {statement_timeout!r}")
        self.database = database
        #: the server's one SparkSession (``serve --engine spark``), else None (DuckDB): every
        #: connection reads the attached tables in a Spark session of its own beside it
        self.spark = spark
        self.options = {"guard_rails": True, **options}
        self.max_capture_rows = max_capture_rows
        self.release_seconds = release_seconds
        self.lp_gap = lp_gap
        if statement_timeout is not None:
            release_time_limit = min(release_time_limit or statement_timeout, statement_timeout)
        self.release_time_limit = release_time_limit
        self.max_concurrent = max_concurrent
        self.statement_timeout = statement_timeout
        self._lock = threading.Lock()  # guards the dictionaries below, never a statement
        self._idle: dict[tuple[str, str], list] = {}
        self._running: dict[str, set[_Running]] = {}
        self._admin = None
        #: every connection opened, closed by :meth:`recover`; its count of reopenings, and why
        #: the database is out of service (an in-memory one that DuckDB invalidated)
        self._opened: weakref.WeakSet = weakref.WeakSet()
        self.generation = 0
        self.dead: str | None = None
        self._recovering = threading.Lock()

    def open(self, role: str, user: str, client: str = "explorer", **options):
        """A new provsql_dp connection with the server's settings (every statement commits);
        ``client`` (``explorer`` or ``wire``) is what the audit log records of its statements."""
        if self.dead is not None:
            raise OperationalError(self.dead)
        con = connect(self.database, role=role, user=user, max_capture_rows=self.max_capture_rows,
                      release_seconds=self.release_seconds, lp_gap=self.lp_gap,
                      release_time_limit=self.release_time_limit, engine=self.spark,
                      **{**self.options, **options})
        con.autocommit = True  # like the shell: every statement commits
        con.client = client
        con._generation = self.generation
        with self._lock:
            self._opened.add(con)
        return con

    def fresh(self, con, role: str, user: str, client: str, **options):
        """``con`` while it is of the engine's database as it is now; else (:meth:`recover`
        closed it) a new connection of the same role, user and client, with its settings."""
        if con is not None and getattr(con, "_generation", None) == self.generation and not con._closed:
            return con
        new = self.open(role, user, client, **options)
        for name in ("default_epsilon", "interval_columns", "raw") if con is not None else ():
            setattr(new, name, getattr(con, name))
        return new

    def recover(self, e: BaseException, con=None) -> bool:
        """After a statement of ``con`` failed with ``e``: when ``e`` is DuckDB's internal or
        fatal error (the database instance invalidated, :mod:`._fatal`), close every connection
        of the engine so that the next ones reopen the database — or, in memory, put the engine
        out of service — and log it; whether it was such an error."""
        if not is_fatal(e):
            return False
        with self._recovering:
            if con is not None and getattr(con, "_generation", None) != self.generation:
                return True  # another statement's failure reopened it meanwhile
            log.error("DuckDB failed on an internal error: %s", "reopening the database"
                      if not in_memory(self.database) else "an in-memory database cannot be "
                      "reopened: out of service", exc_info=e)
            with self._lock:
                busy = {id(r.con) for mine in self._running.values() for r in mine}
                busy.discard(id(con))
                cons = list(self._opened) + ([self._admin] if self._admin else [])
                self._opened, self._idle, self._admin = weakref.WeakSet(), {}, None
                self.generation += 1
            for c in cons:  # a statement under way is stopped, its connection closed at its end
                try:
                    interrupt(c) if id(c) in busy else c.close()
                except Exception:  # noqa: BLE001 - a dead instance's connection: gone anyway
                    pass
            if in_memory(self.database):
                self.dead = DEAD_IN_MEMORY
        return True

    @contextlib.contextmanager
    def checkout(self, role: str, user: str):
        """A connection for (role, user) used by nobody else until the block ends."""
        with self._lock:
            idle = self._idle.get((role, user))
            con = idle.pop() if idle else None
        if con is None:
            con = self.open(role, user)
        try:
            yield con
        finally:
            with self._lock:
                idle = self._idle.setdefault((role, user), [])
                # back to the pool only in its first state: a request's SET PRIVACY EPSILON does
                # not carry over to the next request (the explorer's requests are stateless)
                keep = len(idle) < _POOL_IDLE and not con._closed and con.default_epsilon is None
                if keep:
                    idle.append(con)
            if not keep:
                con.close()

    def connection(self, role: str, user: str):
        """A new connection of (role, user) for the caller alone (close it when done)."""
        return self.open(role, user)

    @property
    def duck(self):
        """A raw DuckDB connection (a fresh cursor of the server's own curator connection) for
        the server's tables: accounts, history. Each call gives its own, so threads share none."""
        if self.dead is not None:
            raise OperationalError(self.dead)
        with self._lock:
            if self._admin is None:
                self._admin = connect(self.database, role="curator", user="_web", **self.options)
            return self._admin._duck.cursor()

    @contextlib.contextmanager
    def running(self, role: str, user: str, con, timeout: float | None = None, statement: str = ""):
        """Register a statement of ``user`` on ``con`` while it runs: the concurrency limit, the
        watchdog of ``statement_timeout`` (or ``timeout``, a session's own, when shorter), and
        :meth:`cancel`'s registry. A statement refused by the limit is in the audit log
        (``statement``: its text)."""
        entry = _Running(con)
        with self._lock:
            mine = self._running.setdefault(user, set())
            full = role == "analyst" and self.max_concurrent is not None and len(mine) >= self.max_concurrent
            if not full:
                mine.add(entry)
            n = len(mine)
        if full:
            err = TooManyStatements(
                f"user {user!r} already runs {n} statements at once, the most this server "
                f"allows (--max-concurrent {self.max_concurrent}); nothing was run or charged: "
                "wait for one to finish")
            audit_failure(con, statement, err, False)
            raise err
        timer = None
        limits = [t for t in (self.statement_timeout, timeout) if t is not None]
        entry.limit = min(limits) if limits else None
        if entry.limit is not None:
            # past the release's own deadline (a private release stops its work and releases its
            # fallback by then): the watchdog is for what has no deadline of its own
            timer = threading.Timer(entry.limit + 1.0, self._time_out, (entry,))
            timer.daemon = True
            timer.start()
        try:
            yield entry
        except Exception as e:
            if self.recover(e, con):
                raise OperationalError(self.dead or REOPENED) from e
            raise
        finally:
            if timer is not None:
                timer.cancel()
            with self._lock:
                mine.discard(entry)
                if not mine:
                    self._running.pop(user, None)
            if getattr(con, "_generation", self.generation) != self.generation:
                con.close()  # of the database as it was before recover(): its statement ended

    def _time_out(self, entry: _Running) -> None:
        entry.timed_out = True
        interrupt(entry.con)

    def run(self, role: str, user: str, sql: str, parameters=None) -> Result:
        """Execute ``sql`` as (role, user) on a connection of its own and fetch everything."""
        with self.checkout(role, user) as con, self.running(role, user, con, statement=sql):
            cur = con.execute(sql, parameters)
            rows = cur.fetchall() if cur.description else []
            cols = [c[0] for c in cur.description or ()]
            return Result(cols, rows, getattr(cur, "privacy", None))

    def cancel(self, user: str) -> bool:
        """Stop every statement ``user`` runs now; whether there was one."""
        with self._lock:
            entries = list(self._running.get(user, ()))
        for entry in entries:
            entry.cancelled = True
            interrupt(entry.con)
        return bool(entries)

    def close(self) -> None:
        with self._lock:
            cons = [c for idle in self._idle.values() for c in idle]
            self._idle.clear()
            admin, self._admin = self._admin, None
        for con in cons + ([admin] if admin else []):
            con.close()
