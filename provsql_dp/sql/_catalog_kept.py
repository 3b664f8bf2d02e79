"""Whether what a catalog kept between statements is still the database's: the definitions of
the tables it read, recorded as they were when read.

:meth:`provsql_dp.sql.catalog.Catalog.snapshot` keeps its reads while the database's fingerprint
(the generation, the search path, the definitions of the tables of every name looked up) is
unchanged. A name first looked up by a statement joins the fingerprint at the next one, and the
memo is kept when the fingerprints differ only by such new names — which is right only if those
tables are defined now as they were when read. A table redefined outside provsql_dp in between
(a plain DuckDB connection bumps no generation) was planned from its old definition for as long
as the connection lived: a dropped PRIMARY KEY still gave one row per participant, a Laplace
release at sensitivity 1 for a participant owning thousands of rows (red team h63attack,
finding 5). So each name's definitions are recorded when it is first read
(:func:`read_definitions`, before its columns: a change racing with the read makes them differ
later, never agree wrongly), and :func:`read_as_kept` compares them with the new fingerprint.

>>> import duckdb
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE t(id INT PRIMARY KEY)")
>>> memo = {("defined", "t"): read_definitions(con, "t")}
>>> now = (("t",), ("g", "1"), *read_definitions(con, "t"))
>>> read_as_kept(memo, ((), ("g", "1")), now)
True
>>> _ = con.execute("DROP TABLE t; CREATE TABLE t(id INT)")
>>> read_as_kept(memo, ((), ("g", "1")), (("t",), ("g", "1"), *read_definitions(con, "t")))
False
"""

from __future__ import annotations

__all__ = ["read_definitions", "read_as_kept"]

#: the fingerprint's rows of the tables of one name (``Catalog._fingerprint`` reads them alike)
_SQL = ("SELECT 't', database_name, schema_name, table_name, sql FROM duckdb_tables() "
        "WHERE lower(table_name) = lower(?)")


def read_definitions(con, name: str) -> tuple:
    """The definitions of the tables named ``name`` (any schema), as the fingerprint has them."""
    return tuple(sorted(con.execute(_SQL, [name]).fetchall(), key=repr))


def read_as_kept(memo: dict, old: tuple | None, new: tuple) -> bool:
    """Whether each name of fingerprint ``new`` that ``old`` lacks has, in ``new``, the
    definitions ``memo`` recorded when the name was first read (none recorded: no)."""
    known = set(old[0]) if old else set()
    for name in set(new[0]) - known:
        recorded = memo.get(("defined", name))
        now = tuple(sorted((r for r in new[1:] if r[0] == "t" and r[3].lower() == name), key=repr))
        if recorded is None or recorded != now:
            return False
    return True
