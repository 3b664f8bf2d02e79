"""Roles: what a curator and an analyst may run.

A **curator** owns the database: every statement passes, including reading protected rows.
An **analyst** gets private answers only. An analyst may run (an allow-list):

* private queries (``… WITH EPSILON ε``, or aggregates after ``SET PRIVACY EPSILON``);
* our statements of :data:`ANALYST_STATEMENTS`: ``SHOW PROTECTED``, ``SHOW POLICIES``,
  ``SHOW BOUNDS``, ``SHOW GROUP KEYS``, ``SHOW STREAMS`` (declarations are public),
  ``SHOW PRIVACY BUDGET`` (their own), ``SET PRIVACY EPSILON``, ``EXPLAIN PRIVACY``;
* queries over *public* tables (and views over them) — ``SELECT``, set operations, ``VALUES``,
  FROM-first, ``PIVOT``/``UNPIVOT`` —, ``DESCRIBE``, ``SUMMARIZE``, ``EXPLAIN [ANALYZE]``,
  ``SHOW TABLES``, ``SHOW ALL TABLES``: compiled by :mod:`provsql_dp.sql.analyst`, which
  resolves every name by scope, checks it and emits the text DuckDB runs. The analyst's own
  text never reaches DuckDB.

Everything else — reading a protected table, table functions and file paths, DML or DDL,
``PROTECT``/``UNPROTECT``, policy, bounds, group-key and budget statements, ``ATTACH``, ``COPY``,
``EXPORT``, ``PRAGMA``, ``SET``, ``INSTALL``/``LOAD``, transactions — is refused with
:class:`~provsql_dp.errors.PrivacyError`, before anything runs.

The roles are enforced at the SQL boundary (the connection's ``execute``, the shell, the
explorer). Python code that holds a connection object can always reach its internals: give
analysts the shell or the SQL interface, not the Python process of the curator.

>>> import provsql_dp
>>> cur_con = provsql_dp.connect()
>>> check_analyst(cur_con, "COPY t TO 'x.csv'", None)
Traceback (most recent call last):
  ...
provsql_dp.errors.PrivacyError: an analyst cannot run COPY: analysts get private answers only (… WITH EPSILON ε) and may read public tables
>>> _ = cur_con.execute("CREATE TABLE t(a INT)")
>>> compile_analyst(cur_con, "FROM t", None).sql
'SELECT * FROM "memory"."main"."t" AS t'
"""

from __future__ import annotations

import re

from sqlglot import exp

from ..errors import Error, PrivacyError, ProgrammingError
from ..sql import dialect as d
from ..sql.analyst import Compiled, compile_statement
from ..sql.analyst import refuse as _refuse
from ..sql.suggest import did_you_mean

__all__ = ["ROLES", "check_analyst", "compile_analyst", "ANALYST_STATEMENTS"]

ROLES = ("curator", "analyst")

# first words of the statement kinds an analyst may run (sql.analyst.ANALYST_KINDS)
_QUERY_WORDS = {"SELECT", "WITH", "FROM", "VALUES", "TABLE", "PIVOT", "UNPIVOT", "DESCRIBE",
                "SUMMARIZE", "EXPLAIN"}

# Our statements an analyst may run (by class name, so policy statements added later fit in).
ANALYST_STATEMENTS = {"ShowProtected", "ShowPrivacyBudget", "SetPrivacyEpsilon", "ShowPolicies",
                      "ShowBounds", "ShowGroupKeys", "ShowStreams",
                      # EXPLAIN PRIVACY reads no data and spends nothing; with ESTIMATE ERROR it
                      # is a release, charged to the analyst's own budget like a private query
                      "ExplainPrivacy",
                      # Blowfish k-means: parsed whole by our grammar, the table read by names
                      # from the catalog; a release charged to the analyst's own budget
                      "KMeans"}


def check_analyst(con, stmt: str, tree: exp.Expression | None) -> None:
    """Raise :class:`PrivacyError` unless an analyst may run ``stmt`` (parsed as ``tree``).

    Private queries are checked later by the planner (they may read protected tables)."""
    compile_analyst(con, stmt, tree)


def compile_analyst(con, stmt: str, tree: exp.Expression | None) -> Compiled | None:
    """What an analyst's statement becomes: None for a private query or one of our privacy
    statements an analyst may run (each has its own path), else the :class:`Compiled` text (or
    catalog answer) that replaces it. Raises :class:`PrivacyError` for anything else, before
    anything runs. ``tree`` must have its parameters bound."""
    if tree is None:
        try:
            tree = d.parse_one(stmt)
        except Exception as e:  # noqa: BLE001 - any parse failure
            hint = did_you_mean(stmt)
            if hint:  # a misspelt keyword of ours, not a statement analysts may not run
                first = str(e).splitlines()[0] if str(e) else type(e).__name__
                raise ProgrammingError(f"syntax error: {first} ({hint})") from None
            words = stmt.split()
            word = words[0].upper().lstrip("(") if words else ""
            if word in _QUERY_WORDS:  # a kind we allow, in a form our parser does not read
                first = str(e).splitlines()[0] if str(e) else type(e).__name__
                raise ProgrammingError(
                    f"this {word} statement could not be parsed, so it cannot be checked ({first}); "
                    "an analyst's statement runs only once it is checked: rewrite it, e.g. as "
                    "SELECT * FROM (…) ORDER BY …") from None
            raise _refuse(word or "an empty statement") from None
    if isinstance(tree, d.PrivateQuery):
        return None
    if isinstance(tree, d.PRIVACY_STATEMENTS):
        if type(tree).__name__ in ANALYST_STATEMENTS:
            return None
        if type(tree).__name__ == "ShowAuditLog":
            raise PrivacyError("SHOW AUDIT LOG is for the curator only: the audit log names every "
                               "user's statements (your own budget: SHOW PRIVACY BUDGET)")
        raise _refuse(_statement_name(tree, stmt))
    try:
        compiled = compile_statement(con._catalog, tree)
    except Error:
        raise
    except Exception as e:  # noqa: BLE001 - sqlglot's scope analysis on a tree it cannot follow
        raise PrivacyError(f"this statement could not be checked ({type(e).__name__}), so an "
                           "analyst cannot run it") from None
    if compiled is None:
        raise _refuse(_statement_name(tree, stmt))
    return compiled


def _statement_name(tree: exp.Expression, stmt: str = "") -> str:
    if isinstance(tree, (exp.Alias, exp.Condition, exp.Identifier)) and not isinstance(
            tree, exp.Query) and stmt.split():  # a word sqlglot does not know (LISTEN ch,
        return stmt.split()[0].upper().lstrip("(")[:40]  # CHECKPOINT) read as an expression:
        # its word, cut short (an analyst's text echoed back, never a long one)
    if isinstance(tree, exp.Command):
        word = str(tree.this).upper()
        if word == "SHOW":  # SHOW DATABASES, SHOW t: name what is shown
            rest = tree.expression
            rest = rest.name if isinstance(rest, exp.Expression) else str(rest or "")
            return f"SHOW {rest.split()[0].upper()}" if rest.split() else word
        return word
    if isinstance(tree, exp.Show):
        return f"SHOW {tree.name}".upper()
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
        "Install": "INSTALL", "Load": "LOAD", "Describe": "DESCRIBE", "Summarize": "SUMMARIZE",
    }
    if name in mapping:
        return mapping[name]
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).upper()  # a class added later: SomeThing → SOME THING
