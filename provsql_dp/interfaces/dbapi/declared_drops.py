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
table is a new name of its own (it replaces nothing), but one that would shadow a declared
``main`` table is refused: DuckDB reads the name as the temporary table in this connection, and
declarations, stored by (schema, table), would describe it (:func:`_refuse_shadow`).
``DROP SCHEMA`` is matched as DuckDB resolves it — ``s`` in the current database, ``db.s`` in
``db`` — against the tables and views in it: a schema of that name in another database, or one
holding no declared table, drops.

A statement run outside provsql_dp (DuckDB's own client) is out of reach here: ``SHOW
PROTECTED``, ``SHOW BOUNDS``, ``SHOW GROUP KEYS`` and ``SHOW POLICIES`` flag its orphans in their
``status`` column. Such an orphan's declarations would describe whatever table takes its name
next, so ``CREATE [OR REPLACE] [TEMP] TABLE``/``VIEW`` of that name, and ``ALTER TABLE``/``VIEW
… RENAME TO`` it, are refused through provsql_dp (:func:`refuse_orphan_name`), naming them and
their removals (h104, a leftover of red team h85attack's). A table created under that name by DuckDB's own client is out of
reach too, and not told apart: DuckDB keeps no identity of a table across a reopen (its
``table_oid`` is assigned afresh at each load), so it looks like the declared table reloaded. The
declarations then apply to it — ``SHOW PROTECTED`` says ``ok``, its rows are protected, clipped to
its bounds — and what the planner checks at each scan holds for it (its primary key, its owner
columns and their collation, the foreign-key hops, a group keys' source), but not what was
checked only when declared (that tables sharing a domain name participants by keys of one type).

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

from ...errors import DeclarationError, ProgrammingError
from ...policies.blowfish.catalog import PolicyCatalog
from ...sql import dialect as d
from ...sql.column_declarations import ColumnDeclarations
from .declared_columns import _path
from .guard_names import kept

__all__ = ["refuse_declared_drop", "refuse_orphan_name", "table_declarations"]

#: a cheap pre-filter (a comment before the statement is no escape: the tokens decide)
_WORDS = re.compile(r"\b(DROP|CREATE)\b", re.IGNORECASE)


def table_declarations(con, schema: str | None, table: str | None,
                       in_schema=None) -> list[tuple[str, str]]:
    """``(the declaration, the statement that removes it)`` of each declaration naming the
    table ``schema.table`` (every table of ``schema`` when ``table`` is None, a table of that
    name in any schema when ``schema`` is None; with ``in_schema``, a set of lower-case names,
    only those of ``schema``'s tables), in an order the removals run in.

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
                and (table is None or t.lower() == table.lower())
                and (in_schema is None or t.lower() in in_schema))

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
    """What ``stmt`` drops, replaces or creates: ``(verb, [name parts])`` (a schema's parts end
    with None; a ``TEMP`` table's are ``['temp', 'main', name]``), or None. Read from its tokens,
    as DuckDB spells it (a generated column, ``PIVOT``: sqlglot parses not all of it, and a
    statement it cannot parse must not pass unread).

    >>> _targets('/* x */ DROP TABLE IF EXISTS main."People" CASCADE')
    ('drop the table', [['main', 'People']])
    >>> _targets("CREATE OR REPLACE TABLE t(x INT GENERATED ALWAYS AS (1) VIRTUAL)")
    ('replace the table', [['t']])
    >>> _targets("CREATE OR REPLACE TEMP TABLE t AS SELECT 1")  # shadows: a new name only
    ('create the table', [['temp', 'main', 't']])
    >>> _targets("CREATE VIEW IF NOT EXISTS s.v AS SELECT 1")
    ('create the view', [['s', 'v']])
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
    if word[:1] != ["CREATE"]:
        return None
    replace = word[1:3] == ["OR", "REPLACE"]
    i = 3 if replace else 1
    temp = i < len(word) and word[i] in ("TEMP", "TEMPORARY")
    i += temp
    if i + 1 >= len(word) or word[i] not in ("TABLE", "VIEW"):
        return None
    kind, i = word[i].lower(), i + 1
    i += 3 if word[i:i + 3] == ["IF", "NOT", "EXISTS"] else 0
    if i >= len(toks):
        return None
    parts, _ = _path(toks, i)
    if temp:  # a TEMP name of its own: it replaces no declared table, it may take an orphan's
        return f"create the {kind}", [["temp", "main", parts[-1]]]
    return f"{'replace' if replace else 'create'} the {kind}", [parts]


def refuse_declared_drop(con, stmt: str) -> None:
    """Raise :class:`~provsql_dp.errors.DeclarationError` when ``stmt`` drops or replaces a
    table, view or schema that declarations name, or creates one under the name of declarations
    whose table is gone (an orphan's: :func:`refuse_orphan_name`); read from the statement and
    the declarations, nothing runs."""
    if not _WORDS.search(stmt):
        return
    found = _targets(stmt)
    if found is None:
        return
    verb, targets = found
    if all(p[-1] is not None for p in targets) and not any(
            p[-1].lower() in kept(con, "declared", _declared_names) for p in targets):
        return  # no declaration names it: no lookup needed (the usual CREATE TABLE)
    with con._catalog.snapshot():  # the lookups below read the catalog once
        _refuse(con, verb, targets)


def _declared_names(con) -> frozenset[str]:
    """The names (lower case) of the tables declarations name, whatever their schema: those
    :func:`table_declarations` finds anything for (kept per connection: :mod:`.guard_names`)."""
    cat = con._catalog
    decl = ColumnDeclarations(cat)
    prot = cat.list_protected()
    names = [p.table for p in prot] + [p.references[1] for p in prot if p.references is not None]
    names += [n for g in decl.list_group_keys() for n in (g.table, g.source_table or "")]
    names += [b.table for b in decl.list_bounds()]
    names += [r.table for r in PolicyCatalog(con._duck, read_only=True, catalog=cat).list()]
    return frozenset(n.lower() for n in names if n)


def _refuse(con, verb: str, targets) -> None:
    for parts in targets:
        if parts[-1] is None:  # a schema: every declaration of the tables in it
            db, schema = _schema_path(con, parts[:-1], created=False)
            names = {r[0].lower() for r in con._duck.execute(
                "SELECT table_name FROM duckdb_tables() WHERE lower(database_name) = lower(?) AND "
                "lower(schema_name) = lower(?) "
                "UNION ALL SELECT view_name FROM duckdb_views() WHERE lower(database_name) = lower(?) "
                "AND lower(schema_name) = lower(?)", [db, schema, db, schema]).fetchall()}
            named = schema
            hits = table_declarations(con, schema, None, names) if names else []
        elif not table_declarations(con, None, parts[-1]):
            continue  # no declaration has its name: no lookup needed (a lookup costs more)
        else:
            info = con._catalog.find_table(parts) if not verb.startswith("create") else None
            if info is None or info.catalog == "temp":  # nothing of that name (created, or
                # DuckDB says so: IF EXISTS), or a TEMP table (temp.t), which no declaration names
                if not verb.startswith("drop"):
                    db, schema = _schema_path(con, parts[:-1])
                    if info is None:
                        refuse_orphan_name(con, verb.replace("replace", "create"), schema,
                                           parts[-1])
                    if info is not None or db.lower() == "temp":
                        _refuse_shadow(con, verb, parts[-1])
                continue
            named, hits = info.name, table_declarations(con, info.schema, info.name)
        if hits:
            raise DeclarationError(_message(verb, named, hits))


def _schema_path(con, parts: list[str], created: bool = True) -> tuple[str, str]:
    """``(database, schema)`` as DuckDB resolves ``parts``: a table's qualifier when ``created``
    (``[]``: the current schema; ``[x]``: the schema ``x``, else the database ``x``'s ``main``),
    else a schema's own name (``[x]``: ``x`` of the current database)."""
    db, schema = con._duck.execute("SELECT current_database(), current_schema()").fetchone()
    if len(parts) >= 2:
        return parts[-2], parts[-1]
    if not parts:
        return db, schema
    if created and not con._duck.execute(
            "SELECT 1 FROM duckdb_schemas() WHERE database_name = ? AND lower(schema_name) = "
            "lower(?)", [db, parts[0]]).fetchall() and con._duck.execute(
            "SELECT 1 FROM duckdb_databases() WHERE lower(database_name) = lower(?)",
            [parts[0]]).fetchall():
        return parts[0], "main"
    return db, parts[0]


def refuse_orphan_name(con, verb: str, schema: str, name: str) -> None:
    """Raise :class:`~provsql_dp.errors.DeclarationError` when a table or view created (or
    renamed) as ``schema.name`` would take the declarations left by a table of that name dropped
    outside provsql_dp (an orphan's, flagged ``table missing`` by ``SHOW PROTECTED``): they were
    checked against that table's definition, and meant for its rows.

    >>> import duckdb, provsql_dp
    >>> con = provsql_dp.connect()
    >>> _ = con.execute("CREATE TABLE people(id INT PRIMARY KEY); PROTECT TABLE people")
    >>> _ = con._duck.execute("DROP TABLE people")  # as DuckDB's own client would
    >>> con.execute("CREATE TABLE people(id INT)")
    Traceback (most recent call last):
    ...
    provsql_dp.errors.DeclarationError: cannot create the table 'people': declarations made for a table of that name that was dropped outside provsql_dp name it (PROTECT TABLE people, each row (key id) AS people) and would describe the new one, whose rows and definition they were never checked against. Remove them first (UNPROTECT TABLE people), create it, then declare what applies to it
    """
    hits = table_declarations(con, schema, name)
    if not hits:
        return
    try:
        if con._catalog.find_table([schema, name]) is not None:
            return  # the declared table is there: not an orphan (DuckDB refuses the name)
    except ProgrammingError:
        return  # several tables of that name: there, so not an orphan
    what = "; ".join(h[0] for h in hits)
    undo = "; ".join(dict.fromkeys(h[1] for h in hits))
    raise DeclarationError(
        f"cannot {verb} {name!r}: declarations made for a table of that name that was dropped "
        f"outside provsql_dp name it ({what}) and would describe the new one, whose rows and "
        f"definition they were never checked against. Remove them first ({undo}), "
        f"{verb.split()[0]} it, then declare what applies to it")


def _refuse_shadow(con, verb: str, name: str) -> None:
    """Refuse a TEMP table or view ``name`` when declarations name ``main.name``: DuckDB reads
    ``name`` as the temporary one in this connection, and declarations are stored by (schema,
    table), so they would describe it (the planner took it as protected)."""
    hits = table_declarations(con, "main", name)
    if hits:
        what = "; ".join(h[0] for h in hits)
        raise DeclarationError(
            f"cannot {verb.replace('the ', 'the temporary ', 1)} {name!r}: it would shadow the "
            f"declared table main.{name} in this connection ({what}): statements naming {name} "
            "would read it, and those declarations would describe a table they were never "
            "checked against. Give the temporary table another name")


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
