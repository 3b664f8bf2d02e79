"""The user macros and functions that have a DuckDB built-in's name (lower case), read in one
scan of ``duckdb_functions()``: the table function builds all of its ~3,200 rows whatever the
filter (~13 ms), and the same question asked in SQL scanned it twice. The names are compared in
Python: a macro ``Lower`` shadows ``lower()`` too, so the SQL ``lower(function_name)`` the check
used to compare them was the macro's own (the identity) and missed it.

>>> import duckdb
>>> con = duckdb.connect()
>>> shadowed_builtins(con)
[]
>>> _ = con.execute("CREATE MACRO Lower(x) AS x; CREATE MACRO mine(x) AS x")
>>> shadowed_builtins(con)
['lower']
"""

from __future__ import annotations

__all__ = ["shadowed_builtins"]


def shadowed_builtins(con) -> list[str]:
    rows = con.execute("SELECT function_name, internal FROM duckdb_functions()").fetchall()
    names = [(n.lower(), internal) for n, internal in rows]
    return sorted({n for n, internal in names if not internal} & {n for n, internal in names if internal})
