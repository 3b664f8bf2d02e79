"""``SELECT MEDIAN(c) … WITH EPSILON ε DELTA δ′``: the smooth-sensitivity median from SQL.

Released under a bounded δ policy only, charged (ε, δ′) before the column is read, with a public
worst-case interval that covers; every other shape is refused with the reason and charges
nothing."""

from fractions import Fraction

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import UnsupportedQueryError


@pytest.fixture
def con():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE trips(id INT PRIMARY KEY, km DOUBLE, zone INT)")
    # dense around the median 2.5: the smooth sensitivity is far below δ = 1
    c.execute("INSERT INTO trips SELECT i, 2 + (i % 1000) / 1000, i % 3 FROM range(20000) t(i)")
    c.execute("PROTECT TABLE trips")
    c.execute("SET PRIVACY BUDGET EPSILON 100 DELTA 1e-3")
    c.execute("CREATE POLICY near ON trips (km) AS DELTA 1 DOMAIN [0, 10) WIDTH 0.5 BOUNDED")
    c.execute("SET BOUNDS ON trips (zone) BETWEEN 0 AND 2")
    return c


def spent(c):
    return c.execute("SHOW PRIVACY BUDGET").fetchall()


def test_dense_data_get_little_noise_and_an_interval_that_covers(con):
    truth = float(np.sort(2 + (np.arange(20000) % 1000) / 1000)[9999])
    vals, covered = [], 0
    for _ in range(20):
        cur = con.execute("SELECT MEDIAN(km) FROM trips WITH EPSILON 1 DELTA 1e-6")
        (v,), = cur.fetchall()
        lo, hi = cur.privacy.intervals()[0][0]
        vals.append(v)
        covered += lo <= truth <= hi
        assert cur.privacy.mechanism == "smooth-median"
    # the pure-ε route's noise has scale δ/ε = 1; the smooth one follows the dense data
    assert np.median(np.abs(np.array(vals) - truth)) < 0.05
    assert covered == 20  # the worst-case interval is wide: it always covers here
    row = con.execute("EXPLAIN PRIVACY SELECT MEDIAN(km) FROM trips WITH EPSILON 1 DELTA 1e-6"
                      ).fetchall()[0]
    assert row[0] == "smooth-median" and row[6] == pytest.approx(hi - v)


def test_the_charge_is_epsilon_and_delta(con):
    before = spent(con)
    cur = con.execute("SELECT MEDIAN(km) FROM trips WITH EPSILON 0.5 DELTA 1e-6")
    cur.fetchall()
    assert spent(con) != before and float(cur.privacy.epsilon) == 0.5
    last = con.execute("SELECT epsilon, delta FROM _provsql_dp.ledger ORDER BY id DESC LIMIT 1")
    assert [float(Fraction(x)) for x in last.fetchone()] == [0.5, 1e-6]


@pytest.mark.parametrize("sql", [
    "SELECT MEDIAN(zone) FROM trips WITH EPSILON 1 DELTA 1e-6",             # bounds, no policy
    "SELECT MEDIAN(km) FROM trips WHERE zone = 1 WITH EPSILON 1 DELTA 1e-6",  # n not fixed
    "SELECT QUANTILE_CONT(km, 0.9) FROM trips WITH EPSILON 1 DELTA 1e-6",
    "SELECT MEDIAN(km) FROM trips WITH EPSILON 1 DELTA 1e-6 OPTIONS (lower = 0)",
])
def test_other_shapes_are_refused_and_charge_nothing(con, sql):
    before = spent(con)
    with pytest.raises(UnsupportedQueryError, match="Nothing was charged|OPTIONS"):
        con.execute(sql)
    assert spent(con) == before
