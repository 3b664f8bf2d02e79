"""The PEP 249 cursor: runs each statement of a text where it belongs, then serves the rows.

A privacy statement is run by provsql_dp (:mod:`.privacy_statements`), a private query is
released by its route (:func:`provsql_dp.privacy.routing.release`) and charged to the
connection's user, an analyst's other statements are compiled (:mod:`provsql_dp.sql.analyst`:
DuckDB runs our text, never theirs), a curator's pass through to DuckDB; the rows are then
fetched the PEP 249 way.

>>> import provsql_dp
>>> cur = provsql_dp.connect().cursor()
>>> _ = cur.execute("CREATE TABLE t(a INT); INSERT INTO t VALUES (1), (2), (3)")
>>> cur.rowcount
3
>>> _ = cur.execute("SELECT a FROM t ORDER BY a")
>>> [c[0] for c in cur.description], cur.fetchone(), cur.fetchmany(5), cur.fetchall()
(['a'], (1,), [(2,), (3,)], [])
>>> cur.privacy is None
True
"""

from __future__ import annotations

from fractions import Fraction

import duckdb
from sqlglot import exp
from sqlglot.errors import ParseError

from ..._duckdb_errors import translate
from ...errors import Error, InterfaceError, ProgrammingError
from .audit_failures import audit_failure
from .declared_drops import refuse_declared_drop
from .declared_renames import refuse_protected_rename
from .guard_names import may_change_names
from .home_catalog import as_curator, keep_reachable, moves_search_path, reach_home
from .protected_copies import refuse_protected_copy
from ...privacy.error_estimate import estimate_error
from ...privacy.failures import REFUSALS, release_failure
from ...privacy.limits import check_statement
from ...privacy.policy_statements import accuracy_epsilon
from ...privacy.precheck import as_charged, charge_watch, check_epsilon
from ...privacy import gaussian_route, routing
from ...privacy._session_settings import check_session_settings
from ...privacy.accounting import Cost
from ...privacy.budget_statements import with_budget_unit
from ...privacy.post_sql import apply_post, prepare_post
from ...sql.public_statement import split_private
from ...sql.public_values import reads_clock
from ...privacy.release_clock import ReleaseClock
from ...privacy.release_info import PrivacyInfo
from ...privacy.roles import check_analyst, compile_analyst
from ...sql import dialect as d
from ...sql.planner import plan_query
from ...sql.policy_grammar import ExplainPrivacy
from ...sql._quoted_show import quoted_show
from ...sql.suggest import with_hint
from . import frames as _frames
from .engines import refresh_attached, refuse_mirrored
from .interval_columns import coverage_of, option_coverage, with_interval_columns
from .one_thread import FETCHING
from .parameters import bind, number_qmarks
from .privacy_statements import execute_privacy_statement
from .python_scope import caller_frame, run_in_scope, scope_frames
from .statements import (
    epsilon_clause,
    has_epsilon_clause,
    is_privacy_statement,
    looks_like_query,
    may_change_catalog,
    refuse_hidden_statements,
    split_statements,
    statement_kind,
    syntax_error,
)
from .types import sqltype

__all__ = ["Cursor"]


class Cursor:
    """A PEP 249 cursor on a :class:`provsql_dp.Connection` (``connection.cursor()``). Private
    answers are ordinary rows; privacy metadata is on :attr:`privacy` (None after a non-private
    statement)."""

    arraysize = 1

    def __init__(self, connection):
        self.connection = connection
        self.description: list[tuple] | None = None
        self.rowcount = -1
        self.privacy: PrivacyInfo | None = None
        #: keep COUNT releases raw (see :mod:`provsql_dp.privacy.postprocess`); default: the
        #: connection's ``raw``; ``OPTIONS (raw = true|false)`` overrides it per statement
        self.raw: bool = bool(getattr(connection, "raw", False))
        #: add ``<col>_low``/``<col>_high`` columns to a private answer's rows (True: coverage
        #: 0.95, or a coverage in (0.5, 1)); default: the connection's ``interval_columns``;
        #: ``OPTIONS (intervals = …)`` overrides it per statement (see :mod:`.interval_columns`)
        self.interval_columns = getattr(connection, "interval_columns", False)
        #: the release whose intervals fetchdf & co. add as columns (None: none to add — not a
        #: release, an error estimate, or the columns are in the rows already)
        self._frame_privacy = None
        self._rows: list[tuple] | None = []
        self._table = None  # a large plain query's rows as DuckDB's Arrow table (frames.columnar)
        self._head = self._rest_table = None
        self._pos = 0
        self._closed = False

    # ------------------------------------------------------------------ execution
    def execute(self, sql: str, parameters=None) -> Cursor:
        """Run ``sql`` (one statement, or several separated by ``;`` without parameters).

        ``parameters`` is a sequence for ``?`` / ``$1`` placeholders or a mapping for ``$name``
        (and ``:name`` in private queries). In a private query they are bound as literals before
        planning (:mod:`.parameters`); elsewhere DuckDB binds them."""
        self._check()
        self.privacy = None
        self.connection.privacy = None
        self._frame_privacy = None
        scope = None
        # entered() refuses the statement while another thread's runs on the connection
        # (.one_thread); not in the audit log, whose row would go through the connection that
        # thread is using. The watch says "failed" (after a charge) or "refused" in the log:
        # whether *this* statement charged, seen in its own thread and context — not the count
        # of the connection's charges, which another thread's charge moves (follow-up of h94attack)
        with self.connection._thread.entered(), charge_watch() as watch:
            try:  # every refusal is in the audit log, those of the text's size and tokens too
                check_statement(self.connection, sql, parameters)  # an analyst's size, depth
                stmts = split_statements(sql, self.connection._kept_tokens)
                if not stmts:
                    raise ProgrammingError("no SQL statement to execute")
                if parameters is not None and len(stmts) > 1:
                    raise ProgrammingError("parameters can only be used with a single statement")
                scope = caller_frame() if self.connection.scan_python else None
                with self.connection._cancel.statement():  # con.cancel() stops it (provsql_dp._cancel)
                    for stmt in stmts:
                        try:
                            self._execute_one(stmt, parameters, scope)
                        except ProgrammingError as e:  # a misspelt keyword of ours: say which
                            hinted = with_hint(str(e), stmt)
                            if hinted == str(e):
                                raise
                            raise type(e)(hinted) from e
            except Error as e:
                audit_failure(self.connection, sql, e, watch.charged)
                raise
            finally:
                del scope  # no reference to the caller's frame outlives the call
        return self

    def executemany(self, sql: str, seq_of_parameters) -> Cursor:
        """Execute ``sql`` once per parameter set; ``rowcount`` is the total of the changes.

        A private query is charged per execution, in order; the first refusal (an exhausted
        budget, say) raises and stops there: the executions before it stand, charged, and
        nothing after it runs or is charged. ``privacy`` then describes the last release."""
        total = 0
        counted = True
        for params in seq_of_parameters:
            self.execute(sql, params)
            if self.rowcount < 0:
                counted = False
            total += max(self.rowcount, 0)
        self.rowcount = total if counted else -1
        return self

    def _execute_one(self, stmt: str, parameters, scope=None) -> None:
        con = self.connection
        refresh_attached(con)  # Spark: tables another connection attached meanwhile
        reach_home(con)  # after USE o: our schema on the search path (home_catalog)
        ours = is_privacy_statement(stmt) or has_epsilon_clause(stmt, con._kept_tokens)
        tree = None
        if ours or (con.default_epsilon is not None and looks_like_query(stmt)):
            try:
                tree = d.parse_one(number_qmarks(stmt) if parameters is not None else stmt)
            except ParseError as e:
                if ours and parameters is not None and "for epsilon" in str(e):
                    raise ProgrammingError(
                        "ε cannot be a parameter: write it in the statement (WITH EPSILON 0.5); "
                        "the charge is read from the statement before anything is bound") from e
                if ours:
                    raise syntax_error(e) from e
                tree = None  # not ours to plan: DuckDB judges it
        if isinstance(tree, d.PRIVACY_STATEMENTS):
            if parameters:
                raise ProgrammingError("privacy statements take no parameters")
            if con.role == "analyst":
                check_analyst(con, stmt, tree)
            if isinstance(tree, ExplainPrivacy) and tree.args.get("estimate") is not None:
                return self._error_estimate(tree, stmt)  # charged: a release, not a statement
            try:
                return self._privacy_statement(tree)
            finally:
                con._catalog.changed()  # declarations may have changed: every connection re-reads
        if isinstance(tree, d.PrivateQuery):
            eps, options = epsilon_clause(tree)
            # tree is parse_one's copy, ours: its query is bound in place, detached (a root, as
            # a copy would be)
            query = bind(tree.this.pop(), parameters, copy=False)
            # the plan is kept under the text when the text alone makes the tree
            key = stmt if parameters is None else None
            cost = gaussian_route.cost_of(tree)  # WITH EPSILON ε DELTA δ, WITH RHO ρ
            if cost is not None:
                return self._private_query(query, cost, _ledger_text(stmt, parameters), options,
                                           scope, key)
            if eps is None:  # WITH ACCURACY α [CONFIDENCE c]: the ε EXPLAIN PRIVACY finds
                bound = tree.copy()
                bound.set("this", query)
                eps = accuracy_epsilon(con, bound)
            return self._private_query(query, eps, _ledger_text(stmt, parameters), options, scope,
                                       key)
        if isinstance(tree, exp.Query) and con.default_epsilon is not None:
            query = bind(tree, parameters)  # x = ANY([…]) as x IN (…) too
            if self._touches_protected(query):
                return self._private_query(query, con.default_epsilon,
                                           _ledger_text(stmt, parameters), None, scope,
                                           stmt if parameters is None else None)
        if con.role == "analyst":
            return self._analyst_statement(stmt, tree, parameters)
        stmt = quoted_show(stmt)  # SHOW group: the table's names quoted (sql.show_names)
        refuse_hidden_statements(con._duck, stmt)  # a second statement no check here reads
        if not may_change_catalog(stmt):
            return self._passthrough(stmt, parameters, scope)
        refuse_protected_rename(con, stmt)  # its rows would be public under the new name
        refuse_declared_drop(con, stmt)  # its declarations would outlive it
        refuse_protected_copy(con, stmt)  # protected rows into a table analysts can read
        try:
            result = self._passthrough(stmt, parameters, scope)
            if moves_search_path(stmt):  # USE o: our schema stays reachable (home_catalog)
                keep_reachable(con)
            return result
        finally:  # the schema or the declarations may have changed: every connection re-reads
            # — at the transaction's end when one is open (its changes are seen by no other
            # connection before; a bump inside it writes the home database, which aborts a
            # transaction that wrote to an attached one and loses its changes)
            con._catalog.changed(names=may_change_names(stmt, statement_kind(stmt)),
                                 bump=not con._in_tx)

    def _analyst_statement(self, stmt: str, tree, parameters) -> None:
        """An analyst's statement that is neither private nor ours: compiled
        (:mod:`provsql_dp.sql.analyst`, parameters bound as literals first); DuckDB runs only
        the text we emit, or nothing when the catalog answers."""
        if tree is None:
            try:
                tree = d.parse_one(number_qmarks(stmt) if parameters is not None else stmt)
            except ParseError:
                tree = None  # refused by compile_analyst, by its first word
        if tree is not None:
            tree = bind(tree, parameters)
        compiled = compile_analyst(self.connection, stmt, tree)
        if compiled is None:  # private queries and our statements took their own paths above
            raise InterfaceError(f"an analyst statement reached no path: {stmt[:80]!r}")
        if compiled.rows is not None:
            self._set_result(compiled.description, compiled.rows)
            return None
        return self._passthrough(compiled.sql, None, None)

    def _touches_protected(self, tree: exp.Expression) -> bool:
        prot = {(p.schema.lower(), p.table.lower()) for p in self.connection._catalog.list_protected()}
        if not prot:
            return False
        names = {t.name.lower() for t in tree.find_all(exp.Table)}
        return any(t in names for _, t in prot) or bool(
            names & {v.lower() for v in self._views()}
        )

    def _views(self) -> list[str]:
        return [r[0] for r in self.connection._duck.execute(
            "SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()]

    def _passthrough(self, stmt: str, parameters, scope=None) -> None:
        con = self.connection
        refuse_mirrored(con, stmt)
        duck = con._duck
        kind = statement_kind(stmt)

        def run():  # under the curator's search path after USE o (home_catalog), fetched whole
            res = run_in_scope(duck, stmt, parameters, scope)
            desc, table, rest = res.description, None, None
            if desc is None:
                rows = []
            elif kind == "query" and _frames.can_be_columnar(desc):
                rows = res.fetchmany(_frames.HEAD)
                if len(rows) == _frames.HEAD:  # a large result: the rest stays columnar
                    table, rest = _frames.columnar(res, rows)
                    if table is None:
                        rows = rows + _frames.rows_of(rest)
            else:
                rows = res.fetchall()
            return desc, rows, table, rest

        try:
            con._before(kind)
            desc, rows, table, rest = as_curator(con, stmt, run)
        except duckdb.Error as e:
            err = translate(e)
            if con._in_tx and kind != "end":
                # DuckDB aborts a transaction on any error: end it now, so the connection stays
                # usable, and say so (its uncommitted changes are gone).
                con.rollback()
                err = type(err)(f"{err} (the open transaction was rolled back)")
            raise err from e
        if kind in ("begin", "end"):
            con._before(kind)
        counted = desc is not None and len(desc) == 1 and desc[0][0] == "Count"
        if kind != "query" and counted:
            # DuckDB reports a data change's row count (and a DDL's nothing) as a result set;
            # PEP 249 wants no result set and the count in rowcount.
            self._set_result(None, [])
            self.rowcount = rows[0][0] if kind == "dml" and rows else -1
            return
        self._set_result(desc, rows, table, rest)

    def _set_result(self, desc, rows: list[tuple], table=None, rest=None) -> None:
        """``rows`` are the result's tuples; for a large plain query, its first tuples, with
        ``table`` the whole result in Arrow and ``rest`` the Arrow of the rows after them."""
        self.description = (
            [(c[0], _type_code(c[1]), None, None, None, None, None) for c in desc] if desc else None
        )
        self._rows = rows if table is None else None
        self._head = rows if table is not None else None
        self._table, self._rest_table = table, rest
        self._pos = 0
        n = len(rows) if table is None else table.num_rows
        self.rowcount = n if desc is not None else -1

    def _all_rows(self) -> list[tuple]:
        """The result's rows as tuples (those after the head made from Arrow on first use)."""
        if self._rows is None:
            self._rows = self._head + _frames.rows_of(self._rest_table)
            self._head = self._rest_table = None
        return self._rows

    def _privacy_statement(self, tree: exp.Expression) -> None:
        out = execute_privacy_statement(self.connection, tree)
        if isinstance(out, str):
            self._set_result([("status", "VARCHAR")], [(out,)])
            self.rowcount = -1
        else:
            self._set_result(*out)

    def _error_estimate(self, tree, text: str) -> None:
        """``EXPLAIN PRIVACY … ESTIMATE ERROR WITH EPSILON e``: charged e, released privately
        (:mod:`provsql_dp.privacy.error_estimate`); ``privacy`` describes the charge."""
        con = self.connection
        check_session_settings(con)  # its release reads the statement's rows (h63attack-3)
        with ReleaseClock(con.release_seconds, con.release_time_limit), con._catalog.snapshot():
            desc, rows, info = estimate_error(con, tree, text)
        self._set_result(desc, rows)
        self.privacy = info
        con.privacy = info

    def _private_query(self, tree: exp.Expression, epsilon: Fraction, text: str,
                       options: dict | None = None, scope=None, key: str | None = None) -> None:
        """``key``: the statement's text when the text alone makes ``tree`` (no parameters):
        its plan is then kept under it, else under the SQL of the tree."""
        con = self.connection
        if not isinstance(epsilon, Cost):  # a Cost (δ or ρ) is validated by gaussian_route
            check_epsilon(epsilon)  # positive, finite, within [MIN_EPSILON, MAX_EPSILON]: before ε
        # DataFrames the query names from the caller's scope are registered first (public);
        # the release is padded to the connection's public release time, if it has one
        with ReleaseClock(con.release_seconds, con.release_time_limit), \
                scope_frames(con, tree, scope), con._catalog.snapshot(), charge_watch() as watch:
            # one read of the schema and declarations per statement
            try:
                self._private_release(tree, epsilon, text, options, key)
            except Error as err:  # "charged" only when it was
                failure = as_charged(err, watch)
                if failure is err:
                    raise
                raise failure from err.__cause__

    def _private_release(self, tree, epsilon, text, options, key=None) -> None:
        con = self.connection
        options = dict(options or {})
        coverage = option_coverage(options.pop("intervals", None), coverage_of(self.interval_columns))
        # the route: the first of privacy.routing.ROUTES that applies (the one EXPLAIN PRIVACY
        # names), from the statement, its plan and the declarations only. A plan is kept while
        # the catalog keeps what it read (Catalog.snapshot says when that is)
        # ORDER BY, HAVING, LIMIT, arithmetic over aggregates: applied to the released values
        # its clock read now, into the tree: its plan is never kept (a new instant each time)
        clock = reads_clock(tree)
        key = None if clock else key
        tree, post = split_private(con._catalog, tree)
        st = routing.Statement(con, tree, options, planner=(lambda: plan_query(
            tree, con._catalog)) if clock else lambda: con._catalog.cached(
            ("plan", "text", key) if key is not None else ("plan", tree.sql(dialect="duckdb")),
            lambda: plan_query(tree, con._catalog)))
        route = None if isinstance(epsilon, Cost) else routing.choose(st) if key is None else \
            con._catalog.cached(("route", key), lambda: routing.choose(st))  # the text decides
        if isinstance(epsilon, Cost):  # a variance or a mixed list: refused in its own words
            gaussian_route.no_mixed(st, epsilon)
        post = prepare_post(st, route, post)  # refused here, before any charge
        check_session_settings(con)  # DuckDB evaluates as make_total assumes (h63attack-3)
        # the budget is checked by the charge itself, atomically, before any protected row is read
        try:
            if isinstance(epsilon, Cost):
                desc, rows, info = gaussian_route.release(st, epsilon, text, raw=self.raw)
            else:
                desc, rows, info = routing.release(st, epsilon, text, raw=self.raw, route=route)
            info = with_budget_unit(con, info)  # ε, or ρ on a zCDP budget
        except REFUSALS:
            raise  # decided from the statement, the schema, the declarations and the budget
        except Exception as e:  # noqa: BLE001 - a failure while reading protected data
            raise release_failure(con, e) from (None if con.role == "analyst" else e)
        if post is not None:  # free: a function of the released values only
            desc, rows, info = apply_post(post, desc, rows, info, time_zone=_time_zone(con))
        self._release_result(desc, rows, info, coverage)

    def _release_result(self, desc, rows, info, coverage) -> None:
        """Serve a private answer (with its interval columns when ``coverage`` is set)."""
        if coverage is not None:  # post-processing of released values: free
            desc, rows = with_interval_columns(desc, rows, info, coverage)
        self._set_result(desc, rows)
        self._frame_privacy = info if coverage is None else None  # never the columns twice
        self.privacy = info
        self.connection.privacy = info

    # ------------------------------------------------------------------ fetching
    def fetchone(self):
        self._check_result()
        rows = self._all_rows()
        if self._pos >= len(rows):
            return None
        row = rows[self._pos]
        self._pos += 1
        return row

    def fetchmany(self, size: int | None = None) -> list[tuple]:
        self._check_result()
        n = self.arraysize if size is None else size
        out = self._all_rows()[self._pos:self._pos + n]
        self._pos += len(out)
        return out

    def fetchall(self) -> list[tuple]:
        self._check_result()
        out = self._all_rows()[self._pos:]
        self._pos = len(self._rows)
        return out

    # ------------------------------------------------------------------ DataFrames, Arrow, numpy
    def fetch_arrow_table(self, *, coverage: float = 0.95):
        """The rows not yet fetched as a ``pyarrow.Table``. For a private answer each released
        column ``<col>`` is followed by ``<col>_low`` and ``<col>_high``, the interval of
        :meth:`PrivacyInfo.intervals` at ``coverage`` (see :mod:`.frames`)."""
        if self._table is not None:  # a plain query: DuckDB's own Arrow table
            self._check_result()
            out, self._pos = self._table.slice(self._pos), self._table.num_rows
            return out
        desc, rows, info, start = self._rest()
        return _frames.arrow_table(desc, rows, info, coverage, start)

    def fetchdf(self, *, coverage: float = 0.95):
        """The rows not yet fetched as a pandas DataFrame (interval columns as in
        :meth:`fetch_arrow_table`)."""
        if self._table is not None:
            return _frames.through_duckdb(self.fetch_arrow_table(), "df")
        desc, rows, info, start = self._rest()
        return _frames.data_frame(desc, rows, info, coverage, start)

    def fetchnumpy(self, *, coverage: float = 0.95) -> dict:
        """The rows not yet fetched as ``{column: numpy array}`` (masked where NULL)."""
        if self._table is not None:
            return _frames.through_duckdb(self.fetch_arrow_table(), "numpy")
        desc, rows, info, start = self._rest()
        return _frames.numpy_columns(desc, rows, info, coverage, start)

    fetch_df = df = fetchdf  # DuckDB's other names
    arrow = fetch_arrow_table

    def _rest(self):
        """(description, the rows not yet fetched, the privacy info, the first row's index)."""
        self._check_result()
        start = self._pos
        return self.description, self.fetchall(), self._frame_privacy, start

    def __iter__(self) -> Cursor:
        return self

    def __next__(self) -> tuple:
        row = self.fetchone()
        if row is None:
            raise StopIteration
        return row

    def close(self) -> None:
        self._closed = True

    def setinputsizes(self, sizes) -> None:
        pass

    def setoutputsize(self, size, column=None) -> None:
        pass

    def _check(self) -> None:
        if self._closed:
            raise InterfaceError("the cursor is closed")
        self.connection._check_open()

    def _check_result(self) -> None:
        self._check()
        if self.connection._thread.busy_elsewhere():  # a result being replaced (.one_thread)
            raise ProgrammingError(FETCHING)
        if self.description is None:
            raise ProgrammingError("the last statement produced no result set to fetch")


def _ledger_text(stmt: str, parameters) -> str:
    """The statement as the ledger records it: with its parameters, when it had some (their
    repr is one line, so the text still parses)."""
    return stmt if parameters is None else f"{stmt} -- parameters: {parameters!r}"


def _type_code(t):
    """A DuckDB type object for description (our own result sets give type names)."""
    return sqltype(t) if isinstance(t, str) else t


def _time_zone(con) -> str | None:
    """The session's ``TimeZone`` (post-processing shows instants in it, as the release does)."""
    try:
        return con._duck.execute("SELECT current_setting('TimeZone')").fetchall()[0][0]
    except duckdb.Error:
        return None
