"""A declaration whose table or column is gone (renamed or dropped outside provsql_dp, by
DuckDB's own client): found by the name it was declared under, so ``UNPROTECT TABLE``,
``DROP BOUNDS`` and ``DROP GROUP KEYS`` can remove it, and flagged in the ``status`` column of
``SHOW PROTECTED``, ``SHOW BOUNDS``, ``SHOW GROUP KEYS`` and ``SHOW POLICIES``. A table or view
created or renamed under an orphan's name through provsql_dp is refused (it would take the
orphan's declarations: :func:`provsql_dp.interfaces.dbapi.declared_drops.refuse_orphan_name`);
one created by DuckDB's own client takes them (see that module).

>>> import duckdb
>>> from provsql_dp.sql.catalog import Catalog
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE people(id INT, owner INT)")
>>> cat = Catalog(con)
>>> _ = cat.protect("people", ["owner"], None)
>>> orphan_protection(cat, ["people"]) is None  # the table is there: not an orphan
True
>>> status(cat, "main", "people", ["owner"], "UNPROTECT TABLE people")
'ok'
>>> _ = con.execute("DROP TABLE people"); cat.changed()
>>> orphan_protection(cat, ["main", "People"]).table
'people'
>>> status(cat, "main", "people", ["owner"], "UNPROTECT TABLE people")
'table missing (renamed or dropped outside provsql_dp): UNPROTECT TABLE people'
>>> cat.unprotect("people").table
'people'
"""

from __future__ import annotations

__all__ = ["orphan_protection", "orphan_rows", "status"]

_OUTSIDE = "(renamed or dropped outside provsql_dp)"


def orphan_protection(cat, parts: list[str]):
    """The one :class:`~provsql_dp.sql.catalog.Protection` declared under ``parts``
    (``[schema,] table``) whose table no longer exists, else None."""
    hits = orphan_rows(cat, cat.list_protected(), parts)
    return hits[0] if len(hits) == 1 else None


def orphan_rows(cat, rows, parts: list[str]) -> list:
    """The declarations among ``rows`` (each with ``schema`` and ``table``) declared under
    ``parts`` (``[[catalog,] schema,] table``, any case) whose table no longer exists."""
    parts = [p for p in parts or () if p]
    if not parts:
        return []
    name, schema = parts[-1].lower(), parts[-2].lower() if len(parts) > 1 else None
    return [r for r in rows
            if r.table.lower() == name and (schema is None or r.schema.lower() == schema)
            and cat.find_table([r.schema, r.table]) is None]


def status(cat, schema: str, table: str, columns, undo: str,
           source: tuple[str, str, str] | None = None) -> str:
    """A declaration's ``status``: ``'ok'``, or what is missing — its table (or a view in its
    place), a column of ``columns``, the ``(schema, table, column)`` it reads its values from —
    and ``undo``, the statement that removes it."""
    info = cat.find_table([schema, table])
    if info is None or info.view_sql is not None:
        return f"table missing {_OUTSIDE}: {undo}"
    have = {c.lower() for c in info.columns}
    gone = [c for c in columns if c.lower() not in have]
    if source is not None:
        src = cat.find_table([source[0], source[1]])
        if src is None or src.view_sql is not None:
            return f"source table {source[1]} missing {_OUTSIDE}: {undo}"
        if source[2].lower() not in {c.lower() for c in src.columns}:
            gone.append(f"{src.name}.{source[2]}")
    if gone:
        return f"column {', '.join(gone)} missing {_OUTSIDE}: {undo}"
    return "ok"
