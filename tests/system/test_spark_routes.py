"""Every route on Spark, or a clear refusal (issue 30): the k-star and k-triangle constructions
and EXPLAIN PRIVACY's curator sizes read the Spark snapshot and agree with DuckDB under one seed;
KMEANS reads Spark; PUBLISH is refused there; the caller's Spark session is never touched; a
table is snapshotted and checked once and later connections reuse the snapshot."""

from __future__ import annotations

import os

import networkx as nx
import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import InterfaceError, NotSupportedError
from provsql_dp.graph import pattern_sql
from provsql_dp.provenance.backends.spark import VIEW_PREFIX, SparkBackend

from graph_sql_kit import graph_db
from spark_support import on_spark

pytestmark = pytest.mark.spark

GRAPH_QUERIES = {  # SQL → the route DuckDB takes for it
    f"SELECT COUNT(*) FROM ({pattern_sql('2-star')})": "recursive-kstar",
    f"SELECT COUNT(*) FROM ({pattern_sql('3-star')})": "recursive-kstar",
    f"SELECT COUNT(*) FROM ({pattern_sql('2-triangle')})": "recursive-ktriangle",
    "SELECT COUNT(*) FROM edge e1 JOIN edge e2 ON e1.dst = e2.src": "recursive",
}


def test_graph_routes_and_explain_sizes_match_duckdb(spark, tmp_path):
    """Same declarations, same seed: the same route, the same released value, the same
    EXPLAIN PRIVACY text — its curator sizes counted on Spark, not on the empty mirror."""
    con = graph_db(nx.gnp_random_graph(18, 0.35, seed=4), "edge")
    sc = on_spark(con, spark, tmp_path / "g.duckdb")
    for sql, mechanism in GRAPH_QUERIES.items():
        outs = []
        for c in (con, sc):
            c._rng = np.random.default_rng(7)
            cur = c.execute(f"{sql} WITH EPSILON 1")
            explained = c.execute(f"EXPLAIN PRIVACY {sql} WITH EPSILON 1").fetchall()
            outs.append((cur.fetchall(), cur.privacy.mechanism, explained))
        assert outs[0][1] == mechanism, sql
        assert outs[0] == outs[1], sql
        note = str(outs[1][2])
        assert "participants=0" not in note and "Curator only (private sizes" in note, note
    sc.close()


def test_the_callers_session_is_never_touched(spark, tmp_path):
    """Our queries run in a session of our own: ANSI mode off there, the caller's setting and
    catalog unchanged, our views gone when the connection closes."""
    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", "true")
    try:
        spark.range(50).selectExpr("id", "id % 5 AS g").createOrReplaceTempView("iso_t")
        con = provsql_dp.connect(str(tmp_path / "iso.duckdb"), engine=spark)
        con.attach("t", "iso_t")
        con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 5")
        # a division by zero is an error under ANSI mode: here it must stay NULL, in our session
        cur = con.execute("SELECT COUNT(*) FROM t WHERE 10 / (g - g) IS NULL WITH EPSILON 1")
        assert cur.privacy.mechanism == "laplace"
        own = con._engine.spark
        assert own is not spark and own.conf.get("spark.sql.ansi.enabled") == "false"
        assert spark.conf.get("spark.sql.ansi.enabled") == "true"
        assert not [t.name for t in spark.catalog.listTables() if t.name.startswith(VIEW_PREFIX)]
        ours = [t.name for t in own.catalog.listTables() if t.name.startswith(VIEW_PREFIX)]
        assert ours, "the snapshot's view lives in our session"
        con.close()
        left = {t.name for t in own.catalog.listTables()}
        assert not left & set(ours), "views dropped on close()"
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)


@pytest.mark.filterwarnings("ignore:analyst connection")  # the curator holds the file too
def test_attach_once_then_reuse(spark, tmp_path, monkeypatch):
    """The curator's attach writes a Parquet snapshot and checks it once; a later connection
    reads that snapshot (no copy, no check); attaching again makes a new version; a snapshot
    that is gone fails the query with what to do, and charges nothing."""
    spark.createDataFrame([(i, i + 1 + i % 3) for i in range(40)], "src INT, dst INT") \
        .createOrReplaceTempView("once_edge")
    spark.createDataFrame([(1, 2), (3, 3)], "src INT, dst INT").createOrReplaceTempView("bad_edge")
    path = str(tmp_path / "once.duckdb")
    cur = provsql_dp.connect(path, engine=spark)
    with pytest.raises(InterfaceError, match=r"CHECK \(src < dst\) is false"):
        cur.attach("edge", "bad_edge", checks=["src < dst"])
    assert not os.path.exists(path + ".spark/edge/v1"), "a refused snapshot is removed"
    cur.attach("edge", "once_edge", primary_key=["src", "dst"], checks=["src < dst"])
    cur.execute("PROTECT TABLE edge; SET PRIVACY BUDGET 3 FOR USER ann")
    cur.commit()
    (snap, version), = cur._duck.execute(
        "SELECT snapshot, version FROM _provsql_dp.engine_tables").fetchall()
    assert (snap, version) == (path + ".spark/edge/v1", 1) and os.path.isdir(snap)

    def no_second_snapshot(*a, **k):
        raise AssertionError("a later connection must not snapshot or check the table again")

    with monkeypatch.context() as m:
        m.setattr(SparkBackend, "attach", no_second_snapshot)
        ann = provsql_dp.connect(path, engine=spark, role="analyst", user="ann")
        ann._rng = np.random.default_rng(1)
        q = f"SELECT COUNT(*) FROM ({pattern_sql('2-star')}) WITH EPSILON 1"
        assert ann.execute(q).privacy.mechanism == "recursive-kstar"  # the CHECK reached the mirror
        ann.close()
    cur.attach("edge", "once_edge", primary_key=["src", "dst"], checks=["src < dst"])
    cur.commit()
    assert cur._duck.execute("SELECT snapshot, version FROM _provsql_dp.engine_tables").fetchall() \
        == [(path + ".spark/edge/v2", 2)]
    cur.close()
    import shutil

    shutil.rmtree(path + ".spark/edge/v2")
    ann = provsql_dp.connect(path, engine=spark, role="analyst", user="ann")
    with pytest.raises(NotSupportedError, match="attaches the table again"):
        ann.execute("SELECT COUNT(*) FROM edge WITH EPSILON 1")
    assert ann.ledger.budget("ann")[1] == 1  # one ε spent above, none by the refusal
    ann.close()
    cur = provsql_dp.connect(path, engine=spark)
    with pytest.raises(NotSupportedError, match="attached from Spark"):  # not the empty mirror
        cur.execute("SELECT count(*) FROM edge")
    cur.close()


def test_kmeans_reads_spark_and_publish_is_refused(spark, tmp_path):
    con = provsql_dp.connect()
    con.execute("CREATE TABLE pts(x DOUBLE, y DOUBLE)")
    con.execute("INSERT INTO pts SELECT (i % 10) / 10.0 + 0.05, (i % 7) / 7.0 FROM range(400) t(i)")
    con.execute("PROTECT TABLE pts; SET BOUNDS ON pts (x) BETWEEN 0 AND 1; "
                "SET BOUNDS ON pts (y) BETWEEN 0 AND 1; SET PRIVACY BUDGET 10")
    sc = on_spark(con, spark, tmp_path / "k.duckdb")
    outs = []
    for c in (con, sc):
        c._rng = np.random.default_rng(3)
        outs.append(c.execute("KMEANS CLUSTERS 2 OF (x, y) FROM pts ITERATIONS 3 WITH EPSILON 1")
                    .fetchall())
    assert np.allclose(np.array(outs[0]), np.array(outs[1]))  # the points, not the empty mirror
    sc.execute("CREATE STREAM s WINDOW 2 STEPS WITH EPSILON 1")
    with pytest.raises(NotSupportedError, match="PUBLISH reads the catalog's own DuckDB tables"):
        sc.execute("PUBLISH STREAM s STEP 1 WITH EPSILON 0.5 AS SELECT count(*) FROM pts")
    sc.close()


def test_a_delta_table_at_a_version(spark, tmp_path):
    """A Delta table is read at the version asked for (its log resolved by deltalake, the
    Parquet files read by Spark) and that version is recorded with the snapshot."""
    import pyarrow as pa
    from deltalake import write_deltalake

    table = str(tmp_path / "events")
    write_deltalake(table, pa.table({"id": pa.array(range(30), pa.int64()),
                                     "v": pa.array([i % 4 for i in range(30)], pa.int32())}))
    write_deltalake(table, pa.table({"id": pa.array(range(30, 1030), pa.int64()),
                                     "v": pa.array([1] * 1000, pa.int32())}), mode="append")
    con = provsql_dp.connect(str(tmp_path / "d.duckdb"), engine=spark)
    con.attach("events", f"delta:{table}", primary_key=["id"], version=0)
    con.execute("PROTECT TABLE events; SET PRIVACY BUDGET 10")
    assert con._duck.execute("SELECT source, version, source_version FROM "
                             "_provsql_dp.engine_tables").fetchall() == [(f"delta:{table}", 1, 0)]
    con._rng = np.random.default_rng(0)
    # 30 rows at version 0 (1,030 at the latest): a count with ε = 5 lands within a few units
    assert abs(con.execute("SELECT COUNT(*) FROM events WITH EPSILON 5").fetchone()[0] - 30) < 10
    con.attach("events", f"delta:{table}", primary_key=["id"])  # the latest version
    assert con._duck.execute("SELECT version, source_version FROM "
                             "_provsql_dp.engine_tables").fetchall() == [(2, 1)]
    with pytest.raises(InterfaceError, match="version= applies to a Delta source"):
        con.attach("other", "iso_t", version=3)
    con.close()
