"""A cancel or a time limit stops that statement's Spark jobs and no one else's (issue 30):
two connections share one SparkContext; one's long job is cancelled within moments, the other's
job completes with the value an uncancelled run releases under the same seed; the ledger does
what it does when a DuckDB read is cancelled (ε charged before the read stays spent, the
cancel adds nothing); past the release's time limit the read is
stopped and the data-independent fallback released (see provenance/backends/_spark_jobs.py)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import provsql_dp
from provsql_dp._cancel import CancelToken
from provsql_dp.errors import StatementCancelled
from provsql_dp.provenance.backends._spark_arrow import collect_batches
from provsql_dp.provenance.backends._spark_jobs import spark_step

pytestmark = pytest.mark.spark

#: a self-join whose rows never match: Spark compares every pair (a nested-loop join), so the
#: job's length grows with the square of the table's size and its output stays empty
SLOW = "SELECT COUNT(*) FROM t a JOIN t b ON a.g + b.g < 0 WITH EPSILON 1"


def _slow_sum(spark, n):
    # (id % 1000)² never overflows: with n = 10^12 the second partition starts at 5·10^11, and
    # id * id would end the job at once under ANSI mode (the test then cancelled nothing)
    return spark.range(0, n, 1, 2).selectExpr("sum((id % 1000) * (id % 1000) % 7) AS s")


def _wait_for_jobs(sc, timeout=120):
    end = time.monotonic() + timeout
    while not sc.statusTracker().getActiveJobsIds():
        assert time.monotonic() < end, "no Spark job started"
        time.sleep(0.05)


def test_cancel_stops_the_tagged_jobs_only(spark):
    """Two statements' reads on one SparkContext: cancelling one stops its job within moments;
    the other's job runs on to its exact result."""
    sc = spark.sparkContext
    expected = _slow_sum(spark, 2 * 10**7).first()["s"]
    tokens, out = [CancelToken(), CancelToken()], {}

    def run(k, n):
        t0 = time.monotonic()
        try:
            with tokens[k].statement(), spark_step(sc):
                batches, _ = collect_batches(_slow_sum(spark, n), lambda b: b)
            out[k] = ("ok", batches[0].column(0)[0].as_py(), time.monotonic() - t0)
        except Exception as e:  # noqa: BLE001 - recorded for the assertion
            out[k] = (type(e).__name__, None, time.monotonic())

    long = threading.Thread(target=run, args=(0, 10**12))
    other = threading.Thread(target=run, args=(1, 2 * 10**7))
    long.start()
    _wait_for_jobs(sc)
    other.start()
    time.sleep(0.5)
    cancelled_at = time.monotonic()
    assert tokens[0].cancel()
    long.join(60)
    other.join(120)
    assert not long.is_alive() and not other.is_alive()
    assert out[0][0] == "StatementCancelled", out
    assert out[0][2] - cancelled_at < 10, "the cancelled job stopped within moments"
    assert out[1][:2] == ("ok", expected), out
    # the tags are gone from this thread's properties: a later job here is not cancelled
    assert "provsql_dp" not in (sc.getLocalProperty("spark.job.tags") or "")


def _db(spark, tmp_path, name, n, **kwargs):
    view = f"cancel_src_{name}"
    spark.range(n).selectExpr("id", "id % 3 AS g").createOrReplaceTempView(view)
    con = provsql_dp.connect(str(tmp_path / f"{name}.duckdb"), engine=spark, **kwargs)
    con.attach("t", view)
    con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 10")
    return con


def _remaining(con):
    return con.execute("SHOW PRIVACY BUDGET").fetchall()


@pytest.mark.slow
def test_two_connections_one_cancelled(spark, tmp_path):
    """Connection A's long private statement is cancelled while its Spark job runs: it raises
    StatementCancelled within moments and charges nothing beyond what it charged before its
    read. Connection B's statement, running
    at the same time on the same SparkContext, completes and releases what it releases alone
    under the same seed."""
    a = _db(spark, tmp_path, "a", 30000)
    b = _db(spark, tmp_path, "b", 4000)
    b._rng = np.random.default_rng(11)
    alone = b.execute(SLOW).fetchall()
    b.execute("SET PRIVACY BUDGET 10")
    before_a = _remaining(a)
    b._rng = np.random.default_rng(11)
    out = {}

    def run(key, con):
        try:
            out[key] = ("ok", con.execute(SLOW).fetchall(), time.monotonic())
        except Exception as e:  # noqa: BLE001 - recorded for the assertion
            out[key] = (type(e).__name__, str(e), time.monotonic())

    ta = threading.Thread(target=run, args=("a", a))
    ta.start()
    _wait_for_jobs(spark.sparkContext)
    tb = threading.Thread(target=run, args=("b", b))
    tb.start()
    time.sleep(1.0)
    cancelled_at = time.monotonic()
    assert a.cancel()
    ta.join(120)
    tb.join(300)
    assert out["a"][0] == "StatementCancelled", out
    assert out["a"][2] - cancelled_at < 15, out
    assert out["b"][:2] == ("ok", alone), out
    # the ledger does what it does on DuckDB (the same statement cancelled during its DuckDB
    # read): this route charges its ε before it reads protected rows, so that charge stays
    # spent, and the cancel itself charges nothing more (audited as a failure with ε 0)
    assert before_a[0][2:] == ("0", "10") and _remaining(a)[0][2:] == ("1", "9"), _remaining(a)
    last = a.execute("SELECT outcome, epsilon, reason FROM _provsql_dp.audit_log "
                     "ORDER BY id DESC LIMIT 1").fetchall()
    assert last == [("failed", "0", "StatementCancelled")], last
    a.close()
    b.close()


@pytest.mark.slow
def test_time_limit_stops_the_spark_read(spark, tmp_path):
    """Past the release's time limit the Spark read is stopped (it would run for minutes) and
    the data-independent fallback is released, as on DuckDB."""
    con = _db(spark, tmp_path, "limit", 30000, release_time_limit=3)
    t0 = time.monotonic()
    cur = con.execute(SLOW)
    took = time.monotonic() - t0
    # the job alone runs for minutes here: the statement ended because its job was stopped
    assert cur.fetchall() and took < 20, took
    con.close()
