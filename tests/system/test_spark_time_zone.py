"""TIMESTAMPTZ group keys on the Spark engine (h60tz): DuckDB proves a key's values in its
session's ``TimeZone`` (:mod:`provsql_dp.sql.key_domain`), Spark evaluates the key in
``spark.sql.session.timeZone``. Our Spark queries run in DuckDB's zone
(``SparkBackend._in_zone``), so that with the caller's Spark in Los Angeles and the analyst's
session in Tokyo every row still falls in its proved day — before, every count was 0 (each row's
day began at another instant than any proved one). The caller's zone is never touched, and our
own session's is put back after each query.

A Spark ``TIMESTAMP`` column (``TimestampType``: an instant, read in the session's zone) is
mirrored as DuckDB's ``TIMESTAMPTZ`` (``TIMESTAMP_NTZ`` as ``TIMESTAMP``): mirrored as a zoneless
``TIMESTAMP`` before, its ``date_trunc`` keys came back from Spark as instants and matched none
of the zoneless proved keys, in any zone — every count 0."""

from __future__ import annotations

import datetime

import pytest

import provsql_dp

pytestmark = pytest.mark.spark

SQL = ("SELECT date_trunc('day', CAST(vday AS TIMESTAMPTZ)) AS d, COUNT(*) FROM visits "
       "WHERE vday BETWEEN DATE '2024-03-01' AND DATE '2024-03-05' GROUP BY d WITH EPSILON 50")


def test_timestamptz_keys_proved_in_duckdbs_zone_hold_on_spark(spark, tmp_path):
    key = "spark.sql.session.timeZone"
    before = spark.conf.get(key)
    spark.conf.set(key, "America/Los_Angeles")
    try:
        rows = [(i, datetime.date(2024, 3, 1 + i % 5)) for i in range(200)]
        spark.createDataFrame(rows, "id INT, vday DATE").createOrReplaceTempView("tz_visits")
        con = provsql_dp.connect(str(tmp_path / "tz.duckdb"), engine=spark)
        con.attach("visits", "tz_visits", primary_key=["id"])
        con.execute("PROTECT TABLE visits; SET PRIVACY BUDGET 100")
        con.execute("SET TimeZone = 'Asia/Tokyo'")
        got = sorted(con.execute(SQL).fetchall())
        tokyo = [datetime.datetime(2024, 3, d, tzinfo=datetime.timezone(datetime.timedelta(hours=9)))
                 for d in range(1, 6)]
        assert [d for d, _ in got] == tokyo
        # 40 rows a day; the noise at ε = 10 a group is a few units
        assert all(25 <= n <= 55 for _, n in got), got
        assert spark.conf.get(key) == "America/Los_Angeles"  # the caller's, untouched
        assert con._engine.spark.conf.get(key) == "America/Los_Angeles"  # ours, put back
        con.close()
    finally:
        spark.conf.set(key, before)


@pytest.mark.parametrize("spark_zone, duck_zone", [("UTC", "UTC"),
                                                   ("America/Los_Angeles", "Asia/Tokyo")])
def test_a_spark_timestamp_column_is_an_instant_and_its_day_keys_hold(spark, tmp_path, spark_zone,
                                                                      duck_zone):
    key = "spark.sql.session.timeZone"
    before = spark.conf.get(key)
    spark.conf.set(key, spark_zone)
    try:
        # noon UTC on five days: the same day in UTC and in Tokyo (21:00)
        spark.sql("SELECT CAST(id AS INT) AS id, TIMESTAMP '2024-03-01 12:00:00 UTC' + "
                  "make_interval(0, 0, 0, CAST(id % 5 AS INT)) AS ts FROM range(200)") \
            .createOrReplaceTempView("tz_events")
        con = provsql_dp.connect(str(tmp_path / "tz_events.duckdb"), engine=spark)
        con.attach("events", "tz_events", primary_key=["id"])
        con.execute("PROTECT TABLE events; SET PRIVACY BUDGET 100")
        con.execute(f"SET TimeZone = '{duck_zone}'")
        got = sorted(con.execute(
            "SELECT date_trunc('day', ts) AS d, COUNT(*) FROM events WHERE ts BETWEEN "
            "'2024-03-01' AND '2024-03-05 23:59:59' GROUP BY d WITH EPSILON 50").fetchall())
        assert [d.day for d, _ in got] == [1, 2, 3, 4, 5]
        assert all(25 <= n <= 55 for _, n in got), got
        assert con._duck.execute("SELECT data_type FROM information_schema.columns WHERE "
                                 "table_name = 'events' AND column_name = 'ts'").fetchall() == [
            ("TIMESTAMP WITH TIME ZONE",)]
        con.close()
    finally:
        spark.conf.set(key, before)
