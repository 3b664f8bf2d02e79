"""An AVG released from its centred sum (:mod:`provsql_dp.privacy.centred_avg`): the sensitivity
by brute force over neighbours, the release, EXPLAIN PRIVACY and the interval's coverage."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest
from conftest import breadth
from hypothesis import strategies as st

import provsql_dp
from provsql_dp.privacy.centred_avg import (centre, centred_sensitivity,
                                            sum_alone_centred_is_worse)
from provsql_dp.provenance.clamp import clamped_sum_query

_VALUES = st.one_of(st.floats(-50, 50, allow_nan=False), st.sampled_from(
    [float("nan"), float("inf"), float("-inf"), 1e300, -1e300]), st.none())


def _centred(rows, lower, upper) -> float:
    """Σ (clamp(x) − m) over the finite values, as the release computes it: the engine's clamped
    SUM and COUNT (one query), then SUM − m·COUNT."""
    if not rows:
        return 0.0
    values = ", ".join("(NULL::DOUBLE)" if v is None else f"('{v!r}'::DOUBLE)" for v in rows)
    sql = clamped_sum_query(f"SELECT * FROM (VALUES {values}) v(x)", "x", lower, upper, [], True)
    (s, c), = duckdb.sql(sql).fetchall()
    return (s or 0.0) - centre((lower, upper)) * (c or 0)


@breadth(8, 40, rows=st.lists(_VALUES, min_size=0, max_size=6), lower=st.integers(-20, 20),
         width=st.integers(1, 30), extra=_VALUES)
def test_one_row_moves_the_centred_sum_by_at_most_half_the_width(rows, lower, width, extra):
    upper = lower + width
    bound = centred_sensitivity(1, (lower, upper))
    here = _centred(rows, lower, upper)
    neighbours = [rows[:i] + rows[i + 1:] for i in range(len(rows))] + [rows + [extra]]
    for other in neighbours:  # every removal, and one addition of any value
        assert abs(_centred(other, lower, upper) - here) <= bound * (1 + 1e-9) + 1e-9


@pytest.mark.parametrize("lower, upper", [(2500, 6500), (0, 1), (-3, 10), (-5, 5), (-7, -2)])
def test_centred_sensitivity_is_never_more_and_a_lone_sum_stays_uncentred(lower, upper):
    assert centred_sensitivity(1, (lower, upper)) <= max(abs(lower), abs(upper))
    assert sum_alone_centred_is_worse((lower, upper))


@pytest.fixture
def con():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE d(id INT PRIMARY KEY, name VARCHAR)")
    con.execute("INSERT INTO d VALUES (0, 'a'), (1, 'b')")
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, g INT, x DOUBLE)")
    con.execute("INSERT INTO p SELECT i, i % 2, 2500 + (i * 37) % 4000 FROM range(300) t(i)")
    con.execute("PROTECT TABLE p; SET PRIVACY BUDGET 100000")
    con.execute("SET BOUNDS ON p (x) BETWEEN 2500 AND 6500")
    return con


def test_avg_release_uses_the_centred_sum_and_explain_says_so(con):
    con._rng = np.random.default_rng(3)
    cur = con.execute("SELECT AVG(x), SUM(x) FROM p WITH EPSILON 1")
    avg, total = cur.privacy.releases[0]
    assert avg.centre == 4500.0 and avg.sum_release.sensitivity == 2000.0
    assert avg.sum_release.epsilon == 0.25 and avg.count_release.epsilon == 0.25
    assert total.sensitivity == 6500.0  # a lone SUM keeps max(|L|, |U|)
    value = cur.fetchall()[0][0]
    assert value == pytest.approx(avg.sum_release.value / avg.count_release.value + 4500.0)
    rows = con.execute("EXPLAIN PRIVACY SELECT AVG(x), SUM(x) FROM p WITH EPSILON 1").fetchall()
    assert [r[2].split(",")[0] for r in rows] == ["sensitivity 2000", "sensitivity 1",
                                                 "sensitivity 6500"]


def test_seeded_releases_are_identical_and_grouped_avgs_centred(con):
    sql = ("SELECT d.name, AVG(x) FROM p JOIN d ON p.g = d.id GROUP BY d.name "
           "WITH EPSILON 1")
    out = []
    for _ in range(2):
        con._rng = np.random.default_rng(11)
        cur = con.execute(sql)
        out.append(sorted(cur.fetchall()))
        assert all(r[0].sum_release.sensitivity == 2000.0 for r in cur.privacy.releases)
    assert out[0] == out[1]
    assert all(2500 <= v <= 6500 for _, v in out[0])


def test_the_gaussian_route_centres_too():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, x DOUBLE)")
    con.execute("INSERT INTO p SELECT i, 2500 + (i * 37) % 4000 FROM range(300) t(i)")
    con.execute("PROTECT TABLE p; SET PRIVACY BUDGET RHO 100")
    con.execute("SET BOUNDS ON p (x) BETWEEN 2500 AND 6500")
    con._rng = np.random.default_rng(0)
    cur = con.execute("SELECT AVG(x) FROM p WITH RHO 0.5")
    (avg,), = cur.privacy.releases
    assert avg.centre == 4500.0 and avg.sum_release.sensitivity == 2000.0
    row = con.execute("EXPLAIN PRIVACY SELECT AVG(x) FROM p WITH RHO 0.5").fetchall()[0]
    assert row[2].startswith("sensitivity 2000,")


def test_the_printed_interval_covers_the_true_mean_as_often_as_it_says():
    """Monte Carlo on a small table (the count's noise matters): the 80 % interval covers the
    true mean of the clamped values in at least 80 % of 150 releases, less 3 binomial sd."""
    con = provsql_dp.connect()
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, x DOUBLE)")
    con.execute("INSERT INTO p SELECT i, 3000 + (i * 53) % 3800 FROM range(40) t(i)")
    con.execute("PROTECT TABLE p; SET PRIVACY BUDGET 1e9")
    con.execute("SET BOUNDS ON p (x) BETWEEN 2500 AND 6500")
    truth = con._duck.execute("SELECT avg(x) FROM p").fetchone()[0]
    con._rng = np.random.default_rng(5)
    n, p, hits = 150, 0.8, 0
    for _ in range(n):
        (avg,), = con.execute("SELECT AVG(x) FROM p WITH EPSILON 2").privacy.releases
        lo, hi = avg.interval(p)
        hits += lo <= truth <= hi
    assert hits >= n * p - 3 * np.sqrt(n * p * (1 - p))


def _owned():
    """A participant owns several rows (x in [2500, 6500]): the single-owner route."""
    con = provsql_dp.connect()
    con.execute("CREATE TABLE q(id INT PRIMARY KEY); PROTECT TABLE q")
    con.execute("CREATE TABLE r(qid INT REFERENCES q(id), g VARCHAR, x DOUBLE)")
    con.execute("PROTECT TABLE r BY (qid) REFERENCES q")
    con.execute("INSERT INTO q SELECT range FROM range(200)")
    con.execute("INSERT INTO r SELECT range % 200, ['a', 'b'][range % 2 + 1], "
                "2400 + (range * 37) % 4200 FROM range(1000)")  # some clamped up, some down
    con.execute("SET BOUNDS ON r (x) BETWEEN 2500 AND 6500; SET GROUP KEYS ON r (g) VALUES "
                "('a', 'b'); SET PRIVACY BUDGET 1000000")
    return con


def test_single_owner_avg_releases_the_signed_centred_sum():
    """At a huge ε the release is close to the truth: the SUM part is Σ (clamp(x) − 4500) (not
    Σ clamp(x)), signed, and the AVG is S'/ĉ + m; EXPLAIN PRIVACY says so, and a lone SUM or an
    AVG with OPTIONS (split = …) stays uncentred."""
    con = _owned()
    con._rng = np.random.default_rng(1)
    cur = con.execute("SELECT AVG(x) FROM r WITH EPSILON 10000")
    (avg,), = cur.privacy.releases
    s_true, mean = con._duck.execute(
        "SELECT sum(least(greatest(x, 2500), 6500) - 4500), "
        "avg(least(greatest(x, 2500), 6500)) FROM r").fetchone()
    assert cur.privacy.routes == ("single-owner",) * 2 and avg.centre == 4500.0
    assert avg.sum_release.mechanism == "recursive-signed"
    assert avg.sum_release.value == pytest.approx(s_true, abs=0.01 * 1000 * 2000)
    assert cur.fetchall()[0][0] == pytest.approx(mean, rel=1e-3)
    note = con.execute("EXPLAIN PRIVACY SELECT AVG(x) FROM r WITH EPSILON 1").fetchall()[0][2]
    assert note.endswith("the AVG's SUM released as Σ (x − 4500), signed")
    for sql in ("SELECT SUM(x), COUNT(*) FROM r WITH EPSILON 1",
                "SELECT AVG(x) FROM r WITH EPSILON 1 OPTIONS (split = 0.3)"):
        rels = con.execute(sql).privacy.releases[0]
        first = getattr(rels[0], "sum_release", rels[0])
        assert first.mechanism == "recursive" and getattr(rels[0], "centre", 0.0) == 0.0


def test_single_owner_grouped_avg_is_centred_and_within_bounds():
    con = _owned()
    sql = "SELECT g, AVG(x) FROM r GROUP BY g WITH EPSILON 1"
    out = []
    for _ in range(2):
        con._rng = np.random.default_rng(5)
        cur = con.execute(sql)
        out.append(sorted(cur.fetchall()))
        assert all(row[0].centre == 4500.0 for row in cur.privacy.releases)
    assert out[0] == out[1] and all(2500 <= v <= 6500 for _, v in out[0])


def test_centring_twice_changes_nothing():
    from provsql_dp.privacy import routing
    from provsql_dp.privacy.aggregates_l1 import decide_all
    from provsql_dp.privacy.answer import mechanism_kwargs
    from provsql_dp.privacy.centred_avg import centre_avg_sums
    from provsql_dp.sql import dialect as d
    from provsql_dp.sql.planner import plan_query

    con = _owned()
    plan = plan_query(d.parse_one("SELECT AVG(x) FROM r"), con.catalog)
    decisions = decide_all(con, plan, 1, {}, routing.decide, mechanism_kwargs)[0]
    assert centre_avg_sums(plan, decisions) == [4500.0]
    once = decisions[0]
    assert centre_avg_sums(plan, decisions) == [4500.0] and decisions[0] is once
    assert once.bounds == (-2000.0, 2000.0) and once.signed
