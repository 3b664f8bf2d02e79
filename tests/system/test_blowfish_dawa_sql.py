"""DAWA on the policy route from SQL: ``OPTIONS (strategy = 'dawa')`` (papers/000 §5.4,
"Transformed + DAWA"), its errors (nothing charged), and its answers at a huge ε."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import ProgrammingError
from provsql_dp.privacy.intervals import covers

AGES = [3, 3, 7, 12, 12, 12, 25, 31, 31, 58]


def _con(budget="1000"):
    con = provsql_dp.connect(":memory:")
    con.execute("CREATE TABLE people (id INTEGER PRIMARY KEY, age INTEGER, income INTEGER)")
    con.execute("INSERT INTO people VALUES " + ", ".join(
        f"({i}, {a}, {(i * 37) % 100})" for i, a in enumerate(AGES)))
    con.execute("PROTECT TABLE people")
    con.execute(f"SET PRIVACY BUDGET {budget}")
    con.execute("CREATE POLICY age_line ON people (age) AS LINE DOMAIN [0, 60) WIDTH 5 BOUNDED")
    return con


def test_dawa_histogram_is_charged_once_and_marked_noise_only():
    con = _con()
    con._rng = np.random.default_rng(3)
    cur = con.execute("SELECT age, COUNT(*) AS n FROM people GROUP BY age "
                      "WITH EPSILON 0.5 OPTIONS (strategy = 'dawa')")
    rows = cur.fetchall()
    assert len(rows) == 12
    p = cur.privacy
    assert p.epsilon == Fraction(1, 2) and p.remaining == Fraction(1999, 2)
    assert p.strategy.startswith("dawa on path") and "buckets" in p.strategy
    assert not p.mse_is_upper_bound and p.expected_mse > 0
    assert all(covers(r).startswith("noise only") for r in p.releases)
    # bounded LINE: consistency keeps the cumulative counts in [0, n], so bins are ≥ 0
    assert sum(r[1] for r in rows) == pytest.approx(len(AGES))


def test_dawa_is_exact_at_huge_epsilon_for_ranges_and_cumulative_counts():
    con = _con(budget="1e9")
    ages = np.array(AGES)
    hist = con.execute("SELECT age, COUNT(*) FROM people GROUP BY age WITH EPSILON 1e5 "
                       "OPTIONS (strategy = 'dawa')").fetchall()
    assert [round(r[1]) for r in hist] == [int((ages // 5 == b).sum()) for b in range(12)]
    rng = con.execute("COUNT RANGES (age < 10, age >= 10 AND age < 35) FROM people "
                      "WITH EPSILON 1e5 OPTIONS (strategy = 'dawa')").fetchall()
    assert [round(r[1]) for r in rng] == [3, 6]
    dp = con.execute("SELECT age, COUNT(*) FROM people GROUP BY age WITH EPSILON 1e5 "
                     "OPTIONS (strategy = 'dp_dawa')").fetchall()
    assert [round(r[1]) for r in dp] == [round(r[1]) for r in hist]


def test_other_strategies_by_name_and_bad_options_spend_nothing():
    con = _con(budget="1")
    cur = con.execute("SELECT age, COUNT(*) FROM people GROUP BY age WITH EPSILON 0.25 "
                      "OPTIONS (strategy = 'hierarchical')")
    assert cur.privacy.strategy.startswith("hierarchical")
    con.execute("CREATE POLICY ai ON people (age, income) AS GRID 1 DOMAIN [0, 60) WIDTH 10, "
                "[0, 100) WIDTH 50")
    before = (con.ledger.budget(con.user), len(con.ledger.entries()))
    bad = [
        ("SELECT age, COUNT(*) FROM people GROUP BY age WITH EPSILON 0.1 OPTIONS (strategy = 'x')",
         "is not a strategy; choose one of"),
        ("SELECT age, COUNT(*) FROM people GROUP BY age WITH EPSILON 0.1 OPTIONS (strategy = 3)",
         "is not a strategy"),
        ("SELECT age, income, COUNT(*) FROM people GROUP BY age, income WITH EPSILON 0.1 "
         "OPTIONS (strategy = 'dawa')", "does not apply"),
        ("SELECT age, COUNT(*) FROM people GROUP BY age WITH EPSILON 0.1 "
         "OPTIONS (strategy = 'dawa', theta = 2)", r"OPTIONS apply to the recursive mechanism only \(theta\)"),
    ]
    for sql, msg in bad:
        with pytest.raises(ProgrammingError, match=msg):
            con.execute(sql)
        assert (con.ledger.budget(con.user), len(con.ledger.entries())) == before, sql
