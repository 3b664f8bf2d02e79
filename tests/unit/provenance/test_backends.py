"""The backend layer: the DuckDB backend reads results as arrays; the Spark backend's rewrite of
capture SQL (no Spark needed: it is sqlglot only) maps tables, wide types and functions, and
refuses what has no total equivalent."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest
import sqlglot

import provsql_dp
from provsql_dp.errors import NotSupportedError, UnsupportedQueryError
from provsql_dp.provenance.backends import DuckDBBackend, as_backend, engine_of
from provsql_dp.provenance.backends.spark import SparkBackend
from provsql_dp.provenance.capture import capture_sql


def _spark_rewriter(*tables):
    be = SparkBackend.__new__(SparkBackend)
    be._views = {t: f"v_{t}" for t in tables}
    return be


def test_duckdb_backend_reads_arrays_and_types():
    be = as_backend(duckdb.connect())
    cols, types = be.fetchnumpy("SELECT * FROM (VALUES (1, 'a', DATE '2020-01-01'), "
                                "(NULL, NULL, NULL)) t(a, s, d)")
    assert types == ["INTEGER", "VARCHAR", "DATE"]
    assert isinstance(cols["a"], np.ma.MaskedArray) and cols["a"].mask.tolist() == [False, True]
    assert as_backend(be) is be


def test_a_connection_reads_its_own_duckdb_by_default():
    con = provsql_dp.connect()
    assert isinstance(engine_of(con), DuckDBBackend) and engine_of(con).con is con._duck
    with pytest.raises(NotSupportedError, match="engine=spark_session"):
        con.attach("t")
    with pytest.raises(provsql_dp.InterfaceError, match="SparkSession"):
        provsql_dp.connect(engine="not a session")


def test_capture_sql_of_every_plan_shape_becomes_spark_sql():
    """The capture queries of joins, unions, DISTINCT, composite keys and rowid participants
    rewrite to Spark SQL that sqlglot parses back, naming only attached views."""
    con = provsql_dp.connect()
    con.execute("CREATE TABLE e(src INT, dst INT, w DOUBLE); CREATE TABLE p(id INT, c VARCHAR)")
    con.execute("PROTECT TABLE e BY (src, dst) AS node; PROTECT TABLE p")
    be = _spark_rewriter("e", "p")
    for sql in ["SELECT DISTINCT e1.src FROM e e1 JOIN e e2 ON e1.dst = e2.src",
                "SELECT c FROM p UNION SELECT CAST(src AS VARCHAR) FROM e",
                "SELECT SUM(w * src) FROM e WHERE src // (dst - 3) > 1",
                "SELECT COUNT(*) FROM p WHERE CAST(c AS INT) > 2"]:
        text, *_ = capture_sql(con.plan(sql))
        spark_sql = be.to_spark(text)
        tree = sqlglot.parse_one(spark_sql, read="spark")
        assert {t.name for t in tree.find_all(sqlglot.exp.Table)} <= {"v_e", "v_p"}, spark_sql
        assert "INT128" not in spark_sql and "HUGEINT" not in spark_sql, spark_sql


def test_wide_types_and_isfinite_have_spark_forms():
    be = _spark_rewriter("t")
    out = be.to_spark("SELECT TRY_CAST(TRY_CAST(a AS UHUGEINT) * 2 AS UBIGINT), isfinite(x) FROM t")
    assert "DECIMAL(38, 0)" in out and "DECIMAL(20, 0)" in out
    assert "ISNAN(CAST(X AS DOUBLE))" in out.upper() and "ISFINITE" not in out.upper()


@pytest.mark.parametrize("fn", ["jaccard(s, 'x')", "getenv('HOME')", "setseed(0.5)"])
def test_functions_without_a_total_spark_equivalent_are_refused(fn):
    with pytest.raises(UnsupportedQueryError, match="no total equivalent on the Spark engine"):
        _spark_rewriter("t").to_spark(f"SELECT {fn} FROM t")


def test_unattached_tables_are_named():
    with pytest.raises(NotSupportedError, match=r"table q is not attached.*con.attach\('q'\)"):
        _spark_rewriter("t").to_spark("SELECT * FROM q")


def test_a_refusal_on_the_engine_charges_nothing():
    """A private query the engine cannot run totally is refused before the ledger is charged."""
    con = provsql_dp.connect()
    con.execute("CREATE TABLE p(id INT, s VARCHAR); INSERT INTO p VALUES (1, 'a')")
    con.execute("PROTECT TABLE p; SET PRIVACY BUDGET 1")
    con._engine = _spark_rewriter("t")  # a Spark rewriter that knows no table p
    with pytest.raises(NotSupportedError, match="not attached"):
        con.execute("SELECT COUNT(*) FROM p WITH EPSILON 0.5")
    assert con.ledger.remaining("default") == 1
