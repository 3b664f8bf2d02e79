"""Set operations are typed at plan time (``provsql_dp.sql._set_types``): DuckDB's common type,
reached by TRY_CAST in our plan, or a refusal before ε — never a cast DuckDB may fail on a row."""

from __future__ import annotations

import duckdb
import pytest
import sqlglot

from provsql_dp.errors import UnsupportedQueryError
from provsql_dp.provenance.capture import compile_node
from provsql_dp.sql.catalog import Catalog
from provsql_dp.sql.planner import plan_query
from provsql_dp.sql._set_types import common_type


@pytest.mark.parametrize("a, b, t", [
    ("INTEGER", "BIGINT", "BIGINT"), ("DATE", "TIMESTAMP", "TIMESTAMP"),
    ("BIGINT", "VARCHAR", "VARCHAR"), ("HUGEINT", "DECIMAL(38,10)", "DECIMAL(38,10)"),
    ("INTEGER", "DOUBLE", "DOUBLE"), ("VARCHAR", "VARCHAR", "VARCHAR"),
])
def test_duckdbs_own_common_type(a, b, t):
    assert common_type(a, b) == t == common_type(b, a)


@pytest.mark.parametrize("a, b", [("INTEGER", "DATE"), ("DOUBLE", "TIMESTAMP"), ("BOOLEAN", "DATE")])
def test_no_value_converts_refused(a, b):
    with pytest.raises(UnsupportedQueryError, match=f"mixes {a} and {b}"):
        common_type(a, b)


@pytest.fixture()
def con():
    c = duckdb.connect()
    c.execute("CREATE TABLE t(i BIGINT, s VARCHAR, d DATE, h HUGEINT, x DECIMAL(38,10))")
    # values on which DuckDB's own implicit casts fail at run time
    c.execute("INSERT INTO t VALUES (1, 'abc', '5881580-07-10', "
              "170141183460469231731687303715884105727, 1.5)")
    return c


def run(con, sql: str):
    plan = plan_query(sqlglot.parse_one(sql, read="duckdb"), Catalog(con))
    return con.execute(compile_node(plan).sql).fetchall()


@pytest.mark.parametrize("sql, raw_fails", [
    ("SELECT i FROM t UNION ALL SELECT s FROM t", False),
    ("SELECT s FROM t UNION SELECT i FROM t", False),
    # our plan compares the branches in a join: it would cast s to BIGINT, row by row
    ("SELECT i FROM t INTERSECT SELECT s FROM t", False),
    ("SELECT CAST(d AS TIMESTAMP) FROM t UNION ALL SELECT d FROM t", True),
    ("SELECT d FROM t UNION ALL SELECT CAST(NULL AS TIMESTAMP) FROM t", True),  # far date
    ("SELECT h FROM t UNION ALL SELECT x FROM t", True),  # HUGEINT max does not fit DECIMAL(38,10)
])
def test_mixed_branches_never_fail_on_a_row(con, sql, raw_fails):
    direct = None
    try:
        direct = con.execute(sql).fetchall()
    except duckdb.Error:
        pass  # DuckDB's own cast fails on these rows: the oracle the planner closes
    assert (direct is None) == raw_fails
    rows = run(con, sql)  # never raises: a value that does not convert is NULL
    assert direct is None or len(direct) == len(rows)


def test_unconvertible_branch_refused_at_plan_time(con):
    with pytest.raises(UnsupportedQueryError, match="mixes BIGINT and DATE"):
        plan_query(sqlglot.parse_one("SELECT i FROM t WHERE i = 2 UNION ALL SELECT d FROM t",
                                     read="duckdb"), Catalog(con))
