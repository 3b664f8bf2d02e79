"""A curator's ``DROP`` or ``CREATE OR REPLACE`` of a table that declarations name: refused,
naming them and the statements that remove them.

Declarations are stored by table name (as renames are refused for: :mod:`.declared_renames`).
Dropped through provsql_dp, a protected table left its declaration behind (``SHOW PROTECTED``
flagged it ``table missing``), and every declaration of the name — its protection, bounds,
group keys, policies — then described whatever table the curator created under that name next
(red team h85attack, leftover). A reload, ``CREATE OR REPLACE TABLE t AS …``, kept them for a
definition they were never checked against. What the planner re-checks at each scan catches part
of it (a lost primary key: one row per participant is no longer assumed; an owner column gone:
refused; a foreign key gone: :func:`provsql_dp.sql.foreign_owners.check_hop`; and the catalog's
fingerprint, :mod:`provsql_dp.sql._catalog_kept`, drops the plans kept for the old definition),
but not what was checked only when declared: an owner column's type (``'bob' = 'BOB'`` under a
collation: several participants as one), a policy's domain, a group keys' source becoming a view.
So, for a table or view any declaration names — its own, a key its owners' foreign key
references, the source of group keys — these are refused before they run:

* ``DROP TABLE [IF EXISTS] t``, ``DROP VIEW v``, ``DROP SCHEMA s`` of a schema holding one;
* ``CREATE OR REPLACE TABLE t …`` (a reload: ``DELETE FROM t; INSERT INTO t SELECT …`` keeps its
  definition, and so its declarations, valid) and ``CREATE OR REPLACE VIEW``.

The error names each declaration and the statement that removes it, in an order that runs
(tables owned along a foreign key are unprotected before the table they reference). A ``TEMP``
table is a new name of its own (it shadows, it replaces nothing). A statement run outside
provsql_dp (DuckDB's own client) is out of reach here: ``SHOW PROTECTED``, ``SHOW BOUNDS``,
``SHOW GROUP KEYS`` and ``SHOW POLICIES`` flag its orphans in their ``status`` column.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE people(id INT PRIMARY KEY, pay INT); PROTECT TABLE people")
>>> _ = con.execute("SET BOUNDS ON people (pay) BETWEEN 0 AND 10")
>>> con.execute("DROP TABLE people")
Traceback (most recent call last):
...
provsql_dp.errors.DeclarationError: cannot drop the table 'people': declarations name it (PROTECT TABLE people, each row (key id) AS people; SET BOUNDS ON people (pay)) and would outlive it, describing whatever is created under its name next. Remove them first (UNPROTECT TABLE people; DROP BOUNDS ON people (pay)), then drop it
>>> _ = con.execute("CREATE TABLE notes(x INT); DROP TABLE notes")
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from ...errors import DeclarationError
from ...policies.blowfish.catalog import PolicyCatalog
from ...sql import dialect as d
from ...sql.column_declarations import ColumnDeclarations

__all__ = ["refuse_declared_drop", "table_declarations"]

#: a cheap pre-filter (a comment before the statement is no escape: the parse decides)
_WORDS = re.compile(r"\b(DROP|REPLACE)\b", re.IGNORECASE)


def table_declarations(con, schema: str, table: str | None) -> list[tuple[str, str]]:
    """``(the declaration, the statement that removes it)`` of each declaration naming the
    table ``schema.table`` (every table of ``schema`` when ``table`` is None), in an order the
    removals run in.

    >>> import provsql_dp
    >>> con = provsql_dp.connect()
    >>> _ = con.execute("CREATE TABLE c(n VARCHAR); CREATE TABLE p(id INT, city VARCHAR)")
    >>> _ = con.execute("SET GROUP KEYS ON p (city) FROM c (n)")
    >>> table_declarations(con, "main", "c")
    [('SET GROUP KEYS ON p (city) FROM c (n)', 'DROP GROUP KEYS ON p (city)')]
    """
    cat = con._catalog

    def ours(s, t):
        return s.lower() == schema.lower() and (table is None or t.lower() == table.lower())

    users, own, rest = [], [], []
    for p in cat.list_protected():
        undo = f"UNPROTECT TABLE {p.table}"
        if p.references is not None and ours(*p.references[:2]) and not ours(p.schema, p.table):
            users.append((f"PROTECT TABLE {p.table} {p.describe()}", undo))
        elif ours(p.schema, p.table):
            own.append((f"PROTECT TABLE {p.table}, {p.describe()}", undo))
    decl = ColumnDeclarations(cat)
    for b in decl.list_bounds():
        if ours(b.schema, b.table):
            rest.append((f"SET BOUNDS ON {b.table} ({b.column})",
                         f"DROP BOUNDS ON {b.table} ({b.column})"))
    for g in decl.list_group_keys():
        undo = f"DROP GROUP KEYS ON {g.table} ({g.column})"
        if ours(g.schema, g.table):
            rest.append((f"SET GROUP KEYS ON {g.table} ({g.column})", undo))
        elif g.source_table is not None and ours(g.source_schema or "", g.source_table):
            rest.append((f"SET GROUP KEYS ON {g.table} ({g.column}) FROM {g.source_table} "
                         f"({g.source_column})", undo))
    for r in PolicyCatalog(con._duck, read_only=True, catalog=cat).list():
        if ours(r.schema, r.table):
            rest.append((f"CREATE POLICY {r.name} ON {r.table} ({', '.join(r.columns)})",
                         f"DROP POLICY {r.name}"))
    return users + own + rest


def _targets(tree) -> tuple[str, list[list[str]]] | None:
    """What ``tree`` drops or replaces: ``(verb, name parts of each)``, or None."""
    if isinstance(tree, exp.Drop):
        kind = (tree.args.get("kind") or "").upper()
        tables = tree.args.get("tables") or ([tree.this] if tree.this is not None else [])
        if kind in ("TABLE", "VIEW"):
            return f"drop the {kind.lower()}", [[p.name for p in t.parts] for t in tables
                                                if isinstance(t, exp.Table)]
        if kind == "SCHEMA":
            return "drop the schema", [[*(p.name for p in t.parts), None] for t in tables
                                       if isinstance(t, exp.Table)]
        return None
    if isinstance(tree, exp.Create) and tree.args.get("replace"):
        kind = (tree.args.get("kind") or "").upper()
        target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
        if kind not in ("TABLE", "VIEW") or not isinstance(target, exp.Table):
            return None
        props = tree.args.get("properties")
        if props is not None and any(isinstance(p, exp.TemporaryProperty)
                                     for p in props.expressions):
            return None  # a TEMP name of its own: it replaces no declared table
        return f"replace the {kind.lower()}", [[p.name for p in target.parts]]
    return None


def refuse_declared_drop(con, stmt: str) -> None:
    """Raise :class:`~provsql_dp.errors.DeclarationError` when ``stmt`` drops or replaces a
    table, view or schema that declarations name (read from the statement and the declarations;
    nothing runs)."""
    if not _WORDS.search(stmt):
        return
    try:
        tree = d.parse_one(stmt)
    except (ParseError, TokenError):
        return  # not ours to judge: DuckDB refuses it or runs what it understood
    found = _targets(tree)
    if found is None:
        return
    verb, targets = found
    for parts in targets:
        if parts[-1] is None:  # a schema: every declaration of its tables
            named, hits = parts[-2], table_declarations(con, parts[-2], None)
        else:
            info = con._catalog.find_table(parts)
            if info is None:
                continue  # nothing of that name: DuckDB says so (or IF EXISTS passes)
            named, hits = info.name, table_declarations(con, info.schema, info.name)
        if hits:
            raise DeclarationError(_message(verb, named, hits))


def _message(verb: str, named: str, hits: list[tuple[str, str]]) -> str:
    what = "; ".join(h[0] for h in hits)
    undo = "; ".join(dict.fromkeys(h[1] for h in hits))
    if verb.startswith("replace"):
        kind = verb.split()[-1]
        return (f"cannot {verb} {named!r} (CREATE OR REPLACE): declarations name it ({what}), "
                f"checked against its present definition (its keys, owner columns and their "
                f"types), which the new one need not keep. To reload its rows and keep them: "
                f"DELETE FROM {named}, then INSERT INTO {named} SELECT …" if kind == "table" else
                f"cannot {verb} {named!r} (CREATE OR REPLACE): declarations name it ({what}), "
                f"checked against its present definition") + (
            f"; to redefine it: remove them ({undo}), replace it, then declare them again")
    return (f"cannot {verb} {named!r}: declarations name it ({what}) and would outlive it, "
            f"describing whatever is created under its name next. Remove them first ({undo}), "
            "then drop it")
