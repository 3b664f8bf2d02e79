"""How a name inside a view's definition resolves: in the view's own database and schema first,
then as any name (the search path), as DuckDB binds a view. A view ``s2.v`` defined as
``SELECT * FROM t`` reads ``s2.t`` when there is one, whatever the search path; a two-part name
``q.t`` is looked for in the view's database first.

>>> import duckdb
>>> from provsql_dp.sql.catalog import Catalog
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE SCHEMA s2; CREATE TABLE t(x INT); CREATE TABLE s2.t(y INT); "
...                 "CREATE TABLE u(z INT)")
>>> cat = Catalog(con)
>>> find_in_view(cat, ["t"], ("memory", "s2")).schema, find_in_view(cat, ["t"], None).schema
('s2', 'main')
>>> find_in_view(cat, ["u"], ("memory", "s2")).schema  # not in s2: the search path's
'main'
"""

from __future__ import annotations

__all__ = ["find_in_view"]


def find_in_view(catalog, parts: list[str], home: tuple[str, str] | None):
    """The table or view ``parts`` names, read inside the definition of a view whose database
    and schema are ``home`` (None: not inside a view), or None."""
    if home is not None and len(parts) < 3:
        info = catalog.find_table([home[0], *([home[1]] if len(parts) == 1 else []), *parts])
        if info is not None:
            return info
    return catalog.find_table(parts)
