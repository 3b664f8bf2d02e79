"""Iceberg tables attached to the Spark engine through pyiceberg's scan plan (issue 30,
provenance/backends/_iceberg.py): the rows of the snapshot asked for, its id recorded as the
version, time travel by VERSION, and a clear refusal of whatever a by-name read of the data
files would get wrong (delete files, renamed or re-added columns, promoted types)."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from types import SimpleNamespace

import pytest

pytest.importorskip("pyiceberg")

import provsql_dp  # noqa: E402
from provsql_dp.errors import InterfaceError, NotSupportedError  # noqa: E402
from provsql_dp.provenance.backends import _iceberg  # noqa: E402

from iceberg_support import catalog, visits  # noqa: E402


def _plan(table, snapshot_id=None):
    from pyiceberg.table import StaticTable

    static = StaticTable.from_metadata(table.metadata_location)
    snap = static.snapshot_by_id(snapshot_id) if snapshot_id else static.current_snapshot()
    schema = static.schemas()[snap.schema_id] if snapshot_id else static.schema()
    return schema, list(static.scan(snapshot_id=snap.snapshot_id).plan_files()), static.specs()


def test_check_files_accepts_added_columns_and_refuses_renames_and_promotions(tmp_path):
    cat = catalog(tmp_path / "wh")
    table, first, _, _ = visits(cat)
    _iceberg.check_files("t", *_plan(table))                 # as written: exact
    from pyiceberg.types import LongType, StringType

    with table.update_schema() as u:                          # older files lack it: NULL there
        u.add_column("note", StringType())
    _iceberg.check_files("t", *_plan(cat.load_table("db.visits")))
    with table.update_schema() as u:
        u.rename_column("city", "town")
    with pytest.raises(NotSupportedError, match="renamed since it was written"):
        _iceberg.check_files("t", *_plan(cat.load_table("db.visits")))
    _iceberg.check_files("t", *_plan(cat.load_table("db.visits"), first))  # the old schema
    table2, _, _, _ = visits(cat, "promoted")
    with table2.update_schema() as u:
        u.update_column("pid", LongType())
    with pytest.raises(NotSupportedError, match="promoted"):
        _iceberg.check_files("t", *_plan(cat.load_table("db.promoted")))


def test_check_files_refuses_delete_files_and_other_formats(tmp_path):
    table, _, _, _ = visits(catalog(tmp_path / "wh"))
    schema, tasks, specs = _plan(table)
    deleting = SimpleNamespace(file=tasks[0].file, delete_files={object()})
    with pytest.raises(NotSupportedError, match="merge-on-read deletes"):
        _iceberg.check_files("t", schema, [deleting], specs)
    orc = SimpleNamespace(file=SimpleNamespace(file_path=tasks[0].file.file_path,
                                               file_format="ORC", spec_id=0), delete_files=set())
    with pytest.raises(NotSupportedError, match="ORC, not Parquet"):
        _iceberg.check_files("t", schema, [orc], specs)


def _rows(con, name):
    view = con._engine._views[name]
    return Counter(tuple(r) for r in con._engine.spark.table(view)
                   .select("id", "pid", "amount", "city", "day").collect())


@pytest.mark.spark
@pytest.mark.filterwarnings("ignore:analyst connection")
def test_attach_iceberg_versions_and_refusals(spark, tmp_path):
    cat = catalog(tmp_path / "wh")
    table, first, rows1, rows2 = visits(cat)
    source = f"iceberg:{table.metadata_location}"
    con = provsql_dp.connect(str(tmp_path / "c.duckdb"), engine=spark)
    con.execute(f"ATTACH SPARK TABLE v FROM '{source}' PRIMARY KEY (id) CHECK (pid > 0)")
    assert _rows(con, "v") == Counter(rows2)
    current = table.current_snapshot().snapshot_id
    assert con.execute("SELECT source_version FROM _provsql_dp.engine_tables "
                       "WHERE table_name = 'v'").fetchall() == [(current,)]
    con.execute(f"ATTACH SPARK TABLE old FROM '{source}' VERSION {first} PRIMARY KEY (id)")
    assert _rows(con, "old") == Counter(rows1)                # time travel to snapshot 1
    assert con.execute("SELECT source_version FROM _provsql_dp.engine_tables "
                       "WHERE table_name = 'old'").fetchall() == [(first,)]
    # a private statement reads it like any attached table
    con.execute("PROTECT TABLE v; SET PRIVACY BUDGET 5")
    cur = con.execute("SELECT COUNT(*) FROM v WITH EPSILON 1")
    assert cur.privacy.mechanism == "laplace" and len(cur.fetchall()) == 1
    with pytest.raises(InterfaceError, match="has no snapshot 12345"):
        con.execute(f"ATTACH SPARK TABLE w FROM '{source}' VERSION 12345")
    with pytest.raises(InterfaceError, match="cannot read the Iceberg table metadata"):
        con.execute(f"ATTACH SPARK TABLE w FROM 'iceberg:{tmp_path}/nothing.metadata.json'")
    with table.update_schema() as u:
        u.rename_column("city", "town")
    renamed = cat.load_table("db.visits").metadata_location
    with pytest.raises(NotSupportedError, match="renamed"):
        con.execute(f"ATTACH SPARK TABLE w FROM 'iceberg:{renamed}'")
    assert "w" not in con._engine.tables
    # the date column and the NULLs came through with their types
    assert {r[4] for r in rows2} - {None} <= {r[4] for r in _rows(con, "v")}
    assert dt.date(2024, 1, 1) in {r[4] for r in _rows(con, "v")}
    con.close()
