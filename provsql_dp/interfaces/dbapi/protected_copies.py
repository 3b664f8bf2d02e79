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
keeps the rows protected: both pass. But the connection remembers the TEMP tables and the
variables (``SET VARIABLE v = (SELECT … FROM people)``) it filled from protected rows, and a copy
out of them (``INSERT INTO pub SELECT * FROM tt``, ``getvariable('v')``) counts as a read of
``people`` (red team h114attack, findings 2 and 3). A table function that reads a table or runs a
query named by a string (``query_table``, ``query``, ``json_execute_serialized_sql``) must name
it in a literal: a computed name (``query_table('peo' || 'ple')``) may be any table (finding 1).
A write with no ``SELECT`` nor ``FROM`` is read when it calls a macro or ``getvariable``
(``UPDATE pub SET d = m(1)``, finding 5), and ``PREPARE p AS <write>`` is checked as the write,
``EXECUTE p`` as the text prepared (finding 6: prepared before ``PROTECT TABLE``, it copies
now). Names are resolved by scope (a CTE of the same name is not the table). A write sqlglot does not read (``CREATE TABLE t AS PIVOT people …``) is refused when
any name among its tokens is a protected table, a view or a macro that reads one. A sequence a
protected table's column draws its ``DEFAULT`` from counts its rows: ``currval``, ``nextval``,
``duckdb_sequences()`` of it count as a read of that table (:mod:`.protected_sequences`); so
does a read of a file a ``COPY … TO`` or ``EXPORT DATABASE`` of the connection filled with
protected rows (:mod:`.protected_files`).
Anything run outside provsql_dp is out of reach here.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE people(id INT PRIMARY KEY, d VARCHAR); PROTECT TABLE people")
>>> con.execute("CREATE TABLE copy AS SELECT * FROM people")
Traceback (most recent call last):
...
provsql_dp.errors.DeclarationError: cannot write the protected rows of people into copy, which no declaration protects: every analyst could read them there. Create it empty (CREATE TABLE copy AS SELECT … WITH NO DATA), PROTECT TABLE copy BY (id) AS people (the unit of the rows it copies), then INSERT INTO copy SELECT …; a TEMP table is yours alone
>>> _ = con.execute("CREATE TABLE copy AS SELECT * FROM people WITH NO DATA")
"""

from __future__ import annotations

import os
import re

from sqlglot import exp

from ...errors import DeclarationError
from ...sql import dialect as d
from ...sql.cte_names import visible_ctes
from ...sql.view_names import find_in_view
from .guard_names import kept
from .protected_files import FILE_STATEMENT, file_statement, held_file
from .protected_units import refuse_other_unit, unit_hint
from .protected_sequences import (SEQUENCE_CALL, count_source, protected_sequences,
                                  sequence_source)

__all__ = ["refuse_protected_copy"]

_WORDS = re.compile(r"\b(CREATE|INSERT|UPDATE|MERGE|DELETE)\b", re.IGNORECASE)
#: a statement reads a table (or a view) only through one of these words
_READS = re.compile(r"\b(SELECT|FROM|JOIN|USING|TABLE|PIVOT|UNPIVOT|SUMMARIZE|DESCRIBE|SHOW)\b",
                    re.IGNORECASE)
_ENUM_OF_QUERY = re.compile(r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?TYPE\s+(?P<name>.+?)\s+AS\s+ENUM\s*"
                            r"\((?P<query>\s*(?:(?:SELECT|FROM|WITH)\b|\().*)\)\s*;?\s*$",
                            re.IGNORECASE | re.DOTALL)
_VIEW_DEPTH = 16  # views over views: deeper is refused as unreadable
#: table functions that read a table, or run a query, named by their string argument
_BY_STRING = frozenset({"query", "query_table", "json_execute_serialized_sql"})
_BY_STRING_CALL = re.compile(r"\b(query|query_table|json_execute_serialized_sql|getvariable)\s*\(",
                             re.IGNORECASE)
_DEFAULT_OF_VARIABLE = re.compile(r"\bDEFAULT\b.*\b(getvariable|currval|nextval)\s*\(",
                                  re.IGNORECASE | re.DOTALL)
#: a call of a function (a scalar macro may read a table: INSERT … VALUES (m(1))), not VALUES (
_CALL = re.compile(r"\b(?!VALUES\b)([A-Za-z_][\w$]*)\s*\(", re.IGNORECASE)
_PREPARED = re.compile(r"^\s*(?:PREPARE\s+(?:\"(?:[^\"]|\"\")+\"|\w+)(?:\s*\([^)]*\))?\s+AS\s+"
                       r"(?P<body>.+)|EXECUTE\s+(?P<name>\"(?:[^\"]|\"\")+\"|\w+))",
                       re.IGNORECASE | re.DOTALL)
_RENAME = re.compile(r'^\s*ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:(?:"[^"]+"|\w+)\s*\.\s*)*'
                     r'(?P<old>"[^"]+"|\w+)\s+RENAME\s+TO\s+(?P<new>"[^"]+"|\w+)', re.IGNORECASE)
_SET_VARIABLE = re.compile(r"^\s*SET\s+(?:(?:SESSION|LOCAL|GLOBAL)\s+)?VARIABLE\b", re.IGNORECASE)


def refuse_protected_copy(con, stmt: str) -> None:
    """Raise :class:`~provsql_dp.errors.DeclarationError` when ``stmt`` writes rows read from a
    protected table (or a view over one) into a table that is not protected (nothing runs)."""
    if _SET_VARIABLE.match(stmt):
        return _remember_variable(con, stmt)
    if FILE_STATEMENT.match(stmt):  # COPY … TO/FROM a file, EXPORT DATABASE (.protected_files)
        return file_statement(con, stmt, _held(con), lambda q: _read_source(con, q),
                              lambda t: _is_protected(con, t),
                              lambda tree, t, src: refuse_other_unit(con, tree, t, src))
    renamed = _RENAME.match(stmt)
    if renamed is not None and ("temp", renamed["old"].strip('"').lower()) in _held(con):
        source = _held(con)["temp", renamed["old"].strip('"').lower()]
        _held(con)["temp", renamed["new"].strip('"').lower()] = source  # kept on both: the
        # rename may fail, and a TEMP table made anew under a name clears it (_remember_temp)
    prepared = _PREPARED.match(stmt)
    if prepared is not None:  # PREPARE p AS <copy>; EXECUTE p: its text, when it runs (h114-6)
        body = prepared["body"] or _prepared_text(con, prepared["name"])
        return None if body is None else refuse_protected_copy(con, body)
    if _DEFAULT_OF_VARIABLE.search(stmt) and (_held(con) or protected_sequences(con)):
        _refuse_variable_default(con, stmt)
    if not _WORDS.search(stmt) or not (_READS.search(stmt) or _BY_STRING_CALL.search(stmt)
                                       or SEQUENCE_CALL.search(stmt) or _calls_macro(con, stmt)):
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
    if _remember_temp(con, tree):
        return
    target = _target(tree)
    if target is None:
        return
    if all(t is target for t in tree.find_all(exp.Table)) and not any(
            isinstance(f, exp.Anonymous) for f in tree.find_all(exp.Func)):
        return  # reads no table (nor calls a function that may be a macro): no catalog read
    cat = con._catalog
    with cat.snapshot():
        source = _protected_source(cat, tree, target, 0, _macros(con), _sources(con))
        if _is_protected(con, target):  # the rows stay protected, in the same unit
            return refuse_other_unit(con, tree, target, source)
    if source is not None:
        name, unit = target.name, unit_hint(con, tree, target, source)
        raise DeclarationError(
            f"cannot write the protected rows of {source} into {name}, which no declaration "
            "protects: every analyst could read them there. Create it empty (CREATE TABLE "
            f"{name} AS SELECT … WITH NO DATA), PROTECT TABLE {name}{unit} (the unit of the "
            f"rows it copies), then INSERT INTO {name} SELECT …; a TEMP table is yours alone")


_WRITE_HEAD = re.compile(r"^\s*(?:CREATE\s+(?:OR\s+REPLACE\s+)?(?P<temp>TEMP\s+|TEMPORARY\s+)?TABLE"
                         r"|INSERT|UPDATE|MERGE|DELETE)\b", re.IGNORECASE)


def _may_name_protected(con, stmt: str) -> bool:
    """Whether the text holds the name of a protected table, a view or a macro (which may read one):
    a statement that holds none is not parsed (an INSERT of a million literal rows would take
    seconds to). The protected tables and the macros are kept per connection
    (:mod:`.guard_names`), the views read each time (DuckDB's own client may make one)."""
    lower = stmt.lower()
    if any(n in lower for n in kept(con, "protected", _protected_names)):
        return True
    held = _held(con)
    if _BY_STRING_CALL.search(stmt) or any(os.path.basename(n) in lower for _, n in held):
        return True  # a name computed, or a TEMP table, a variable or a file of protected rows
    if any(k in ("file", "dir") for k, _ in held) and re.search(r"[*?\[]", stmt):
        return True  # a glob may match a file of protected rows (.protected_files)
    if SEQUENCE_CALL.search(stmt) and kept(con, "protected", _protected_names):
        return True  # a protected table's sequence or row count (.protected_sequences)
    views = con._duck.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()
    if any(v[0].lower() in lower for v in views):
        return True
    return any(n in lower for n in _macros(con))  # last: duckdb_functions() costs ~30 ms


def _protected_names(con) -> tuple[str, ...]:
    return tuple(p.table.lower() for p in con._catalog.list_protected())


def _macros(con) -> dict[str, str]:
    """The database's macros (scalar and table): lower-case name → definition. Kept per
    connection (:mod:`.guard_names`: ``duckdb_functions()`` costs ~15-30 ms, whatever the
    filter: paid by every curator write that read a table made the test suite 3 minutes
    slower); a macro made by DuckDB's own client is seen once a statement through provsql_dp
    may have changed them (as DuckDB's other catalog changes made behind provsql_dp's back,
    this guard of the curator's own writes is not a boundary: analysts cannot write)."""
    return kept(con, "macros", lambda c: {n.lower(): m for n, m in c._duck.execute(
        "SELECT function_name, macro_definition FROM duckdb_functions() WHERE function_type "
        "IN ('macro', 'table_macro') AND NOT internal").fetchall() if m is not None})


def _calls_macro(con, stmt: str) -> bool:
    """Whether ``stmt`` calls a function named as one of the database's macros (a write with no
    ``SELECT`` nor ``FROM`` may read a table through one, ``UPDATE pub SET d = m(1)``): the
    macros are read only when it calls some function (a bulk ``INSERT … VALUES`` of literals
    calls none)."""
    called = {m.group(1).lower() for m in _CALL.finditer(stmt)}
    return bool(called) and not called.isdisjoint(_macros(con))


def _refuse_variable_default(con, stmt: str) -> None:
    """A column's ``DEFAULT getvariable('v')`` (``CREATE TABLE``, ``ALTER TABLE``), ``v`` holding
    protected rows: every later INSERT would copy them, its text naming no variable."""
    try:
        tree = d.parse_one(stmt)
    except Exception:  # noqa: BLE001 - not read: DuckDB judges it
        return
    if not isinstance(tree, (exp.Create, exp.Alter)) or _temp_create(tree):
        return
    table = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    cat = con._catalog
    info = cat.find_table([p.name for p in table.parts]) if isinstance(table, exp.Table) else None
    if info is not None and cat.protection(info.schema, info.name) is not None:
        return  # into a protected table: the rows stay protected
    sequences = protected_sequences(con)
    for f in tree.find_all(exp.Anonymous):
        found = f.name.lower() == "getvariable" and f.expressions and _held_variable(
            _held(con), f.expressions[0]) or sequence_source(f, sequences)
        if found:
            name = table.name
            raise DeclarationError(
                f"cannot write the protected rows of {found} into {name}, which no declaration "
                "protects: a column's DEFAULT copies it into every row inserted, where every "
                "analyst could read it. Write the public value itself, SET VARIABLE anew from "
                "public rows, or PROTECT TABLE the protected table's copy instead")


def _temp_create(tree: exp.Expression) -> bool:
    """Whether ``tree`` is a ``CREATE TEMP TABLE``."""
    props = tree.args.get("properties") if isinstance(tree, exp.Create) else None
    return props is not None and str(tree.args.get("kind") or "").upper() == "TABLE" and any(
        isinstance(p, exp.TemporaryProperty) for p in props.expressions)


def _prepared_text(con, name: str) -> str | None:
    """The text of the statement prepared as ``name`` on the connection, or None."""
    if name.startswith('"'):
        name = name[1:-1].replace('""', '"')
    row = con._duck.execute("SELECT statement FROM duckdb_prepared_statements() WHERE "
                            "lower(name) = lower(?)", [name]).fetchone()
    return None if row is None else row[0]


def _held(con) -> dict[tuple[str, str], str]:
    """The connection's TEMP tables and variables filled from protected rows: ``("temp",
    name)`` or ``("var", name)`` (lower case) → the protected table they hold the rows of."""
    held = getattr(con, "_protected_held", None)
    if held is None:
        held = con._protected_held = {}
    return held


def _is_protected(con, table: exp.Table) -> bool:
    """Whether ``table`` names a protected table."""
    cat = con._catalog
    info = cat.find_table([p.name for p in table.parts])
    return info is not None and cat.protection(info.schema, info.name) is not None


def _read_source(con, query: exp.Expression) -> str | None:
    """The protected table ``query`` reads (:func:`_protected_source`), or None."""
    cat = con._catalog
    with cat.snapshot():
        return _protected_source(cat, query, None, 0, _macros(con), _sources(con))


def _sources(con) -> dict[tuple[str, str], str]:
    """:func:`_held`, with ``("seq", name)`` → the protected table for each sequence a protected
    table's column draws from, and ``("count", "")`` → a protected table when there is one (the
    catalogs' row counts; :mod:`.protected_sequences`), as :func:`_protected_source` reads."""
    seqs, protected = protected_sequences(con), con._catalog.list_protected()
    counts = {("count", ""): protected[0].table} if protected else {}
    return {**_held(con), **{("seq", n): t for n, t in seqs.items()}, **counts} \
        if seqs or counts else _held(con)


def _remember_temp(con, tree: exp.Expression) -> bool:
    """Whether ``tree`` creates a TEMP table; if so, remember whether it holds protected rows
    (a TEMP table is the connection's own: filling it passes, copying out of it does not)."""
    if not _temp_create(tree):
        return False
    props = tree.args["properties"]
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    query, key = tree.args.get("expression"), ("temp", target.name.lower())
    cat, source = con._catalog, None
    if query is not None and not any(isinstance(p, exp.WithDataProperty) and p.args.get("no")
                                     for p in props.expressions):
        with cat.snapshot():
            source = _protected_source(cat, query, None, 0, _macros(con), _sources(con))
    _held(con).pop(key, None)
    if source is not None:
        _held(con)[key] = source
    return True


def _remember_variable(con, stmt: str) -> None:
    """``SET VARIABLE v = <expr>``: remember whether ``v`` holds what protected rows gave."""
    m = re.match(r'^\s*SET\s+(?:\w+\s+)?VARIABLE\s+("[^"]+"|\w+)', stmt, re.IGNORECASE)
    try:
        item = d.parse_one(stmt).expressions[0].this
        name, value = item.this.name.lower(), item.expression
    except Exception:  # noqa: BLE001 - not read: any protected name in it counts
        name, value = (m[1].strip('"').lower() if m else ""), None
    cat = con._catalog
    with cat.snapshot():
        source = ("a value provsql_dp could not read" if _may_name_protected(con, stmt) else None) \
            if value is None else _protected_source(cat, value, None, 0, _macros(con), _sources(con))
    _held(con).pop(("var", name), None)
    if source is not None:
        _held(con)[("var", name)] = source


def _refuse_unread(con, stmt: str) -> None:
    """A write sqlglot does not read as one (``CREATE TABLE t AS PIVOT people …``): refused when
    any name among its tokens, the table written excepted, is a protected table or a view that
    reads one — a statement that cannot be read must not pass unread."""
    from sqlglot.tokens import TokenType

    m = _WRITE_HEAD.match(stmt)
    if m is None or re.search(r"\bWITH\s+NO\s+DATA\b", stmt, re.IGNORECASE):
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
    written = cat.find_table([t.text for t in toks[at:end:2]]) if name and not m["temp"] else None
    if written is not None and cat.protection(written.schema, written.name) is not None:
        return
    source, macros, held, sources = None, _macros(con), _held(con), _sources(con)
    with cat.snapshot():
        for n in dict.fromkeys(names):  # each name, as if read (or called: h114attack-7)
            read = exp.select("*").from_(exp.Table(this=exp.to_identifier(n)))
            source = source or _protected_source(cat, read, None, 0, macros, sources) or \
                _protected_source(cat, exp.Anonymous(this=n, expressions=[exp.Null()]), None, 0,
                                  None, sources)
            if source is None and n.lower() in _BY_STRING:
                source = f"a table {n}(…) reads by a string"
            elif source is None and n.lower() in macros:
                found = _in_text(cat, macros[n.lower()], 0, macros, held=sources)
                source = None if found is None else f"{found} (through the macro {n})"
            elif source is None and n.lower() == "getvariable":
                source = _held_variable(held, exp.Null())
    if m["temp"]:  # a TEMP table passes, remembered as holding what it read
        held.pop(("temp", name.strip('"').lower()), None)
        if source is not None:
            held["temp", name.strip('"').lower()] = source
        return
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
            _protected_source(cat, query, None, 0, _macros(con), _sources(con))
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
                      macros: dict[str, str] | None = None,
                      held: dict[tuple[str, str], str] | None = None, home=None) -> str | None:
    """The name of a protected table ``tree`` reads (through views and macros, or named in a
    string a table function reads, ``query_table('people')``, or through a TEMP table or a
    variable of ``held``), or None. ``home``: the database and schema of the view ``tree``
    defines, where its names resolve first (DuckDB's rule)."""
    macros, held = macros or {}, held or {}
    sequences = {n: t for (kind, n), t in held.items() if kind == "seq"}
    files, counted = any(kind in ("file", "dir") for kind, _ in held), held.get(("count", ""))
    for f in tree.find_all(exp.Func):
        name = f.name.lower() if isinstance(f, exp.Anonymous) else ""
        found = sequence_source(f, sequences) or count_source(f, counted) \
            if isinstance(f, exp.Anonymous) else None
        if found is not None:
            return found
        if name == "getvariable" and f.expressions:
            found = _held_variable(held, f.expressions[0])
            if found is not None:
                return found
        elif name in _BY_STRING and isinstance(f.parent, exp.Table) and not all(
                _literal(a) for a in f.expressions):
            return (f"a table whose name is computed ({f.sql(dialect='duckdb')[:60]}: name the "
                    "table in a string literal)")
        if name in macros:
            found = (name if depth >= _VIEW_DEPTH else
                     _in_text(cat, macros[name], depth, macros, held=held))
            if found is not None:
                return f"{found} (through the macro {name})"
        elif isinstance(f.parent, exp.Table) and f.parent.this is f:
            for lit in f.find_all(exp.Literal):
                found = lit.is_string and held_file(held, lit.this) if files else None
                if found:
                    return found
                if lit.is_string and _in_text(cat, lit.this, depth, macros, query=False, held=held):
                    return f"{lit.this!r} (read by {f.sql(dialect='duckdb')[:60]})"
    for t in tree.find_all(exp.Table):
        if t is target or not isinstance(t.this, exp.Identifier):
            continue
        found = sequence_source(t, sequences) or count_source(t, counted)
        if found is not None:
            return found
        if files and held_file(held, t.name) is not None:  # FROM 'people.csv'
            return held_file(held, t.name)
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
            found = _protected_source(cat, body, None, depth + 1, macros, held,
                                      (info.catalog, info.schema))
            if found is not None:
                return f"{found} (through the view {info.name})"
        elif info.catalog == "temp" and ("temp", info.name.lower()) in held:
            return f"{held['temp', info.name.lower()]} (through the TEMP table {info.name})"
    return None


def _held_variable(held: dict[tuple[str, str], str], arg: exp.Expression) -> str | None:
    """What ``getvariable(arg)`` reads of :func:`_held`'s variables (any of them, its name
    computed)."""
    if isinstance(arg, exp.Literal) and arg.is_string:
        name = arg.this.lower()
        return None if ("var", name) not in held else \
            f"{held['var', name]} (through the variable {name})"
    names = sorted(n for kind, n in held if kind == "var")
    return None if not names else (f"{held['var', names[0]]} (through the variable "
                                   f"{names[0]}, maybe: the name getvariable reads is computed)")


def _literal(e: exp.Expression) -> bool:
    """Whether ``e`` is made of literals only (``json_serialize_sql('…')`` too): a name read from
    it is the one written."""
    return all(isinstance(n, (exp.Literal, exp.Array, exp.Boolean, exp.Paren, exp.Identifier,
                              exp.Kwarg, exp.PropertyEQ, exp.Null))
               or isinstance(n, exp.Anonymous) and n.name.lower() == "json_serialize_sql"
               for n in e.walk())


def _in_text(cat, text: str, depth: int, macros: dict[str, str], query: bool = True,
             held: dict[tuple[str, str], str] | None = None):
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
    return _protected_source(cat, tree, None, depth + 1, macros, held)
