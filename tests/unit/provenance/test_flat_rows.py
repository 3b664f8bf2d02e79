"""A plan's rows as one flat ``FROM table WHERE …`` (provenance/flat_rows.py): the same rows as
the compiled plan (each count and each bounded sum compared with the layered query of
``compile_node`` on DuckDB), names by name (a table whose column names look like plan ids, quoted
and mixed-case names), and None for every plan it does not cover."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

import provsql_dp
from provsql_dp.privacy import fast_path
from provsql_dp.provenance.capture import compile_node
from provsql_dp.provenance.flat_rows import flat_rows
from provsql_dp.sql.planner import plan_query
from provsql_dp.sql import dialect as d

# columns named like the planner's ids, in another order: a substitution by position or a
# second pass over substituted names would read the wrong column
_TABLE = 'CREATE TABLE t(id INT PRIMARY KEY, v1 DOUBLE, v0 INT, "Odd ""Name""" INT, s VARCHAR)'

WHERES = [
    "", "WHERE v1 > 40", "WHERE v0 < 3 AND v1 >= 10", "WHERE v0 IS NULL OR v1 IS NULL",
    'WHERE "Odd ""Name""" % 3 = 1', "WHERE s LIKE 'a%' OR s IS NULL", "WHERE NOT (v1 > 5)",
    "WHERE coalesce(v0, -1) + id % 4 = 2", "WHERE v1 / (v0 - 2) > 1",
]


@pytest.fixture(scope="module")
def con():
    c = provsql_dp.connect()
    c.execute(_TABLE)
    rng = np.random.default_rng(3)
    rows = []
    for i in range(300):
        v1 = None if i % 17 == 0 else float(rng.integers(0, 100))
        v0 = None if i % 11 == 0 else int(rng.integers(0, 6))
        s = None if i % 13 == 0 else ["abc", "bcd", "a", ""][i % 4]
        rows.append((i, v1, v0, int(rng.integers(0, 9)), s))
    c._duck.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
    c.execute("PROTECT TABLE t")
    c.execute("SET PRIVACY BUDGET 1000")
    return c


def _plan(con, sql):
    with con._catalog.snapshot() as cat:
        return plan_query(d.parse_one(sql), cat)


@pytest.mark.parametrize("where", WHERES)
def test_the_flat_count_counts_the_compiled_rows(con, where):
    plan = _plan(con, f"SELECT COUNT(*) FROM t {where}")
    flat = flat_rows(plan.child)
    assert flat is not None
    layered = con._duck.execute(
        f"SELECT count(*) FROM ({compile_node(plan.child, disc=False).sql}) AS c").fetchall()
    assert con._duck.execute(f"SELECT count(*) FROM {flat.from_where}").fetchall() == layered
    sql, n = fast_path._laplace_sql(plan, None, False)
    assert "SELECT count(*) FROM \"memory\".\"main\".\"t\"" in sql and n == 1
    assert con._duck.execute(sql).fetchall() == layered


@pytest.mark.parametrize("where", WHERES[:5])
def test_the_flat_bounded_sum_and_its_count_are_the_compiled_ones(con, where):
    plan = _plan(con, f"SELECT SUM(v1) FROM t {where}")
    flat_sql, n = fast_path._laplace_sql(plan, (0, 50), True)
    compiled = compile_node(plan.child, disc=False).sql
    layered = fast_path.clamped_sum_query(compiled, plan.weight.sql(dialect="duckdb"), 0, 50,
                                          [], True)
    assert n == 2 and compiled not in flat_sql
    assert con._duck.execute(flat_sql).fetchall() == con._duck.execute(layered).fetchall()


def test_group_keys_are_read_from_their_columns(con):
    con.execute("SET GROUP KEYS ON t (v0) VALUES (0, 1, 2, 3, 4, 5, 6)")
    try:
        plan = _plan(con, "SELECT v0, COUNT(*) FROM t WHERE v1 > 20 GROUP BY v0")
        sql, _ = fast_path._laplace_sql(plan, None, False)
        assert "GROUP BY \"v0\"" in sql
        plain = con._duck.execute("SELECT v0, count(*) FROM t WHERE v1 > 20 GROUP BY v0").fetchall()
        assert sorted(con._duck.execute(sql).fetchall(), key=repr) == sorted(plain, key=repr)
        rows = con.execute("SELECT v0, COUNT(*) FROM t WHERE v1 > 20 GROUP BY v0 "
                           "WITH EPSILON 1 OPTIONS (raw = true)").fetchall()
        assert len(rows) == 7
    finally:
        con.execute("DROP GROUP KEYS ON t (v0)")


def test_a_renaming_projection_is_followed(con):
    plan = _plan(con, "SELECT COUNT(*) FROM (SELECT v0 AS a, v1 AS v0 FROM t) AS x WHERE v0 > 50")
    flat = flat_rows(plan.child)  # the filter over the projection: on the table's v1
    assert flat.from_where.endswith('WHERE ("v1" > 50)')
    assert sorted(flat.columns.values()) == ["v0", "v1"]
    want = con._duck.execute("SELECT count(*) FROM t WHERE v1 > 50").fetchall()
    assert con._duck.execute(f"SELECT count(*) FROM {flat.from_where}").fetchall() == want


@pytest.mark.parametrize("sql", [
    "SELECT COUNT(*) FROM (SELECT v1 + 1 AS w FROM t) AS x WHERE w > 5",  # a computed column
    "SELECT COUNT(*) FROM t a JOIN t b ON a.id = b.id",                   # a join
    "SELECT COUNT(*) FROM t WHERE v0 IN (SELECT 1)",                      # a semi-join
    "SELECT COUNT(*) FROM (SELECT DISTINCT v0 FROM t) AS x",
])
def test_other_plans_are_compiled(con, sql):
    plan = _plan(con, sql)
    assert flat_rows(plan.child) is None


def test_a_table_read_through_its_owners_join_is_compiled():
    """Two hops along foreign keys: the scan reads a join (``Scan.source``), not the table."""
    c = provsql_dp.connect()
    c.execute("CREATE TABLE c(k INT PRIMARY KEY); CREATE TABLE o(k INT PRIMARY KEY, ck INT); "
              "CREATE TABLE l(ok INT, q DOUBLE)")
    c.execute("INSERT INTO c SELECT range FROM range(3); INSERT INTO o SELECT range, range % 3 "
              "FROM range(5); INSERT INTO l SELECT range % 5, 1 FROM range(20)")
    c.execute("PROTECT TABLE c")
    c.execute("PROTECT TABLE o BY (ck) REFERENCES c")
    c.execute("PROTECT TABLE l BY (ok) REFERENCES o")
    plan = _plan(c, "SELECT COUNT(*) FROM l WHERE q > 0")
    scan = plan.child
    while not hasattr(scan, "source"):
        scan = scan.child
    assert scan.source is not None and flat_rows(plan.child) is None


def test_a_column_dropped_meanwhile_fails_to_bind_by_name():
    """By name, as the layered query: never another column at the same position."""
    c = duckdb.connect()
    c.execute("CREATE TABLE t(a INT, b INT)")
    con = provsql_dp.connect()
    con.execute("CREATE TABLE t(a INT PRIMARY KEY, b INT)")
    con.execute("PROTECT TABLE t")
    plan = _plan(con, "SELECT COUNT(*) FROM t WHERE b > 1")
    flat = flat_rows(plan.child)
    con._duck.execute("ALTER TABLE t DROP COLUMN b")
    with pytest.raises(duckdb.BinderException):
        con._duck.execute(f"SELECT count(*) FROM {flat.from_where}")
