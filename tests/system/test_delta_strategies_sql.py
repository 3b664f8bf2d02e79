"""papers/004's range strategies from SQL: ``OPTIONS (strategy = 'cumulative' | 'sorted_points' |
'shifted_histograms')`` under a DELTA policy give the Python releases (same noise), state honest
intervals (or none), and refusals charge nothing."""

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import ProgrammingError, UnsupportedQueryError
from provsql_dp.policies.delta import Policy, cumulative, shifted_histograms, sorted_points


def _con():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE pts(id INT PRIMARY KEY, x DOUBLE, y DOUBLE, tag INT)")
    con.execute("INSERT INTO pts SELECT i, ((i * 37) % 1000) / 1000, ((i * 91) % 997) / 997, "
                "i % 3 FROM range(2000) t(i)")
    con.execute("INSERT INTO pts VALUES (9000, 1.7, -0.2, 0), (9001, NULL, 0.5, 0)")
    con.execute("PROTECT TABLE pts")
    con.execute("SET PRIVACY BUDGET 100")
    return con


def _values(con, col, lo=0.0, hi=1.0):
    v = np.array([r[0] for r in con._duck.execute(
        f"SELECT {col} FROM pts WHERE x IS NOT NULL AND y IS NOT NULL").fetchall()], float)
    return np.clip(v, lo, np.nextafter(hi, -np.inf))


def test_cumulative_is_c_n_delta_on_the_declared_bins():
    con = _con()
    con.execute("CREATE POLICY p ON pts (x) AS DELTA 0.02 DOMAIN [0, 1) WIDTH 0.05 BOUNDED")
    con._rng = np.random.default_rng(4)
    cur = con.execute("COUNT RANGES (x >= 0 AND x < 0.25, x >= 0.5, x >= 0.3 AND x < 0.35) "
                      "FROM pts WITH EPSILON 1 OPTIONS (strategy = 'cumulative', raw = true)")
    got = [r[1] for r in cur.fetchall()]
    rel = cumulative(_values(con, "x"), Policy(0.02), 1.0, cells=20,
                     rng=np.random.default_rng(4))
    want = rel.range_count([0, 0.5, 0.3], [0.25, 1.0, 0.35])
    assert np.allclose(got, want)
    assert rel.sensitivity == 1  # θ = ⌈0.02 / 0.05⌉
    assert cur.privacy.strategy.startswith("C_{n,δ}")
    assert cur.privacy.covers() == ["the true count"] * 3 or \
        cur.privacy.covers()[0] == "the true count"
    lo, hi = cur.privacy.intervals(0.95)[0][0]
    assert lo < got[0] < hi
    assert con.ledger.budget(con.user)[1] == 1


def test_cumulative_count_cumulative_and_a_coarse_projected_batch():
    con = _con()
    con.execute("CREATE POLICY p ON pts (x) AS DELTA 0.01 DOMAIN [0, 1) WIDTH 0.01 BOUNDED")
    con._rng = np.random.default_rng(5)
    rows = con.execute("COUNT CUMULATIVE x FROM pts WITH EPSILON 1 "
                       "OPTIONS (strategy = 'cumulative', raw = true)").fetchall()
    rel = cumulative(_values(con, "x"), Policy(0.01), 1.0, cells=100,
                     rng=np.random.default_rng(5))
    edges = np.arange(1, 101) / 100
    assert np.allclose([r[1] for r in rows], rel.range_count(np.zeros(100), edges))
    con._rng = np.random.default_rng(6)
    rows = con.execute("COUNT RANGES (x < 0.5, x >= 0.5) FROM pts WITH EPSILON 1 "
                       "OPTIONS (strategy = 'cumulative', raw = true)").fetchall()
    rel = cumulative(_values(con, "x"), Policy(0.01), 1.0, cells=100,
                     rng=np.random.default_rng(6))
    assert np.allclose([r[1] for r in rows], rel.range_count([0, 0.5], [0.5, 1.0]))


def test_sorted_points_count_published_points_and_state_no_interval():
    con = _con()
    con.execute("CREATE POLICY p ON pts (x) AS DELTA 0.01 DOMAIN [0, 1) WIDTH 0.1 BOUNDED")
    con._rng = np.random.default_rng(8)
    cur = con.execute("COUNT RANGES (x < 0.3, x >= 0.2 AND x < 0.9) FROM pts WITH EPSILON 2 "
                      "OPTIONS (strategy = 'sorted_points')")
    got = [r[1] for r in cur.fetchall()]
    rel = sorted_points(_values(con, "x"), Policy(0.01), 2.0, rng=np.random.default_rng(8))
    assert got == [int(v) for v in rel.range_count([0, 0.2], [0.3, 0.9])]
    assert cur.privacy.covers()[0].startswith("nothing")
    assert cur.privacy.intervals(0.95)[0][0] == (None, None)
    assert "sorted points" in cur.privacy.strategy


def test_shifted_histograms_answer_rectangles():
    con = _con()
    con.execute("CREATE POLICY p ON pts (x, y) AS DELTA 0.01 DOMAIN [0, 1) WIDTH 0.05, "
                "[0, 1) WIDTH 0.05 BOUNDED")
    con._rng = np.random.default_rng(9)
    cur = con.execute("COUNT RANGES (x >= 0.1 AND x < 0.4 AND y >= 0.2 AND y < 0.6, x >= 0.5) "
                      "FROM pts WITH EPSILON 1 "
                      "OPTIONS (strategy = 'shifted_histograms', raw = true)")
    got = [r[1] for r in cur.fetchall()]
    pts = np.stack([_values(con, "x"), _values(con, "y")], axis=1)
    rel = shifted_histograms(pts, Policy(0.01, dims=2), 1.0, rng=np.random.default_rng(9))
    want = rel.range_count(np.array([0.1, 0.5]), np.array([0.4, 1.0]), np.array([0.2, 0.0]),
                           np.array([0.6, 1.0]))
    assert np.allclose(got, want)
    truth = [np.sum((pts[:, 0] >= 0.1) & (pts[:, 0] < 0.4) & (pts[:, 1] >= 0.2)
                    & (pts[:, 1] < 0.6)), np.sum(pts[:, 0] >= 0.5)]
    sd = np.sqrt(rel.variance(np.array([0.1, 0.5]), np.array([0.4, 1.0]), np.array([0.2, 0.0]),
                              np.array([0.6, 1.0])))
    assert all(abs(g - t) < 6 * s + 20 for g, t, s in zip(got, truth, sd))  # bias: < 20 here
    assert cur.privacy.covers()[0].startswith("noise only")
    assert "shifted" in cur.privacy.strategy


@pytest.mark.parametrize("policy, sql, error, text", [
    ("CREATE POLICY p ON pts (x) AS LINE DOMAIN [0, 1) WIDTH 0.1 BOUNDED",
     "COUNT RANGES (x < 0.5) FROM pts WITH EPSILON 1 OPTIONS (strategy = 'cumulative')",
     ProgrammingError, "needs a DELTA policy"),
    ("CREATE POLICY p ON pts (x) AS DELTA 0.1 DOMAIN [0, 1) WIDTH 0.1 UNBOUNDED SOURCES (0)",
     "COUNT RANGES (x < 0.5) FROM pts WITH EPSILON 1 OPTIONS (strategy = 'sorted_points')",
     ProgrammingError, "needs a BOUNDED"),
    ("CREATE POLICY p ON pts (x) AS DELTA 0.1 DOMAIN [0, 1) WIDTH 0.1 BOUNDED",
     "COUNT RANGES (x < 0.5) FROM pts WITH EPSILON 1 OPTIONS (strategy = 'shifted_histograms')",
     ProgrammingError, "two columns"),
    ("CREATE POLICY p ON pts (x, y) AS DELTA 0.1 DOMAIN [0, 1) WIDTH 0.1, [0, 1) WIDTH 0.1 "
     "BOUNDED", "COUNT RANGES (x < 0.5) FROM pts WITH EPSILON 1 "
     "OPTIONS (strategy = 'cumulative')", ProgrammingError, "one column"),
    ("CREATE POLICY p ON pts (x) AS DELTA 0.1 DOMAIN [0, 1) WIDTH 0.1 BOUNDED KNOWN COUNTS "
     "((0, 0.1, 0.2, 0.3, 0.4), (0.5, 0.6, 0.7, 0.8, 0.9))",
     "COUNT RANGES (x < 0.5) FROM pts WITH EPSILON 1 OPTIONS (strategy = 'cumulative')",
     ProgrammingError, "KNOWN COUNTS"),
    ("CREATE POLICY p ON pts (x) AS DELTA 0.1 DOMAIN [0, 1) WIDTH 0.1 BOUNDED",
     "COUNT RANGES (x < 0.5) FROM pts WITH EPSILON 1 OPTIONS (strategy = 'smooth')",
     ProgrammingError, "sorted_points"),
])
def test_refusals_charge_nothing(policy, sql, error, text):
    con = _con()
    con.execute(policy)
    with pytest.raises(error, match=text):
        con.execute(sql)
    assert con.ledger.budget(con.user)[1] == 0


def test_a_where_on_another_column_is_refused():
    con = _con()
    con.execute("CREATE POLICY p ON pts (x) AS DELTA 0.1 DOMAIN [0, 1) WIDTH 0.1 BOUNDED")
    with pytest.raises((ProgrammingError, UnsupportedQueryError)):
        con.execute("COUNT RANGES (x < 0.5) FROM pts WHERE tag = 1 WITH EPSILON 1 "
                    "OPTIONS (strategy = 'cumulative')")
    assert con.ledger.budget(con.user)[1] == 0
