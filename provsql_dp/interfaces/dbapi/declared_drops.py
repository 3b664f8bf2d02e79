"""A curator's ``DROP`` or ``CREATE OR REPLACE`` of a table that declarations name: refused,
naming them and the statements that remove them.

Declarations are stored by table name (as renames are refused for: :mod:`.declared_renames`).
Dropped through provsql_dp, a protected table left its declaration behind (``SHOW PROTECTED``
flagged it ``table missing``), and every declaration of the name — its protection, bounds,
group keys, policies — then described whatever table the curator created under that name next
(red team h85attack, leftover). A reload, ``CREATE OR REPLACE TABLE t AS …``, kept them for a
definition they were never checked against. What the planner re-checks at each scan catches part
of it (a lost primary key: one row per participant is no longer assumed; an owner column gone:
refused; a foreign key gone: :func:`provsql_dp.sql.foreign_owners.check_hop`; a group keys'
source become a view: refused at the read; and the catalog's fingerprint,
:mod:`provsql_dp.sql._catalog_kept`, drops the plans kept for the old definition), but not what
was checked only when declared, such as an owner column's type (why ``ALTER TABLE`` may not
change it: :mod:`.declared_columns`). So, for a table or view any declaration names — its own, a key its owners' foreign key
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

from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from ...errors import DeclarationError
from ...policies.blowfish.catalog import PolicyCatalog
from ...sql import dialect as d
from ...sql.column_declarations import ColumnDeclarations
from .declared_columns import _path

__all__ = ["refuse_declared_drop", "table_declarations"]

#: a cheap pre-filter (a comment before the statement is no escape: the tokens decide)
_WORDS = re.compile(r"\b(DROP|REPLACE)\b", re.IGNORECASE)


def table_declarations(con, schema: str | None, table: str | None) -> list[tuple[str, str]]:
    """``(the declaration, the statement that removes it)`` of each declaration naming the
    table ``schema.table`` (every table of ``schema`` when ``table`` is None, a table of that
    name in any schema when ``schema`` is None), in an order the removals run in.

    >>> import provsql_dp
    >>> con = provsql_dp.connect()
    >>> _ = con.execute("CREATE TABLE c(n VARCHAR); CREATE TABLE p(id INT, city VARCHAR)")
    >>> _ = con.execute("SET GROUP KEYS ON p (city) FROM c (n)")
    >>> table_declarations(con, "main", "c")
    [('SET GROUP KEYS ON p (city) FROM c (n)', 'DROP GROUP KEYS ON p (city)')]
    """
    cat = con._catalog

    def ours(s, t):
        return ((schema is None or s.lower() == schema.lower())
                and (table is None or t.lower() == table.lower()))

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


def _targets(stmt: str) -> tuple[str, list[list[str | None]]] | None:
    """What ``stmt`` drops or replaces: ``(verb, [name parts])`` (a schema's parts end with
    None), or None. Read from its tokens, as DuckDB spells it (a generated column, ``PIVOT``:
    sqlglot parses not all of it, and a statement it cannot parse must not pass unread).

    >>> _targets('/* x */ DROP TABLE IF EXISTS main."People" CASCADE')
    ('drop the table', [['main', 'People']])
    >>> _targets("CREATE OR REPLACE TABLE t(x INT GENERATED ALWAYS AS (1) VIRTUAL)")
    ('replace the table', [['t']])
    >>> _targets("CREATE OR REPLACE TEMP TABLE t AS SELECT 1") is None  # a name of its own
    True
    """
    try:
        toks = [t for t in d.ProvDP().tokenize(stmt) if t.token_type != TokenType.SEMICOLON]
    except TokenError:
        return None
    word = [None if t.token_type in (TokenType.IDENTIFIER, TokenType.STRING) else t.text.upper()
            for t in toks]
    if word[:1] == ["DROP"] and len(word) > 2 and word[1] in ("TABLE", "VIEW", "SCHEMA"):
        i = 4 if word[2:4] == ["IF", "EXISTS"] else 2
        if i >= len(toks):
            return None
        parts, _ = _path(toks, i)
        if word[1] == "SCHEMA":
            return "drop the schema", [[*parts, None]]
        return f"drop the {word[1].lower()}", [parts]
    if word[:3] == ["CREATE", "OR", "REPLACE"] and len(word) > 4:
        if word[3] in ("TEMP", "TEMPORARY"):
            return None  # a TEMP name of its own: it replaces no declared table
        if word[3] not in ("TABLE", "VIEW"):
            return None
        parts, _ = _path(toks, 4)
        return f"replace the {word[3].lower()}", [parts]
    return None


def refuse_declared_drop(con, stmt: str) -> None:
    """Raise :class:`~provsql_dp.errors.DeclarationError` when ``stmt`` drops or replaces a
    table, view or schema that declarations name (read from the statement and the declarations;
    nothing runs)."""
    if not _WORDS.search(stmt):
        return
    found = _targets(stmt)
    if found is None:
        return
    verb, targets = found
    with con._catalog.snapshot():  # the lookups below read the catalog once
        _refuse(con, verb, targets)


def _refuse(con, verb: str, targets) -> None:
    for parts in targets:
        if parts[-1] is None:  # a schema: every declaration of its tables
            named, hits = parts[-2], table_declarations(con, parts[-2], None)
        elif not table_declarations(con, None, parts[-1]):
            continue  # no declaration has its name: no lookup needed (a lookup costs more)
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
        reload = (f". To reload its rows and keep them: DELETE FROM {named}, then INSERT INTO "
                  f"{named} SELECT …" if verb.endswith("table") else "")
        return (f"cannot {verb} {named!r} (CREATE OR REPLACE): declarations name it ({what}), "
                "checked against its present definition (its keys, owner columns and their "
                f"types), which the new one need not keep{reload}; to redefine it: remove them "
                f"({undo}), replace it, then declare them again")
    return (f"cannot {verb} {named!r}: declarations name it ({what}) and would outlive it, "
            f"describing whatever is created under its name next. Remove them first ({undo}), "
            "then drop it")
