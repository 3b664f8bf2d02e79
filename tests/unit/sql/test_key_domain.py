"""sql.key_domain: the values a computed GROUP BY key can take, proved from the statement."""

import datetime

import duckdb
import pytest

from provsql_dp.sql.catalog import Catalog
from provsql_dp.sql.dialect import parse_one
from provsql_dp.sql.key_domain import MAX_GROUPS, proved_domain
from provsql_dp.sql.planner import plan_query


@pytest.fixture(scope="module")
def con():
    c = duckdb.connect()
    c.execute("CREATE TABLE t(d DATE, n INT, x DOUBLE, m DECIMAL(12, 2), ts TIMESTAMP, s VARCHAR)")
    c.execute("CREATE TABLE u(k INT, e DATE)")
    return c


def domain(con, sql):
    plan = plan_query(parse_one(sql), Catalog(con))
    return proved_domain(Catalog(con), plan.child, plan.group_by[0])


@pytest.mark.parametrize("sql, expected", [
    # TPC-H Q8's key: the years of a BETWEEN of dates, through a derived table
    ("SELECT o_year, COUNT(*) FROM (SELECT EXTRACT(year FROM d) AS o_year FROM t WHERE d BETWEEN "
     "DATE '1995-01-01' AND DATE '1996-12-31') AS a GROUP BY o_year", [1995, 1996]),
    ("SELECT year(d), COUNT(*) FROM t WHERE d >= DATE '1994-01-01' "
     "AND d < DATE '1994-01-01' + INTERVAL '1' YEAR GROUP BY 1", [1994]),
    ("SELECT month(d), COUNT(*) FROM t WHERE d BETWEEN DATE '2020-11-20' AND DATE '2021-01-05' "
     "GROUP BY 1", [1, 11, 12]),
    ("SELECT n % 3, COUNT(*) FROM t WHERE n BETWEEN 0 AND 10 GROUP BY 1", [0, 1, 2]),
    ("SELECT n // 10, COUNT(*) FROM t WHERE n >= 0 AND n < 30 GROUP BY 1", [0, 1, 2]),
    ("SELECT n, COUNT(*) FROM t WHERE n IN (3, 7) GROUP BY 1", [3, 7]),  # the two ends: 3..7
    ("SELECT FLOOR(x / 10), COUNT(*) FROM t WHERE x >= 0 AND x <= 29.5 GROUP BY 1", [0, 1, 2]),
    ("SELECT ROUND(m, -1), COUNT(*) FROM t WHERE m BETWEEN 0 AND 30 GROUP BY 1", [0, 10, 20, 30]),
    ("SELECT CAST(x AS INT), COUNT(*) FROM t WHERE x BETWEEN -1 AND 1 GROUP BY 1", [-1, 0, 1]),
    # a divisor bounded away from 0 is ranged exactly (1.66… to 2.5)
    ("SELECT FLOOR(10 / (x + 5)), COUNT(*) FROM t WHERE x BETWEEN -1 AND 1 GROUP BY 1", [1, 2]),
    # a join's condition bounds the column too, and the key's column may sit on either side
    ("SELECT year(e), COUNT(*) FROM t JOIN u ON t.n = u.k AND u.e BETWEEN DATE '2000-06-01' "
     "AND DATE '2001-02-01' GROUP BY 1", [2000, 2001]),
    # a function of a step (binning as FLOOR(x / w) * w): the function of each step's value
    ("SELECT FLOOR(x / 500) * 500, COUNT(*) FROM t WHERE x BETWEEN 2500 AND 4200 GROUP BY 1",
     [2500, 3000, 3500, 4000]),
    ("SELECT ROUND(x, -1) / 10 + 1, COUNT(*) FROM t WHERE x BETWEEN 0 AND 20 GROUP BY 1",
     [1, 2, 3]),
    ("SELECT -CAST(x AS INT), COUNT(*) FROM t WHERE x BETWEEN -1 AND 1 GROUP BY 1", [-1, 0, 1]),
    # a CASE whose every result is a constant, a predicate: whatever the column
    ("SELECT CASE WHEN x > 3 THEN 'a' WHEN s = 'z' THEN 'b' ELSE 'c' END, COUNT(*) FROM t "
     "GROUP BY 1", None),
    ("SELECT x > 3 AND s LIKE 'a%', COUNT(*) FROM t GROUP BY 1", [False, True]),
    # two columns: their candidates combined
    ("SELECT n * 10 + year(d) - 2000, COUNT(*) FROM t WHERE n BETWEEN 1 AND 2 AND d BETWEEN "
     "DATE '2000-01-01' AND DATE '2001-12-31' GROUP BY 1", [10, 11, 20, 21]),
])
def test_proved_shapes(con, sql, expected):
    got = domain(con, sql)
    if "IN (3, 7)" in sql:  # IN bounds the range; the values between are candidates (superset)
        assert got is not None and {3, 7} <= set(got) <= set(range(3, 8))
    elif expected is None or isinstance(expected[0], bool):
        assert got == (expected or ["a", "b", "c"])
    else:
        assert [float(v) for v in got] == [float(v) for v in expected]


def test_date_trunc_has_duckdbs_own_type(con):
    got = domain(con, "SELECT date_trunc('month', d) AS m, COUNT(*) FROM t WHERE d BETWEEN "
                      "DATE '1999-12-15' AND DATE '2000-01-02' GROUP BY 1")
    # the values are DuckDB's own (its type for date_trunc of this DATE), so they match the keys
    typ = type(con.execute("SELECT date_trunc('month', DATE '2000-01-02')").fetchone()[0])
    assert [str(v)[:10] for v in got] == ["1999-12-01", "2000-01-01"]
    assert all(isinstance(v, (datetime.date, typ)) for v in got)


@pytest.mark.parametrize("sql", [
    # unbounded on one side, or not at all
    "SELECT year(d), COUNT(*) FROM t WHERE d > DATE '1995-01-01' GROUP BY 1",
    "SELECT FLOOR(x / 10), COUNT(*) FROM t GROUP BY 1",
    "SELECT n % 3, COUNT(*) FROM t WHERE n > 0 OR n < 10 GROUP BY 1",  # OR bounds nothing
    # a bound that is no constant (another column)
    "SELECT n % 3, COUNT(*) FROM t WHERE n BETWEEN 0 AND x GROUP BY 1",
    # a number that is no step (continuous values), a text, a timestamp read to the microsecond
    "SELECT x * 2, COUNT(*) FROM t WHERE x BETWEEN 0 AND 1 GROUP BY 1",
    "SELECT ROUND(x, 1), COUNT(*) FROM t WHERE x BETWEEN 0 AND 1 GROUP BY 1",
    "SELECT x // 10, COUNT(*) FROM t WHERE x BETWEEN 0 AND 100 GROUP BY 1",  # x / 10 on DOUBLE
    "SELECT upper(s), COUNT(*) FROM t WHERE s BETWEEN 'a' AND 'b' GROUP BY 1",
    "SELECT ts, COUNT(*) FROM t WHERE ts BETWEEN TIMESTAMP '2000-01-01 00:00:00' "
    "AND TIMESTAMP '2001-01-01 00:00:00' GROUP BY 1",
    "SELECT epoch(ts), COUNT(*) FROM t WHERE ts BETWEEN TIMESTAMP '2000-01-01 00:00:00' "
    "AND TIMESTAMP '2001-01-01 00:00:00' GROUP BY 1",
    "SELECT year(ts), COUNT(*) FROM t WHERE ts >= TIMESTAMP '2000-01-01 00:00:00' GROUP BY 1",
    "SELECT strftime(ts, '%H'), COUNT(*) FROM t WHERE ts BETWEEN "
    "TIMESTAMP '2000-01-01' AND TIMESTAMP '2000-01-02' GROUP BY 1",
    # too many groups
    f"SELECT n, COUNT(*) FROM t WHERE n BETWEEN 0 AND {MAX_GROUPS} GROUP BY 1",
    # the column divides: no monotone step (h57attack: ±10 from the ends, x = 0.01 gives 1000,
    # its rows were dropped from every released group without a word)
    "SELECT FLOOR(10 / x), COUNT(*) FROM t WHERE x BETWEEN -1 AND 1 GROUP BY 1",
    "SELECT FLOOR(1 / (x - 0.2)), COUNT(*) FROM t WHERE x BETWEEN 0 AND 1 GROUP BY 1",
    # a column outside the step, or a step of an unbounded column
    "SELECT FLOOR(x / 500) * 500 + m, COUNT(*) FROM t WHERE x BETWEEN 0 AND 1000 AND m "
    "BETWEEN 0 AND 1 GROUP BY 1",
    "SELECT FLOOR(x / 500) * 500, COUNT(*) FROM t WHERE x > 0 GROUP BY 1",
    # a CASE with a column's value among its results
    "SELECT CASE WHEN x > 3 THEN x ELSE 0 END, COUNT(*) FROM t WHERE x BETWEEN 0 AND 9 GROUP BY 1",
])
def test_unproved_shapes(con, sql):
    assert domain(con, sql) is None


def test_a_union_below_is_not_analysed(con):
    sql = ("SELECT year(d) AS y, COUNT(*) FROM (SELECT d FROM t WHERE d BETWEEN DATE '2000-01-01' "
           "AND DATE '2000-12-31' UNION ALL SELECT e FROM u) AS a GROUP BY 1")
    assert domain(con, sql) is None


def test_declared_bounds_bound_the_column():
    import provsql_dp
    c = provsql_dp.connect()
    c.execute("CREATE TABLE t(x DOUBLE, n INT)")
    c.execute("SET BOUNDS ON t (x) BETWEEN 0 AND 25")
    plan = plan_query(parse_one("SELECT FLOOR(x / 10), COUNT(*) FROM t GROUP BY 1"), c._catalog)
    assert proved_domain(c._catalog, plan.child, plan.group_by[0]) == [0.0, 1.0, 2.0]


def test_a_case_of_constants_is_listed_in_one_pass_and_capped(con, monkeypatch):
    """The values of a CASE of n constants are read in one query whatever n (a statement of
    800 branches took 30 s when each branch was a CASE of its own), the CASE's type kept, and
    a CASE of more than MAX_GROUPS results, or of NULLs only, is no listed domain."""
    from provsql_dp.sql import key_domain
    branches = " ".join(f"WHEN x > {i} THEN {i}" for i in range(500))
    got = domain(con, f"SELECT CASE {branches} ELSE 2.5 END, COUNT(*) FROM t GROUP BY 1")
    assert [float(v) for v in got] == sorted([float(i) for i in range(500)] + [2.5])
    assert domain(con, "SELECT CASE WHEN x > 0 THEN NULL END, COUNT(*) FROM t GROUP BY 1") is None
    monkeypatch.setattr(key_domain, "MAX_GROUPS", 10)
    branches = " ".join(f"WHEN x > {i} THEN 'v{i}'" for i in range(20))
    assert domain(con, f"SELECT CASE {branches} END, COUNT(*) FROM t GROUP BY 1") is None
