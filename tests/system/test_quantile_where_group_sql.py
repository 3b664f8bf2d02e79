"""MEDIAN / QUANTILE_* with WHERE (total evaluation) and GROUP BY over declared keys (parallel
composition) from SQL: sensitivities, charges, answers and refusals."""

from __future__ import annotations

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import ProgrammingError, UnsupportedQueryError


def budget(con):
    return con.execute("SHOW PRIVACY BUDGET").fetchall()[0][2]


@pytest.fixture
def con():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE trips(id INT PRIMARY KEY, km DOUBLE, who VARCHAR, n INT)")
    # who = 'a' on even ids (km 0 … 4.9), 'b' on odd ids (km 5 … 9.9)
    c.execute("INSERT INTO trips SELECT i, CASE WHEN i % 2 = 0 THEN (i % 50) / 10 "
              "ELSE 5 + (i % 50) / 10 END, CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END, i % 7 "
              "FROM range(2000) t(i)")
    c.execute("PROTECT TABLE trips")
    c.execute("SET PRIVACY BUDGET 1000")
    c._rng = np.random.default_rng(4)
    return c


def _truth(con, where):
    return con._duck.execute(f"SELECT median(km) FROM trips WHERE {where}").fetchone()[0]


def test_where_on_another_column_keeps_delta(con):
    con.execute("CREATE POLICY near ON trips (km) AS DELTA 0.01 DOMAIN [0, 10) WIDTH 0.5 BOUNDED")
    cur = con.execute("SELECT MEDIAN(km) FROM trips WHERE who = 'b' AND n < 5 WITH EPSILON 1")
    (v,), = cur.fetchall()
    assert cur.privacy.releases[0].sensitivity == pytest.approx(0.01)
    assert abs(v - _truth(con, "who = 'b' AND n < 5")) < 0.5
    assert budget(con) == "1"


def test_where_reading_the_column_uses_the_whole_domain(con):
    con.execute("CREATE POLICY near ON trips (km) AS DELTA 0.01 DOMAIN [0, 10) WIDTH 0.5 BOUNDED")
    cur = con.execute("SELECT MEDIAN(km) FROM trips WHERE km > 2 WITH EPSILON 1")
    p = cur.privacy
    # the whole domain: the value is not noised, a grid point is selected by rank
    assert p.releases[0].mechanism == "quantile-grid" and p.releases[0].upper == 10
    assert "the WHERE reads km" in p.strategy
    ex = con.execute("EXPLAIN PRIVACY SELECT MEDIAN(km) FROM trips WHERE km > 2 WITH EPSILON 1"
                     ).fetchall()[0]
    assert ex[5] is None and ex[6] == pytest.approx(5) and "rank" in ex[9]


def test_where_is_evaluated_totally(con):
    """CAST(who AS INT) fails on every row: the rows count as not selected, no error."""
    con.execute("SET BOUNDS ON trips (km) BETWEEN 0 AND 10")
    vals = [con.execute("SELECT MEDIAN(km) FROM trips WHERE CAST(who AS INT) > 0 "
                        "WITH EPSILON 50").fetchone()[0] for _ in range(20)]
    assert abs(np.mean(vals) - 5.0) < 0.2  # no row selected: the midpoint, plus noise


def test_group_by_declared_keys_releases_each_group_in_parallel(con):
    con.execute("CREATE POLICY near ON trips (km) AS DELTA 0.01 DOMAIN [0, 10) WIDTH 0.5 BOUNDED")
    con.execute("SET GROUP KEYS ON trips (who) VALUES ('a', 'b', 'c')")
    cur = con.execute("SELECT who, MEDIAN(km) AS m FROM trips WHERE n < 6 GROUP BY who "
                      "WITH EPSILON 0.5")
    rows = cur.fetchall()
    assert [c[0] for c in cur.description] == ["who", "m"]
    assert [r[0] for r in rows] == ["a", "b", "c"]
    for k, v in rows[:2]:
        assert abs(v - _truth(con, f"who = '{k}' AND n < 6")) < 0.5
    assert 0 <= rows[2][1] <= 10  # no row: the midpoint plus noise
    p = cur.privacy
    assert budget(con) == "0.5" and len(p.releases) == 3
    assert all(r.sensitivity == pytest.approx(0.01) and r.epsilon == 0.5 for r in p.releases)
    assert "parallel composition" in p.strategy
    ex = con.execute("EXPLAIN PRIVACY SELECT who, MEDIAN(km) FROM trips GROUP BY who "
                     "WITH EPSILON 0.5").fetchall()[0]
    assert ex[3] == 3


def test_group_refusals_spend_nothing(con):
    con.execute("SET BOUNDS ON trips (km) BETWEEN 0 AND 10")
    for sql, err, msg in [
        ("SELECT who, MEDIAN(km) FROM trips GROUP BY who WITH EPSILON 1", ProgrammingError,
         "SET GROUP KEYS"),
        ("SELECT n, MEDIAN(km) FROM trips GROUP BY who WITH EPSILON 1", ProgrammingError,  # not grouped: invalid SQL
         "select list"),
        ("SELECT who, MEDIAN(km) FROM trips GROUP BY who, n WITH EPSILON 1", UnsupportedQueryError,
         "one column"),
        ("SELECT MEDIAN(km) FROM trips WHERE nope > 1 WITH EPSILON 1", UnsupportedQueryError,
         "not a column"),
    ]:
        with pytest.raises(err, match=msg):
            con.execute(sql)
    assert budget(con) == "0"
