"""MEDIAN / QUANTILE_CONT / QUANTILE_DISC from SQL (provsql_dp.privacy.quantile_route): the
releases, cursor.privacy, refusals that spend nothing, the charge before the read, and the
side-channel rule for failures after acceptance."""

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import DataError, ProgrammingError, UnsupportedQueryError


def budget(con):
    return con.execute("SHOW PRIVACY BUDGET").fetchall()[0][2]


@pytest.fixture
def con():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE trips(id INT PRIMARY KEY, km DOUBLE, who VARCHAR)")
    c.execute("INSERT INTO trips SELECT i, (i % 100) / 10, 'x' FROM range(2000) t(i)")
    c.execute("PROTECT TABLE trips")
    c.execute("SET PRIVACY BUDGET 100")
    c._rng = np.random.default_rng(3)
    return c


def test_refused_without_a_declaration_naming_both_fixes(con):
    with pytest.raises(ProgrammingError) as e:
        con.execute("SELECT MEDIAN(km) FROM trips WITH EPSILON 1")
    msg = str(e.value)
    assert "CREATE POLICY" in msg and "DELTA" in msg and "SET BOUNDS ON trips (km)" in msg
    assert budget(con) == "0"


@pytest.mark.parametrize("sql,err", [
    # (a constant subquery is its constant: tests/system/test_peer_sql_forms.py)
    ("SELECT MEDIAN(km) FROM trips WHERE km > (SELECT MAX(km) FROM trips) WITH EPSILON 1",
     UnsupportedQueryError),
    ("SELECT who, MEDIAN(km) FROM trips GROUP BY who WITH EPSILON 1", ProgrammingError),
    ("SELECT km, MEDIAN(km) FROM trips GROUP BY km WITH EPSILON 1", UnsupportedQueryError),
    ("SELECT MEDIAN(km) FROM trips GROUP BY who WITH EPSILON 1", ProgrammingError),  # no keys
    # (MEDIAN(km) + 1 is post-processing of the released median: tests/system/test_post_sql.py)
    # (beside a COUNT it is answered under ε: test_peer_sql_forms.py; not under δ)
    ("SELECT MEDIAN(km), COUNT(*) FROM trips WITH EPSILON 1 DELTA 1e-6", UnsupportedQueryError),
    ("SELECT MEDIAN(who) FROM trips WITH EPSILON 1", UnsupportedQueryError),
    ("SELECT QUANTILE_CONT(km, 2) FROM trips WITH EPSILON 1", ProgrammingError),
    ("SELECT QUANTILE_CONT(km, id) FROM trips WITH EPSILON 1", ProgrammingError),
    ("SELECT MEDIAN(km) FROM trips WITH EPSILON 1 OPTIONS (split = 0.5)", ProgrammingError),
])
def test_bad_statements_are_refused_and_spend_nothing(con, sql, err):
    con.execute("SET BOUNDS ON trips (km) BETWEEN 0 AND 10")
    with pytest.raises(err):
        con.execute(sql)
    assert budget(con) == "0"


def test_delta_policy_gives_noise_of_scale_delta(con):
    con.execute("CREATE POLICY near ON trips (km) AS DELTA 0.01 DOMAIN [0, 10) WIDTH 0.5 BOUNDED")
    cur = con.execute("SELECT MEDIAN(km) AS m FROM trips WITH EPSILON 1")
    (v,), = cur.fetchall()
    assert cur.description[0][0] == "m"
    p = cur.privacy
    assert p.mechanism == "quantile" and p.epsilon == 1.0 and p.policy == "near"
    assert "δ = 0.01" in p.strategy and "exact discrete Laplace" in p.strategy
    assert abs(p.releases[0].sensitivity - 0.01) < 1e-9
    b = p.noise_bound(0.95)[0]
    assert 0.02 < b < 0.04  # ln(20)·0.01
    assert abs(v - 4.95) <= 1.0  # true median 4.95; 1.0 is ~30 noise scales
    lo, hi = p.intervals()[0][0]
    assert lo <= v <= hi
    assert budget(con) == "1"


def test_quantiles_under_bounds_and_their_error_is_honest(con):
    con.execute("SET BOUNDS ON trips (km) BETWEEN 0 AND 10")
    cur = con.execute("SELECT QUANTILE_CONT(km, 0.9) FROM trips WITH EPSILON 2")
    (v,), = cur.fetchall()
    assert 0 <= v <= 10
    rel = cur.privacy.releases[0]  # a grid point selected by rank, not Laplace on the value
    assert rel.mechanism == "quantile-grid" and rel.grid == pytest.approx(10 / 256)
    assert round(v / rel.grid, 6).is_integer()
    assert abs(v - 9.0) < 0.5  # the 0.9-quantile of (i % 100)/10
    assert cur.privacy.intervals()[0][0] == (0.0, 10.0)  # inside the declared bounds
    assert "bounds" in cur.privacy.strategy and "rank" in cur.privacy.strategy
    cur = con.execute("SELECT QUANTILE_DISC(km, 0.25) AS q FROM trips WITH EPSILON 1")
    assert cur.description[0][0] == "q"


def test_accuracy_first(con):
    con.execute("CREATE POLICY near ON trips (km) AS DELTA 0.01 DOMAIN [0, 10) WIDTH 0.5 BOUNDED")
    cur = con.execute("SELECT MEDIAN(km) FROM trips WITH ACCURACY 0.05 CONFIDENCE 0.9")
    p = cur.privacy
    assert p.noise_bound(0.9)[0] <= 0.05
    assert 0.4 < p.epsilon < 0.6  # 0.01·ln 10 / 0.05 = 0.46, plus the margin


def test_many_draws_centre_on_the_truth(con):
    con.execute("CREATE POLICY near ON trips (km) AS DELTA 0.05 DOMAIN [0, 10) WIDTH 0.5 BOUNDED")
    vals = [con.execute("SELECT QUANTILE_CONT(km, 0.25) FROM trips WITH EPSILON 1").fetchone()[0]
            for _ in range(60)]
    truth = np.quantile(np.arange(2000) % 100 / 10, 0.25)
    assert abs(np.mean(vals) - truth) < 4 * 0.05 * np.sqrt(2) / np.sqrt(60)


def test_values_outside_the_domain_are_clamped_and_empty_table_is_the_midpoint(con):
    con.execute("CREATE TABLE e(id INT PRIMARY KEY, v DOUBLE)")
    con.execute("PROTECT TABLE e")
    con.execute("SET BOUNDS ON e (v) BETWEEN 0 AND 1")
    con.execute("SET PRIVACY BUDGET 10000")
    vals = [con.execute("SELECT MEDIAN(v) FROM e WITH EPSILON 50").fetchone()[0] for _ in range(30)]
    assert all(0 <= v <= 1 for v in vals) and abs(np.mean(vals) - 0.5) < 0.25  # every rank ties
    con.execute("INSERT INTO e SELECT i, 1e9 FROM range(10) t(i)")
    v = con.execute("SELECT MEDIAN(v) FROM e WITH EPSILON 50").fetchone()[0]
    assert 0.8 <= v <= 1.0


def test_failure_after_the_charge_is_opaque_to_an_analyst(con, monkeypatch):
    con.execute("SET BOUNDS ON trips (km) BETWEEN 0 AND 10")
    from provsql_dp.privacy import quantile_route

    def boom(*a, **k):
        raise RuntimeError("Could not convert string 'Alice'")

    monkeypatch.setattr(quantile_route, "release_from_counts", boom)  # the grid selection
    monkeypatch.setattr(con, "role", "analyst", raising=False)
    with pytest.raises(DataError) as e:
        con.execute("SELECT MEDIAN(km) FROM trips WITH EPSILON 1")
    assert "Alice" not in str(e.value)
    assert budget(con) == "1"


def test_explain_privacy_reads_nothing_and_matches_the_release(con):
    con.execute("CREATE POLICY near ON trips (km) AS DELTA 0.01 DOMAIN [0, 10) WIDTH 0.5 BOUNDED")
    rows = con.execute("EXPLAIN PRIVACY SELECT MEDIAN(km) FROM trips WITH EPSILON 1").fetchall()
    mech, pol, _, n, eps, rmse, _alpha, conf, route, _ = rows[0]
    assert (mech, pol, n, eps, conf, route) == ("quantile", "near", 1, "1", 0.95, "quantile")
    assert rmse == pytest.approx(0.01 * np.sqrt(2), rel=1e-3)
    rows = con.execute("EXPLAIN PRIVACY SELECT MEDIAN(km) FROM trips WITH ACCURACY 0.05 "
                       "CONFIDENCE 0.9").fetchall()
    assert rows[0][6] <= 0.05 and "WITH EPSILON" in rows[0][9]
    assert budget(con) == "0"
    cur = con.execute("SELECT MEDIAN(km) FROM trips WITH EPSILON 1")
    assert cur.privacy.noise_bound(0.95)[0] == pytest.approx(alpha_at(con, 1, 0.95))


def alpha_at(con, eps, conf):
    assert conf == 0.95  # EXPLAIN PRIVACY … WITH EPSILON reports α at the default confidence
    return con.execute(f"EXPLAIN PRIVACY SELECT MEDIAN(km) FROM trips WITH EPSILON {eps}"
                       ).fetchall()[0][6]
