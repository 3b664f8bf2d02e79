"""The caller's Spark settings survive our queries (h55hard): provsql_dp runs every query in a
session of its own with ANSI mode off (``backends.spark.private_session``), so after private
queries of several routes — a Laplace COUNT, an unbounded SUM through the engine buckets, a
GROUP BY — the caller's ``spark.sql.ansi.enabled`` is what the caller had, ``true`` or
``false``, whatever ran before (the session fixture is shared by every Spark test, in any
order; tests/conftest.py's guard puts its ANSI mode back after each test)."""

from __future__ import annotations

import pytest

import provsql_dp

pytestmark = pytest.mark.spark

QUERIES = ["SELECT COUNT(*) FROM st WITH EPSILON 1",
           "SELECT SUM(x) FROM st WITH EPSILON 1",
           "SELECT g, COUNT(*) FROM st GROUP BY g WITH EPSILON 1"]


@pytest.mark.parametrize("ansi", ["true", "false"])
def test_private_queries_leave_the_callers_ansi_mode_as_it_was(spark, tmp_path, ansi):
    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", ansi)
    try:
        spark.range(40).selectExpr("id", "id % 3 AS g", "CAST(id % 7 AS DOUBLE) AS x") \
            .createOrReplaceTempView("settings_t")
        con = provsql_dp.connect(str(tmp_path / f"settings_{ansi}.duckdb"), engine=spark)
        con.attach("st", "settings_t")
        con.execute("PROTECT TABLE st; SET PRIVACY BUDGET 10")
        con.execute("SET GROUP KEYS ON st (g) VALUES (0, 1, 2)")
        for sql in QUERIES:
            assert con.execute(sql).fetchall(), sql
            assert spark.conf.get("spark.sql.ansi.enabled") == ansi, sql
            assert con._engine.spark.conf.get("spark.sql.ansi.enabled") == "false", sql
        con.close()
        assert spark.conf.get("spark.sql.ansi.enabled") == ansi
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)
