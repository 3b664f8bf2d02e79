"""sql.key_domain over TIMESTAMPTZ columns (h55hard): their calendar fields depend on the
session's TimeZone, so the domain is proved under the zone the session has when the statement
is planned — brute force over rows every 7 minutes across DST changes (23- and 25-hour days, a
30-minute shift, a +05:45 zone): every key value of an admitted row is in the proved set."""

import datetime

import duckdb
import pytest

from provsql_dp.sql._typing import _BINDER
from provsql_dp.sql.catalog import Catalog
from provsql_dp.sql.dialect import parse_one
from provsql_dp.sql.key_domain import proved_domain
from provsql_dp.sql.planner import plan_query

KEYS = ["date_trunc('day', ts)", "date_trunc('hour', ts)", "hour(ts)", "CAST(ts AS DATE)",
        "EXTRACT(dow FROM ts) * 100 + hour(ts)", "date_trunc('month', ts)", "minute(ts)"]
RANGES = [("2024-03-09 20:00:00+00", "2024-03-11 09:00:00+00"),  # New York springs forward
          ("2024-11-02 22:00:00+00", "2024-11-04 03:30:00+00"),  # … and falls back
          ("2024-04-06 10:00:00+00", "2024-04-07 20:00:00+00"),  # Lord Howe: a 30-min shift
          ("2024-01-31 18:15:00+00", "2024-02-01 20:00:00+00")]
ZONES = ["UTC", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu"]


def _con(zone):
    con = duckdb.connect()
    con.execute(f"SET TimeZone = '{zone}'")
    con.execute("CREATE TABLE t(ts TIMESTAMPTZ, n INT)")
    return con


def _domain(con, sql):
    plan = plan_query(parse_one(sql), Catalog(con))
    return proved_domain(Catalog(con), plan.child, plan.group_by[0])


@pytest.mark.parametrize("zone", ZONES)
def test_every_value_of_an_admitted_row_is_in_the_set_proved_in_the_sessions_zone(zone):
    con = _con(zone)
    for a, b in RANGES:
        where = f"ts >= TIMESTAMPTZ '{a}' AND ts <= TIMESTAMPTZ '{b}'"
        con.execute("DELETE FROM t")
        con.execute(f"INSERT INTO t SELECT range, 0 FROM range(TIMESTAMPTZ '{a}', TIMESTAMPTZ "
                    f"'{b}' + INTERVAL 1 MICROSECOND, INTERVAL 7 MINUTE)")
        con.execute(f"INSERT INTO t VALUES (TIMESTAMPTZ '{b}', 0), "
                    f"(TIMESTAMPTZ '{b}' - INTERVAL 1 MICROSECOND, 0)")
        for key in KEYS:
            sql = f"SELECT {key} AS g, COUNT(*) FROM t WHERE {where} GROUP BY 1"
            got = _domain(con, sql)
            assert got is not None, (zone, sql)
            truth = {r[0] for r in con.execute(f"SELECT {key} FROM t WHERE {where}").fetchall()}
            assert truth <= set(got), (zone, sql, sorted(truth - set(got))[:3])


def test_the_days_are_the_sessions_local_days():
    sql = ("SELECT date_trunc('day', ts), COUNT(*) FROM t WHERE ts BETWEEN TIMESTAMPTZ "
           "'2024-11-01 02:00:00+00' AND TIMESTAMPTZ '2024-11-02 12:00:00+00' GROUP BY 1")
    utc = _domain(_con("UTC"), sql)
    ny = _domain(_con("America/New_York"), sql)
    assert [d.isoformat() for d in utc] == ["2024-11-01T00:00:00+00:00", "2024-11-02T00:00:00+00:00"]
    assert [d.isoformat() for d in ny] == ["2024-10-31T00:00:00-04:00", "2024-11-01T00:00:00-04:00",
                                          "2024-11-02T00:00:00-04:00"]
    # a zoneless bound is read in the session's zone too; the binder's own zone is restored
    got = _domain(_con("Asia/Kathmandu"), sql.replace("TIMESTAMPTZ '2024-11-01 02:00:00+00'",
                                                      "'2024-11-01 02:00'"))
    assert got[0].isoformat() == "2024-11-01T00:00:00+05:45"
    assert _BINDER.run("SELECT current_setting('TimeZone')") == \
        duckdb.connect().execute("SELECT current_setting('TimeZone')").fetchall()


def test_a_private_query_releases_the_sessions_local_days():
    import provsql_dp

    con = provsql_dp.connect()
    con.execute("SET TimeZone = 'America/New_York'")
    con.execute("CREATE TABLE ev(id INT PRIMARY KEY, ts TIMESTAMPTZ)")
    con.execute("INSERT INTO ev SELECT range, TIMESTAMPTZ '2024-11-01 00:00:00+00' + range * "
                "INTERVAL 1 HOUR FROM range(100)")
    con.execute("PROTECT TABLE ev; SET PRIVACY BUDGET 10")
    sql = ("SELECT date_trunc('day', ts) AS d, COUNT(*) FROM ev WHERE ts >= TIMESTAMPTZ "
           "'2024-11-01 00:00:00+00' AND ts < TIMESTAMPTZ '2024-11-05 00:00:00+00' GROUP BY d")
    exact = {r[0] for r in con.execute(sql).fetchall()}
    got = {r[0] for r in con.execute(sql + " WITH EPSILON 1").fetchall()}
    assert exact <= got and datetime.date(2024, 10, 31) in {d.date() for d in got}
