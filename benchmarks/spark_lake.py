"""Benchmark: Spark cancel per statement, and attaching Iceberg tables (issue 30).

What it runs
------------
**Cancel.** Two provsql_dp connections on one SparkContext (``local[2]``, FAIR scheduler), each
with a protected table attached from Spark: A's ``--rows`` rows, B's ``--rows // 4``. A runs
``SELECT COUNT(*) FROM t a JOIN t b ON a.g + b.g < 0 WITH EPSILON 1`` (no pair matches: Spark
compares every pair, a job of tens of seconds); as soon as its Spark job runs, B runs the same
statement on its table; one second later A is cancelled (``con.cancel()``: what the wire
server's CancelRequest, its statement time limit, the explorer's Cancel and the shell's Ctrl-C
call). Then A's statement again on a connection with ``release_time_limit=3``. Two modes:

* ``untagged`` — before this change (the Spark backend's reads run without a job tag:
  ``SparkBackend._step`` replaced by a no-op): the statement ends when its job returns;
* ``tagged`` — as it is (:mod:`provsql_dp.provenance.backends._spark_jobs`): the cancel and
  the time limit cancel the statement's own jobs (``cancelJobsWithTag``).

Per row: A's seconds from the cancel to its error (or, with the time limit, from its start to
its answer), B's latency and outcome, and the ε each connection was charged.

**Iceberg.** The same ``--rows``-row table written by pyiceberg as an Iceberg table of
``--files`` data files (one append each) and as plain Parquet, each attached on a Spark
connection (``connect(..., engine=spark).attach``): seconds to attach (snapshot written,
key checked) and, for Iceberg, the part spent planning the scan and checking the data files'
footers (:mod:`provsql_dp.provenance.backends._iceberg`), and whether both give the same rows.

Usage: ``python benchmarks/spark_lake.py [--rows 20000] [--files 8] [--smoke]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import threading
import time

SLOW = "SELECT COUNT(*) FROM {t} a JOIN {t} b ON a.g + b.g < 0 WITH EPSILON 1"


def missing() -> str | None:
    try:
        import pyiceberg  # noqa: F401
    except ImportError as e:
        return f"{e.name} is not installed (pip install '.[test,spark]')"
    from provsql_dp.interfaces.pgwire.spark_engine import missing as spark_missing

    return spark_missing()


def _db(spark, tmp, name, n, **kwargs):
    import provsql_dp

    view = f"bench_src_{name}"
    spark.range(n).selectExpr("id", "id % 3 AS g").createOrReplaceTempView(view)
    con = provsql_dp.connect(os.path.join(tmp, f"{name}.duckdb"), engine=spark, **kwargs)
    con.attach("t", view)
    con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 1000")
    return con


def _run(con, out, key):
    t0 = time.monotonic()
    try:
        con.execute(SLOW.format(t="t")).fetchall()
        out[key] = ("ok", t0, time.monotonic())
    except Exception as e:  # noqa: BLE001 - reported in the table
        out[key] = (type(e).__name__, t0, time.monotonic())


def _wait_job(sc, out, timeout=600):
    """Until a Spark job runs (or A already ended: a small table's job is short)."""
    end = time.monotonic() + timeout
    while not sc.statusTracker().getActiveJobsIds() and "a" not in out:
        if time.monotonic() > end:
            raise RuntimeError("no Spark job started")
        time.sleep(0.2)


def _idle(sc):
    while sc.statusTracker().getActiveJobsIds():  # an untagged job still running: wait
        time.sleep(0.2)


def _spent(con):
    return float(con.execute("SHOW PRIVACY BUDGET").fetchall()[0][2])


def cancel_round(a, b, limited, sc):
    """A's statement cancelled while B's runs; then A's under a 3 s release time limit."""
    before = (_spent(a), _spent(b))
    out = {}
    ta = threading.Thread(target=_run, args=(a, out, "a"))
    ta.start()
    _wait_job(sc, out)
    tb = threading.Thread(target=_run, args=(b, out, "b"))
    tb.start()
    time.sleep(1.0)
    cancelled = time.monotonic()
    a.cancel()
    ta.join()
    tb.join()
    charged = (_spent(a) - before[0], _spent(b) - before[1])
    _idle(sc)
    lim = {}
    _run(limited, lim, "a")
    _idle(sc)
    return {"cancel_s": out["a"][2] - cancelled, "a_state": out["a"][0],
            "b_s": out["b"][2] - out["b"][1], "b_state": out["b"][0], "charged": charged,
            "limit_s": lim["a"][2] - lim["a"][1], "limit_state": lim["a"][0]}


def part_cancel(args, tmp, spark):
    from provsql_dp.provenance.backends.spark import SparkBackend

    a = _db(spark, tmp, "a", args.rows)
    b = _db(spark, tmp, "b", max(args.rows // 4, 10))
    limited = _db(spark, tmp, "limited", args.rows, release_time_limit=3)
    tagged = SparkBackend._step
    rows = []
    modes = ("tagged",) if args.smoke else ("untagged", "tagged")
    try:
        for mode in modes:
            SparkBackend._step = (tagged if mode == "tagged"
                                  else lambda self, where=None: contextlib.nullcontext())
            for _ in range(args.repeat):
                rows.append((mode, cancel_round(a, b, limited, spark.sparkContext)))
    finally:
        SparkBackend._step = tagged
        for con in (a, b, limited):
            con.close()
    print(f"cancel on one SparkContext (local[2]): A {args.rows:,} rows, B {args.rows // 4:,}; "
          f"medians of {args.repeat}")
    print(f"{'mode':9} {'A ends after cancel':>20} {'A':>18} {'B latency':>10} {'B':>3} "
          f"{'ε A':>4} {'ε B':>4} {'A, 3 s limit':>13} {'A':>3}")
    for mode in modes:
        mine = [r for m, r in rows if m == mode]
        med = lambda k: statistics.median(r[k] for r in mine)  # noqa: E731
        last = mine[-1]
        print(f"{mode:9} {med('cancel_s'):19.2f}s {last['a_state']:>18} {med('b_s'):9.2f}s "
              f"{last['b_state']:>3} {last['charged'][0]:4g} {last['charged'][1]:4g} "
              f"{med('limit_s'):12.2f}s {last['limit_state']:>3}")
    # B always answers; with a job long enough to be cancelled (not --smoke), A is cancelled
    return all(r["b_state"] == "ok" for _, r in rows) and (args.smoke or all(
        r["a_state"] == "StatementCancelled" for m, r in rows if m == "tagged"))


def part_iceberg(args, tmp, spark):
    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog
    import provsql_dp
    from provsql_dp.provenance.backends import _iceberg

    n, files = args.rows * 50, args.files
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("g", pa.int32()),
                        ("v", pa.float64())])
    root = os.path.join(tmp, "wh")
    os.makedirs(root)
    cat = SqlCatalog("bench", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
    cat.create_namespace("db")
    table = cat.create_table("db.t", schema=schema)
    parquet = os.path.join(tmp, "t_parquet")
    os.makedirs(parquet)
    import pyarrow.parquet as pq

    step = -(-n // files)
    for k in range(files):
        ids = pa.array(range(k * step, min((k + 1) * step, n)), pa.int64())
        part = pa.table([ids, pa.compute.cast(pa.compute.bit_wise_and(ids, 7), pa.int32()),
                         pa.compute.multiply(pa.compute.cast(ids, pa.float64()), 0.5)],
                        schema=schema)
        table.append(part)
        pq.write_table(part, os.path.join(parquet, f"part{k}.parquet"))
    times = {"iceberg": [], "parquet": [], "plan": []}
    counts = {}
    plan = _iceberg.check_files
    for r in range(args.repeat):
        for kind, source in (("parquet", f"parquet.`{parquet}`"),
                             ("iceberg", f"iceberg:{table.metadata_location}")):
            con = provsql_dp.connect(os.path.join(tmp, f"c{kind}{r}.duckdb"), engine=spark)
            spent_planning = [0.0]

            def timed(*a, _spent=spent_planning):
                t = time.perf_counter()
                try:
                    return plan(*a)
                finally:
                    _spent[0] += time.perf_counter() - t

            _iceberg.check_files = timed
            t0 = time.perf_counter()
            con.attach("t", source, primary_key=["id"])
            times[kind].append(time.perf_counter() - t0)
            _iceberg.check_files = plan
            if kind == "iceberg":
                times["plan"].append(spent_planning[0])
            view = con._engine._views["t"]
            counts[kind] = con._engine.spark.sql(
                f"SELECT count(*), sum(v), count(DISTINCT id) FROM {view}").first()[:]
            con.close()
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"\nattach on Spark (local[2]): {n:,} rows in {files} data files, medians of "
          f"{args.repeat}")
    print(f"{'source':9} {'attach s':>9} {'of which footers checked':>25}  same rows")
    print(f"{'parquet':9} {med['parquet']:9.2f} {'':>25}")
    print(f"{'iceberg':9} {med['iceberg']:9.2f} {med['plan']:24.3f}s  "
          f"{counts['iceberg'] == counts['parquet']}")
    return counts["iceberg"] == counts["parquet"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", choices=("cancel", "iceberg"), default=None)
    ap.add_argument("--smoke", action="store_true",
                    help="small sizes, one repeat, the tagged mode only (CI)")
    args = ap.parse_args(argv)
    if args.smoke:
        args.rows, args.files, args.repeat = 600, 2, 1
    why = missing()
    if why:
        print(f"skipped: {why}")
        return 0
    print(f"load average {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} "
          f"{os.getloadavg()[2]:.1f} (2 cores)")
    from pyspark.sql import SparkSession

    t0 = time.perf_counter()
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").config("spark.driver.memory", "1g")
             .config("spark.scheduler.mode", "FAIR")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    print(f"JVM start {time.perf_counter() - t0:.1f} s")
    ok = True
    try:
        with tempfile.TemporaryDirectory(prefix="pdp_spark_lake_") as tmp:
            if args.only in (None, "cancel"):
                ok &= part_cancel(args, tmp, spark)
            if args.only in (None, "iceberg"):
                ok &= part_iceberg(args, tmp, spark)
    finally:
        spark.stop()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
