"""A declaration whose table is gone (renamed or dropped outside provsql_dp, by DuckDB's own
client): found by the name it was declared under, so ``UNPROTECT TABLE`` can remove it
(``SHOW PROTECTED`` flags it in its ``status`` column).

>>> import duckdb
>>> from provsql_dp.sql.catalog import Catalog
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE people(id INT, owner INT)")
>>> cat = Catalog(con)
>>> _ = cat.protect("people", ["owner"], None)
>>> orphan_protection(cat, ["people"]) is None  # the table is there: not an orphan
True
>>> _ = con.execute("DROP TABLE people"); cat.changed()
>>> orphan_protection(cat, ["main", "People"]).table
'people'
>>> cat.unprotect("people").table
'people'
"""

from __future__ import annotations

__all__ = ["orphan_protection"]


def orphan_protection(cat, parts: list[str]):
    """The one :class:`~provsql_dp.sql.catalog.Protection` declared under ``parts``
    (``[schema,] table``) whose table no longer exists, else None."""
    if not parts:
        return None
    name, schema = parts[-1].lower(), parts[-2].lower() if len(parts) > 1 else None
    hits = [p for p in cat.list_protected()
            if p.table.lower() == name and (schema is None or p.schema.lower() == schema)
            and cat.find_table([p.schema, p.table]) is None]
    return hits[0] if len(hits) == 1 else None
