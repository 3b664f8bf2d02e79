"""sql.key_domain over TIMESTAMP columns (sql._timestamp_grain): the proved set holds every value
the key takes on any row the statement admits — checked by brute force on random rows (the range's
ends, the last microsecond of periods, random instants) for random ranges and keys, on DuckDB
itself."""

import datetime

import duckdb
import pytest
from conftest import breadth
from hypothesis import HealthCheck, settings, strategies as st

from provsql_dp.sql.catalog import Catalog
from provsql_dp.sql.dialect import parse_one
from provsql_dp.sql.key_domain import proved_domain
from provsql_dp.sql.planner import plan_query

KEYS = ["date_trunc('month', ts)", "date_trunc('week', ts)", "date_trunc('quarter', ts)",
        "date_trunc('hour', ts)", "date_trunc('day', ts)", "EXTRACT(hour FROM ts)",
        "EXTRACT(dow FROM ts)", "EXTRACT(isoyear FROM ts)", "year(ts)", "month(ts) * 100 + day(ts)",
        "hour(ts) * 60 + minute(ts)", "CAST(ts AS DATE)", "date_part('minute', ts)",
        "quarter(ts) + n", "EXTRACT(second FROM ts)"]
CONDS = ["", " AND hour(ts) BETWEEN 9 AND 17", " AND dayofweek(ts) <> 0", " AND minute(ts) = 7",
         " AND n BETWEEN 1 AND 3"]
_T0 = datetime.datetime(1969, 12, 1)  # instants before and after the epoch


@pytest.fixture(scope="module")
def con():
    c = duckdb.connect()
    c.execute("CREATE TABLE t(ts TIMESTAMP, n INT)")
    return c


def _domain(con, sql):
    plan = plan_query(parse_one(sql), Catalog(con))
    return proved_domain(Catalog(con), plan.child, plan.group_by[0])


instants = st.integers(0, 3 * 366 * 86_400 * 10**6).map(
    lambda us: _T0 + datetime.timedelta(microseconds=us))


@breadth(5, 25, settings=dict(suppress_health_check=[HealthCheck.function_scoped_fixture]),
         key=st.sampled_from(KEYS), cond=st.sampled_from(CONDS), a=instants,
         span=st.integers(0, 40 * 86_400 * 10**6), strict=st.booleans(),
         points=st.lists(st.integers(0, 10**9), min_size=1, max_size=40),
         ns=st.lists(st.integers(0, 4), min_size=1, max_size=40))
def test_every_value_of_an_admitted_row_is_in_the_proved_set(con, key, cond, a, span, strict,
                                                            points, ns):
    b = a + datetime.timedelta(microseconds=span)
    hi_op = "<" if strict else "<="
    where = f"ts >= TIMESTAMP '{a.isoformat(sep=' ')}' AND ts {hi_op} TIMESTAMP '{b.isoformat(sep=' ')}'"
    if "n" in key.replace("month", "").replace("minute", "").replace("second", "") or "n B" in cond:
        where += " AND n BETWEEN 0 AND 4"
    sql = f"SELECT {key} AS g, COUNT(*) FROM t WHERE {where}{cond} GROUP BY 1"
    got = _domain(con, sql)
    if got is None:  # too many candidates: refused, never wrong
        return
    # rows: the ends, a microsecond inside them, the ends of the periods in between, random ones
    cands = {a, b, a + datetime.timedelta(microseconds=1), b - datetime.timedelta(microseconds=1)}
    cands |= {a + datetime.timedelta(microseconds=p * max(span, 1) // 10**9) for p in points}
    rows = [(t, n) for t in cands for n in set(ns)]
    con.execute("DELETE FROM t")
    con.executemany("INSERT INTO t VALUES (?, ?)", rows)
    truth = {r[0] for r in con.execute(f"SELECT {key} FROM t WHERE {where}{cond}").fetchall()}
    truth.discard(None)
    assert truth <= set(got), (sql, sorted(truth - set(got))[:5])


def test_a_month_range_gives_its_months_only(con):
    got = _domain(con, "SELECT date_trunc('month', ts), COUNT(*) FROM t WHERE ts >= TIMESTAMP "
                       "'2020-01-15 10:00' AND ts < TIMESTAMP '2020-04-01' GROUP BY 1")
    assert [v.month for v in got] == [1, 2, 3, 4]  # the strict bound is widened: a superset


def test_a_condition_of_the_grain_filters_and_a_bound_does_not(con):
    got = _domain(con, "SELECT EXTRACT(hour FROM ts), COUNT(*) FROM t WHERE ts BETWEEN TIMESTAMP "
                       "'2020-01-01 08:30' AND TIMESTAMP '2020-01-03' AND hour(ts) BETWEEN 9 AND 11 "
                       "GROUP BY 1")
    assert got == [9, 10, 11]
    got = _domain(con, "SELECT EXTRACT(hour FROM ts), COUNT(*) FROM t WHERE ts BETWEEN TIMESTAMP "
                       "'2020-01-01 08:30' AND TIMESTAMP '2020-01-01 10:15' GROUP BY 1")
    assert got == [8, 9, 10]  # 08:30 reads hour 8 although the start 08:00 is out of range


def test_too_many_starts_are_not_generated(con):
    assert _domain(con, "SELECT date_trunc('second', ts), COUNT(*) FROM t WHERE ts BETWEEN "
                        "TIMESTAMP '1000-01-01' AND TIMESTAMP '9000-01-01' GROUP BY 1") is None
