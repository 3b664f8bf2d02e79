"""The sequences a protected table's columns draw their ``DEFAULT`` from: their value counts the
rows inserted into it, an exact statistic of the protected rows.

``CREATE TABLE people(id INT DEFAULT nextval('s'), …)``: after three inserts ``currval('s')``
is 3 (and ``nextval('s')`` 4, ``duckdb_sequences()`` and ``pg_catalog.pg_sequences`` show
``last_value`` 3). An analyst reads none of them (:mod:`provsql_dp.sql.analyst`: neither
function is on the allow-list, nor is a catalog function a table). A curator's copy of it into
a table no declaration protects would hand the count to every analyst, so
:mod:`.protected_copies` counts a read of such a sequence as a read of its table
(:func:`sequence_source`): ``INSERT INTO pub VALUES (currval('s'))``, ``CREATE TABLE c AS
SELECT last_value FROM duckdb_sequences()``, a column's ``DEFAULT currval('s')``, and through a
variable, a macro or a TEMP table as any protected read. A name computed (``currval(lower(x))``)
may be any sequence. A sequence no protected table's column draws from is public. So too the
catalogs that show each table's row count, exact (``duckdb_tables()``'s ``estimated_size``,
``pg_catalog.pg_class``'s ``reltuples``): read in a copy while a table is protected, refused
(:func:`count_source`; the tables' names alone are in ``information_schema.tables``).

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE SEQUENCE s; CREATE TABLE people(id INT PRIMARY KEY DEFAULT "
...                 "nextval('s')); PROTECT TABLE people; INSERT INTO people VALUES (DEFAULT)")
>>> protected_sequences(con)
{'s': 'people'}
"""

from __future__ import annotations

import re

from sqlglot import exp

from .guard_names import kept

__all__ = ["count_source", "protected_sequences", "sequence_source", "SEQUENCE_CALL"]

#: a statement that may read a sequence's value or a table's row count: parsed by the copy guard
SEQUENCE_CALL = re.compile(r"\b(currval|nextval|duckdb_sequences|pg_sequences|duckdb_tables|"
                           r"pg_class)\b", re.IGNORECASE)
_DRAWN = re.compile(r"""\bnextval\s*\(\s*'((?:[^']|'')+)'""", re.IGNORECASE)


def protected_sequences(con) -> dict[str, str]:
    """The sequences protected tables' column defaults advance: the sequence's lower-case name
    (its last part) → the protected table. Kept per connection (:mod:`.guard_names`)."""
    return kept(con, "sequences", _read)


def _read(con) -> dict[str, str]:
    protected = {(p.schema.lower(), p.table.lower()): p.table
                 for p in con._catalog.list_protected()}
    if not protected:
        return {}
    found = {}
    for s, t, default in con._duck.execute(
            "SELECT schema_name, table_name, column_default FROM duckdb_columns() "
            "WHERE column_default ILIKE '%nextval%'").fetchall():
        table = protected.get((s.lower(), t.lower()))
        for m in _DRAWN.finditer(default or "") if table is not None else ():
            found.setdefault(_last(m[1].replace("''", "'")), table)
    return found


def _last(name: str) -> str:
    """A sequence's name as written in ``nextval``'s string, its last part, lower case."""
    return name.split(".")[-1].strip().strip('"').lower()


def sequence_source(f: exp.Expression, sequences: dict[str, str]) -> str | None:
    """What ``f`` (a function call or a table) reads of a protected sequence, or None: the
    protected table, with why."""
    if not sequences:
        return None
    why = "which counts the rows inserted into it"
    if isinstance(f, exp.Table) and not isinstance(f.this, exp.Identifier):
        return None
    name = f.name.lower()
    if isinstance(f, exp.Table):
        if name != "pg_sequences" or (f.db and f.db.lower() != "pg_catalog"):
            return None
        name = "pg_sequences"
    if name in ("duckdb_sequences", "pg_sequences"):
        s = sorted(sequences)[0]
        return f"{sequences[s]} (through the sequence {s} that {name} shows, {why})"
    if name not in ("currval", "nextval") or not f.expressions:
        return None
    arg = f.expressions[0]
    if isinstance(arg, exp.Literal) and arg.is_string:
        s = _last(arg.this)
        return None if s not in sequences else \
            f"{sequences[s]} (through the sequence {s}, {why})"
    s = sorted(sequences)[0]
    return (f"{sequences[s]} (through the sequence {s}, maybe: the name {name} reads is "
            f"computed; {name}, {why})")


def count_source(f: exp.Expression, table: str | None) -> str | None:
    """What ``f`` (a function call or a table) reads of a protected table's row count —
    ``duckdb_tables()``, ``pg_catalog.pg_class`` — or None; ``table``: a protected table (None:
    there is none)."""
    if table is None:
        return None
    if isinstance(f, exp.Anonymous) and f.name.lower() == "duckdb_tables" and isinstance(
            f.parent, exp.Table):
        what = "duckdb_tables(), whose estimated_size"
    elif isinstance(f, exp.Table) and isinstance(f.this, exp.Identifier) and \
            f.name.lower() == "pg_class" and (not f.db or f.db.lower() == "pg_catalog"):
        what = "pg_catalog.pg_class, whose reltuples"
    else:
        return None
    return (f"{table} (through {what} is each table's exact row count; the tables' names alone "
            "are in information_schema.tables)")
