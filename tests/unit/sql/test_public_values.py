"""provsql_dp.sql.public_values: the peers' public values made plain before planning."""

import re

import duckdb
import pytest

from provsql_dp.sql.dialect import parse_one
from provsql_dp.sql.public_values import public_values, reads_clock


def _sql(text, duck=None):
    return public_values(parse_one(text), duck).sql(dialect="duckdb")


@pytest.mark.parametrize("text,want", [
    ("SELECT COUNT(*) FROM t WHERE x > (SELECT 4000)", "x > (4000)"),
    ("SELECT COUNT(*) FROM t WHERE x > (SELECT 2 * 3)", "x > (2 * 3)"),
    ("SELECT COUNT(*) FROM t WHERE x > (SELECT (SELECT 4) + 1)", "x > ((4) + 1)"),
])
def test_constant_subqueries_are_inlined(text, want):
    assert want in _sql(text)


@pytest.mark.parametrize("sub", [
    "(SELECT MAX(y) FROM u)", "(SELECT y)", "(SELECT 1 WHERE FALSE)", "(SELECT 1 LIMIT 0)",
    "(SELECT 1, 2)", "(SELECT ?)",
])
def test_subqueries_that_read_or_filter_are_kept(sub):
    text = f"SELECT COUNT(*) FROM t WHERE x > {sub}"
    assert "SELECT" in _sql(text).split("WHERE", 1)[1]


def test_in_and_exists_subqueries_are_left_to_the_planner():
    out = _sql("SELECT COUNT(*) FROM t WHERE x IN (SELECT 1) AND EXISTS (SELECT 1) "
               "AND x > ANY (SELECT 2) AND x IN (SELECT * FROM (SELECT 3) s)")
    assert out.count("SELECT") == 6


def test_the_clock_is_read_once_from_the_connection():
    duck = duckdb.connect()
    duck.execute("SET TimeZone = 'UTC'")
    out = _sql("SELECT COUNT(*) FROM t WHERE d < CURRENT_DATE AND d > TODAY() - 9 "
               "AND ts < NOW() AND ts < CURRENT_TIMESTAMP", duck)
    today = duck.execute("SELECT CAST(current_date AS VARCHAR)").fetchone()[0]
    assert out.count(f"CAST('{today}' AS DATE)") == 2
    stamps = re.findall(r"CAST\('([^']*)' AS TIMESTAMPTZ\)", out)
    assert len(stamps) == 2 and stamps[0] == stamps[1]  # one instant for the statement
    assert "NOW" not in out.upper().replace("'", "") and "CURRENT_" not in out


def test_reads_clock():
    assert reads_clock(parse_one("SELECT 1 FROM t WHERE d < CURRENT_DATE"))
    assert not reads_clock(parse_one("SELECT 1 FROM t WHERE d < DATE '2020-01-01'"))


def test_approx_count_distinct_and_extremes():
    assert _sql("SELECT approx_count_distinct(c) AS n FROM t") == \
        "SELECT COUNT(DISTINCT c) AS n FROM t"
    assert _sql("SELECT approx_count_distinct(c) + 1 FROM t") == \
        "SELECT COUNT(DISTINCT c) + 1 FROM t"
    assert _sql("SELECT g, MIN(x), MAX(x) AS m FROM t GROUP BY g") == (
        'SELECT g, QUANTILE_CONT(x, 0.01) AS "min(x)", QUANTILE_CONT(x, 0.99) AS m FROM t '
        "GROUP BY g")
    # not an item of the statement's own select list: left as written (refused as before, or a
    # public subquery's own MIN)
    assert "MIN(x)" in _sql("SELECT COUNT(*) FROM t HAVING MIN(x) > 0")
    assert "MAX(y)" in _sql("SELECT COUNT(*) FROM t WHERE x IN (SELECT MAX(y) FROM u)")
    assert "MIN(x) + 1" in _sql("SELECT MIN(x) + 1 FROM t")
