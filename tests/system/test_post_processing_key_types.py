"""A reordered (post-processed) answer of the routes that build no plan — quantiles, variances —
keeps its GROUP BY keys' types: an INTEGER key comes back as integers, a DATE key as dates (it
came back as text, ``'0'``), typed over the one table the statement reads."""

from __future__ import annotations

import datetime

import pytest

import provsql_dp


@pytest.fixture
def con():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE t(id INT PRIMARY KEY, g INT, d DATE, x DOUBLE); PROTECT TABLE t")
    c.execute("INSERT INTO t SELECT i, i % 3, DATE '2020-01-01' + (i % 2)::INT, i % 17 "
              "FROM range(300) r(i)")
    c.execute("SET PRIVACY BUDGET 100; SET BOUNDS ON t (x) BETWEEN 0 AND 20")
    c.execute("SET GROUP KEYS ON t (g) VALUES (0, 1, 2)")
    c.execute("SET GROUP KEYS ON t (d) VALUES ('2020-01-01', '2020-01-02')")
    yield c
    c.close()


@pytest.mark.parametrize("agg", ["median(x)", "quantile_cont(x, 0.9)", "var_pop(x)"])
def test_a_reordered_integer_key_stays_integer(con, agg):
    cur = con.execute(f"SELECT {agg} AS v, g FROM t GROUP BY g ORDER BY g WITH EPSILON 1")
    assert [c[0] for c in cur.description] == ["v", "g"]
    assert cur.description[1][1] == "INTEGER"
    assert [r[1] for r in cur.fetchall()] == [0, 1, 2]


def test_a_reordered_date_key_and_an_expression_of_a_key_keep_their_types(con):
    rows = con.execute("SELECT median(x) AS m, t.d FROM t GROUP BY t.d ORDER BY t.d DESC "
                       "WITH EPSILON 1").fetchall()
    assert [r[1] for r in rows] == [datetime.date(2020, 1, 2), datetime.date(2020, 1, 1)]
    cur = con.execute("SELECT median(x) AS m, g + 1 AS h FROM t GROUP BY g ORDER BY h "
                      "WITH EPSILON 1")
    assert [r[1] for r in cur.fetchall()] == [1, 2, 3]
