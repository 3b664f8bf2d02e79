"""Describe of private statements route by route (:mod:`provsql_dp.privacy.route_columns`): the
quantile, variance and ``COUNT(DISTINCT …)`` routes, Blowfish policy histograms and ranges,
``WITH EPSILON ε DELTA δ`` and ``WITH RHO ρ`` (the Gaussian release, partition selection, the
smooth-sensitivity median), ``OPTIONS (raw = true)``. They were described NoData, so asyncpg's
Execute of them was refused. Each statement is described — nothing charged — then run: the
description is the run's exactly, names and types, interval columns included."""

from __future__ import annotations

import pytest

import provsql_dp
from provsql_dp.interfaces.pgwire._describe import private_columns
from provsql_dp.privacy.route_columns import RAW_COUNT
from provsql_dp.sql import dialect as d


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("describe_routes") / "r.duckdb")
    con = provsql_dp.connect(path)
    for sql in [
        "CREATE TABLE t(id INT PRIMARY KEY, g INT, s VARCHAR, x DOUBLE, u INT)",
        "INSERT INTO t SELECT i, i % 3, 'a' || (i % 2), i * 1.5, i % 7 FROM range(100) r(i)",
        "PROTECT TABLE t", "SET GROUP KEYS ON t (g) VALUES (0, 1, 2)",
        "SET GROUP KEYS ON t (s) VALUES ('a0', 'a1')", "SET BOUNDS ON t (x) BETWEEN 0 AND 200",
        "CREATE TABLE people(id INT PRIMARY KEY, age INT, state VARCHAR)",
        "INSERT INTO people SELECT i, i % 90, ['CA', 'OR', 'WA', 'NY', 'NJ'][i % 5 + 1] "
        "FROM range(300) r(i)",
        "PROTECT TABLE people",
        "CREATE POLICY age_line ON people (age) AS LINE DOMAIN [0, 120) WIDTH 10",
        "CREATE POLICY state_p ON people (state) AS PARTITION BY (('CA', 'OR', 'WA'), ('NY', 'NJ'))",
        "CREATE TABLE spots(id INT PRIMARY KEY, x DOUBLE)",
        "INSERT INTO spots SELECT i, (i % 97) / 100.0 FROM range(200) r(i)", "PROTECT TABLE spots",
        "CREATE POLICY nx ON spots (x) AS DELTA 0.02 METRIC L1 DOMAIN [0, 1) WIDTH 0.01 BOUNDED",
        "SET PRIVACY BUDGET EPSILON 100000 DELTA 0.5 FOR USER 'ann'",
        "SET PRIVACY BUDGET RHO 100000 FOR USER 'zed'"]:
        con.execute(sql)
    con.commit()
    con.close()
    return path


@pytest.fixture(scope="module")
def analysts(db):
    cons = {u: provsql_dp.connect(db, role="analyst", user=u, interval_columns=True)
            for u in ("ann", "zed")}
    yield cons
    for c in cons.values():
        c.close()


ROUTES = [
    "SELECT MEDIAN(x) FROM t WITH EPSILON 1",  # quantile
    "SELECT g, MEDIAN(x) AS m FROM t GROUP BY g WITH EPSILON 1",
    "SELECT s, QUANTILE_CONT(x, 0.9) FROM t GROUP BY s WITH EPSILON 1",
    "SELECT g, MEDIAN(x) AS m FROM t GROUP BY g ORDER BY m WITH EPSILON 1",
    "SELECT VAR_SAMP(x) FROM t WITH EPSILON 1",  # variance
    "SELECT g, STDDEV_POP(x) AS sd FROM t GROUP BY g WITH EPSILON 1",
    "SELECT COUNT(DISTINCT g) FROM t WITH EPSILON 1",  # distinct
    "SELECT COUNT(DISTINCT s) AS kinds FROM t WITH EPSILON 1",
    "SELECT age, COUNT(*) FROM people GROUP BY age WITH EPSILON 0.5",  # Blowfish policies
    "SELECT age, COUNT(*) AS n FROM people GROUP BY age WITH EPSILON 0.5 OPTIONS (raw = true)",
    "SELECT age, COUNT(*) FROM people GROUP BY age WITH EPSILON 0.5 OPTIONS (strategy = 'dawa')",
    "SELECT state, COUNT(*) FROM people GROUP BY state WITH EPSILON 0.5",
    "SELECT age, COUNT(*) AS n FROM people GROUP BY age ORDER BY n DESC LIMIT 3 WITH EPSILON 0.5",
    "COUNT RANGES (age BETWEEN 20 AND 29, age >= 60) FROM people WITH EPSILON 0.5",
    "COUNT CUMULATIVE age FROM people WITH EPSILON 1",
    "SELECT COUNT(*) FROM people WHERE age < 30 WITH EPSILON 0.5",
    "SELECT COUNT(*) FROM t WITH RHO 0.1",  # Gaussian, one aggregate and several
    "SELECT COUNT(*) FROM t WITH EPSILON 1 DELTA 1e-6",
    "SELECT g, COUNT(*) FROM t GROUP BY g WITH RHO 0.1",
    "SELECT g, SUM(x) AS total FROM t GROUP BY g WITH RHO 0.1",
    "SELECT g, COUNT(*), AVG(x) FROM t GROUP BY g WITH RHO 0.1",
    "SELECT COUNT(*) FROM t WITH RHO 0.1 OPTIONS (raw = true)",
    "SELECT COUNT(*) * 2 AS dbl FROM t WITH RHO 0.1",
    "SELECT u, COUNT(*) FROM t GROUP BY u WITH EPSILON 1 DELTA 1e-5",  # partition selection
    "SELECT u, SUM(x) FROM t GROUP BY u WITH EPSILON 1 DELTA 1e-5",
    "SELECT s, u, COUNT(*) FROM t GROUP BY s, u WITH EPSILON 1 DELTA 1e-5",
    "SELECT u, COUNT(*) AS n FROM t GROUP BY u ORDER BY n WITH EPSILON 1 DELTA 1e-5",
    "SELECT u, COUNT(*) FROM t GROUP BY u WITH EPSILON 1 DELTA 1e-5 OPTIONS (raw = true)",
    "SELECT x > 50 AS big, COUNT(*) FROM t GROUP BY x > 50 WITH EPSILON 1 DELTA 1e-5",
    "SELECT MEDIAN(x) FROM spots WITH EPSILON 1 DELTA 1e-6",  # smooth-sensitivity median
    "SELECT SUM(u) FROM t WITH EPSILON 1 OPTIONS (raw = true)",  # raw without a COUNT
    "SELECT g, AVG(x) FROM t GROUP BY g WITH EPSILON 1 OPTIONS (raw = true)",
    # a quantile or variance beside other aggregates (mixed_route): each part by its own route
    "SELECT COUNT(*), AVG(x), MEDIAN(x) FROM t WITH EPSILON 1",
    "SELECT g, COUNT(*) AS n, STDDEV(x) AS sd, MEDIAN(x) FROM t GROUP BY g WITH EPSILON 1",
    "SELECT MEDIAN(x) AS m, SUM(x), VAR_POP(x) FROM t WITH EPSILON 1",
    "SELECT g, MEDIAN(x) AS m, COUNT(*) AS n FROM t GROUP BY g ORDER BY n DESC WITH EPSILON 1",
    "SELECT COUNT(*), MIN(x), MAX(x) FROM t WHERE x > (SELECT 10) WITH EPSILON 1",
    "SELECT APPROX_COUNT_DISTINCT(g) AS kinds FROM t WITH EPSILON 1",
]


@pytest.mark.parametrize("sql", ROUTES)
def test_each_route_is_described_as_it_runs(analysts, sql):
    con = analysts["zed" if "RHO" in sql else "ann"]
    before = con.ledger.budget(con.user)
    described, why = private_columns(con, d.parse_one(sql))
    assert con.ledger.budget(con.user) == before  # describing charges nothing
    assert described is not None, why
    assert described == [(c[0], str(c[1])) for c in con.execute(sql).description]


def test_a_raw_count_is_not_described_and_the_way_out_is_named(analysts):
    """A raw COUNT in pure ε is typed by the aggregate route its run decides (BIGINT on the
    Laplace route, DOUBLE on the recursive mechanism's): not described, the reason names the
    way out."""
    con = analysts["ann"]
    for sql in ["SELECT COUNT(*) FROM t WITH EPSILON 1 OPTIONS (raw = true)",
                "SELECT COUNT(*) FROM t WITH EPSILON 1 OPTIONS (raw = true, mechanism = 'r2t')"]:
        assert private_columns(con, d.parse_one(sql)) == (None, RAW_COUNT)
    assert "leave out OPTIONS (raw = true)" in RAW_COUNT


def test_a_route_refusal_is_raised_when_described(analysts):
    """What a route refuses from the statement alone is refused at Describe, charged nothing."""
    con = analysts["zed"]
    before = con.ledger.budget("zed")
    with pytest.raises(provsql_dp.NotSupportedError, match="quantile is released by its own"):
        private_columns(con, d.parse_one("SELECT g, MEDIAN(x) FROM t GROUP BY g WITH RHO 0.1"))
    with pytest.raises(provsql_dp.NotSupportedError, match="bounded SUM on the Laplace route"):
        private_columns(con, d.parse_one("SELECT SUM(u) FROM t WITH RHO 0.1"))  # u: no bounds
    with pytest.raises(provsql_dp.Error, match="RHO"):  # a mixed list is pure ε only
        private_columns(con, d.parse_one("SELECT COUNT(*), MEDIAN(x) FROM t WITH RHO 0.1"))
    assert con.ledger.budget("zed") == before
