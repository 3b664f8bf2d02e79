"""A curator's ``ALTER TABLE`` of a column a declaration names: refused, naming the way.

Declarations name columns by name (the owner columns and key of ``PROTECT TABLE``, the key a
foreign-key ownership references, ``SET BOUNDS``, ``SET GROUP KEYS`` and the public column they
are read from, the columns of ``CREATE POLICY``). ``ALTER TABLE people RENAME COLUMN salary TO
old_salary; ALTER TABLE people RENAME COLUMN bonus TO salary`` left the bounds and the policy
declared for ``salary`` describing another attribute (red team h85attack). So a statement that
renames a declared column, renames a column *into* a declared name, drops a declared column,
changes its type (or a field of it) or adds a column under a declared name is refused before it
runs: drop the declarations, change the column, declare again. ``SET``/``DROP DEFAULT`` and
``NOT NULL`` change no value and pass. A change made outside provsql_dp (DuckDB's own client) is
out of reach here (``SHOW PROTECTED`` flags a protected table that is gone).

DuckDB takes one action per ``ALTER TABLE`` and spells it in ways sqlglot does not all parse
(``RENAME a TO b`` without ``COLUMN``, ``DROP a``): the statement is read from its tokens.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE people(id INT, salary DOUBLE, bonus DOUBLE)")
>>> _ = con.execute("SET BOUNDS ON people (salary) BETWEEN 0 AND 100")
>>> con.execute("ALTER TABLE people RENAME bonus TO salary")
Traceback (most recent call last):
...
provsql_dp.errors.DeclarationError: cannot rename column people.bonus to salary: the column name 'salary' is named by a declaration (the bounds SET BOUNDS ON people (salary)), which would then describe another column. Drop it (DROP BOUNDS ON people (salary)), change the column, then declare it again
>>> _ = con.execute("ALTER TABLE people RENAME COLUMN bonus TO extra")
>>> alter_action("ALTER TABLE IF EXISTS main.people DROP COLUMN IF EXISTS s.x CASCADE")
(['main', 'people'], 'DROP', ['s', 'x'], None)
>>> alter_action("ALTER TABLE people ALTER note SET DEFAULT 'TYPE'") is None  # no value changes
True
"""

from __future__ import annotations

from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from ...errors import DeclarationError
from ...policies.blowfish.catalog import PolicyCatalog
from ...sql import dialect as d
from ...sql.column_declarations import ColumnDeclarations
from ...sql.catalog import SCHEMA
from ...sql.enum_labels import refuse_enum_alter

__all__ = ["refuse_declared_column_change", "declared_columns", "alter_action", "protection_status"]

_NAME = (TokenType.VAR, TokenType.IDENTIFIER)
#: ``ADD`` of a constraint, not of a column
_NOT_A_COLUMN = {"PRIMARY", "CONSTRAINT", "UNIQUE", "FOREIGN", "CHECK"}


def _path(toks: list, i: int) -> tuple[list[str], int]:
    """The dotted name at ``toks[i]`` and the index after it."""
    out = []
    while i < len(toks):
        out.append(toks[i].text)
        if i + 2 < len(toks) and toks[i + 1].token_type == TokenType.DOT:
            i += 2
            continue
        return out, i + 1
    return out, i


def alter_action(stmt: str):
    """``(table parts, verb, column path, new name or None)`` of an ``ALTER TABLE`` of one
    column (``RENAME``, ``DROP``, ``ALTER … TYPE``, ``ADD``), else None."""
    try:
        toks = [t for t in d.ProvDP().tokenize(stmt) if t.token_type != TokenType.SEMICOLON]
    except TokenError:
        return None
    word = [None if t.token_type in (TokenType.IDENTIFIER, TokenType.STRING) else t.text.upper()
            for t in toks]  # keywords only: neither "TYPE" nor 'TYPE' is one
    if word[:2] != ["ALTER", "TABLE"]:
        return None
    i = 4 if word[2:4] == ["IF", "EXISTS"] else 2
    table, i = _path(toks, i)
    if i >= len(toks):
        return None
    verb, i = word[i], i + 1
    if verb not in ("RENAME", "DROP", "ALTER", "ADD") or i >= len(toks):
        return None
    if word[i] in _NOT_A_COLUMN or (verb == "RENAME" and word[i] == "TO"):
        return None  # a constraint, or a table rename (declared_renames)
    if word[i] == "COLUMN":
        i += 1
    if word[i:i + 2] == ["IF", "EXISTS"]:
        i += 2
    elif word[i:i + 3] == ["IF", "NOT", "EXISTS"]:
        i += 3
    if i >= len(toks) or toks[i].token_type not in _NAME and word[i] is None:
        return None
    column, i = _path(toks, i)
    new = None
    if verb == "RENAME":
        if word[i:i + 1] != ["TO"] or i + 1 >= len(toks):
            return None
        new = toks[i + 1].text
    if verb == "ALTER":
        if "TYPE" not in word[i:]:
            return None  # SET / DROP DEFAULT, NOT NULL: no value changes
        verb = "TYPE"
    return table, verb, column, new


def declared_columns(con, info) -> dict[str, tuple[str, str, bool]]:
    """The columns of ``info`` that declarations name: lower-case name → (the declaration, the
    statement that drops it, whether a change of the column's type is refused too). Bounds and
    group keys are checked against the column's type where they are used (a bounded column no
    longer numeric, keys that no longer cast: refused before the charge), so a type change of
    theirs passes; owner columns, keys and policies were checked when declared only."""
    cat = con._catalog
    key = (info.schema.lower(), info.name.lower())
    out: dict[str, tuple[str, str, bool]] = {}

    def add(column, what, undo, typed=True):
        old = out.get(column.lower())
        if old is None or (typed and not old[2]):
            out[column.lower()] = (what, undo, typed)

    for p in cat.list_protected():
        undo = f"UNPROTECT TABLE {p.table}"
        if (p.schema.lower(), p.table.lower()) == key:
            for c in p.by_columns:
                add(c, f"the owner column of PROTECT TABLE {p.table} BY ({c})", undo)
            for c in p.key_columns:
                add(c, f"the participant key ({', '.join(p.key_columns)}) of PROTECT TABLE "
                       f"{p.table}", undo)
        if p.references is not None and (p.references[0].lower(), p.references[1].lower()) == key:
            for c in p.references[2]:
                add(c, f"the key {p.table}'s ownership REFERENCES {p.references[1]} "
                       f"({', '.join(p.references[2])})", undo)
    decl = ColumnDeclarations(cat)
    for b in decl.list_bounds():
        if (b.schema.lower(), b.table.lower()) == key:
            add(b.column, f"the bounds SET BOUNDS ON {b.table} ({b.column})",
                f"DROP BOUNDS ON {b.table} ({b.column})", False)
    for g in decl.list_group_keys():
        undo = f"DROP GROUP KEYS ON {g.table} ({g.column})"
        if (g.schema.lower(), g.table.lower()) == key:
            add(g.column, f"the group keys SET GROUP KEYS ON {g.table} ({g.column})", undo, False)
        if g.source_table is not None and (
                (g.source_schema or "").lower(), g.source_table.lower()) == key:
            add(g.source_column, f"the source of SET GROUP KEYS ON {g.table} ({g.column}) FROM "
                                 f"{g.source_table} ({g.source_column})", undo, False)
    policies = PolicyCatalog(con._duck, read_only=True, catalog=cat)
    for r in policies.list(info.schema, info.name):
        for c in r.columns:
            add(c, f"the policy {r.name} ON {r.table} ({', '.join(r.columns)})",
                f"DROP POLICY {r.name}")
    return out


_DOING = {"RENAME": "rename", "DROP": "drop", "TYPE": "change the type of", "ADD": "add"}
_THEN = {"RENAME": "would then describe another column", "ADD": "would then describe another column",
         "DROP": "would then name a column that is gone",
         "TYPE": "was made for the column's present type"}


def refuse_declared_column_change(con, stmt: str) -> None:
    """Raise :class:`~provsql_dp.errors.DeclarationError` when ``stmt`` is an ``ALTER TABLE``
    that changes a column a declaration names, or renames a column into such a name (read from
    the statement and the declarations; nothing runs)."""
    action = alter_action(stmt)
    if action is None:
        return
    table, verb, column, new = action
    info = con._catalog.find_table(table)
    if info is None or info.view_sql is not None:
        return
    if verb in ("ADD", "TYPE") and con._catalog.protection(info.schema, info.name) is not None:
        refuse_enum_alter(con, SCHEMA, info, column[0], stmt)  # labels from the data, shown to analysts
    declared = declared_columns(con, info)
    if not declared:
        return
    hit = declared.get(column[0].lower())
    named = column[0]
    if hit is None and verb == "RENAME" and len(column) == 1:
        hit, named = declared.get(new.lower()), new
    if hit is None or (verb == "TYPE" and not hit[2]):
        return
    what, undo, _ = hit
    target = f"{info.name}.{'.'.join(column)}"
    doing = f"{_DOING[verb]} column {target}" + (f" to {new}" if new is not None else "")
    raise DeclarationError(
        f"cannot {doing}: the column name {named!r} is named by a declaration ({what}), which "
        f"{_THEN[verb]}. Drop it ({undo}), change the column, then "
        "declare it again")


def protection_status(cat, prot) -> str:
    """``SHOW PROTECTED``'s ``status`` of a declaration: ``'ok'``, or what is missing — its
    table, or a column it names (renamed or dropped outside provsql_dp) — and the way out.

    >>> import provsql_dp
    >>> con = provsql_dp.connect()
    >>> _ = con.execute("CREATE TABLE people(id INT, owner INT); PROTECT TABLE people BY (owner)")
    >>> con.execute("SHOW PROTECTED").fetchall()[0][-1]
    'ok'
    >>> _ = con._duck.execute("DROP TABLE people")  # outside provsql_dp's statements
    >>> con._catalog.changed()
    >>> con.execute("SHOW PROTECTED").fetchall()[0][-1]
    'table missing (renamed or dropped outside provsql_dp): UNPROTECT TABLE people, then PROTECT it under its name again'
    """
    undo = f"UNPROTECT TABLE {prot.table}, then PROTECT it under its name again"
    info = cat.find_table([prot.schema, prot.table])
    if info is None or info.view_sql is not None:
        return f"table missing (renamed or dropped outside provsql_dp): {undo}"
    have = {c.lower() for c in info.columns}
    gone = [c for c in (*prot.by_columns, *prot.key_columns) if c.lower() not in have]
    if prot.references is not None:
        ref = cat.find_table([prot.references[0], prot.references[1]])
        if ref is None:
            return (f"referenced table {prot.references[1]} missing (renamed or dropped outside "
                    f"provsql_dp): {undo}")
        ref_have = {c.lower() for c in ref.columns}
        gone += [f"{ref.name}.{c}" for c in prot.references[2] if c.lower() not in ref_have]
    if gone:
        return (f"column {', '.join(gone)} missing (renamed or dropped outside provsql_dp): "
                f"{undo}")
    return "ok"
