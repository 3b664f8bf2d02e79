"""Running the privacy statements: ``PROTECT``/``UNPROTECT TABLE``, ``SHOW PROTECTED``,
``SET``/``SHOW PRIVACY BUDGET``, ``SET PRIVACY EPSILON``, the column declarations
(``SET``/``DROP``/``SHOW BOUNDS``, ``SET``/``DROP``/``SHOW GROUP KEYS``) and the policy statements.

Each one is run against a connection's catalog, ledger and session; the cursor shows what comes
back: a status line, or a result set.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> con.execute("SET PRIVACY BUDGET 2 FOR USER 'ann'").fetchall()
[("privacy budget of 'ann' set to 2",)]
>>> con.execute("SHOW PRIVACY BUDGET FOR USER 'ann'").fetchall()
[('ann', '2', '0', '2')]
>>> _ = con.execute("CREATE TABLE people(id INT PRIMARY KEY, city VARCHAR, salary DOUBLE)")
>>> con.execute("SET BOUNDS ON people (salary) BETWEEN 0 AND 1e5").fetchall()
[('bounds set: people.salary BETWEEN 0 AND 100000',)]
>>> _ = con.execute("SET GROUP KEYS ON people (city) VALUES ('Oslo', 'Lyon')")
>>> con.execute("SHOW GROUP KEYS").fetchall()
[('main', 'people', 'city', "'Oslo', 'Lyon'", 'VALUES', 'ok')]
"""

from __future__ import annotations

from sqlglot import exp

from ..._numbers import format_eps
from ...errors import (DeclarationError, InternalError, OperationalError, PrivacyError,
                       ProgrammingError)
from ...sql import dialect as d
from ...sql import policy_grammar as _policy_grammar
from .declared_columns import protection_status
from .protected_units import refuse_staged_unprotect
from ...sql.column_declarations import ColumnDeclarations
from ...sql._orphan_declarations import status
from ...sql.expressions import exact_number, in_double_range
from ...sql.curator_grammar import CURATOR_STATEMENTS
from ...sql.stream_grammar import STREAM_STATEMENTS
from ...privacy.budget_statements import budget_rows, set_budget

__all__ = ["execute_privacy_statement", "PROTECTED_COLUMNS", "BUDGET_COLUMNS", "BOUNDS_COLUMNS",
           "GROUP_KEYS_COLUMNS"]

#: the columns of ``SHOW PROTECTED``, ``SHOW PRIVACY BUDGET``, ``SHOW BOUNDS``, ``SHOW GROUP KEYS``
#: (a wire client's Describe reads them too: :mod:`.statement_columns`)
PROTECTED_COLUMNS = [("schema", "VARCHAR"), ("table", "VARCHAR"), ("domain", "VARCHAR"),
                     ("by_columns", "VARCHAR"), ("key_columns", "VARCHAR"),
                     ("participant", "VARCHAR"), ("status", "VARCHAR")]
BUDGET_COLUMNS = [("user", "VARCHAR"), ("total", "VARCHAR"), ("spent", "VARCHAR"),
                  ("remaining", "VARCHAR")]
BOUNDS_COLUMNS = [("schema", "VARCHAR"), ("table", "VARCHAR"), ("column", "VARCHAR"),
                  ("lower", "DOUBLE"), ("upper", "DOUBLE"), ("status", "VARCHAR")]
GROUP_KEYS_COLUMNS = [("schema", "VARCHAR"), ("table", "VARCHAR"), ("column", "VARCHAR"),
                      ("keys", "VARCHAR"), ("source", "VARCHAR"), ("status", "VARCHAR")]

_CHANGES = (d.Protect, d.Unprotect, d.SetPrivacyBudget, d.SetBounds, d.DropBounds, d.SetGroupKeys,
            d.DropGroupKeys)


def execute_privacy_statement(con, tree) -> str | tuple[list, list[tuple]]:
    """Run the parsed privacy statement ``tree`` on the connection ``con``; returns a status
    message, or a result set ``(description, rows)``."""
    if type(tree).__name__.startswith("Show"):
        with con._catalog.snapshot():  # each row's status looks its table up: read once
            return _execute(con, tree)
    return _execute(con, tree)


def _execute(con, tree):
    cat = con._catalog
    if con.read_only and isinstance(tree, _CHANGES):
        raise OperationalError("the database is open read-only; declarations cannot change")
    if isinstance(tree, d.Unprotect):  # a staging table of copied protected rows: refused
        refuse_staged_unprotect(con, [p.name for p in tree.this.parts])
    if isinstance(tree, (d.Protect, d.SetBounds, d.SetGroupKeys)):
        _refuse_temp(cat, tree)
    if con._in_tx and not type(tree).__name__.startswith("Show"):
        # A declaration must never hang on an uncommitted transaction (a forgotten commit
        # would silently unprotect a table): commit first, like sqlite3 before DDL.
        con.commit()
    if isinstance(tree, d.Protect):
        table = [p.name for p in tree.this.parts]
        by = [c.name for c in tree.expressions] if tree.expressions else None
        domain = tree.text("domain") or None
        ref = tree.args.get("references")
        refs = None if ref is None else (
            [p.name for p in ref.parts], [c.name for c in ref.args.get("expressions") or ()] or None)
        prot = cat.protect(table, by, domain, refs)
        return f"protected {prot.table}: {prot.describe()}"
    if isinstance(tree, d.Unprotect):
        prot = cat.unprotect([p.name for p in tree.this.parts])
        return f"unprotected {prot.table}"
    if isinstance(tree, d.ShowProtected):
        rows = [
            (p.schema, p.table, p.domain, ", ".join(p.by_columns) or None,
             ", ".join(p.key_columns) if not p.by_columns else None,
             f"references {p.references[1]}" if p.references else
             "owners" if p.by_columns else ("primary key" if p.key_columns else "rowid"),
             protection_status(cat, p))
            for p in cat.list_protected()
        ]
        return list(PROTECTED_COLUMNS), rows
    if isinstance(tree, d.SetPrivacyBudget):
        user = tree.args.get("user")
        name = user.name if user is not None else con.user
        return set_budget(con._ledger, name, tree)
    if isinstance(tree, d.ShowPrivacyBudget):
        user = tree.args.get("user")
        users = con._ledger.users()
        if user is not None:
            users = [u for u in users if u[0] == user.name]
        if con.role == "analyst":
            if user is not None and user.name != con.user:
                raise PrivacyError("an analyst can see only their own budget")
            users = [u for u in users if u[0] == con.user]
        rows = budget_rows(con._ledger, [u[0] for u in users])
        return list(BUDGET_COLUMNS), rows
    if isinstance(tree, d.SetPrivacyEpsilon):
        eps = in_double_range(d.exact_number(tree.args["epsilon"], "epsilon"), "epsilon")
        if eps <= 0:
            raise ProgrammingError("epsilon must be positive")
        con.default_epsilon = eps
        return f"default epsilon set to {format_eps(eps)}"
    if isinstance(tree, d.COLUMN_DECLARATIONS):
        return _column_declaration(con, tree)
    if isinstance(tree, CURATOR_STATEMENTS):  # SHOW AUDIT LOG, ATTACH SPARK TABLE
        from .curator_statements import execute_curator_statement

        return execute_curator_statement(con, tree)
    if isinstance(tree, STREAM_STATEMENTS):
        from ...privacy.stream_statements import execute_stream_statement

        return execute_stream_statement(con, tree)
    if isinstance(tree, _policy_grammar.POLICY_STATEMENTS):
        from ...privacy.policy_statements import execute_policy_statement

        return execute_policy_statement(con, tree)
    raise InternalError(f"unhandled statement {type(tree).__name__}")  # pragma: no cover


def _refuse_temp(cat, tree) -> None:
    """Refuse a declaration naming a TEMP table (its table, a group keys' source, a REFERENCES
    target): declarations are stored by (schema, table), and a TEMP table's schema reads
    ``main``, so it would be stored as ``main.tt`` — the connection's own table, gone when it
    closes, or whatever ``main.tt`` is later (the TEMP shadowing check: declared_drops)."""
    for node in (tree.args.get("this"), tree.args.get("source"), tree.args.get("references")):
        info = cat.find_table([p.name for p in node.parts]) if node is not None else None
        if info is not None and info.catalog.lower() == "temp" and not info.frame:  # a
            # registered DataFrame has its own refusal (provsql_dp.sql.catalog)
            raise DeclarationError(
                f"cannot declare {info.name}: {info.name} is a TEMP table, this connection's own "
                "(gone when it closes), and declarations are stored by the name main."
                f"{info.name}, which would then describe another table. Make it a table of the "
                f"database (CREATE TABLE {info.name}_kept AS SELECT * FROM {info.name}) and name "
                "that")


def _column_declaration(con, tree) -> str | tuple[list, list[tuple]]:
    """``SET``/``DROP``/``SHOW BOUNDS`` and ``SET``/``DROP``/``SHOW GROUP KEYS``."""
    decl = ColumnDeclarations(con._catalog)
    table = tree.args.get("this") or tree.args.get("table")
    parts = [p.name for p in table.parts] if table is not None else None
    column = tree.args["column"].name if tree.args.get("column") is not None else None
    if isinstance(tree, d.SetBounds):
        b = decl.set_bounds(parts, column, _value(tree.args["lower"]), _value(tree.args["upper"]))
        return f"bounds set: {b.describe()}"
    if isinstance(tree, d.DropBounds):
        return f"bounds dropped: {decl.drop_bounds(parts, column).describe()}"
    cat = con._catalog
    if isinstance(tree, d.ShowBounds):
        rows = [(b.schema, b.table, b.column, b.lower, b.upper,
                 status(cat, b.schema, b.table, [b.column],
                        f"DROP BOUNDS ON {b.table} ({b.column})"))
                for b in decl.list_bounds(parts)]
        return list(BOUNDS_COLUMNS), rows
    if isinstance(tree, d.SetGroupKeys):
        if tree.expressions:
            keys = decl.set_group_keys(parts, column, values=[_value(v) for v in tree.expressions])
        else:
            keys = decl.set_group_keys(parts, column,
                                       source=[p.name for p in tree.args["source"].parts],
                                       source_column=tree.args["source_column"].name)
        return f"group keys set: {keys.describe()}"
    if isinstance(tree, d.DropGroupKeys):
        keys = decl.drop_group_keys(parts, column)
        return f"group keys dropped on {keys.table} ({keys.column})"
    rows = [(k.schema, k.table, k.column,
             ", ".join(_shown(v) for v in k.values) if k.values is not None else None,
             "VALUES" if k.values is not None
             else f"{k.source_schema}.{k.source_table} ({k.source_column})",
             status(cat, k.schema, k.table, [k.column],
                    f"DROP GROUP KEYS ON {k.table} ({k.column})",
                    None if k.values is not None else
                    (k.source_schema, k.source_table, k.source_column)))
            for k in decl.list_group_keys(parts)]
    return list(GROUP_KEYS_COLUMNS), rows


def _value(node):
    """A literal of a declaration: a str, a bool or an exact number (Fraction)."""
    if isinstance(node, exp.Neg):
        return -_value(node.this)
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Literal) and node.is_string:
        return node.this
    return exact_number(node, "a declared value")


def _shown(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
