"""The single-owner closed form as Spark aggregates (issue 30): an unbounded SUM on Spark runs the
bucket aggregation of ``privacy.engine_buckets`` there — per-owner totals (or the rows
themselves) and their buckets are Spark aggregates, only the bucket rows cross to the driver —
and releases DuckDB's value under one seed."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from provsql_dp.privacy import engine_buckets as eb
from provsql_dp.privacy import fast_path

from spark_support import on_spark
from test_engine_buckets import QUERIES, _db

pytestmark = pytest.mark.spark

_FILES = itertools.count()


@pytest.fixture(scope="module")
def both(spark, tmp_path_factory):
    """The bucket tests' database on DuckDB and its copy on Spark (declarations included)."""
    con = _db()
    path = tmp_path_factory.mktemp("spark_buckets") / "b.duckdb"
    sc = on_spark(_db(), spark, path)
    yield con, sc
    sc.close()


def _run(con, sql, seed=11):
    con._rng = np.random.default_rng(seed)
    cur = con.execute(sql)
    return sorted(cur.fetchall()), cur.privacy.mechanism


def _count_exact_reads(monkeypatch) -> list:
    """The parameters of every exact re-read of a bucket the release makes (a list that fills)."""
    calls = []
    original = eb.engine_buckets

    def spy(run, text, sql_params, params, n_parts, n_groups, run_exact, **k):
        def exact(q, p=None):
            calls.append(p)
            return run_exact(q, p)
        return original(run, text, sql_params, params, n_parts, n_groups, exact, **k)

    monkeypatch.setattr(fast_path, "engine_buckets", spy)
    return calls


def test_spark_releases_duckdbs_value_under_one_seed(both, monkeypatch):
    """Every query of the DuckDB bucket tests — rows as totals (signed), a GROUP BY owner, per
    group, owned along foreign keys, a join — releases on Spark exactly what DuckDB releases,
    without any per-owner total reaching the driver, and with a few KB crossing back."""
    con, sc = both

    def fail(*a, **k):
        raise AssertionError("per-owner totals fetched into Python")

    for sql in QUERIES:
        want = _run(con, sql)
        with monkeypatch.context() as m:
            m.setattr(fast_path, "_owner_totals_sql_path", fail)
            before = sc._engine.bytes_received
            got = _run(sc, sql)
            crossed = sc._engine.bytes_received - before
        assert got == want, sql
        assert want[1].startswith("recursive"), sql
        assert crossed < 32_000, (sql, crossed)  # bucket rows only (3,000 participants here)


def test_buckets_read_exactly_on_spark_release_the_same(both, monkeypatch):
    """With every other total's bucket estimate moved by one, Spark reads the straddling
    buckets again exactly (the parameters of those reads written into its SQL): the released
    value does not change, and equals DuckDB's."""
    con, sc = both
    sql = "SELECT SUM(amount) FROM visits WITH EPSILON 1"
    want = _run(con, sql)
    real = eb.bucket_sql

    def skewed(*a):
        ln, k, m = real(*a)
        return ln, f"({k}) + (abs(hash(c)) % 2)::BIGINT", f"({m}) - (abs(hash(c)) % 2)::BIGINT"

    calls = _count_exact_reads(monkeypatch)
    monkeypatch.setattr(eb, "bucket_sql", skewed)
    got = _run(sc, sql)
    assert calls and all(len(p) == 3 for p in calls)  # (group, part, bucket) written in
    assert got[0][0][0] == pytest.approx(want[0][0][0], rel=1e-12)


L1_QUERIES = [  # a participant's visits fall in several groups: one ℓ1 bound across them
    "SELECT amount % 3 AS k, SUM(amount) FROM visits WHERE amount BETWEEN 0 AND 49 "
    "GROUP BY k WITH EPSILON 1",
    "SELECT amount % 3 AS k, COUNT(*) FROM visits WHERE amount BETWEEN 0 AND 49 "
    "GROUP BY k WITH EPSILON 1",
]


@pytest.mark.parametrize("sql", L1_QUERIES)
def test_spark_releases_duckdbs_l1_groups_under_one_seed(both, sql):
    """The single-owner GROUP BY with one ℓ1 bound across its groups (privacy.group_l1) runs
    its per-(group, owner) SQL on Spark too, and releases there exactly what DuckDB releases."""
    con, sc = both
    assert "one ℓ1 bound across the 3 groups" in con.execute("EXPLAIN PRIVACY " + sql).fetchall()[0][2]
    want = _run(con, sql)
    got = _run(sc, sql)
    assert got[1] == want[1] and want[1].startswith("recursive")
    assert [g[0] for g in got[0]] == [w[0] for w in want[0]]
    for g, w in zip(got[0], want[0]):
        assert g[1] == pytest.approx(w[1], rel=1e-9, abs=1e-9)


def test_totals_pushed_onto_boundaries_release_duckdbs_value_on_spark(both, monkeypatch):
    """h55hard: near-boundary totals are keyed by their cell among the engine's own boundaries
    (``buckets.near_key_sql``: Spark's ``exp`` and ``ceil`` compute them there). Hundreds of
    distinct totals in the slack of a threshold and around a Δ̂ lattice point release on Spark
    exactly what DuckDB releases, with no exact re-read on either engine."""
    import math

    from provsql_dp.mechanisms.recursive.buckets import params_for
    from provsql_dp.mechanisms.recursive.single_owner import search_range

    con, sc = both
    p = params_for(1.0, 2, "node")  # a signed SUM: two parts at ε/2 each
    _, (_, w, gb) = search_range(1000.0, 3000, p["theta"], p["beta"])
    lattice = math.exp(math.log(p["theta"]) + p["mu"] + p["beta"] * 20)
    sql = (f"SELECT SUM(CASE WHEN id % 3 = 0 THEN {float(w[30])!r} + {float(gb[30] - w[30])!r} "
           f"* (id % 997) / 997 WHEN id % 3 = 1 THEN {lattice!r} * (1 + (id - 1500) * 1e-13) "
           "ELSE x END) FROM people WITH EPSILON 1")
    reads = _count_exact_reads(monkeypatch)
    want = _run(con, sql)
    got = _run(sc, sql)
    assert want[1].startswith("recursive") and got == want
    assert not reads
