"""Binning a narrow integer column never overflows its type: ``col − low`` is computed in BIGINT.

A TINYINT column's implicit domain is [−128, 128): in TINYINT, 0 − (−128) overflowed, and a
``GROUP BY`` of a TINYINT column — documented as released without a policy — failed with
DuckDB's "Overflow in subtraction of INT8". Same for a SMALLINT policy starting at −32768.
"""

import pytest

import provsql_dp
from provsql_dp.policies.blowfish.sql import ColumnDomain


@pytest.fixture()
def con():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE p(id INT PRIMARY KEY, lvl TINYINT, s SMALLINT)")
    c.execute("INSERT INTO p SELECT range, range % 4 - 2, range * 100 - 30000 FROM range(200)")
    c.execute("PROTECT TABLE p; SET PRIVACY BUDGET 10")
    return c


def test_a_tinyint_histogram_is_released_on_its_implicit_domain(con):
    rows = con.execute("SELECT lvl, COUNT(*) FROM p WHERE lvl BETWEEN -3 AND 2 GROUP BY lvl "
                       "WITH EPSILON 0.5").fetchall()
    assert [r[0] for r in rows] == [-3, -2, -1, 0, 1, 2]
    assert con.execute("SHOW PRIVACY BUDGET").fetchone()[2] == "0.5"


def test_a_smallint_policy_from_its_minimum_bins_every_row(con):
    con.execute("CREATE POLICY sp ON p (s) AS LINE DOMAIN [-32768, 32768) WIDTH 8192 BOUNDED")
    rows = con.execute("SELECT s, COUNT(*) FROM p GROUP BY s WITH EPSILON 0.5").fetchall()
    assert [r[0] for r in rows] == list(range(-32768, 32768, 8192))


@pytest.mark.parametrize("col_type, low, high, values, bins", [
    ("TINYINT", -128, 128, [-128, -1, 0, 127], [0, 127, 128, 255]),
    ("SMALLINT", -32768, 32768, [-32768, 0, 32767], [0, 32768, 65535]),
    ("UTINYINT", 0, 256, [0, 255], [0, 255]),
])
def test_bin_sql_on_the_extremes_of_the_type(col_type, low, high, values, bins):
    import duckdb
    sql = ColumnDomain.range(low, high, width=1).bin_sql("v", col_type)
    got = duckdb.sql(f"SELECT {sql} FROM (SELECT unnest({values})::{col_type} AS v)").fetchall()
    assert [g[0] for g in got] == bins
