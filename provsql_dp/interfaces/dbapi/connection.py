"""The front door: a PEP 249 style connection over DuckDB that understands privacy statements.

Statements are split on top-level ``;`` with sqlglot's tokenizer, then dispatched:

* privacy statements (``PROTECT``, ``UNPROTECT``, ``SHOW PROTECTED``, ``SET PRIVACY BUDGET``,
  ``SHOW PRIVACY BUDGET``, ``SET PRIVACY EPSILON``) are executed by provsql_dp;
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

from fractions import Fraction

import duckdb
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from ..._numbers import format_eps
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
from ...privacy.answer import answer_private
from ...privacy.ledger import Ledger
from ...privacy.release_info import PrivacyInfo
from ...privacy.roles import ROLES, check_analyst
from ...provenance.capture import capture
from ...provenance.krelation import KRelation
from ...sql import dialect as d
from ...sql import policy_grammar as _policy_grammar
from ...sql.catalog import Catalog
from ...sql.plan import Aggregate, Node, Scan, walk
from ...sql.planner import plan_query
from .types import sqltype

__all__ = ["connect", "Connection", "Cursor", "PrivacyInfo"]

_OUR_KEYWORDS = {"PROTECT", "UNPROTECT"}
_OUR_PAIRS = {("SHOW", "PROTECTED"), ("SET", "PRIVACY"), ("SHOW", "PRIVACY"),
              *_policy_grammar.KEYWORD_PAIRS}


def connect(database: str = ":memory:", *, role: str = "curator", user: str | None = None,
            read_only: bool = False, config: dict | None = None) -> Connection:
    """Open a provsql_dp connection over a DuckDB database (a file path or ``":memory:"``).

    ``role`` is ``"curator"`` (everything, including reading protected rows) or ``"analyst"``
    (private answers and public tables only; see :mod:`provsql_dp.privacy.roles`). ``user`` names whose
    budget private queries spend (default ``"default"``)."""
    return Connection(database, role=role, user=user, read_only=read_only, config=config)


def _translate(e: Exception) -> Error:
    """Map a DuckDB exception onto the PEP 249 hierarchy."""
    msg = str(e)
    if isinstance(e, duckdb.InvalidInputException):
        # DuckDB reports both bad parameters and bad data (division by zero) this way
        return ProgrammingError(msg) if "parameter" in msg.lower() else DataError(msg)
    if isinstance(e, (duckdb.ParserException, duckdb.CatalogException, duckdb.BinderException,
                      duckdb.SyntaxException)):
        return ProgrammingError(msg)
    if isinstance(e, duckdb.ConstraintException):
        return IntegrityError(msg)
    if isinstance(e, (duckdb.ConversionException, duckdb.OutOfRangeException, duckdb.DataError)):
        return DataError(msg)
    if isinstance(e, duckdb.NotImplementedException):
        return NotSupportedError(msg)
    if isinstance(e, (duckdb.TransactionException, duckdb.IOException, duckdb.OperationalError)):
        return OperationalError(msg)
    if isinstance(e, duckdb.InternalException):
        return InternalError(msg)
    return DatabaseError(msg)


def split_statements(sql: str) -> list[str]:
    """Split SQL text on top-level semicolons (string literals and comments respected)."""
    try:
        tokens = d.ProvDP().tokenize(sql)
    except (TokenError, ParseError) as e:
        raise ProgrammingError(f"could not read the SQL text: {e}") from e
    out, start, has_tokens = [], 0, False
    for tok in tokens:
        if tok.token_type == TokenType.SEMICOLON:
            piece = sql[start:tok.start].strip()
            if piece and has_tokens:  # a piece of comments only is no statement
                out.append(piece)
            start, has_tokens = tok.end + 1, False
        else:
            has_tokens = True
    tail = sql[start:].strip()
    if tail and has_tokens:
        out.append(tail)
    return out


def _is_ours(stmt: str) -> bool:
    words = stmt.split(None, 2)
    if not words:
        return False
    first = words[0].upper()
    if first in _OUR_KEYWORDS:
        return True
    return len(words) > 1 and (first, words[1].upper().rstrip(";")) in _OUR_PAIRS


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

    def __init__(self, database: str = ":memory:", *, role: str = "curator",
                 user: str | None = None, read_only: bool = False, config: dict | None = None):
        if role not in ROLES:
            raise InterfaceError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
        try:
            self._duck = duckdb.connect(database, read_only=read_only, config=config or {})
        except duckdb.IOException as e:
            raise OperationalError(
                f"cannot open {database!r}: {e}. DuckDB lets one process write a database file at "
                "a time; close the other process's connection, or open this one read_only=True"
            ) from e
        except duckdb.Error as e:
            raise _translate(e) from e
        self.database = database
        self.role = role
        self.read_only = read_only
        self.user = user or "default"
        self._catalog = Catalog(self._duck, read_only=read_only)
        self._ledger = Ledger(self._duck, read_only=read_only)
        self.default_epsilon: Fraction | None = None
        self.autocommit = False
        self._in_tx = False
        self._closed = False

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
    def catalog(self):
        """The privacy declarations; read-only for an analyst (declarations are public)."""
        if self.role == "curator":
            return self._catalog
        return _ReadOnlyCatalog(self._catalog)

    @property
    def ledger(self):
        """The budget ledger: all of it for a curator, one's own budget for an analyst."""
        if self.role == "curator":
            return self._ledger
        return _OwnLedger(self._ledger, self.user)

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

    def commit(self) -> None:
        self._check_open()
        self._in_tx = False
        try:
            self._duck.commit()
        except duckdb.TransactionException:
            pass  # no transaction is active: nothing to commit
        except duckdb.Error as e:
            raise _translate(e) from e

    def rollback(self) -> None:
        self._check_open()
        self._in_tx = False
        try:
            self._duck.rollback()
        except duckdb.TransactionException:
            pass
        except duckdb.Error as e:
            raise _translate(e) from e

    def close(self) -> None:
        """Close the connection; an uncommitted transaction is rolled back (PEP 249)."""
        if not self._closed:
            if self._in_tx:
                try:
                    self._duck.rollback()
                except duckdb.Error:
                    pass
            self._duck.close()
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
        return plan_query(tree, self._catalog)

    def provenance(self, sql: str) -> KRelation:
        """Capture the K-relation of a query: its rows (before the final aggregate), weights
        q(t) and DNF annotations over the participants of the protected tables involved.

        This exposes private data: curator only."""
        self._require_curator("provenance (the K-relation exposes protected rows)")
        plan = self.plan(sql)
        try:
            return capture(self._duck, plan)
        except duckdb.Error as e:
            raise _translate(e) from e

    def explain(self, sql: str, epsilon: float = 1.0, **options) -> str:
        """The plan of a query and, for an aggregate, the recursive mechanism's private
        diagnostics (Δ, X, empirical sensitivities, H/G sizes) without drawing noise or charging
        anything. The diagnostics are functions of the private data: curator only."""
        from ...mechanisms import recursive as rm
        from ...privacy.answer import mechanism_kwargs, privacy_style
        from ...sql.plan import explain as explain_plan

        self._require_curator("explain (its diagnostics are functions of the private data)")
        plan = self.plan(sql)
        text = explain_plan(plan)
        if not isinstance(plan, Aggregate):
            return text
        kr = capture(self._duck, plan)
        style, kwargs = mechanism_kwargs(options, float(epsilon), privacy_style(plan))
        weights = kr.weights
        if (weights < 0).any():
            return text + "\n(signed SUM: each part is released separately; diagnostics per part not shown)"
        ex = rm.explain(kr, float(epsilon), style, **kwargs)
        return text + "\n" + str(ex)

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
            raise ProgrammingError(f"syntax error: {_first_line(e)}") from e
        if isinstance(tree, d.PrivateQuery):
            tree = tree.this
        if not isinstance(tree, exp.Query):
            raise UnsupportedQueryError(
                f"provenance needs a SELECT query, got {type(tree).__name__.upper()}"
            )
        return tree


class Cursor:
    """A PEP 249 cursor. Private answers are ordinary rows; privacy metadata is on
    :attr:`privacy` (None after a non-private statement)."""

    arraysize = 1

    def __init__(self, connection: Connection):
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
        ours = _is_ours(stmt) or _has_epsilon_clause(stmt)
        tree = None
        if ours or (con.default_epsilon is not None and _looks_like_query(stmt)):
            try:
                tree = d.parse_one(stmt)
            except ParseError as e:
                if ours:
                    raise ProgrammingError(f"syntax error: {_first_line(e)}") from e
                tree = None  # not ours to plan: DuckDB judges it
        if isinstance(tree, d.PRIVACY_STATEMENTS + (d.PrivateQuery,)) and parameters:
            raise ProgrammingError("privacy statements and private queries take no parameters")
        if isinstance(tree, d.PRIVACY_STATEMENTS):
            if con.role == "analyst":
                check_analyst(con, stmt, tree)
            return self._privacy_statement(tree)
        if isinstance(tree, d.PrivateQuery):
            eps = d.exact_number(tree.args["epsilon"], "epsilon")
            try:
                options = d.mechanism_options(tree)
            except ParseError as e:
                raise ProgrammingError(str(e)) from e
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
        duck = con._duck
        kind = _statement_kind(stmt)
        try:
            con._before(kind)
            res = duck.execute(stmt, parameters) if parameters is not None else duck.execute(stmt)
            desc = res.description
            rows = res.fetchall() if desc is not None else []
        except duckdb.Error as e:
            err = _translate(e)
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

    # ------------------------------------------------------------------ privacy statements
    def _privacy_statement(self, tree: exp.Expression) -> None:
        con = self.connection
        cat = con._catalog
        if con.read_only and isinstance(tree, (d.Protect, d.Unprotect, d.SetPrivacyBudget)):
            raise OperationalError("the database is open read-only; declarations cannot change")
        if con._in_tx and not type(tree).__name__.startswith("Show"):
            # A declaration must never hang on an uncommitted transaction (a forgotten commit
            # would silently unprotect a table): commit first, like sqlite3 before DDL.
            con.commit()
        if isinstance(tree, d.Protect):
            table = [p.name for p in tree.this.parts]
            by = [c.name for c in tree.expressions] if tree.expressions else None
            domain = tree.text("domain") or None
            prot = cat.protect(table, by, domain)
            self._set_result(None, [])
            self._status(f"protected {prot.table}: {prot.describe()}")
        elif isinstance(tree, d.Unprotect):
            prot = cat.unprotect([p.name for p in tree.this.parts])
            self._status(f"unprotected {prot.table}")
        elif isinstance(tree, d.ShowProtected):
            rows = [
                (p.schema, p.table, p.domain, ", ".join(p.by_columns) or None,
                 ", ".join(p.key_columns) if not p.by_columns else None,
                 "owners" if p.by_columns else ("primary key" if p.key_columns else "rowid"))
                for p in cat.list_protected()
            ]
            self._set_result(
                [("schema", "VARCHAR"), ("table", "VARCHAR"), ("domain", "VARCHAR"),
                 ("by_columns", "VARCHAR"), ("key_columns", "VARCHAR"), ("participant", "VARCHAR")],
                rows,
            )
        elif isinstance(tree, d.SetPrivacyBudget):
            eps = d.exact_number(tree.args["epsilon"], "the privacy budget")
            user = tree.args.get("user")
            name = user.name if user is not None else con.user
            con._ledger.set_budget(name, eps)
            self._status(f"privacy budget of {name!r} set to {format_eps(eps)}")
        elif isinstance(tree, d.ShowPrivacyBudget):
            user = tree.args.get("user")
            users = con._ledger.users()
            if user is not None:
                users = [u for u in users if u[0] == user.name]
            if con.role == "analyst":
                if user is not None and user.name != con.user:
                    raise PrivacyError("an analyst can see only their own budget")
                users = [u for u in users if u[0] == con.user]
            rows = [(u, format_eps(t), format_eps(s), format_eps(t - s)) for u, t, s in users]
            self._set_result(
                [("user", "VARCHAR"), ("total", "VARCHAR"), ("spent", "VARCHAR"), ("remaining", "VARCHAR")],
                rows,
            )
        elif isinstance(tree, d.SetPrivacyEpsilon):
            eps = d.exact_number(tree.args["epsilon"], "epsilon")
            if eps <= 0:
                raise ProgrammingError("epsilon must be positive")
            con.default_epsilon = eps
            self._status(f"default epsilon set to {format_eps(eps)}")
        elif isinstance(tree, _policy_grammar.POLICY_STATEMENTS):
            from ...privacy.policy_statements import execute_policy_statement

            desc, rows = execute_policy_statement(con, tree)
            self._set_result(desc, rows)
        else:  # pragma: no cover
            raise InternalError(f"unhandled statement {type(tree).__name__}")

    def _status(self, message: str) -> None:
        self._set_result([("status", "VARCHAR")], [(message,)])
        self.rowcount = -1

    # ------------------------------------------------------------------ private queries
    def _private_query(self, tree: exp.Expression, epsilon: Fraction, text: str,
                       options: dict | None = None) -> None:
        con = self.connection
        if epsilon is None or epsilon <= 0:
            raise ProgrammingError("epsilon must be positive")
        plan = plan_query(tree, con._catalog)
        if not isinstance(plan, Aggregate):
            raise UnsupportedQueryError(
                "a private query must end in COUNT(*), COUNT(col), COUNT(DISTINCT …) or SUM(expr); "
                "raw rows are never released"
            )
        if not any(isinstance(n, Scan) and n.slots for n in walk(plan)):
            raise UnsupportedQueryError(
                "the query reads no protected table, so there is nothing to protect; "
                "run it without WITH EPSILON"
            )
        con._ledger.check(con.user, epsilon)  # fail fast, before any work on private data
        try:
            desc, rows, info = answer_private(con, tree, plan, epsilon, text, options or {})
        except duckdb.Error as e:
            raise _translate(e) from e
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


_DML = {"INSERT", "UPDATE", "DELETE", "MERGE", "UPSERT", "REPLACE"}
_QUERY = {"SELECT", "WITH", "FROM", "VALUES", "TABLE", "SHOW", "DESCRIBE", "SUMMARIZE", "EXPLAIN",
          "PRAGMA", "CALL", "(", "PIVOT", "UNPIVOT"}


def _statement_kind(stmt: str) -> str:
    """'query', 'dml', 'begin', 'end' or 'other', from the statement's first keyword."""
    head = stmt.lstrip().split(None, 1)
    word = head[0].upper().rstrip(";") if head else ""
    if word.startswith("("):
        return "query"
    if word in _DML:
        return "query" if " RETURNING " in f" {stmt.upper()} " else "dml"
    if word in ("BEGIN", "START"):
        return "begin"
    if word in ("COMMIT", "END", "ROLLBACK", "ABORT"):
        return "end"
    return "query" if word in _QUERY else "other"


def _first_line(e: Exception) -> str:
    return str(e).splitlines()[0] if str(e) else type(e).__name__


def _looks_like_query(stmt: str) -> bool:
    first = stmt.lstrip("( \n\t").split(None, 1)
    return bool(first) and first[0].upper() in ("SELECT", "WITH", "FROM")


def _has_epsilon_clause(stmt: str) -> bool:
    """Whether the statement's tokens contain ``WITH EPSILON`` (our private-query clause)."""
    if "EPSILON" not in stmt.upper():
        return False
    try:
        tokens = d.ProvDP().tokenize(stmt)
    except (TokenError, ParseError):
        return False
    return any(
        a.text.upper() == "WITH" and b.text.upper() == "EPSILON" and b.token_type != TokenType.STRING
        and b.token_type != TokenType.IDENTIFIER
        for a, b in zip(tokens, tokens[1:])
    )


class _OwnLedger:
    """An analyst's view of the ledger: their own budget and charges, nothing else."""

    def __init__(self, ledger: Ledger, user: str):
        self._ledger = ledger
        self.user = user

    def _own(self, user: str) -> None:
        if user != self.user:
            raise PrivacyError("an analyst can see and spend only their own budget")

    def budget(self, user: str | None = None):
        self._own(user or self.user)
        return self._ledger.budget(self.user)

    def remaining(self, user: str | None = None) -> Fraction:
        self._own(user or self.user)
        return self._ledger.remaining(self.user)

    def users(self) -> list:
        return [u for u in self._ledger.users() if u[0] == self.user]

    def entries(self, user: str | None = None) -> list:
        self._own(user or self.user)
        return self._ledger.entries(self.user)

    def check(self, user: str, epsilon) -> None:
        self._own(user)
        self._ledger.check(user, epsilon)

    def charge(self, user: str, epsilon, statement, mechanism):
        self._own(user)
        return self._ledger.charge(user, epsilon, statement, mechanism)

    def set_budget(self, user: str, total) -> None:
        raise PrivacyError("only the curator sets privacy budgets")


class _ReadOnlyCatalog:
    """An analyst's view of the catalog: the declarations can be read, not changed."""

    def __init__(self, catalog: Catalog):
        self._catalog = catalog

    def __getattr__(self, name: str):
        if name in ("protect", "unprotect", "ensure"):
            raise PrivacyError("only the curator changes privacy declarations")
        return getattr(self._catalog, name)
