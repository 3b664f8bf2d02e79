"""A curator's copy of protected rows into a table no declaration protects: refused.

``CREATE TABLE copy AS SELECT * FROM people`` made a table every analyst could read, holding the
protected rows, without a word (red team h103attack, finding 5); so did ``INSERT INTO pub SELECT …
FROM people``, ``UPDATE pub SET x = (SELECT COUNT(*) FROM people)`` (an exact statistic, released
without noise) and any of them through a view over a protected table. Such a statement — ``CREATE
TABLE … AS``, ``INSERT``, ``UPDATE``, ``MERGE``, ``DELETE`` (the rows it leaves tell which it
matched) writing a table that is not protected, and reading a protected table — is refused before
it runs, naming the way out: create the table empty (``CREATE TABLE copy AS SELECT … WITH NO
DATA``), protect it, then copy the rows in. A read through a view, a macro (``CREATE MACRO m() AS
TABLE SELECT * FROM people``) or a table function's string (``query_table('people')``,
``query('SELECT …')``) counts. So does ``CREATE TYPE t AS ENUM (SELECT c FROM people)``: a type's
labels are shown to analysts (``DESCRIBE``, :mod:`provsql_dp.sql.enum_labels`). A ``TEMP`` table is
the curator's connection's own (no analyst's session sees it), and a write into a protected table
keeps the rows protected: both pass. Names are resolved by scope (a CTE of the same name is not
the table). A write sqlglot does not read (``CREATE TABLE t AS PIVOT people …``) is refused when
any name among its tokens is a protected table, a view or a macro that reads one. Anything run
outside provsql_dp is out of reach here.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE people(id INT PRIMARY KEY, d VARCHAR); PROTECT TABLE people")
>>> con.execute("CREATE TABLE copy AS SELECT * FROM people")
Traceback (most recent call last):
...
provsql_dp.errors.DeclarationError: cannot write the protected rows of people into copy, which no declaration protects: every analyst could read them there. Create it empty (CREATE TABLE copy AS SELECT … WITH NO DATA), PROTECT TABLE copy, then INSERT INTO copy SELECT …; a TEMP table is yours alone
>>> _ = con.execute("CREATE TABLE copy AS SELECT * FROM people WITH NO DATA")
"""

from __future__ import annotations

import re

from sqlglot import exp

from ...errors import DeclarationError
from ...sql import dialect as d
from ...sql.cte_names import visible_ctes
from ...sql.view_names import find_in_view

__all__ = ["refuse_protected_copy"]

_WORDS = re.compile(r"\b(CREATE|INSERT|UPDATE|MERGE|DELETE)\b", re.IGNORECASE)
#: a statement reads a table (or a view) only through one of these words
_READS = re.compile(r"\b(SELECT|FROM|JOIN|USING|TABLE|PIVOT|UNPIVOT|SUMMARIZE|DESCRIBE|SHOW)\b",
                    re.IGNORECASE)
_ENUM_OF_QUERY = re.compile(r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?TYPE\s+(?P<name>.+?)\s+AS\s+ENUM\s*"
                            r"\((?P<query>\s*(?:(?:SELECT|FROM|WITH)\b|\().*)\)\s*;?\s*$",
                            re.IGNORECASE | re.DOTALL)
_VIEW_DEPTH = 16  # views over views: deeper is refused as unreadable


def refuse_protected_copy(con, stmt: str) -> None:
    """Raise :class:`~provsql_dp.errors.DeclarationError` when ``stmt`` writes rows read from a
    protected table (or a view over one) into a table that is not protected (nothing runs)."""
    if _MACRO_CHANGES.search(stmt):
        con._copy_macros = None  # the macros may change: read them again when next needed
    if not _WORDS.search(stmt) or not _READS.search(stmt):
        return  # writes nothing, or reads no table (INSERT … VALUES: not parsed, ~1 s a 10^4 rows)
    if not _may_name_protected(con, stmt):
        return  # names no protected table nor view
    try:
        tree = d.parse_one(stmt)
    except Exception:  # noqa: BLE001 - DuckDB's own forms (INSERT INTO t PIVOT …): by tokens
        return _refuse_unread(con, stmt)
    if isinstance(tree, exp.Command):
        _refuse_enum_of_rows(con, stmt)
        return _refuse_unread(con, stmt)  # CREATE TABLE t AS PIVOT people …
    target = _target(tree)
    if target is None:
        return
    if all(t is target for t in tree.find_all(exp.Table)) and not any(
            isinstance(f, exp.Anonymous) for f in tree.find_all(exp.Func)):
        return  # reads no table (nor calls a function that may be a macro): no catalog read
    cat = con._catalog
    info = cat.find_table([p.name for p in target.parts])
    if info is not None and cat.protection(info.schema, info.name) is not None:
        return  # into a protected table: the rows stay protected
    with cat.snapshot():
        source = _protected_source(cat, tree, target, 0, _macros(con))
    if source is not None:
        name = target.name
        raise DeclarationError(
            f"cannot write the protected rows of {source} into {name}, which no declaration "
            "protects: every analyst could read them there. Create it empty (CREATE TABLE "
            f"{name} AS SELECT … WITH NO DATA), PROTECT TABLE {name}, then INSERT INTO {name} "
            "SELECT …; a TEMP table is yours alone")


_WRITE_HEAD = re.compile(r"^\s*(?:CREATE\s+(?:OR\s+REPLACE\s+)?(?P<temp>TEMP\s+|TEMPORARY\s+)?TABLE"
                         r"|INSERT|UPDATE|MERGE|DELETE)\b", re.IGNORECASE)


def _may_name_protected(con, stmt: str) -> bool:
    """Whether the text holds the name of a protected table, a view or a macro (which may read one):
    a statement that holds none is not parsed (an INSERT of a million literal rows would take
    seconds to)."""
    lower = stmt.lower()
    views = con._duck.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()
    if any(n.lower() in lower for n in [*(p.table for p in con._catalog.list_protected()),
                                         *(v[0] for v in views)]):
        return True
    return any(n in lower for n in _macros(con))  # last: duckdb_functions() costs ~30 ms


#: statements that may create, drop or bring in macros: the connection's list is read again after
_MACRO_CHANGES = re.compile(r"\b(MACRO|FUNCTION|ATTACH|DETACH|USE|IMPORT|LOAD|INSTALL)\b",
                            re.IGNORECASE)


def _macros(con) -> dict[str, str]:
    """The database's macros (scalar and table): lower-case name → definition. Read once per
    connection (``duckdb_functions()`` costs ~15-30 ms, whatever the filter: paid by every
    curator write that read a table made the test suite 3 minutes slower) and again after a
    statement through it that may change them (:data:`_MACRO_CHANGES`); a macro made meanwhile
    by another connection is seen once this one runs such a statement (as DuckDB's other
    catalog changes made behind provsql_dp's back, this guard of the curator's own writes is
    not a boundary: analysts cannot write)."""
    cached = getattr(con, "_copy_macros", None)
    if cached is None:
        cached = con._copy_macros = {n.lower(): m for n, m in con._duck.execute(
            "SELECT function_name, macro_definition FROM duckdb_functions() WHERE function_type "
            "IN ('macro', 'table_macro') AND NOT internal").fetchall() if m is not None}
    return cached


def _refuse_unread(con, stmt: str) -> None:
    """A write sqlglot does not read as one (``CREATE TABLE t AS PIVOT people …``): refused when
    any name among its tokens, the table written excepted, is a protected table or a view that
    reads one — a statement that cannot be read must not pass unread."""
    from sqlglot.tokens import TokenType

    m = _WRITE_HEAD.match(stmt)
    if m is None or m["temp"] or re.search(r"\bWITH\s+NO\s+DATA\b", stmt, re.IGNORECASE):
        return
    try:
        toks = [t for t in d.ProvDP().tokenize(stmt) if t.token_type != TokenType.SEMICOLON]
    except Exception:  # noqa: BLE001 - DuckDB says what it cannot read
        return
    words = [t.text.upper() for t in toks]
    after = {"CREATE": "TABLE", "INSERT": "INTO", "MERGE": "INTO", "DELETE": "FROM"}.get(words[0])
    at = 1 if words[0] == "UPDATE" else (words.index(after) + 1 if after in words else len(toks))
    while at < len(toks) and words[at] in ("IF", "NOT", "EXISTS"):
        at += 1
    end = at + 1
    while end + 1 < len(toks) and toks[end].token_type == TokenType.DOT:
        end += 2  # a dotted name: the table is its last part
    name = toks[end - 1].text if at < len(toks) else ""
    names = [t.text for k, t in enumerate(toks) if not at <= k < end
             and t.token_type in (TokenType.VAR, TokenType.IDENTIFIER)]
    cat = con._catalog
    written = cat.find_table([t.text for t in toks[at:end:2]]) if name else None
    if written is not None and cat.protection(written.schema, written.name) is not None:
        return
    source, macros = None, _macros(con)
    with cat.snapshot():
        for n in dict.fromkeys(names):  # each name, as if read
            read = exp.select("*").from_(exp.Table(this=exp.to_identifier(n)))
            source = source or _protected_source(cat, read, None, 0, macros)
    if source is not None:
        raise DeclarationError(
            f"cannot write the protected rows of {source} into {name}, which no declaration "
            "protects: every analyst could read them there (this statement is not one provsql_dp "
            f"reads, so any protected name in it counts). Create it empty (CREATE TABLE {name} AS "
            f"SELECT … WITH NO DATA), PROTECT TABLE {name}, then INSERT INTO {name} SELECT …")


def _refuse_enum_of_rows(con, stmt: str) -> None:
    """``CREATE TYPE t AS ENUM (SELECT c FROM people)``: the labels, which every analyst sees in
    the type of a column of that type (``DESCRIBE``), would be the protected rows' values."""
    m = _ENUM_OF_QUERY.match(stmt)
    if m is None:
        return
    try:
        query = d.parse_one(m["query"])
    except Exception:  # noqa: BLE001 - a query we cannot read may read anything
        query = None
    cat = con._catalog
    with cat.snapshot():
        source = "a query that could not be read" if query is None else \
            _protected_source(cat, query, None, 0, _macros(con))
    if source is not None:
        raise DeclarationError(
            f"cannot make the labels of the ENUM type {m['name'].strip()} from the rows of "
            f"{source}: every analyst sees a type's labels (DESCRIBE of a column of that type), "
            "so they would be the protected values. List the public labels (CREATE TYPE … AS "
            "ENUM ('a', 'b')), or read them from a public table")


def _target(tree: exp.Expression) -> exp.Table | None:
    """The table a copy writes, or None (not a copy, a TEMP table, or created without rows)."""
    if isinstance(tree, exp.Create):
        if str(tree.args.get("kind") or "").upper() != "TABLE" or tree.args.get("expression") is None:
            return None
        props = tree.args.get("properties")
        for p in props.expressions if props is not None else ():
            if isinstance(p, exp.TemporaryProperty) or (
                    isinstance(p, exp.WithDataProperty) and p.args.get("no")):
                return None
    elif not isinstance(tree, (exp.Insert, exp.Update, exp.Merge, exp.Delete)):
        return None
    target = tree.this
    if isinstance(target, exp.Schema):
        target = target.this
    return target if isinstance(target, exp.Table) else None


def _protected_source(cat, tree: exp.Expression, target, depth: int,
                      macros: dict[str, str] | None = None, home=None) -> str | None:
    """The name of a protected table ``tree`` reads (through views and macros, or named in a
    string a table function reads, ``query_table('people')``), or None. ``home``: the database
    and schema of the view ``tree`` defines, where its names resolve first (DuckDB's rule)."""
    macros = macros or {}
    for f in tree.find_all(exp.Func):
        name = f.name.lower() if isinstance(f, exp.Anonymous) else ""
        if name in macros:
            found = (name if depth >= _VIEW_DEPTH else
                     _in_text(cat, macros[name], depth, macros))
            if found is not None:
                return f"{found} (through the macro {name})"
        elif isinstance(f.parent, exp.Table) and f.parent.this is f:
            for lit in f.find_all(exp.Literal):
                if lit.is_string and _in_text(cat, lit.this, depth, macros, query=False):
                    return f"{lit.this!r} (read by {f.sql(dialect='duckdb')[:60]})"
    for t in tree.find_all(exp.Table):
        if t is target or not isinstance(t.this, exp.Identifier):
            continue
        parts = [p.name for p in t.parts]
        if len(parts) == 1 and parts[0].lower() in visible_ctes(t):
            continue
        info = find_in_view(cat, parts, home)
        if info is None or info.frame:  # a registered DataFrame: public, never protected
            continue
        if cat.protection(info.schema, info.name) is not None:
            return info.name
        if info.view_sql is not None:
            if depth >= _VIEW_DEPTH:
                return info.name
            try:
                body = d.parse_one(info.view_sql)
            except Exception:  # noqa: BLE001 - a view we cannot read may read anything
                return info.name
            if isinstance(body, exp.Create):  # CREATE VIEW v AS <query>: the query
                body = body.args.get("expression") or exp.Select()
            found = _protected_source(cat, body, None, depth + 1, macros, (info.catalog, info.schema))
            if found is not None:
                return f"{found} (through the view {info.name})"
    return None


def _in_text(cat, text: str, depth: int, macros: dict[str, str], query: bool = True):
    """What :func:`_protected_source` finds in ``text``: a query or expression (a macro's
    definition, a string ``query(…)`` runs), or a table's name (``query_table``'s string)."""
    try:
        tree = d.parse_one(text)
    except Exception:  # noqa: BLE001 - not read: any name in it counts
        tree = None
    if tree is None or not query and isinstance(tree, exp.Column):
        parts = [p.strip('"') for p in text.split(".")]
        tree = exp.select("*").from_(exp.Table(this=exp.to_identifier(parts[-1]), db=(
            exp.to_identifier(parts[-2]) if len(parts) > 1 else None)))
    return _protected_source(cat, tree, None, depth + 1, macros)
