"""Intervals and post-processing on the policy route (issue 13): COUNT RANGES come back as whole,
nonnegative counts whose intervals hold the shown value and cover the true counts at the stated
rate; COUNT CUMULATIVE (the ordered strategy, isotonic consistency) states an honest interval,
the same α ``EXPLAIN PRIVACY`` gives before the release, and accuracy-first meets it."""

from __future__ import annotations

import numpy as np
import pytest

import provsql_dp

RANGES = "COUNT RANGES (age BETWEEN 0 AND 9, age >= 30, age BETWEEN 50 AND 59) FROM p"


def _con(bounded: bool):
    con = provsql_dp.connect()
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, age INT)")
    # ages 10..49 only: the first and last ranges are empty (true count 0)
    con.execute("INSERT INTO p SELECT range, 10 + range % 40 FROM range(400)")
    con.execute("PROTECT TABLE p; SET PRIVACY BUDGET 1000000")
    con.execute(f"CREATE POLICY line ON p (age) AS LINE DOMAIN [0, 60) WIDTH 10 "
                f"{'BOUNDED' if bounded else 'UNBOUNDED'}")
    con._rng = np.random.default_rng(13)
    return con


def _truth(con, sql):
    return [r[0] for r in con.execute(sql).fetchall()]


@pytest.mark.parametrize("bounded", [False, True])
def test_count_ranges_are_whole_nonnegative_with_intervals_that_hold_them(bounded):
    con = _con(bounded)
    truth = [_truth(con, f"SELECT COUNT(*) FROM p WHERE {c}")[0]
             for c in ("age BETWEEN 0 AND 9", "age >= 30", "age BETWEEN 50 AND 59")]
    assert truth[0] == 0 and truth[2] == 0
    misses, n = 0, 0
    for _ in range(100):
        cur = con.execute(f"{RANGES} WITH EPSILON 0.3")
        assert [d[1] for d in cur.description] == ["VARCHAR", "BIGINT"]
        rows = cur.fetchall()
        assert cur.privacy.covers() == ["the true count"]
        for (label, v), ((lo, hi),), t in zip(rows, cur.privacy.intervals(0.95), truth):
            assert isinstance(v, int) and v >= 0
            assert float(lo).is_integer() and float(hi).is_integer() and 0 <= lo <= v <= hi
            misses += not (lo <= t <= hi)
            n += 1
    # coverage ≥ 0.95: misses ~ Binomial(300, ≤ 0.05), mean ≤ 15, P[misses > 36] < 1e-6
    assert n == 300 and misses <= 36
    raw = con.execute(f"{RANGES} WITH EPSILON 0.3 OPTIONS (raw = true)")
    assert [d[1] for d in raw.description] == ["VARCHAR", "DOUBLE"]
    vals = [r[1] for r in raw.fetchall()]
    assert all(isinstance(v, float) for v in vals)
    (lo, hi), = raw.privacy.intervals(0.95)[0]
    assert hi - lo == pytest.approx(2 * raw.privacy.noise_bound(0.95)[0])


def test_count_cumulative_interval_is_honest_and_matches_explain():
    con = _con(True)
    truth = np.cumsum(np.bincount([a // 10 for a in _truth(con, "SELECT age FROM p")],
                                  minlength=6)).tolist()
    ex = con.execute("EXPLAIN PRIVACY COUNT CUMULATIVE age FROM p WITH EPSILON 0.3").fetchall()[0]
    assert ex[2].startswith("ordered")
    all_in = 0
    for _ in range(200):
        cur = con.execute("COUNT CUMULATIVE age FROM p WITH EPSILON 0.3")
        rows = cur.fetchall()
        cov = cur.privacy.covers()[0]
        assert cov.startswith("the true count") and "consistency" in cov
        b = cur.privacy.noise_bound(0.95)
        assert max(b) == pytest.approx(ex[6])  # the α stated before = the bound after
        vals = [r[1] for r in rows]
        assert vals == sorted(vals) and vals[-1] == 400 and all(isinstance(v, int) for v in vals)
        ivs = [iv for (iv,) in cur.privacy.intervals(0.95)]
        assert all(lo <= v <= hi for (lo, hi), v in zip(ivs, vals))
        all_in += all(lo <= t <= hi for (lo, hi), t in zip(ivs, truth))
    # the bound holds for every prefix at once with probability ≥ 0.95 (P[< 176 of 200] < 1e-6)
    assert all_in >= 176


def test_accuracy_first_cumulative_release_meets_the_accuracy():
    con = _con(True)
    cur = con.execute("COUNT CUMULATIVE age FROM p WITH ACCURACY 15 CONFIDENCE 0.9")
    cur.fetchall()
    assert max(cur.privacy.noise_bound(0.9)) <= 15
    eps = cur.privacy.epsilon
    ex = con.execute("EXPLAIN PRIVACY COUNT CUMULATIVE age FROM p WITH ACCURACY 15 "
                     "CONFIDENCE 0.9").fetchall()[0]
    assert float(ex[4]) == pytest.approx(eps) and ex[6] <= 15
