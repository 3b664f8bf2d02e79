"""Benchmark (issue 30): where the time of the unbounded SUM's bucket pass and of the attach's
primary-key check goes on Spark ``local[2]``, and the alternatives tried, over the Parquet table
of ``spark_scale.py`` (``people(id, age, g, amount)``, written once by Spark, not counted).

Bucket pass (``SELECT SUM(age) FROM people`` protected row by row: each row its own total, a
signed SUM: parts ``p = age < 0``, totals ``c = |age|``):

* ``plain`` — ``SELECT SUM(age)`` in plain Spark SQL (the target's denominator);
* ``sql rows`` — the pass's input alone (``p, c``: a count and a sum of it);
* ``sql ln`` — the same with ``ln c`` per row (no grouping);
* ``keyed, no aggregate`` — every column the engine's pass groups on (``k, m`` from ``ln c``
  and the near-boundary value ``e`` of :func:`~provsql_dp.mechanisms.recursive.buckets.near_sql`)
  computed per row and merely summed: the pass without its hash aggregate;
* ``count by k`` — the cheapest hash aggregate over those rows (one key, ``count(*)``): the floor
  of any bucket histogram built by Spark's ``GROUP BY``;
* ``engine pass, e NULL`` — the engine's pass as it was (``e`` NULL for a total not near a
  boundary: a nullable ``DOUBLE`` grouping key);
* ``engine pass`` — what the release runs now (:func:`provsql_dp.privacy.engine_buckets.
  engine_buckets`, its SQL taken from it: ``e = 0`` when not near, hash aggregate by
  ``(p, k, m, e)`` with ``count, Σ1/c, Σc, min, max``);
* ``engine pass, no min/max`` — the same without ``min c``, ``max c`` (the buckets' safety
  check): what dropping them would save;
* ``native (udaf)``, ``native (rows)`` — the engine's pass as one JVM aggregate
  (``privacy/_spark_native.py``, ``privacy/java/provsqldp/BucketPass.java``; when its jar is
  built): an ``Aggregator`` applied through ``functions.udaf``, and the same table filled per
  partition from Spark's internal rows (``queryExecution().toRdd()``), merged on the driver;
* ``native (columns)`` — the same over the Parquet scan's columnar batches of the bare column
  (``runColumn``: the clamp to ±10^12 done in Java, as the release does for a bare column);
* ``plain amount``, ``native (rows) amount``, ``native (columns) amount`` — the plain SUM and
  the native pass over ``amount`` (10,000 distinct values, against the 90 of ``age``: more
  misses of the pass's memo of 16,384 totals per partition);
* ``arrow export`` — the rows handed to Python workers by ``mapInArrow`` and merely counted: the
  floor of any per-partition numpy histogram;
* ``numpy buckets`` — ``mapInArrow`` per-partition histograms: each batch's ``(k, m)`` by a
  logarithm's guess corrected by comparisons with the public thresholds, ``np.bincount`` for the
  counts and sums, ``ufunc.at`` for min/max, merged per partition (a few dozen rows back).

Besides the wall time, each bucket-pass variant reports CPU per row, read from ``/proc`` (so that
the load of a shared machine cancels out): of the whole driver JVM (which on ``local[2]`` runs
the executors: task threads, JIT compilers, GC) and of its ``Executor task`` threads alone.

Key check (``primary_key=["id"]`` at attach):

* ``count_distinct(struct)`` — the former check: ``count(1) − count(DISTINCT struct(id))``;
* ``group by having`` — ``GROUP BY id HAVING count(*) > 1 LIMIT 1`` (every key shuffled);
* ``bitmaps`` — the check now used for a dense integral key
  (:func:`provsql_dp.provenance.backends._spark_snapshot.check_rows`): ``bitmap_construct_agg``
  per 32,768 values, OR-ed per partition before the shuffle, plus its NULL/range aggregate.

Each figure is the median of ``--repeats`` runs after one warm-up; the load average is printed
(the machine is shared: absolute times are noisy, compare within one run).

Usage::

    nice -n 19 python benchmarks/spark_bucket_pass.py --rows 1e7
    nice -n 19 python benchmarks/spark_bucket_pass.py --rows 1e7 --skip-key-check --no-arrow
    python benchmarks/spark_bucket_pass.py --smoke      # tiny, seconds (CI)
"""

from __future__ import annotations

import argparse
import math
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

import numpy as np  # noqa: E402


def _spark():
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the mapInArrow workers
    s = (SparkSession.builder.master("local[2]").appName("provsql_dp-spark-bucket-pass")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "4").config("spark.driver.memory", "3g")
         .config("spark.sql.ansi.enabled", "false").getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    return s


class _Bins:
    """The public thresholds ``W_j = θe^{βj}/2`` and lattice ``D_m = e^{ln θ + μ + βm}`` over
    every positive double; ``keys(c)``: ``W_k < c ≤ W_{k+1}``, ``D_{m−1} < c ≤ D_m``, guessed
    by a logarithm and decided by comparisons (``np.searchsorted`` costs ~200 ns a total)."""

    def __init__(self, theta: float, beta: float, mu: float):
        lo, hi = math.log(5e-324) - 1.0, math.log(sys.float_info.max) + 1.0
        self.j0 = math.floor((lo - math.log(theta / 2)) / beta) - 1
        js = np.arange(self.j0, math.ceil((hi - math.log(theta / 2)) / beta) + 2, dtype=float)
        with np.errstate(over="ignore", under="ignore"):
            self.w = np.maximum.accumulate(np.exp(js * beta) * theta / 2)
        self.m0 = math.floor((lo - math.log(theta) - mu) / beta) - 1
        m1 = math.ceil((hi - math.log(theta) - mu) / beta) + 1
        base = math.log(theta) + mu
        self.d = np.maximum.accumulate(np.array(
            [math.exp(base + beta * m) if base + beta * m <= 709 else math.inf
             for m in range(self.m0, m1 + 1)]))
        self.guess = ((math.log(theta / 2) + beta * self.j0, 1 / beta),
                      (base + beta * self.m0, 1 / beta))

    def keys(self, c):
        lnc, out = np.log(c), []
        for (start, inv), bounds in zip(self.guess, (self.w, self.d)):
            i = np.clip(np.floor((lnc - start) * inv).astype(np.int64), 0, len(bounds) - 2)
            while True:
                up, down = c > bounds[i + 1], c <= bounds[i]
                if not (up.any() or down.any()):
                    break
                i += up
                i -= down
            out.append(i + 1)
        return out[0] + self.j0 - 1, out[1] + self.m0


def _histogram(bins: _Bins, p, c) -> dict:
    """One batch's buckets ``(p, k, m) → n, Σ1/c, Σc, min, max`` (positive finite totals)."""
    ok = (c > 0) & (c < np.inf)
    p, c = p[ok], c[ok]
    k, m = bins.keys(c)
    d = m - k
    cols = [p, k, d]
    lows = [int(x.min()) for x in cols]
    spans = [int(x.max()) - lo + 1 for x, lo in zip(cols, lows)]
    flat = np.zeros(len(c), dtype=np.int64)
    for x, lo, span in zip(cols, lows, spans):
        flat = flat * span + (x - lo)
    n = np.bincount(flat, minlength=math.prod(spans))
    present = np.flatnonzero(n)
    index = np.zeros(len(n), dtype=np.int64)
    index[present] = np.arange(len(present))
    inv = index[flat]
    lo_c, hi_c = np.full(len(present), np.inf), np.full(len(present), -np.inf)
    np.minimum.at(lo_c, inv, c)
    np.maximum.at(hi_c, inv, c)
    return {"key": present, "n": n[present].astype(float),
            "inv": np.bincount(inv, 1 / c, len(present)),
            "tot": np.bincount(inv, c, len(present)), "lo": lo_c, "hi": hi_c}


class _Cpu:
    """CPU seconds used so far by the driver JVM, and by its ``Executor task`` threads alone
    (``/proc``; a thread that ended since is missed by the second figure: tasks reuse a pool)."""

    def __init__(self, pid: int | None):
        self.pid, self.tick = pid, os.sysconf("SC_CLK_TCK")

    def __call__(self) -> tuple[float, float]:
        if self.pid is None:
            return float("nan"), float("nan")

        def used(stat: str) -> float:
            f = stat.rsplit(")", 1)[1].split()
            return (int(f[11]) + int(f[12])) / self.tick

        total, tasks = used(Path(f"/proc/{self.pid}/stat").read_text()), 0.0
        for d in Path(f"/proc/{self.pid}/task").iterdir():
            try:
                if (d / "comm").read_text().startswith("Executor task"):
                    tasks += used((d / "stat").read_text())
            except OSError:
                continue
        return total, tasks


def _time(fn, repeats: int, warm: bool, cpu=None) -> tuple[float, float, float]:
    """Median wall seconds, and median CPU seconds of the JVM and of its task threads."""
    cpu = cpu or (lambda: (float("nan"), float("nan")))
    if warm:
        fn()
    times, jvm, tasks = [], [], []
    for _ in range(repeats):
        c0, t = cpu(), time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        c1 = cpu()
        jvm.append(c1[0] - c0[0])
        tasks.append(c1[1] - c0[1])
    return statistics.median(times), statistics.median(jvm), statistics.median(tasks)


def engine_pass_sql(rows_sql: str, params: dict, near_null: bool = False,
                    min_max: bool = True) -> str:
    """The bucket pass that :func:`provsql_dp.privacy.engine_buckets.engine_buckets` runs over
    the rows ``(p, c)`` of ``rows_sql`` (its own SQL, recorded from a call, in Spark's dialect);
    ``near_null``: with ``e`` NULL for a total not near a boundary (as it was before);
    ``min_max=False``: without the buckets' ``min c``, ``max c``."""
    import sqlglot

    from provsql_dp.privacy.engine_buckets import NO_ROWS, engine_buckets

    seen = []
    engine_buckets(lambda sql, p=None: seen.append(sql) or NO_ROWS, rows_sql, None, params, 2,
                   1, inline=True, positive=True)
    sql = seen[0]
    if near_null:
        sql = sql.replace("ELSE 0.0::DOUBLE END AS e", "END AS e")
    if not min_max:
        sql = sql.replace(", min(c) AS lo, max(c) AS hi", "")
    return sqlglot.transpile(sql, read="duckdb", write="spark")[0]


def _native_entries(spark) -> dict:
    """BucketPass's entry points (``run``: an Aggregator applied as a udaf; ``runRows``: one
    table per partition over Spark's internal rows) when the jar is built, else {}."""
    from provsql_dp.privacy import _spark_native

    method = _spark_native._method(spark)
    if method is None:
        return {}
    return method  # by name: run, runRows, runColumn


def _native_run(spark, method, weights_sql: str, params: dict):
    """The native pass (``privacy/_spark_native.py``) over ``weights_sql``, bucket rows out."""
    from provsql_dp.privacy import _spark_native

    spec = _spark_native.spec_for(params, signed=True)
    sc = spark.sparkContext

    def go():
        df = spark.sql(weights_sql)
        qe = df._jdf.queryExecution()
        values = {"run": [df._jdf, "w", spec], "runRows": [qe, spec],
                  "runColumn": [qe, qe, spec, -1e12, 1e12]}[method.getName()]
        args = sc._gateway.new_array(sc._jvm.java.lang.Object, len(values))
        for j, v in enumerate(values):
            args[j] = v
        return bytes(method.invoke(None, args))
    return go


def run(rows: int, repeats: int, workdir: str, warm: bool, key_check: bool = True,
        arrow: bool = True, variants=None) -> list[tuple]:
    from pyspark.sql import functions as F

    from backends import _jvm_pid
    from provsql_dp.mechanisms.recursive.buckets import bucket_sql, near_sql, params_for
    from provsql_dp.provenance.backends._spark_snapshot import check_rows

    spark = _spark()
    cpu = _Cpu(_jvm_pid())
    parquet = os.path.join(workdir, f"people_{rows}.parquet")
    if not os.path.exists(os.path.join(parquet, "_SUCCESS")):
        spark.range(rows).selectExpr(
            "id", "CAST(pmod(xxhash64(id), 90) AS INT) AS age", "CAST(pmod(id, 50) AS INT) AS g",
            "CAST(pmod(xxhash64(id, 7), 10000) AS DOUBLE) / 100 AS amount") \
            .write.mode("overwrite").parquet(parquet)
    df = spark.read.parquet(parquet)
    df.createOrReplaceTempView("src")
    params = params_for(1.0, 2, "node")
    ln, k, m = bucket_sql("c", params["theta"], params["beta"], params["mu"])
    ln = "ln(c)"  # the engine's: c is positive and finite here (engine_buckets(positive=True))
    k, m = (e.replace("::DOUBLE", "D") for e in (k, m))
    fkm, near = (e.replace("::DOUBLE", "D") for e in near_sql(
        params["theta"], params["beta"], params["mu"], params["eps2"]))
    rows_sql = ("SELECT CAST(age < 0 AS INT) AS p, CAST(abs(age) AS DOUBLE) AS c FROM src "
                "WHERE age <> 0")
    keyed = (f"SELECT p, c, {k} AS k, {m} AS m, CASE WHEN {near} THEN c ELSE 0.0D END AS e "
             f"FROM (SELECT p, c, l, {fkm} FROM (SELECT p, c, {ln} AS l FROM ({rows_sql})))")
    bins = _Bins(params["theta"], params["beta"], params["mu"])
    frame = spark.sql(rows_sql)

    def export(batches):
        import pyarrow as pa

        n = 0
        for b in batches:
            n += b.num_rows
        yield pa.RecordBatch.from_pydict({"n": [n]})

    def histogram(batches):
        import pyarrow as pa

        total = 0.0
        for b in batches:
            h = _histogram(bins, b.column(0).to_numpy(), b.column(1).to_numpy())
            total += float(h["n"].sum())
        yield pa.RecordBatch.from_pydict({"n": [total]})

    def q(sql):
        return lambda: spark.sql(sql).collect()

    checks = {
        "count_distinct(struct)": lambda: df.agg(
            (F.count(F.lit(1)) - F.count_distinct(F.struct(F.col("id")))).alias("dup"),
            F.sum(F.when(F.col("id").isNull(), 1).otherwise(0))).first(),
        "group by having": lambda: df.groupBy("id").count().where("count > 1").limit(1).collect(),
        "bitmaps": lambda: check_rows(df, "people", ("id",)),
    }
    plan = [("bucket pass", "plain", q("SELECT SUM(age) FROM src")),
            ("bucket pass", "sql rows", q(f"SELECT count(*), sum(c) FROM ({rows_sql})")),
            ("bucket pass", "sql ln", q(f"SELECT sum({ln}) FROM ({rows_sql})")),
            ("bucket pass", "keyed, no aggregate",
             q(f"SELECT count(*), sum(k), sum(m), sum(e) FROM ({keyed})")),
            ("bucket pass", "count by k", q(f"SELECT k, count(*) FROM ({keyed}) GROUP BY k")),
            ("bucket pass", "engine pass, e NULL",
             q(engine_pass_sql(rows_sql, params, near_null=True))),
            ("bucket pass", "engine pass", q(engine_pass_sql(rows_sql, params))),
            ("bucket pass", "engine pass, no min/max",
             q(engine_pass_sql(rows_sql, params, min_max=False)))]
    native = _native_entries(spark)
    for entry, label in (("run", "native (udaf)"), ("runRows", "native (rows)")):
        if entry in native:
            plan.append(("bucket pass", label, _native_run(
                spark, native[entry], "SELECT CAST(age AS DOUBLE) AS w FROM src", params)))
    # the same over a column of 10,000 distinct values (amount), against its plain SUM: the
    # native pass remembers the keys of 4,096 totals per partition (a direct-mapped memo)
    plan.append(("bucket pass", "plain amount", q("SELECT SUM(amount) FROM src")))
    if "runColumn" in native:
        plan.append(("bucket pass", "native (columns)", _native_run(
            spark, native["runColumn"], "SELECT age FROM src", params)))
    if "runRows" in native:
        plan.append(("bucket pass", "native (rows) amount", _native_run(
            spark, native["runRows"], "SELECT amount AS w FROM src", params)))
    if "runColumn" in native:
        plan.append(("bucket pass", "native (columns) amount", _native_run(
            spark, native["runColumn"], "SELECT amount FROM src", params)))
    if arrow:
        plan += [("bucket pass", "arrow export",
                  lambda: frame.mapInArrow(export, "n LONG").collect()),
                 ("bucket pass", "numpy buckets",
                  lambda: frame.mapInArrow(histogram, "n DOUBLE").collect())]
    if key_check:
        plan += [("key check", name, fn) for name, fn in checks.items()]
    if variants:
        plan = [x for x in plan if x[1] in variants]
    out = []
    for part, name, fn in plan:
        wall, jvm, tasks = _time(fn, repeats, warm, cpu if part == "bucket pass" else None)
        out.append((part, name, wall, jvm * 1e9 / rows, tasks * 1e9 / rows))
        print(f"  {part:<12} {name:<24} {wall:8.2f} s", file=sys.stderr, flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--workdir", default=None, help="keep the Parquet table there")
    ap.add_argument("--skip-key-check", action="store_true", help="the bucket pass only")
    ap.add_argument("--no-arrow", action="store_true",
                    help="without the mapInArrow variants (slow: rows sent to Python workers)")
    ap.add_argument("--variants", default=None,
                    help="only these variants, comma-separated (e.g. 'plain,native (rows)')")
    ap.add_argument("--smoke", action="store_true",
                    help="10,000 rows, one run without warm-up; says so and exits 0 without "
                         "pyspark or Java (CI)")
    args = ap.parse_args()
    if args.smoke:
        args.rows, args.repeats = 1e4, 1
        from backends import _has_spark

        if not _has_spark():
            print("spark_bucket_pass: skipped, pyspark or Java is missing (pip install '.[spark]')")
            return
    workdir = args.workdir or tempfile.mkdtemp(prefix="provsql_dp_spark_bucket_pass_")
    os.makedirs(workdir, exist_ok=True)
    try:
        out = run(int(args.rows), args.repeats, workdir, warm=not args.smoke,
                  key_check=not args.skip_key_check, arrow=not args.no_arrow,
                  variants=args.variants.split(",") if args.variants else None)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    load = os.getloadavg()
    print(f"rows={int(args.rows):,}  local[2]  medians of {args.repeats}  load average "
          f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    base = {part: s for part, name, s, *_ in out if name in ("plain", "count_distinct(struct)")}
    print(f"{'part':<12} {'variant':<24} {'s':>8} {'ratio':>6} {'JVM ns/row':>10} "
          f"{'task ns/row':>11}")
    for part, name, s, jvm, tasks in out:
        cpu = f" {jvm:>10.1f} {tasks:>11.1f}" if part == "bucket pass" else ""
        print(f"{part:<12} {name:<24} {s:>8.2f} {s / base[part]:>6.2f}{cpu}")
    print("(ratio: to plain SUM for the bucket pass, to the former check for the key check; "
          "CPU per row: of the driver JVM, and of its executor task threads)")


if __name__ == "__main__":
    main()
