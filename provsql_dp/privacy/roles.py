"""Roles: what a curator and an analyst may run.

A **curator** owns the database: every statement passes, including reading protected rows.
An **analyst** gets private answers only. An analyst may run:

* private queries (``… WITH EPSILON ε``, or aggregates after ``SET PRIVACY EPSILON``);
* ``SHOW PROTECTED``, ``SHOW POLICIES``, ``SHOW BOUNDS``, ``SHOW GROUP KEYS`` (declarations
  are public), ``SHOW PRIVACY BUDGET`` (their own), ``SET PRIVACY EPSILON``;
* ordinary queries that read only *public* tables (and views over them), by name — no table
  functions (``read_csv``, ``query(…)``, ``duckdb_tables()``), no file paths, no catalog tables;
* ``SHOW TABLES`` and ``DESCRIBE`` (schemas are not private).

Everything else — reading a protected table, DML or DDL, ``PROTECT``/``UNPROTECT``, policy,
bounds, group-key and budget statements, ``ATTACH``, ``COPY``, ``EXPORT``, ``PRAGMA``, ``SET``, ``INSTALL``/``LOAD``,
transactions — is refused with :class:`~provsql_dp.errors.PrivacyError`, before anything runs.

The roles are enforced at the SQL boundary (the connection's ``execute``, the shell). Python code
that holds a connection object can always reach its internals: give analysts the shell or the
SQL interface, not the Python process of the curator.

>>> import provsql_dp
>>> cur_con = provsql_dp.connect()
>>> check_analyst(cur_con, "COPY t TO 'x.csv'", None)
Traceback (most recent call last):
  ...
provsql_dp.errors.PrivacyError: an analyst cannot run COPY: analysts get private answers only (… WITH EPSILON ε) and may read public tables
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp

from ..errors import PrivacyError, ProgrammingError
from ..sql import dialect as d
from ..sql.catalog import SCHEMA
from ..sql.suggest import did_you_mean

__all__ = ["ROLES", "check_analyst", "ANALYST_STATEMENTS"]

ROLES = ("curator", "analyst")

# Our statements an analyst may run (by class name, so policy statements added later fit in).
ANALYST_STATEMENTS = {"ShowProtected", "ShowPrivacyBudget", "SetPrivacyEpsilon", "ShowPolicies",
                      "ShowBounds", "ShowGroupKeys", "ShowStreams",
                      # EXPLAIN PRIVACY reads no data and spends nothing; with ESTIMATE ERROR it
                      # is a release, charged to the analyst's own budget like a private query
                      "ExplainPrivacy"}

_MAX_VIEW_DEPTH = 32


def _refuse(what: str) -> PrivacyError:
    return PrivacyError(
        f"an analyst cannot run {what}: analysts get private answers only (… WITH EPSILON ε) "
        "and may read public tables"
    )


def check_analyst(con, stmt: str, tree: exp.Expression | None) -> None:
    """Raise :class:`PrivacyError` unless an analyst may run ``stmt`` (parsed as ``tree``).

    Private queries are checked later by the planner (they may read protected tables)."""
    if tree is None:
        try:
            tree = d.parse_one(stmt)
        except Exception as e:  # noqa: BLE001 - any parse failure
            hint = did_you_mean(stmt)
            if hint:  # a misspelt keyword of ours, not a statement analysts may not run
                first = str(e).splitlines()[0] if str(e) else type(e).__name__
                raise ProgrammingError(f"syntax error: {first} ({hint})") from None
            words = stmt.split()
            raise _refuse(words[0].upper() if words else "an empty statement") from None
    if isinstance(tree, d.PrivateQuery):
        return
    if isinstance(tree, d.PRIVACY_STATEMENTS):
        if type(tree).__name__ in ANALYST_STATEMENTS:
            return
        raise _refuse(_statement_name(tree))
    if isinstance(tree, exp.Query):
        check_public_query(con, tree)
        return
    if isinstance(tree, exp.Describe):
        return
    if isinstance(tree, exp.Show) and str(tree.name).upper() in ("TABLES", "ALL TABLES"):
        return
    raise _refuse(_statement_name(tree))


def check_public_query(con, tree: exp.Expression, depth: int = 0) -> None:
    """A non-private query of an analyst must read only public tables, by name."""
    if depth > _MAX_VIEW_DEPTH:
        raise PrivacyError("views are nested too deeply to be checked")
    if tree.find(exp.Command) is not None:
        raise _refuse("this statement")
    _check_functions(con, tree)
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    protected = {(p.schema.lower(), p.table.lower()) for p in con._catalog.list_protected()}
    for t in tree.find_all(exp.Table):
        if not isinstance(t.this, exp.Identifier):
            raise PrivacyError(
                f"an analyst cannot use the table function {t.this.sql(dialect='duckdb')}: "
                "only tables of the database can be read"
            )
        parts = [p.name for p in t.parts]
        if len(parts) == 1 and parts[0].lower() in ctes:
            continue
        info = con._catalog.find_table(parts)
        if info is None:
            raise PrivacyError(
                f"an analyst can read only tables of the database; {'.'.join(parts)!r} is not one"
            )
        if info.schema == SCHEMA:
            raise PrivacyError("an analyst cannot read the provsql_dp catalog; use SHOW PRIVACY BUDGET")
        if (info.schema.lower(), info.name.lower()) in protected:
            raise PrivacyError(
                f"table {info.name!r} is protected: an analyst cannot read its rows. Ask an "
                "aggregate privately instead, e.g. SELECT COUNT(*) FROM … WITH EPSILON 0.1"
            )
        if info.view_sql is not None:
            try:
                view = sqlglot.parse_one(info.view_sql, read="duckdb")
            except sqlglot.errors.ParseError:
                raise PrivacyError(f"view {info.name!r} could not be checked, so an analyst cannot read it") from None
            body = view.expression if isinstance(view, exp.Create) else view
            check_public_query(con, body, depth + 1)


def _check_functions(con, tree: exp.Expression) -> None:
    """User-defined macros and functions may read protected tables inside their bodies (a scalar
    macro can hide ``(SELECT count(*) FROM protected)``): an analyst cannot call them."""
    names = set()
    for f in tree.find_all(exp.Func):
        if isinstance(f, exp.Anonymous):
            names.add(str(f.this).lower())
        else:
            names.add(f.sql_name().lower())
    if not names:
        return
    user_defined = {
        r[0].lower()
        for r in con._duck.execute(
            "SELECT function_name FROM duckdb_functions() WHERE NOT internal"
        ).fetchall()
    }
    hit = sorted(names & user_defined)
    if hit:
        raise PrivacyError(
            f"an analyst cannot call the user-defined function {hit[0]}(): its body could read "
            "protected tables"
        )


def _statement_name(tree: exp.Expression) -> str:
    if isinstance(tree, exp.Command):
        return str(tree.this).upper()
    name = type(tree).__name__
    mapping = {
        "Protect": "PROTECT", "Unprotect": "UNPROTECT", "SetPrivacyBudget": "SET PRIVACY BUDGET",
        "SetBounds": "SET BOUNDS", "DropBounds": "DROP BOUNDS", "SetGroupKeys": "SET GROUP KEYS",
        "DropGroupKeys": "DROP GROUP KEYS", "CreatePolicy": "CREATE POLICY",
        "DropPolicy": "DROP POLICY", "CreateStream": "CREATE STREAM", "Publish": "PUBLISH STREAM",
        "Copy": "COPY", "Attach": "ATTACH", "Detach": "DETACH", "Pragma": "PRAGMA", "Set": "SET",
        "Insert": "INSERT", "Update": "UPDATE", "Delete": "DELETE", "Create": "CREATE",
        "Drop": "DROP", "Alter": "ALTER", "Transaction": "BEGIN", "Commit": "COMMIT",
        "Rollback": "ROLLBACK", "Export": "EXPORT", "Use": "USE", "Merge": "MERGE",
        "Install": "INSTALL", "Load": "LOAD",
    }
    if name in mapping:
        return mapping[name]
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).upper()  # a class added later: SomeThing → SOME THING
