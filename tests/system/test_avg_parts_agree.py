"""An AVG is released as its SUM over its COUNT. On every route the COUNT counts exactly the rows
the SUM adds: for an AVG of an expression over columns with declared bounds the SUM reads each
column clamped (NULL when not finite), and the COUNT read the raw expression — a value of 1e308
made ``x * 2`` infinite, uncounted, while the SUM added its clamp. The interval of an AVG stays
within the bounds (the mean of clamped values lies there); it extended below them."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sqlglot

import provsql_dp
from provsql_dp.privacy.intervals import interval_of
from provsql_dp.provenance.capture import compile_node
from provsql_dp.sql.planner import plan_query

#: values that exercise the clamp: inside [0, 5], beyond it either way, huge, non-finite, NULL
VALUES = st.sampled_from([0.0, 1.5, 3.0, 5.0, 7.5, -2.0, 1e308, -1e308, math.inf, -math.inf,
                          math.nan, None])

ROUTES = {  # several rows per participant: the recursive mechanism's routes (the LP's rows,
    # pairs of consecutive rows, have two owners: every row but the first, x from the later one)
    "single-owner": ("FROM v", 0),
    "recursive-lp": ("FROM v JOIN v w ON w.rid = v.rid - 1", 1),
}


def _db(rows):
    con = provsql_dp.connect()
    con.execute("CREATE TABLE p(id INT PRIMARY KEY)")
    con.execute("INSERT INTO p SELECT range FROM range(8)")
    con.execute("CREATE TABLE v(rid INT PRIMARY KEY, pid INT, x DOUBLE)")
    con.executemany("INSERT INTO v VALUES (?, ?, ?)", [(i, i % 8, x) for i, x in enumerate(rows)])
    con.execute("CREATE TABLE u(id INT PRIMARY KEY, y DOUBLE)")  # one row per participant
    con.executemany("INSERT INTO u VALUES (?, ?)", list(enumerate(rows)))
    con.execute("PROTECT TABLE u")
    con.execute("SET BOUNDS ON u (y) BETWEEN 0 AND 5")
    con.execute("PROTECT TABLE p")
    con.execute("PROTECT TABLE v BY (pid) AS p")
    con.execute("SET BOUNDS ON v (x) BETWEEN 0 AND 5")
    con.execute("SET PRIVACY BUDGET 1e9")
    return con


def _added(rows) -> list[float]:
    """What the SUM of ``x * 2`` adds: each finite x clamped to [0, 5], doubled."""
    return [2 * min(max(x, 0.0), 5.0) for x in rows if x is not None and math.isfinite(x)]


def _rows_of(con, node) -> int:
    return con._duck.execute(f"SELECT count(*) FROM ({compile_node(node, disc=False).sql})").fetchone()[0]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(VALUES, min_size=1, max_size=24), route=st.sampled_from(sorted(ROUTES)))
@pytest.mark.slow  # 3-10 s (random or brute-force cases): CI's second step
def test_the_count_counts_what_the_sum_adds(rows, route):
    con = _db(rows)
    frm, skip = ROUTES[route]
    sql = f"SELECT AVG(v.x * 2) {frm}"
    added = _added(rows[skip:])
    total, count = plan_query(sqlglot.parse_one(sql, read="duckdb"), con._catalog).parts
    assert _rows_of(con, count.child) == len(added)  # the COUNT's rows: those the SUM adds
    # θ = 100 above any participant's total (3 rows of at most 10): no truncation at this ε
    cur = con.execute(f"{sql} WITH EPSILON 1e5 OPTIONS (theta = 100)")
    ((rel,),) = cur.privacy.releases
    assert cur.privacy.routes == (route, route)
    assert 0.0 <= rel.value <= 10.0
    if route == "single-owner":  # exact at this ε (the LPs' relaxation may truncate a little)
        assert round(rel.count_release.value) == len(added)
        # the SUM part is the centred sum Σ (clamp − m), m = 5 the bounds' midpoint (centred_avg)
        assert rel.centre == 5.0
        assert rel.sum_release.value == pytest.approx(sum(added) - 5.0 * len(added), abs=0.5)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(VALUES, min_size=1, max_size=24), eps=st.sampled_from([0.1, 1.0, 30.0]),
       route=st.sampled_from(sorted(ROUTES) + ["laplace"]))
@pytest.mark.slow  # 3-10 s (random or brute-force cases): CI's second step
def test_the_interval_stays_within_the_bounds(rows, eps, route):
    con = _db(rows)
    sql = ("SELECT AVG(y * 2) FROM u" if route == "laplace"
           else f"SELECT AVG(v.x * 2) {ROUTES[route][0]}")
    cur = con.execute(f"{sql} WITH EPSILON {eps}")
    ((rel,),) = cur.privacy.releases
    assert cur.privacy.routes == (route, route)
    lo, hi = interval_of(rel, 0.95)
    assert rel.lower <= lo <= rel.value <= hi <= rel.upper, (lo, rel.value, hi)
