"""The PEP 249 cursor: runs each statement of a text where it belongs, then serves the rows.

A privacy statement is run by provsql_dp (:mod:`.privacy_statements`), a private query is
answered by :func:`provsql_dp.privacy.answer.answer_private` and charged to the connection's
user, anything else passes through to DuckDB; the rows are then fetched the PEP 249 way.

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
from ...errors import InterfaceError, ProgrammingError, UnsupportedQueryError
from ...privacy.answer import answer_private
from ...privacy.failures import MIN_EPSILON, REFUSALS, release_failure
from ...privacy.release_info import PrivacyInfo
from ...privacy.roles import check_analyst
from ...sql import dialect as d
from ...sql.plan import Aggregate, Aggregates, Scan, walk
from ...sql.planner import plan_query
from .engines import refuse_mirrored
from .privacy_statements import execute_privacy_statement
from .statements import (
    epsilon_clause,
    has_epsilon_clause,
    is_privacy_statement,
    looks_like_query,
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
        self._rows: list[tuple] = []
        self._pos = 0
        self._closed = False

    # ------------------------------------------------------------------ execution
    def execute(self, sql: str, parameters=None) -> Cursor:
        self._check()
        self.privacy = None
        stmts = split_statements(sql)
        if not stmts:
            raise ProgrammingError("no SQL statement to execute")
        if parameters is not None and len(stmts) > 1:
            raise ProgrammingError("parameters can only be used with a single statement")
        for stmt in stmts:
            self._execute_one(stmt, parameters)
        return self

    def executemany(self, sql: str, seq_of_parameters) -> Cursor:
        """Execute ``sql`` once per parameter set; ``rowcount`` is the total of the changes."""
        total = 0
        counted = True
        for params in seq_of_parameters:
            self.execute(sql, params)
            if self.rowcount < 0:
                counted = False
            total += max(self.rowcount, 0)
        self.rowcount = total if counted else -1
        return self

    def _execute_one(self, stmt: str, parameters) -> None:
        con = self.connection
        ours = is_privacy_statement(stmt) or has_epsilon_clause(stmt)
        tree = None
        if ours or (con.default_epsilon is not None and looks_like_query(stmt)):
            try:
                tree = d.parse_one(stmt)
            except ParseError as e:
                if ours:
                    raise syntax_error(e) from e
                tree = None  # not ours to plan: DuckDB judges it
        if isinstance(tree, d.PRIVACY_STATEMENTS + (d.PrivateQuery,)) and parameters:
            raise ProgrammingError("privacy statements and private queries take no parameters")
        if isinstance(tree, d.PRIVACY_STATEMENTS):
            if con.role == "analyst":
                check_analyst(con, stmt, tree)
            return self._privacy_statement(tree)
        if isinstance(tree, d.PrivateQuery):
            eps, options = epsilon_clause(tree)
            return self._private_query(tree.this, eps, stmt, options)
        if (
            isinstance(tree, exp.Query)
            and con.default_epsilon is not None
            and self._touches_protected(tree)
        ):
            if parameters:
                raise ProgrammingError("private queries take no parameters")
            return self._private_query(tree, con.default_epsilon, stmt)
        if con.role == "analyst":
            check_analyst(con, stmt, tree)
        return self._passthrough(stmt, parameters)

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

    def _passthrough(self, stmt: str, parameters) -> None:
        con = self.connection
        refuse_mirrored(con, stmt)
        duck = con._duck
        kind = statement_kind(stmt)
        try:
            con._before(kind)
            res = duck.execute(stmt, parameters) if parameters is not None else duck.execute(stmt)
            desc = res.description
            rows = res.fetchall() if desc is not None else []
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
        self._set_result(desc, rows)

    def _set_result(self, desc, rows: list[tuple]) -> None:
        self.description = (
            [(c[0], _type_code(c[1]), None, None, None, None, None) for c in desc] if desc else None
        )
        self._rows = rows
        self._pos = 0
        self.rowcount = len(rows) if desc is not None else -1

    def _privacy_statement(self, tree: exp.Expression) -> None:
        out = execute_privacy_statement(self.connection, tree)
        if isinstance(out, str):
            self._set_result([("status", "VARCHAR")], [(out,)])
            self.rowcount = -1
        else:
            self._set_result(*out)

    def _private_query(self, tree: exp.Expression, epsilon: Fraction, text: str,
                       options: dict | None = None) -> None:
        con = self.connection
        if epsilon is None or epsilon <= 0:
            raise ProgrammingError("epsilon must be positive")
        if epsilon < MIN_EPSILON:
            raise ProgrammingError(
                f"epsilon {float(epsilon):g} is below the smallest ε a release accepts "
                f"({MIN_EPSILON:g}): its noise would drown any answer, and the mechanisms' work "
                "grows without bound as ε shrinks. Nothing was charged")
        with con._catalog.snapshot():  # one read of the schema and declarations per statement
            self._private_release(tree, epsilon, text, options)

    def _private_release(self, tree, epsilon, text, options) -> None:
        con = self.connection
        plan = plan_query(tree, con._catalog)
        if not isinstance(plan, (Aggregate, Aggregates)):
            raise UnsupportedQueryError(
                "a private query must end in COUNT(*), COUNT(col), COUNT(DISTINCT …), SUM(expr) or "
                "AVG(expr); "
                "raw rows are never released"
            )
        if not any(isinstance(n, Scan) and n.slots for n in walk(plan)):
            raise UnsupportedQueryError(
                "the query reads no protected table, so there is nothing to protect; "
                "run it without WITH EPSILON"
            )
        # the budget is checked by the charge itself, atomically, before any protected row is read
        try:
            desc, rows, info = answer_private(con, tree, plan, epsilon, text, options or {})
        except REFUSALS:
            raise  # decided from the statement, the schema, the declarations and the budget
        except Exception as e:  # noqa: BLE001 - a failure while reading protected data
            raise release_failure(con, e) from (None if con.role == "analyst" else e)
        self._set_result(desc, rows)
        self.privacy = info

    # ------------------------------------------------------------------ fetching
    def fetchone(self):
        self._check_result()
        if self._pos >= len(self._rows):
            return None
        row = self._rows[self._pos]
        self._pos += 1
        return row

    def fetchmany(self, size: int | None = None) -> list[tuple]:
        self._check_result()
        n = self.arraysize if size is None else size
        out = self._rows[self._pos:self._pos + n]
        self._pos += len(out)
        return out

    def fetchall(self) -> list[tuple]:
        self._check_result()
        out = self._rows[self._pos:]
        self._pos = len(self._rows)
        return out

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
        if self.description is None:
            raise ProgrammingError("the last statement produced no result set to fetch")


def _type_code(t):
    """A DuckDB type object for description (our own result sets give type names)."""
    return sqltype(t) if isinstance(t, str) else t
