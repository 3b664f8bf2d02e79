"""``percentile_cont(q) WITHIN GROUP (ORDER BY c)`` — PostgreSQL's median, as psql and JDBC users
write it — in a private statement: released by the quantile route as ``QUANTILE_CONT(c, q)``
(refused before: "c in the select list is neither a GROUP BY key nor inside an aggregate")."""

from __future__ import annotations

import pytest

import provsql_dp
from provsql_dp.errors import UnsupportedQueryError


@pytest.fixture
def con():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE p(id INT PRIMARY KEY, x DOUBLE, k VARCHAR)")
    c.execute("INSERT INTO p SELECT i, i % 100, CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END "
              "FROM range(2000) r(i)")
    c.execute("PROTECT TABLE p; SET BOUNDS ON p (x) BETWEEN 0 AND 100; SET PRIVACY BUDGET 1e9")
    c.execute("SET GROUP KEYS ON p (k) VALUES ('a', 'b')")
    return c


@pytest.mark.parametrize("agg, q", [
    ("percentile_cont(0.5) WITHIN GROUP (ORDER BY x)", 0.5),
    ("percentile_cont(0.2) WITHIN GROUP (ORDER BY x DESC)", 0.8),
    ("percentile_disc(0.25) WITHIN GROUP (ORDER BY x)", 0.25),
])
def test_released_as_the_duckdb_quantile_near_the_truth(con, agg, q):
    cur = con.execute(f"SELECT {agg} AS v FROM p WITH EPSILON 1000")
    (v,), = cur.fetchall()
    truth = con._duck.execute(f"SELECT quantile_cont(x, {q}) FROM p").fetchall()[0][0]
    assert abs(v - truth) <= 2.0  # within a few grid steps at a large ε
    assert con.privacy.mechanism == "quantile" and cur.description[0][0] == "v"


def test_grouped(con):
    rows = con.execute("SELECT k, percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM p "
                       "GROUP BY k WITH EPSILON 1000").fetchall()
    assert [r[0] for r in rows] == ["a", "b"] and all(abs(r[1] - 49.5) <= 2.0 for r in rows)


def test_a_descending_disc_is_refused_with_the_ascending_form_and_nothing_charged(con):
    before = con.execute("SHOW PRIVACY BUDGET").fetchall()
    with pytest.raises(UnsupportedQueryError, match=r"percentile_disc\(1 - q\)"):
        con.execute("SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x DESC) FROM p "
                    "WITH EPSILON 1")
    assert con.execute("SHOW PRIVACY BUDGET").fetchall() == before
