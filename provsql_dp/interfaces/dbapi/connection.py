"""The front door: a PEP 249 style connection over DuckDB that understands privacy statements.

A :class:`Connection` holds the DuckDB connection, the role and user, the catalog of privacy
declarations, the budget ledger and the transaction state; its cursors (:mod:`.cursor`) split a
text into statements (:mod:`.statements`) and dispatch each one:

* privacy statements (``PROTECT``, ``UNPROTECT``, ``SHOW PROTECTED``, ``SET PRIVACY BUDGET``,
  ``SHOW PRIVACY BUDGET``, ``SET PRIVACY EPSILON``) are executed by provsql_dp
  (:mod:`.privacy_statements`);
* a query with ``WITH EPSILON ε`` — or, once ``SET PRIVACY EPSILON`` gave the session a default,
  any aggregate query over protected tables — is released privately;
* everything else passes through to DuckDB unchanged.

Example
-------
>>> import provsql_dp
>>> con = provsql_dp.connect(":memory:")
>>> _ = con.execute("CREATE TABLE edge(src INT, dst INT)")
>>> _ = con.execute("INSERT INTO edge VALUES (1, 2), (2, 3), (1, 3)")
>>> _ = con.execute("PROTECT TABLE edge BY (src, dst) AS person")
>>> kr = con.provenance("SELECT e1.src, e2.dst FROM edge e1 JOIN edge e2 ON e1.dst = e2.src")
>>> kr.rows
[(1, 3)]
>>> sorted(next(iter(kr.annotation(0))))
[('person', 1), ('person', 2), ('person', 3)]
"""

from __future__ import annotations

import numbers
from fractions import Fraction

import duckdb
from sqlglot import exp
from sqlglot.errors import ParseError

from ..._duckdb_errors import translate
from ...errors import (
    DatabaseError,
    DataError,
    Error,
    IntegrityError,
    InterfaceError,
    InternalError,
    NotSupportedError,
    OperationalError,
    PrivacyError,
    ProgrammingError,
    UnsupportedQueryError,
    Warning,
)
from ...privacy import audit
from ...privacy.ledger import Ledger
from ..._cancel import CancelToken
from .one_thread import StatementThread
from ..._deadline import RELEASE_TIME_LIMIT, check_budget
from ...privacy.limits import (
    DEFAULT_MAX_EXPRESSION_DEPTH,
    DEFAULT_MAX_STATEMENT_BYTES,
    check_limit,
)
from ...privacy.native import open_duckdb
from ...privacy.r2t_release import check_lp_gap
from ...privacy.release_clock import check_release_seconds
from ...privacy.release_info import PrivacyInfo
from ...privacy.roles import ROLES
from ...provenance.capture import DEFAULT_MAX_ROWS, capture
from ...provenance.krelation import KRelation
from ...sql import dialect as d
from ...sql.catalog import Catalog
from ...sql.plan import Aggregate, Aggregates, Node
from ...sql.planner import plan_query
from .analyst_views import OwnLedger, ReadOnlyCatalog
from .cursor import Cursor
from .home_catalog import home_database
from .interval_columns import coverage_of
from .python_scope import register, unregister
from .engines import (
    attach_table,
    guard_rails_config,
    open_engine,
    open_error,
    shares_unguarded,
    warn_unguarded,
)
from .statements import KeptTokens, split_statements, syntax_error

__all__ = ["connect", "Connection", "Cursor", "PrivacyInfo"]

#: DuckDB's memory limit on a guarded connection by default (a share of the machine's RAM)
DEFAULT_MEMORY_LIMIT = "50%"
#: how much a guarded connection's queries may spill to disk by default
DEFAULT_TEMP_DIRECTORY_LIMIT = "10GiB"


def connect(database: str = ":memory:", *, role: str = "curator", user: str | None = None,
            read_only: bool = False, config: dict | None = None, engine=None,
            raw: bool = False, interval_columns: bool | float = False,
            max_capture_rows: int | None = DEFAULT_MAX_ROWS,
            release_seconds: float | None = None, lp_gap: float | None = None,
            release_time_limit: float | None = RELEASE_TIME_LIMIT,
            guard_rails: bool | None = None, memory_limit: str | None = DEFAULT_MEMORY_LIMIT,
            temp_directory_limit: str | None = DEFAULT_TEMP_DIRECTORY_LIMIT,
            max_statement_bytes: int | None = DEFAULT_MAX_STATEMENT_BYTES,
            max_expression_depth: int | None = DEFAULT_MAX_EXPRESSION_DEPTH) -> Connection:
    """Open a provsql_dp connection over a DuckDB database (a file path or ``":memory:"``).

    ``role`` is ``"curator"`` (everything, including reading protected rows) or ``"analyst"``
    (private answers and public tables only; see :mod:`provsql_dp.privacy.roles`). ``user`` names whose
    budget private queries spend (default ``"default"``). A curator's queries may name the
    DataFrames of the caller's scope, as with DuckDB; an analyst registers them explicitly
    (:meth:`Connection.register`, see :mod:`.python_scope`).

    ``engine`` is where private queries read the data: ``None`` for the DuckDB database itself,
    or a ``pyspark.sql.SparkSession``. With Spark, the DuckDB database stays the catalog of record
    (declarations, budgets, ledger) and :meth:`Connection.attach` keys Spark tables to it by name
    (see :mod:`provsql_dp.interfaces.dbapi.engines`).

    Released COUNTs come back as whole numbers, never negative (``max(0, round(·))``, free
    post-processing with a small upward bias near zero; see :mod:`provsql_dp.privacy.postprocess`);
    ``raw=True`` keeps the mechanisms' raw releases (also ``cursor.raw`` and, per statement,
    ``OPTIONS (raw = true)``).

    ``interval_columns=True`` (or a coverage such as ``0.9``) adds ``<col>_low``/``<col>_high``
    after each released column of a private answer's rows, for tools that see only the rows
    (``pandas.read_sql``; see :mod:`provsql_dp.interfaces.dbapi.interval_columns`).

    ``max_capture_rows`` (default 10,000,000; ``None``: no limit) caps the provenance rows one
    query may bring into memory: past it a private release reads no data and returns the
    data-independent fallback (recorded in ``_provsql_dp.incidents``, never shown to an
    analyst), and the curator's :meth:`Connection.provenance` raises
    :class:`~provsql_dp.errors.CaptureTooLarge`.

    ``release_seconds`` (default ``None``: no padding) makes every accepted private release —
    an answer or a failure, not a refusal — take at least that many seconds of wall-clock time,
    so that how long a release takes does not tell an analyst how much protected data it read
    (:mod:`provsql_dp.privacy.release_clock`); the releases' work stops by then too (LPs and
    their preparation, :mod:`provsql_dp._deadline`: past it the data-independent fallback; a
    DuckDB read still running is interrupted), so only the Python work between two checks can
    overrun it and return late.

    ``lp_gap`` (default ``None``: R2T's own, 1/16) is R2T's tolerance γ ≥ 0 for the statements
    that give no ``OPTIONS (lp_gap = …)`` (public; ``0``: every truncation LP exact).

    ``release_time_limit`` (default 300 s; ``None``: none) bounds the wall-clock time of one
    private release as a whole — the rows it reads, its LPs and their preparation, for the
    k-star/k-triangle routes and each group of the recursive mechanism, R2T and ESTIMATE ERROR
    (:mod:`provsql_dp._deadline`): past it the data-independent fallback is released, its ε
    charged (public, like the per-LP time limit); each read of protected rows is interrupted
    past it too.

    ``guard_rails`` (default: on for an analyst, off for a curator) opens the DuckDB database
    with its own walls as a second line of defence (:mod:`.engines`, :data:`GUARD_RAILS`): no
    file, network or extension access from SQL, no DataFrames of the process's scope, and the
    configuration locked so that no statement can change it — with ``memory_limit`` (default
    ``"50%"`` of RAM) and ``temp_directory_limit`` (the spill-to-disk cap, default ``"10GiB"``)
    in force. DuckDB keeps one database instance per file and process, with one configuration:
    a guarded and an unguarded connection cannot be open on the same file in one process at
    once. An analyst opened by default in a process that already holds the file without them
    (a curator's connection in the same notebook or test) shares that instance without the
    rails — ``con.guard_rails`` is then ``False`` and a ``UserWarning`` says so; whoever runs
    that process is the curator anyway. ``guard_rails=True`` makes the rails mandatory (an
    :class:`~provsql_dp.errors.OperationalError` instead); a curator opened with
    ``guard_rails=True`` (as the explorer opens every connection) cannot read files either.

    ``max_statement_bytes`` (default 64 KiB) and ``max_expression_depth`` (default 64) limit an
    analyst's statements, checked before they are parsed and before anything is charged
    (:mod:`provsql_dp.privacy.limits`; ``None``: no limit; a curator's are not limited).

    :meth:`Connection.cancel` stops the statement under way from another thread."""
    return Connection(database, role=role, user=user, read_only=read_only, config=config,
                      engine=engine, raw=raw, interval_columns=interval_columns,
                      max_capture_rows=max_capture_rows, release_seconds=release_seconds,
                      lp_gap=lp_gap, release_time_limit=release_time_limit,
                      guard_rails=guard_rails, memory_limit=memory_limit,
                      temp_directory_limit=temp_directory_limit,
                      max_statement_bytes=max_statement_bytes,
                      max_expression_depth=max_expression_depth)


class Connection:
    """A connection to one DuckDB database with provsql_dp's privacy layer.

    Transactions follow PEP 249 (autocommit starts off) the way Python's sqlite3 does: a data
    change (INSERT, UPDATE, DELETE, MERGE) implicitly opens a transaction that lasts until
    :meth:`commit` or :meth:`rollback`; other statements run as they come. ``with con:`` commits
    on success and rolls back on an exception, leaving the connection open. Set
    ``con.autocommit = True`` to commit every statement at once. Privacy budget charges are
    committed on their own, whatever the connection's transaction (a rollback never refunds ε).
    """

    # PEP 249 optional extension: the exception classes as connection attributes
    Warning = Warning
    Error = Error
    InterfaceError = InterfaceError
    DatabaseError = DatabaseError
    DataError = DataError
    OperationalError = OperationalError
    IntegrityError = IntegrityError
    InternalError = InternalError
    ProgrammingError = ProgrammingError
    NotSupportedError = NotSupportedError

    @property
    def max_capture_rows(self) -> int | None:
        """Provenance rows one query may capture (``None``: no limit); see :func:`connect`."""
        return self._max_capture_rows

    @max_capture_rows.setter
    def max_capture_rows(self, n: int | None) -> None:
        if n is not None and (isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1):
            raise InterfaceError(f"max_capture_rows must be a positive whole number or None, got {n!r}")
        self._max_capture_rows = None if n is None else int(n)

    @property
    def release_seconds(self) -> float | None:
        """The public wall-clock time every private release is padded to (``None``: none); see
        :func:`connect`."""
        return self._release_seconds

    @release_seconds.setter
    def release_seconds(self, seconds: float | None) -> None:
        self._release_seconds = check_release_seconds(seconds)

    @property
    def release_time_limit(self) -> float | None:
        """Seconds one private release may take as a whole (``None``: no limit); see
        :func:`connect`."""
        return self._release_time_limit

    @release_time_limit.setter
    def release_time_limit(self, seconds: float | None) -> None:
        self._release_time_limit = check_budget(seconds)

    @property
    def max_statement_bytes(self) -> int | None:
        """The largest analyst statement, in bytes (``None``: no limit); see :func:`connect`."""
        return self._max_statement_bytes

    @max_statement_bytes.setter
    def max_statement_bytes(self, n: int | None) -> None:
        self._max_statement_bytes = check_limit("max_statement_bytes", n)

    @property
    def max_expression_depth(self) -> int | None:
        """The deepest nesting an analyst statement may have (``None``: no limit)."""
        return self._max_expression_depth

    @max_expression_depth.setter
    def max_expression_depth(self, n: int | None) -> None:
        self._max_expression_depth = check_limit("max_expression_depth", n)

    def cancel(self) -> bool:
        """Stop the statement this connection is running, from any thread (the shell's Ctrl-C,
        the explorer's Cancel): its DuckDB query is interrupted, its LPs cancelled, and it
        raises :class:`~provsql_dp.errors.StatementCancelled` within moments. Returns whether a
        statement was running. Nothing is released; ε a release charged before the cancel stays
        spent (a cancel that arrives before the charge charges nothing); the ledger is written
        whole or not at all (:mod:`provsql_dp._cancel`)."""
        if self._closed:
            return False
        return self._cancel.cancel()

    @property
    def lp_gap(self) -> float | None:
        """R2T's ``lp_gap`` for statements that give none (``None``: R2T's default); see
        :func:`connect`."""
        return self._lp_gap

    @lp_gap.setter
    def lp_gap(self, gap: float | None) -> None:
        self._lp_gap = check_lp_gap(gap)

    def __init__(self, database: str = ":memory:", *, role: str = "curator",
                 user: str | None = None, read_only: bool = False, config: dict | None = None,
                 engine=None, raw: bool = False, interval_columns: bool | float = False,
                 max_capture_rows: int | None = DEFAULT_MAX_ROWS,
                 release_seconds: float | None = None, lp_gap: float | None = None,
                 release_time_limit: float | None = RELEASE_TIME_LIMIT,
                 guard_rails: bool | None = None, memory_limit: str | None = DEFAULT_MEMORY_LIMIT,
                 temp_directory_limit: str | None = DEFAULT_TEMP_DIRECTORY_LIMIT,
                 max_statement_bytes: int | None = DEFAULT_MAX_STATEMENT_BYTES,
                 max_expression_depth: int | None = DEFAULT_MAX_EXPRESSION_DEPTH):
        if role not in ROLES:
            raise InterfaceError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
        coverage_of(interval_columns)  # validated before anything opens
        self.max_capture_rows = max_capture_rows  # validated before anything opens
        self.release_seconds = release_seconds  # validated before anything opens
        self.lp_gap = lp_gap  # validated before anything opens
        self.release_time_limit = release_time_limit  # validated before anything opens
        self.max_statement_bytes = max_statement_bytes  # validated before anything opens
        self.max_expression_depth = max_expression_depth  # validated before anything opens
        #: whether DuckDB's own guard rails are on (see :func:`connect`)
        self.guard_rails = role == "analyst" if guard_rails is None else bool(guard_rails)
        plain = config
        if self.guard_rails:
            config = guard_rails_config(config, memory_limit, temp_directory_limit)
        try:
            self._duck, self._native = open_duckdb(database, read_only, config)
        except duckdb.ConnectionException as e:
            if not (guard_rails is None and self.guard_rails and shares_unguarded(e)):
                raise open_error(database, e, self.guard_rails) from e
            # the default for an analyst in a process that already holds the file without
            # them (a curator's connection): DuckDB has one configuration per file and
            # process, so this connection shares it — documented; guard_rails=True refuses
            self._duck, self._native = open_duckdb(database, read_only, plain)
            self.guard_rails = False
            warn_unguarded(database)
        except duckdb.Error as e:
            raise open_error(database, e, self.guard_rails) from e
        self.database = database
        self.role = role
        self.read_only = read_only
        self.user = user or "default"
        #: keep COUNT releases raw (floats, possibly negative) instead of max(0, round(·));
        #: the default of every new cursor (``cursor.raw``)
        self.raw = bool(raw)
        #: interval columns in private answers' rows (True, False or a coverage): the default of
        #: every new cursor (``cursor.interval_columns``)
        self.interval_columns = interval_columns
        self._catalog = Catalog(self._duck, read_only=read_only)
        self._home_database = home_database(self._duck)  # after USE o: interfaces/dbapi/home_catalog
        self._curator_path: str | None = None  # the curator's search path away from home
        self._ledger = Ledger(self._duck, read_only=read_only)
        self._ledger.source = audit.Source(role, "dbapi")
        self._kept_tokens = KeptTokens()  # this connection's own (never another session's)
        self.default_epsilon: Fraction | None = None
        self.autocommit = False
        self._in_tx = False
        self._closed = False
        #: the :class:`PrivacyInfo` of the last statement run on any cursor of this connection
        #: (None unless it was a private release): for callers that do not see the cursor, such
        #: as ``pandas.read_sql`` — ``con.privacy.to_frame()`` gives its intervals
        self.privacy: PrivacyInfo | None = None
        #: whether queries may name the DataFrames of the caller's scope (curators only: an
        #: analyst's SQL must not reach the variables of the process serving it)
        self.scan_python = role == "curator" and not self.guard_rails
        if not self.scan_python and not self.guard_rails:  # (the guard rails' config has it)
            self._duck.execute("SET python_enable_replacements = false")
        #: stops the statement under way from another thread (:meth:`cancel`)
        self._cancel = CancelToken(self._duck)
        self._thread = StatementThread()  # one thread's statement at a time (threadsafety = 1)
        self._engine = open_engine(self, engine)

    def _before(self, kind: str) -> None:
        """Open the implicit transaction before a data change (PEP 249: autocommit off)."""
        if kind == "dml" and not self.autocommit and not self._in_tx and not self.read_only:
            self._duck.execute("BEGIN TRANSACTION")
            self._in_tx = True
        elif kind == "begin":
            self._in_tx = True
        elif kind == "end":
            self._in_tx = False

    @property
    def client(self) -> str:
        """Where this connection's statements come from, as the audit log records it
        (:data:`provsql_dp.privacy.audit.CLIENTS`: ``dbapi`` unless a server or the shell says)."""
        return self._ledger.source.client

    @client.setter
    def client(self, client: str) -> None:
        if client not in audit.CLIENTS:
            raise InterfaceError(f"client must be one of {', '.join(audit.CLIENTS)}, got {client!r}")
        self._ledger.source = audit.Source(self.role, client)

    @property
    def catalog(self):
        """The privacy declarations; read-only for an analyst (declarations are public)."""
        if self.role == "curator":
            return self._catalog
        return ReadOnlyCatalog(self._catalog)

    @property
    def ledger(self):
        """The budget ledger: all of it for a curator, one's own budget for an analyst."""
        if self.role == "curator":
            return self._ledger
        return OwnLedger(self._ledger, self.user)

    def _require_curator(self, what: str) -> None:
        if self.role != "curator":
            raise PrivacyError(f"{what} is for the curator only; this connection is an analyst's")

    # ------------------------------------------------------------------ PEP 249
    def cursor(self) -> Cursor:
        self._check_open()
        return Cursor(self)

    def execute(self, sql: str, parameters=None) -> Cursor:
        """Shortcut: a new cursor's ``execute``."""
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, seq_of_parameters) -> Cursor:
        """Shortcut: a new cursor's ``executemany`` (as sqlite3 and DuckDB have it). Private
        queries are charged once per parameter set, in order, up to the first refusal."""
        return self.cursor().executemany(sql, seq_of_parameters)

    def register(self, name: str, obj) -> Connection:
        """Make a pandas/polars DataFrame or a pyarrow Table queryable as the public table
        ``name`` of this connection (a temporary view, no copy; see :mod:`.python_scope`)."""
        self._check_open()
        register(self, name, obj)
        return self

    def unregister(self, name: str) -> Connection:
        """Drop a DataFrame registered with :meth:`register`."""
        self._check_open()
        unregister(self, name)
        return self

    def commit(self) -> None:
        self._end_transaction(self._duck.commit)

    def rollback(self) -> None:
        self._end_transaction(self._duck.rollback)

    def _end_transaction(self, end) -> None:
        """``commit`` or ``rollback`` (``end``, DuckDB's): refused while another thread's
        statement runs on the connection (threadsafety 1, :mod:`.one_thread`)."""
        self._check_open()
        with self._thread.entered():
            self._in_tx = False
            try:
                end()
            except duckdb.TransactionException:
                pass  # no transaction is active: nothing to end
            except duckdb.Error as e:
                raise translate(e) from e
            finally:
                self._catalog.changed()  # what the transaction declared is seen by every connection

    def close(self) -> None:
        """Close the connection; an uncommitted transaction is rolled back (PEP 249)."""
        if not self._closed:
            if self._in_tx:
                try:
                    self._duck.rollback()
                except duckdb.Error:
                    pass
            self._duck.close()
            close_engine = getattr(getattr(self, "_engine", None), "close", None)
            if close_engine is not None:  # Spark: drop our views and scratch snapshots
                close_engine()
            self._closed = True

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        """Like sqlite3: commit on success, roll back on an exception; the connection stays open."""
        if self._closed:
            return
        if exc_type is None:
            self.commit()
        else:
            self.rollback()

    def _check_open(self) -> None:
        if self._closed:
            raise InterfaceError("the connection is closed")

    # ------------------------------------------------------------------ provenance and privacy
    def plan(self, sql: str) -> Node:
        """The positive relational algebra plan of a query (see :func:`provsql_dp.sql.plan.explain`).
        A plan depends on the schema and declarations only, not on the data."""
        self._check_open()
        tree = self._parse_query(sql)
        with self._thread.entered(), self._catalog.snapshot():  # a statement's catalog reads
            return plan_query(tree, self._catalog)

    def provenance(self, sql: str, columns=None) -> KRelation:
        """Capture the K-relation of a query: its rows (before the final aggregate), weights
        q(t) and DNF annotations over the participants of the protected tables involved.
        ``columns``: the output columns to keep (default every one; ``()``: none, as a release
        reads them — the engine then joins only what the annotations and weights need).

        This exposes private data: curator only."""
        self._require_curator("provenance (the K-relation exposes protected rows)")
        plan = self.plan(sql)
        if isinstance(plan, Aggregates):
            raise UnsupportedQueryError(
                "provenance is captured for one aggregate at a time; this query has several "
                "(an AVG is a SUM and a COUNT): ask for each separately")
        try:
            return capture(self._engine, plan, max_rows=self.max_capture_rows, columns=columns)
        except duckdb.Error as e:
            raise translate(e) from e

    def explain(self, sql: str, epsilon: float = 1.0, **options) -> str:
        """The plan of a query and, for an aggregate, the recursive mechanism's private
        diagnostics (Δ, X, empirical sensitivities, H/G sizes) without drawing noise or charging
        anything. The diagnostics are functions of the private data: curator only."""
        from ...mechanisms.recursive import efficient as rm
        from ...privacy.answer import mechanism_kwargs, privacy_style
        from ...sql.plan import explain as explain_plan

        self._require_curator("explain (its diagnostics are functions of the private data)")
        plan = self.plan(sql)
        text = explain_plan(plan)
        if not isinstance(plan, Aggregate):
            return text
        kr = capture(self._engine, plan, max_rows=self.max_capture_rows, columns=())
        style, kwargs = mechanism_kwargs(options, float(epsilon), privacy_style(plan))
        weights = kr.weights
        if (weights < 0).any():
            return text + "\n(signed SUM: each part is released separately; diagnostics per part not shown)"
        ex = rm.explain(kr, float(epsilon), style, **kwargs)
        return text + "\n" + str(ex)

    def attach(self, name: str, source=None, *, primary_key=(), checks=(), snapshot=None,
               version=None) -> None:
        """Key a table of the Spark engine to this catalog under ``name`` (curator only): its
        rows are snapshotted once to Parquet (at ``snapshot``, default beside the catalog file)
        and its schema mirrored (empty) in the DuckDB database, so that ``PROTECT TABLE``,
        policies and private queries name it like a local table; later connections reuse the
        snapshot. ``primary_key`` (columns) and ``checks`` (CHECK expressions) declare what
        Spark cannot: they are checked once on the rows. ``source="delta:/path"`` reads a
        Delta table as of ``version`` (default: its latest). See
        :mod:`provsql_dp.interfaces.dbapi.engines`."""
        self._check_open()
        self._require_curator("attaching a table")
        attach_table(self, name, source, primary_key, checks, snapshot, version)

    def protected(self) -> list:
        """The ``PROTECT TABLE`` declarations, as :class:`provsql_dp.sql.catalog.Protection`
        (declarations are public: any role may list them)."""
        self._check_open()
        return self._catalog.list_protected()

    def _parse_query(self, sql: str) -> exp.Expression:
        stmts = split_statements(sql)
        if len(stmts) != 1:
            raise ProgrammingError(f"expected exactly one query, found {len(stmts)} statements")
        try:
            tree = d.parse_one(stmts[0])
        except ParseError as e:
            raise syntax_error(e) from e
        if isinstance(tree, d.PrivateQuery):
            tree = tree.this
        if not isinstance(tree, exp.Query):
            raise UnsupportedQueryError(
                f"provenance needs a SELECT query, got {type(tree).__name__.upper()}"
            )
        return tree
