"""The general path on Spark without a Python object per participant (issue 30, item 3): the
participant dictionaries are ranked in Spark, ids are 64-bit, the derivation table streams in as
Arrow batches — and releases stay DuckDB's under one seed.

One local Spark session (the ``spark`` fixture of ``tests/conftest.py``); small graphs and joins.
"""

from __future__ import annotations

import gc
import tracemalloc

import networkx as nx
import numpy as np
import pytest
from graph_sql_kit import graph_db
from spark_support import canonical, on_spark

import provsql_dp
from provsql_dp.errors import CaptureTooLarge
from provsql_dp.provenance.backends import _spark_ranks
from provsql_dp.provenance.participant_list import ParticipantList

pytestmark = pytest.mark.spark

TRIANGLES = ("SELECT COUNT(*) FROM edge e1 JOIN edge e2 ON e1.dst = e2.src "
             "JOIN edge e3 ON e1.src = e3.src AND e2.dst = e3.dst")


def _released(con, sql, seed=11):
    con._rng = np.random.default_rng(seed)
    cur = con.execute(sql)
    return cur.fetchall(), cur.privacy.mechanism, cur.privacy.epsilon


@pytest.mark.parametrize("privacy", ["node", "edge"])
def test_graph_releases_match_duckdb(spark, tmp_path, privacy):
    """Triangles (recursive mechanism) and 2-paths (R2T) of a small graph, node- and
    edge-private: the same released values under one seed on both engines."""
    con = graph_db(nx.gnp_random_graph(16, 0.3, seed=5), privacy)
    sc = on_spark(con, spark, tmp_path / "g.duckdb")
    for sql in (f"{TRIANGLES} WITH EPSILON 1",
                "SELECT COUNT(*) FROM edge e1 JOIN edge e2 ON e1.dst = e2.src WITH EPSILON 1 "
                "OPTIONS (mechanism = 'r2t', max_contribution = 64)"):
        ours = _released(con, sql)
        assert ours[1] in ("recursive", "r2t"), ours
        assert _released(sc, sql) == ours, sql
    assert isinstance(sc.provenance(TRIANGLES.replace("COUNT(*)", "e1.src")).participant_list,
                      ParticipantList)
    sc.close()


def _join_db(offset: int):
    """People with text and (large) integer keys, visits joined to them."""
    con = provsql_dp.connect(":memory:")
    con.execute("CREATE TABLE person(id BIGINT PRIMARY KEY, name VARCHAR, age INT)")
    con.execute(f"INSERT INTO person SELECT {offset} + range * 7, 'n' || (range % 37), range % 70 "
                "FROM range(120)")
    con.execute("CREATE TABLE visit(pid BIGINT, shop VARCHAR, amount INT)")
    con.execute(f"INSERT INTO visit SELECT {offset} + (range % 100) * 7, 's' || (range % 9), "
                "range % 30 FROM range(400)")
    con.execute("CREATE TABLE shop(name VARCHAR, owner VARCHAR)")
    con.execute("INSERT INTO shop SELECT 's' || range, 'o' || (range % 4) FROM range(9)")
    con.execute("PROTECT TABLE person BY (id) AS people")
    con.execute("PROTECT TABLE visit BY (pid) AS people")
    con.execute("PROTECT TABLE shop BY (owner) AS owners")
    con.execute("SET PRIVACY BUDGET 1000")
    con.commit()
    return con


JOINS = [
    "SELECT COUNT(*) FROM visit v JOIN shop s ON s.name = v.shop WITH EPSILON 1",
    "SELECT COUNT(*) FROM visit v JOIN person p ON p.id = v.pid JOIN shop s ON s.name = v.shop "
    "WHERE p.age < 50 WITH EPSILON 1",
    "SELECT COUNT(*) FROM (SELECT DISTINCT v.pid, s.owner FROM visit v JOIN shop s "
    "ON s.name = v.shop) t WITH EPSILON 1",
]


@pytest.mark.parametrize("offset", [0, 3 * 2**31])
def test_joins_match_duckdb_and_large_keys_round_trip(spark, tmp_path, monkeypatch, offset):
    """Joins over two domains (integer and text keys) release DuckDB's values; keys above 2^31
    come back as the same participants; and with ids forced to BIGINT (the width a domain of
    more than 2^31 participants crosses back with) nothing changes."""
    con = _join_db(offset)
    sc = on_spark(con, spark, tmp_path / "j.duckdb")
    for sql in JOINS if offset == 0 else ():
        assert _released(sc, sql) == _released(con, sql), sql
    plain = JOINS[1].replace("COUNT(*)", "v.pid, s.owner").replace(" WITH EPSILON 1", "")
    ours = con.provenance(plain)
    theirs = sc.provenance(plain)
    assert canonical(theirs) == canonical(ours)
    assert theirs.participant_list == ours.participant_list
    assert max(k for d, k in theirs.participant_list if d == "people") >= offset
    # ids as BIGINT on the wire: monkeypatched bound, same K-relation and release
    monkeypatch.setattr(_spark_ranks, "INT_IDS", 0)
    types = []
    real = sc._engine.fetchnumpy

    def spy(sql, **kw):
        out = real(sql, **kw)
        types.append(dict(zip(out[0], out[1])))
        return out

    sc._engine.fetchnumpy = spy
    assert canonical(sc.provenance(plain)) == canonical(ours)
    ids = {t for cols in types for name, t in cols.items() if name.startswith("__i")}
    assert ids == {"BIGINT"}, types
    assert _released(sc, JOINS[1]) == _released(con, JOINS[1])
    sc.close()


def test_capture_limit_counts_streamed_batches(spark, tmp_path):
    """The row limit holds on Spark without a LIMIT in the query: the capture stops at the
    first Arrow batch past it, with the same error as on DuckDB."""
    from provsql_dp.provenance.capture import capture

    con = _join_db(0)
    sc = on_spark(con, spark, tmp_path / "l.duckdb")
    sql = "SELECT v.pid FROM visit v JOIN person p ON p.id = v.pid"
    seen = []
    real = sc._engine.fetchnumpy

    def spy(q, **kw):
        seen.append(q)
        return real(q, **kw)

    sc._engine.fetchnumpy = spy
    for c in (con, sc):
        with pytest.raises(CaptureTooLarge):
            capture(c._engine, c.plan(sql), max_rows=50)
    assert "LIMIT" not in seen[-1].upper()
    assert len(capture(sc._engine, sc.plan(sql), max_rows=400)) == 400
    sc.close()


def test_no_python_object_per_participant(spark, tmp_path):
    """A capture over 300,000 participants keeps no per-participant Python objects: its
    participant list is a ParticipantList whose keys were never fetched, and the K-relation
    retains less than 48 bytes per participant (its int64 arrays are 32; a tuple of
    ``(domain, key)`` pairs alone would be ≥ 92)."""
    n = 300_000
    spark.range(n).selectExpr("id * 3 + 5000000000 AS id", "CAST(id % 90 AS INT) AS age") \
        .createOrReplaceTempView("many_people")
    con = provsql_dp.connect(str(tmp_path / "m.duckdb"), engine=spark)
    con.attach("people", "many_people", primary_key=["id"])
    con.execute("PROTECT TABLE people BY (id)")
    sql = "SELECT p.id FROM people p JOIN people q ON q.id = p.id WHERE p.age < 60"
    con.provenance(sql, columns=())  # warm-up: JVM, plans
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kr = con.provenance(sql, columns=())
    gc.collect()
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert kr.n_participants == n and len(kr) == sum(1 for i in range(n) if i % 90 < 60)
    assert isinstance(kr.participant_list, ParticipantList)
    assert callable(kr.participant_list._keys[0])  # the keys never reached the driver
    assert kept < 48 * n, kept / n
    assert kr.participant_list[-1][1] == 5000000000 + 3 * (n - 1)  # fetched when read
    con.close()
