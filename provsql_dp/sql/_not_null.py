"""Column facts from the schema, never data: the columns declared NOT NULL (PRIMARY KEY columns
are), and the string columns compared under a collation.

A UNIQUE key determines its row only where its columns are not NULL (rule 3 of
:mod:`provsql_dp.sql.owner_fd`); two string columns equal under a collation (``'eng' =
'ENG'`` under ``NOCASE``) need not hold the same value, so :mod:`~provsql_dp.sql.owner_fd`
equates no collated column (rule 1) and a collated ``column = constant`` fixes nothing (rule 2).
The planner records both on each :class:`~provsql_dp.sql.plan.Scan`.

>>> import duckdb
>>> from provsql_dp.sql.catalog import Catalog
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE t(a INT PRIMARY KEY, b INT UNIQUE, c INT NOT NULL)")
>>> cat = Catalog(con)
>>> not_null_columns(cat, cat.find_table(["t"]))
('a', 'c')
>>> _ = con.execute("CREATE TABLE s(k VARCHAR COLLATE NOCASE, v VARCHAR, n INT)")
>>> collated_columns(cat, cat.find_table(["s"]))
('k',)
>>> _ = con.execute("SET default_collation = 'nocase'")
>>> collated_columns(Catalog(con), cat.find_table(["s"]))   # every string column now
('k', 'v')
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

__all__ = ["collated_columns", "not_null_columns"]


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


def collated_columns(catalog, info) -> tuple[str, ...]:
    """The VARCHAR columns of ``info`` whose ``=`` may hold between different strings: all of them
    under a session ``default_collation``, or for a view or a registered frame (their columns'
    collations are not recorded), or when the table's CREATE statement does not parse; else
    those declared with a ``COLLATE`` other than ``binary`` (DuckDB's column catalog does not
    show collations: the table's ``CREATE`` text, ``duckdb_tables().sql``, does)."""
    def read():
        strings = tuple(c for c, t in zip(info.columns, info.types) if str(t).upper() == "VARCHAR")
        if not strings:
            return ()
        default = catalog.con.execute("SELECT current_setting('default_collation')").fetchall()
        if info.view_sql is not None or info.frame or (default and default[0][0] not in ("", "binary")):
            return strings
        rows = catalog.con.execute(
            "SELECT sql FROM duckdb_tables() WHERE database_name = ? AND schema_name = ? "
            "AND table_name = ?", [info.catalog, info.schema, info.name]).fetchall()
        try:
            create = sqlglot.parse_one(rows[0][0], read="duckdb")
        except Exception:  # noqa: BLE001 - unreadable: every string column counts as collated
            return strings
        named = {}
        for cd in create.find_all(exp.ColumnDef):
            for con in cd.args.get("constraints") or []:
                kind = con.args.get("kind")
                if isinstance(kind, exp.CollateColumnConstraint) and kind.this.name.lower() != "binary":
                    named[cd.name.lower()] = True
        return tuple(c for c in strings if named.get(c.lower()))

    return catalog.cached(("collated", info.catalog, info.schema, info.name), read)
