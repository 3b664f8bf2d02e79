"""The columns of a table declared NOT NULL (PRIMARY KEY columns are): schema, never data.

A UNIQUE key determines its row only where its columns are not NULL (rule 3 of
:mod:`provsql_dp.sql.owner_fd`); the planner records these columns on each
:class:`~provsql_dp.sql.plan.Scan`.

>>> import duckdb
>>> from provsql_dp.sql.catalog import Catalog
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE t(a INT PRIMARY KEY, b INT UNIQUE, c INT NOT NULL)")
>>> cat = Catalog(con)
>>> not_null_columns(cat, cat.find_table(["t"]))
('a', 'c')
"""

from __future__ import annotations

__all__ = ["not_null_columns"]


def not_null_columns(catalog, info) -> tuple[str, ...]:
    """The NOT NULL columns of a base table (none for a view or a registered frame), cached
    with the catalog's snapshot as its keys are."""
    if info.view_sql is not None or info.frame:
        return ()

    def read():
        rows = catalog.con.execute(  # DuckDB records a PRIMARY KEY's columns NOT NULL too
            """SELECT constraint_column_names FROM duckdb_constraints()
                WHERE database_name = ? AND schema_name = ? AND table_name = ?
                  AND constraint_type = 'NOT NULL'""",
            [info.catalog, info.schema, info.name],
        ).fetchall()
        return tuple(c for c in info.columns if any(c in r[0] for r in rows))

    return catalog.cached(("not_null", info.catalog, info.schema, info.name), read)
