"""Benchmark (issue 30): the everyday private aggregates on Spark ``local[2]`` against the same plain
Spark SQL query, over a Parquet table on local disk; attach once, reuse after.

The table ``people(id BIGINT, age INT, g INT, amount DOUBLE)`` — ``g`` in 0…49, ``amount`` in
[0, 100) — is written as Parquet by Spark itself (``spark.range``, not counted). Then, in one
process and one Spark session (``local[2]``, shuffle partitions 4):

* **JVM start** — ``SparkSession.builder…getOrCreate()``, reported apart;
* **attach** — ``con.attach("people", …, primary_key=["id"])`` by the curator: the Parquet
  snapshot written once, the key checked once; **reuse** — a second ``connect(…, engine=spark)``
  on the same catalog (an analyst's), which reads the recorded snapshot (nothing copied or
  checked);
* four private statements, each against the same query in plain Spark SQL on the source
  Parquet (what an analyst without privacy would run; its result collected to the driver):

  ====================  ============================================  =====================
  workload              private statement (WITH EPSILON 1)             route
  ====================  ============================================  =====================
  ``count``             ``SELECT COUNT(*) … WHERE age > 40``           Laplace
  ``bounded_sum``       ``SELECT SUM(amount) …`` (bounds [0, 100])     Laplace
  ``group_by_50``       ``SELECT g, COUNT(*) … GROUP BY g`` (50 keys)  Laplace, per group
  ``unbounded_sum``     ``SELECT SUM(age) …`` (no bounds declared)     single-owner closed form
  ====================  ============================================  =====================

Each timing is the median of ``--repeats`` runs after one warm-up. ``crossed MB`` is the Arrow
data that came back to the driver's Python process per run
(:attr:`~provsql_dp.provenance.backends.spark.SparkBackend.bytes_received`); peaks are the
resident high-water marks (``VmHWM``) of the Python process and of the driver JVM (which, on
``local[2]``, also runs the executors: an upper bound of what a cluster driver holds).

Measured (2026-11-28, ``local[2]`` on the shared 2-core machine, load average 7–24: absolute
times are slow and noisy; 10^7: medians of 3, 10^8: one run after a warm-up)::

    rows    JVM s  attach s  reuse s | count        bounded_sum  group_by_50  unbounded_sum
    10^6     30.6      26.3     0.83 | 1.20 / 1.00  3.19 / 1.10  1.77 / 2.68  8.44 / 1.27
    10^7     44.5      94.6     0.43 | 2.62 / 2.84  2.32 / 1.41  1.31 / 1.90  42.4 / 1.31 (*)
    10^7     27.3      73.0     1.97 | 0.63 / 0.99  1.27 / 0.77  1.20 / 1.05  2.34 / 0.71 (†)
    10^8     70.0     916.8     1.68 | 10.1 / 11.8  6.98 / 2.82  12.3 / 7.90  38.4 / 4.28 (‡)
    10^8     16.4         –     2.62 |                                        15.5 / 2.30 (†)
    10^8     43.1     438.0     2.32 | 16.3 / 13.1  7.52 / 7.46  7.23 / 6.66  22.4 / 3.04 (§)
    10^8     14.5     157.2     0.53 | 4.60 / 3.53  4.53 / 2.10  3.13 / 3.75  14.4 / 1.94 (¶)
    10^8      8.7         –     1.17 | 0.84 / 1.74  2.33 / 1.03  1.40 / 2.52  5.95 / 0.57 (¶)
    10^8      9.5         –     1.23 |                                        2.88 / 1.43 (#)
    10^8      7.1         –     1.04 |                                        1.01 / 0.79 (#)

(ours / plain Spark SQL, seconds; attach: once, by the curator, kept in ``--workdir`` for the
later runs; crossed to the driver: 0.00 MB everywhere — a few hundred bytes: one noisy number
per group, or for the unbounded SUM a few dozen bucket rows ``(g, p, k, m, n, Σ1/c, Σc, min,
max)``; driver peaks: Python 243–252 MB, the JVM 0.9–3.8 GB, which on ``local[2]`` also runs
the two executors.) (*) Before: the unbounded SUM's per-owner totals brought back as a
histogram after Spark's ``GROUP BY`` owner (a shuffle of every row); before that, one total per
participant: 64.9 s, 191 MB crossed, Python peak 1,173 MB. (†) The single-owner closed form as
Spark aggregates (:mod:`provsql_dp.privacy.engine_buckets`): no ``GROUP BY`` owner when each
row is its own participant, one pass computing each row's part and bucket and one hash
aggregate over a few dozen buckets. (‡) The same at a load average of 15–24, before the pass
lost its pushed-down filter and its ``ORDER BY``.

The ≤ 3× target holds for COUNT, bounded SUM and ``GROUP BY`` at both sizes; the unbounded SUM is
at 3.2–3.4× at 10^7 and 6.7× at 10^8 (7.4–11× since, see (¶)): against a plain ``SUM`` (one
vectorised column sum, ~23 ns a row at 10^8) the pass pays per row a logarithm and a hash-aggregate
update (~150 ns a row in all; measured apart at 10^8 under load: the scan without them 3.1 s, with
the logarithms but no hash aggregate 12.6 s, with both 20.3 s, plain 3.0–4.2 s). Going below would
need the bucket histogram built without Spark's row-at-a-time hash aggregate; per partition in
numpy through ``mapInArrow`` was measured and loses: handing the rows to the Python workers alone
costs more than the whole SQL pass (``benchmarks/spark_bucket_pass.py``,
``spark_bucket_pass_measured.md``). (§) Another session, load average 15–21, the attach's key check
by Spark's bitmaps (:func:`~provsql_dp.provenance.backends._spark_snapshot.check_rows`): attach 917
→ 438 s, snapshot write included; driver peaks Python 248 MB, JVM 3.7 GB (``spark.driver.memory``
3g); bounded SUM and ``GROUP BY`` at 1.0–1.1× this time (the plain queries were slower than in the
run above: noise of the load). (¶) 2026-11-29, load average 6.5–8, the near-boundary column of the
bucket pass non-NULL (28 % less CPU in the pass); first one run after a warm-up, then medians of 3
over the same attach, with the CPU seconds of the driver JVM and the Python process per statement
(``CPU s``, plain / ours — the load stretches wall times, much less CPU times): count 1.77 / 1.54,
bounded SUM 1.12 / 1.53, ``GROUP BY`` 1.65 / 1.65, **unbounded SUM 0.62 / 6.86 (11×)**. The plain
``SUM(age)`` needs ~6 ns of CPU a row (3.8 in its task threads), the bucket pass ~69: the ≤ 3×
target is out of reach for it, and ``spark_bucket_pass_measured.md`` says by how much each operator
costs and why. (#) 2026-11-29, the native bucket pass (``privacy/_spark_native.py``: one JVM
aggregate, its jar built by ``javac``): over the weights' rows, medians of 3, load 6.7–7.4, 2.0×
(CPU 1.05 / 2.35 s, 2.2×); then over the Parquet scan's columnar batches (a bare column),
medians of 5, load ≈ 3, **1.3× (CPU 0.88 / 1.08 s, 1.2×)**; the same statement with the SQL
pass (``PROVSQL_DP_NATIVE=0``, the second ``unbounded_sum`` row this script prints) 6.7× and
5.2× in those runs (``spark_bucket_pass_measured.md``).

Usage::

    nice -n 19 python benchmarks/spark_scale.py --rows 1e7     # one size
    nice -n 19 python benchmarks/spark_scale.py --rows 1e8 --repeats 1 --workdir /tmp/me
                                          # table and catalog kept there for the next run
    python benchmarks/spark_scale.py --smoke                   # tiny, seconds (CI)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # this checkout's provsql_dp, not an installed one
    sys.path.insert(0, str(ROOT))

from backends import _hwm, _jvm_pid, _reset_hwm  # noqa: E402  (same folder)
from spark_bucket_pass import _Cpu  # noqa: E402

WORKLOADS = {  # name → (private statement, the same query in plain Spark SQL)
    "count": ("SELECT COUNT(*) FROM people WHERE age > 40",
              "SELECT COUNT(*) FROM src WHERE age > 40"),
    "bounded_sum": ("SELECT SUM(amount) FROM people", "SELECT SUM(amount) FROM src"),
    "group_by_50": ("SELECT g, COUNT(*) FROM people GROUP BY g",
                    "SELECT g, COUNT(*) FROM src GROUP BY g"),
    "unbounded_sum": ("SELECT SUM(age) FROM people", "SELECT SUM(age) FROM src"),
}


def _spark():
    from pyspark.sql import SparkSession

    s = (SparkSession.builder.master("local[2]").appName("provsql_dp-spark-scale")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "4").config("spark.driver.memory", "3g")
         .getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    return s


def _median(fn, repeats: int, warm: bool = True, cpu=None) -> tuple[float, object, float]:
    """Median wall seconds, the last result, and the median CPU seconds of the driver JVM and
    of this Python process together (``cpu``: a :class:`spark_bucket_pass._Cpu`; nan without):
    the load of a shared machine stretches the wall time, much less the CPU time."""
    out = fn() if warm else None  # warm-up
    times, used = [], []
    for _ in range(repeats):
        c0 = cpu()[0] + time.process_time() if cpu else float("nan")
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
        used.append((cpu()[0] + time.process_time() if cpu else float("nan")) - c0)
    return statistics.median(times), out, statistics.median(used)


def run(rows: int, repeats: int, workdir: str, warm: bool = True, only=None) -> dict:
    import numpy as np

    import provsql_dp
    from provsql_dp.privacy import _spark_native

    t = time.perf_counter()
    spark = _spark()
    jvm_s = time.perf_counter() - t
    parquet = os.path.join(workdir, f"people_{rows}.parquet")
    if not os.path.exists(os.path.join(parquet, "_SUCCESS")):  # kept in a --workdir: made once
        spark.range(rows).selectExpr(
            "id", "CAST(pmod(xxhash64(id), 90) AS INT) AS age", "CAST(pmod(id, 50) AS INT) AS g",
            "CAST(pmod(xxhash64(id, 7), 10000) AS DOUBLE) / 100 AS amount") \
            .write.mode("overwrite").parquet(parquet)
    spark.read.parquet(parquet).createOrReplaceTempView("src")
    catalog = os.path.join(workdir, f"catalog_{rows}.duckdb")
    attach_s = float("nan")  # nan: attached by an earlier run over the same --workdir
    if not os.path.exists(catalog):
        cur = provsql_dp.connect(catalog, engine=spark)
        t = time.perf_counter()
        cur.attach("people", "src", primary_key=["id"])
        attach_s = time.perf_counter() - t
        keys = ", ".join(str(i) for i in range(50))
        cur.execute("PROTECT TABLE people; SET PRIVACY BUDGET 1e9 FOR USER ann; "
                    "SET BOUNDS ON people (amount) BETWEEN 0 AND 100; "
                    f"SET GROUP KEYS ON people (g) VALUES ({keys})")
        cur.commit()
        cur.close()
    t = time.perf_counter()
    con = provsql_dp.connect(catalog, engine=spark, role="analyst", user="ann")
    reuse_s = time.perf_counter() - t
    con._rng = np.random.default_rng(1)
    jvm = _jvm_pid()
    cpu = _Cpu(jvm)
    _reset_hwm()
    if jvm:
        _reset_hwm(jvm)
    out = {"rows": rows, "jvm_s": jvm_s, "attach_s": attach_s, "reuse_s": reuse_s, "work": []}
    for name, (private, plain) in WORKLOADS.items():
        if only and name != only:
            continue
        plain_s, _, plain_cpu = _median(lambda: spark.sql(plain).collect(), repeats, warm, cpu)
        mech = []
        # the unbounded SUM twice: its bucket pass native (the jar, when built) and in SQL
        for bucket_pass in (["native", "sql"] if name == "unbounded_sum" else [None]):
            if bucket_pass == "sql":
                os.environ["PROVSQL_DP_NATIVE"] = "0"
                _spark_native._loaded.clear()
            passes = []

            def ours():
                cur = con.execute(f"{private} WITH EPSILON 1")
                mech[:] = [cur.privacy.mechanism]
                passes[:] = [cur.privacy.bucket_pass]
                return cur.fetchall()

            got0 = con._engine.bytes_received
            ours_s, _, ours_cpu = _median(ours, repeats, warm, cpu)
            os.environ.pop("PROVSQL_DP_NATIVE", None)
            _spark_native._loaded.clear()
            crossed = (con._engine.bytes_received - got0) / (repeats + warm) / 2**20
            route = mech[0] + (f" ({passes[0]})" if passes[0] else "")
            out["work"].append({"workload": name, "mechanism": route, "plain_s": plain_s,
                                "ours_s": ours_s, "crossed_mb": crossed, "plain_cpu": plain_cpu,
                                "ours_cpu": ours_cpu})
    out["py_peak_mb"] = _hwm()
    out["jvm_peak_mb"] = _hwm(jvm) if jvm else float("nan")
    con.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", choices=sorted(WORKLOADS), default=None)
    ap.add_argument("--smoke", action="store_true",
                    help="10,000 rows, one run without warm-up; says so and exits 0 without "
                         "pyspark or Java (CI)")
    ap.add_argument("--workdir", default=None,
                    help="keep the generated Parquet table and the attached catalog there and "
                         "reuse them in later runs (default: a temporary directory, removed)")
    args = ap.parse_args()
    if args.smoke:
        args.rows, args.repeats = 1e4, 1
        from backends import _has_spark

        if not _has_spark():
            print("spark_scale: skipped, pyspark or Java is missing (pip install '.[spark]')")
            return
    workdir = args.workdir or tempfile.mkdtemp(prefix="provsql_dp_spark_scale_")
    os.makedirs(workdir, exist_ok=True)
    try:
        r = run(int(args.rows), args.repeats, workdir, warm=not args.smoke, only=args.only)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    attach = (f"{r['attach_s']:.1f} s" if r["attach_s"] == r["attach_s"]  # NaN: --workdir's
              else "reused (attached by an earlier run in --workdir)")
    print(f"rows={r['rows']:,}  JVM start {r['jvm_s']:.1f} s  attach (snapshot + key check, "
          f"once) {attach}  reuse by a later connection {r['reuse_s']:.2f} s")
    print(f"{'workload':<14} {'route':<25} {'plain s':>8} {'ours s':>8} {'ratio':>6} "
          f"{'crossed MB':>10} {'CPU s':>15} {'CPU ratio':>9}")
    for w in r["work"]:
        print(f"{w['workload']:<14} {w['mechanism']:<25} {w['plain_s']:>8.2f} {w['ours_s']:>8.2f} "
              f"{w['ours_s'] / w['plain_s']:>6.1f} {w['crossed_mb']:>10.2f} "
              f"{w['plain_cpu']:>6.2f} / {w['ours_cpu']:>6.2f} "
              f"{w['ours_cpu'] / w['plain_cpu'] if w['plain_cpu'] else float('nan'):>9.1f}")
    print(f"driver peaks: Python {r['py_peak_mb']:.0f} MB, JVM (driver + local executors) "
          f"{r['jvm_peak_mb']:.0f} MB")


if __name__ == "__main__":
    main()
