"""Iceberg tables for the tests, written by pyiceberg into a local SQLite catalog (no service)."""

from __future__ import annotations

import pyarrow as pa


def catalog(root):
    """A pyiceberg SQL catalog (SQLite) whose warehouse is the directory ``root``."""
    from pyiceberg.catalog.sql import SqlCatalog

    root.mkdir(parents=True, exist_ok=True)
    cat = SqlCatalog("tests", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
    cat.create_namespace("db")
    return cat


def visits(cat, name="visits"):
    """A table ``db.<name>`` with two snapshots: 3 rows, then 2 more. Returns
    ``(table, first snapshot id, rows of the first, rows of both)``."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("pid", pa.int32()),
                        ("amount", pa.float64()), ("city", pa.string()), ("day", pa.date32())])
    import datetime as dt

    first = [(1, 10, 1.5, "a", dt.date(2024, 1, 1)), (2, 10, 2.5, "b", dt.date(2024, 1, 2)),
             (3, 11, None, "a", dt.date(2024, 1, 3))]
    more = [(4, 12, 4.0, None, dt.date(2024, 2, 1)), (5, 11, 0.25, "c", None)]
    table = cat.create_table(f"db.{name}", schema=schema)
    table.append(_arrow(schema, first))
    snap = table.current_snapshot().snapshot_id
    table.append(_arrow(schema, more))
    return table, snap, first, first + more


def _arrow(schema, rows):
    return pa.Table.from_pylist([dict(zip(schema.names, r)) for r in rows], schema=schema)
