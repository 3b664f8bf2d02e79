"""Benchmark: the same private work on the two capture backends, DuckDB and Spark ``local[2]``.

Workloads
---------
* ``triangles`` — the triangle-listing K-relation of ca-HepPh (``PROTECT TABLE edge BY (src, dst)
  AS node``, the query of ``benchmarks/provenance.py``): ``con.provenance(TRIANGLES)``, every
  triangle with its three participants;
* ``count`` — ``SELECT COUNT(*) FROM people WHERE age > 40 WITH EPSILON 1`` over 10^7 rows of a
  one-row-per-person table (the Laplace fast path: one number crosses back).
* ``distinct`` — ``SELECT DISTINCT e1.src AS a FROM edge e1 JOIN edge e2 ON e1.dst = e2.src WHERE
  e1.src < e2.dst AND e2.dst % 10 = 0`` on ca-HepPh: a grouped capture (1.45 million derivations,
  8,790 tuples) whose middle and end participants come back from slot columns — on Spark as ids
  the engine looked up, with tuples ranked inside hash partitions.
* ``release`` — ``SELECT COUNT(*)`` of the triangles of ``--graph`` (default ca-HepPh) ``WITH
  EPSILON 1`` under ``--privacy`` node or edge (``PROTECT TABLE edge BY (src, dst) AS node`` /
  ``PROTECT TABLE edge``): the recursive mechanism end to end (capture, participant ranking,
  LPs, noise) with the generator seeded alike (``--seed``) on both engines; the table ends with
  whether the released values are equal. The edge table is ``load_edges``' (one row per
  undirected edge, src < dst); Spark receives the same rows and rowids (edge privacy's
  participants are rows). One timed run (``--repeats`` is ignored): a release is minutes.

How it measures
---------------
One subprocess per (workload, backend). The data is built in the engine itself (DuckDB: loaded
from the edge file / ``range``; Spark: a DataFrame from the same edge arrays / ``spark.range``,
attached with ``con.attach``, which snapshots it). Then one warm-up and ``--repeats`` timed runs:
median wall time (``time.perf_counter``). Peak driver memory is the resident high-water mark
(``VmHWM``, reset through ``/proc/self/clear_refs`` after the build) of the Python process and,
for Spark, of its JVM (the driver JVM runs the ``local[2]`` executors too, so its figure bounds
what a cluster driver would hold from above). ``crossed MB`` is the Arrow data the Spark driver's
Python process received per run (:attr:`SparkBackend.bytes_received`).

One run (2026-11-23, 2 cores shared with other jobs — the machine was loaded; medians of 3)::

    workload   backend     result  build s  median s py peak MB JVM peak MB crossed MB
    triangles  duckdb     3358499      0.9      1.61        801           -        0.0
    triangles  spark      3358499     30.0     10.36        568        2065       77.0
    count      duckdb     5446351      0.8      0.17        279           -        0.0
    count      spark      5443161     17.7      0.85        265        1703        0.0

(``build s`` on Spark includes starting the JVM and snapshotting the table. The count's "0.0"
is a few hundred bytes: one number per group.) Split of one triangle capture, timed separately:
DuckDB 0.98 s in the engine (query and fetch) + 0.52 s of numpy on the driver; Spark 6.6 s in
Spark (query and Arrow transfer of 77 MB) + 0.35 s of numpy; the K-relation itself holds 231 MB
of arrays on the driver either way.

What a cluster would change. Everything per row runs in Spark's executors and scales out with
them: the scans, the joins of the derivation query (the three-way self-join of 237,000 directed
edges is where the 6.6 s go on ``local[2]``), filters, the clamps and the total-evaluation guards,
the ``GROUP BY`` owner of the single-owner path, the per-group counts of the Laplace path, and
the ``DISTINCT`` of the participant dictionaries. What stays on the driver is proportional to the
*output* of the capture, not to its input: for the Laplace and single-owner paths one number per
group or one total per participant (here a few hundred bytes for 10^7 rows — the count's driver
time is Spark's fixed cost of two or three small jobs, ≈0.5 s, which a cluster does not reduce);
for a general query, the K-relation — 24 bytes per derivation for three participant keys (77 MB
for ca-HepPh's 3.36 million triangles), then the numpy assembly (≈0.4–0.5 s here, ≈0.15 µs per
derivation) and the recursive mechanism's LPs. So a cluster shortens the 6.6 s of Spark work
roughly with the number of executor cores, leaves the ≈1 s of transfer-and-assembly and the LPs
as they are, and bounds the driver's memory by the K-relation (≈70 bytes per derivation in
numpy, 231 MB here), not by the tables.

Participant ids and tuple ids in the engine (issue 16). Before, a slot column crossed back as its
raw key (mapped to an id by numpy on the driver) and a grouped capture numbered its tuples with one
global ``dense_rank`` window, which Spark runs in a single partition. Now the slot is joined in
Spark to its domain's sorted dictionary (a small broadcast view) and crosses back as an INT id,
and tuples are ranked inside hash partitions of their discriminators (no global window, no
global ORDER BY). ``distinct`` before → after, same loaded machine, medians of 3::

    backend   before s  after s  py peak MB   JVM peak MB   crossed MB
    duckdb        1.68     1.81  716 → 690              -            -
    spark         7.80    11.65* 638 → 642    2147 → 2659  38.8 → 33.3

(*) That "after" run still ended in a global ORDER BY, which makes Spark run the
capture twice (once to sample range partitions); with it removed, one session timing the four
combinations gave 13.3 s (driver ids, global rank), 11.8 s (driver ids, partitioned), 11.8 s
(engine ids, global rank), 13.3 s (both in the engine): on ``local[2]`` the difference is within
the machine's noise. What changes is where the work sits: nothing in a grouped capture now needs
one partition, and the driver receives 24 instead of 28 bytes per derivation here.

Seeded releases (issue 30, item 3: participants ranked in Spark, 64-bit ids, the capture streamed
as Arrow batches; 2026-11-28, load average 16 on the 2 shared cores, one run each, seed 7)::

    workload     backend     result  build s  median s py peak MB JVM peak MB crossed MB
    release/edge duckdb     3358473      2.2     57.03       1714           -        0.0   ca-HepPh
    release/edge spark      3358473     92.3    100.57       1479        1171       38.4   ca-HepPh
    release/node duckdb       40633      0.6      2.26        212           -        0.0   ca-GrQc
    release/node spark        40633     98.8     23.84        287         789        0.6   ca-GrQc

ca-HepPh node-private (3,358,499 triangles, 12,006 participants), seed 7: DuckDB released 3441968
in 306.3 s (load 16); Spark released 3441968 in 89.9 s (a second run, load 7; build 57.7 s, Python
peak 1897 MB, JVM 1506 MB, 38.4 MB crossed) — equal. A first Spark run beside a test session
(load 16) released 5, a data-independent fallback (the mechanism's LPs have 120 s each; that
run did not yet print incidents, now reported under the table). Captured side by side, the two
K-relations are identical (same 3,358,499 annotations as a multiset, weights and participant
numbering; capture 2.7 s on DuckDB, 19.2 s on Spark).

The released values are equal (``median s`` is the one release statement end to end: capture,
ranking, LPs, noise; ``build s`` on Spark is the JVM start and the snapshot, slow here because of
the load). On Spark the driver's Python peak is below DuckDB's: the participant list is never
built, and 38 MB of ids crossed back for 3.36 million triangles (three INT ids each).

Usage::

    python benchmarks/backends.py                      # both workloads, both backends
    python benchmarks/backends.py --only count --rows 1e6 --repeats 3
    python benchmarks/backends.py --only release --graph ca-HepPh --privacy edge --seed 7
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # this checkout's provsql_dp, not an installed one
    sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data" / "graphs"
if not DATA.exists():
    DATA = Path("/work/shared/data/graphs")

TRIANGLES = (
    "SELECT e1.src AS a, e1.dst AS b, e2.dst AS c "
    "FROM edge e1 JOIN edge e2 ON e1.dst = e2.src "
    "JOIN edge e3 ON e1.src = e3.src AND e2.dst = e3.dst "
    "WHERE e1.src < e1.dst AND e2.src < e2.dst"
)
COUNT = "SELECT COUNT(*) FROM people WHERE age > 40 WITH EPSILON 1"
#: a grouped capture: the nodes that start a 2-path (1.45 million derivations, 8,790 tuples),
#: each annotated by the OR of its paths' monomials {a, middle, end}; the middle and end
#: participants are read from slot columns (not output values), so the query exercises the
#: engine's participant ids and the DISTINCT's tuple ids
#: --smoke: the bundled karate club instead of ca-HepPh (whose 2-paths DISTINCT filters on)
SMOKE_GRAPH = None
DISTINCT = ("SELECT DISTINCT e1.src AS a FROM edge e1 JOIN edge e2 ON e1.dst = e2.src "
            "WHERE e1.src < e2.dst AND e2.dst % 10 = 0")


def _hwm(pid: int | str = "self") -> float:
    """The resident high-water mark of a process, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _reset_hwm(pid: int | str = "self") -> None:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        pass


def _jvm_pid() -> int | None:
    """The driver JVM: a java child of this process."""
    me = str(os.getpid())
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            if stat.rsplit(")", 1)[1].split()[1] == me and b"java" in (d / "cmdline").read_bytes():
                return int(d.name)
        except OSError:
            continue
    return None


def _spark():
    from pyspark.sql import SparkSession

    s = (SparkSession.builder.master("local[2]").appName("provsql_dp-bench")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "4").config("spark.driver.memory", "3g")
         .getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    return s


def run_release(backend: str, graph: str, privacy: str, seed: int) -> dict:
    """One seeded triangle-count release (the ``release`` workload)."""
    import numpy as np

    import provsql_dp
    from provsql_dp.graph import load_edges

    t0 = time.perf_counter()
    duck = provsql_dp.connect(":memory:")
    load_edges(duck, DATA / f"{graph}.edges", table="edge")
    if backend == "spark":
        spark = _spark()
        rows = duck._duck.sql("SELECT src, dst, rowid FROM edge").to_arrow_table()
        spark.createDataFrame(rows).createOrReplaceTempView("edge_src")
        con = provsql_dp.connect(":memory:", engine=spark)
        con.attach("edge", "edge_src", primary_key=["src", "dst"])
        duck.close()
    else:
        spark, con = None, duck
    con.execute("PROTECT TABLE edge BY (src, dst) AS node" if privacy == "node"
                else "PROTECT TABLE edge")
    con.execute("SET PRIVACY BUDGET 100")
    build_s = time.perf_counter() - t0
    jvm = _jvm_pid() if spark is not None else None
    con._rng = np.random.default_rng(seed)
    t = time.perf_counter()
    count = TRIANGLES.replace("SELECT e1.src AS a, e1.dst AS b, e2.dst AS c", "SELECT COUNT(*)")
    cur = con.execute(f"{count} WITH EPSILON 1")
    value = cur.fetchone()[0]
    from provsql_dp.sql.catalog import SCHEMA

    incidents = [r[0] for r in con._catalog.con.execute(
        f"SELECT what FROM {SCHEMA}.incidents").fetchall()]  # a fallback was released
    return {"workload": f"release/{privacy}", "backend": backend, "result": value,
            "mechanism": cur.privacy.mechanism, "incidents": incidents, "build_s": build_s,
            "median_s": time.perf_counter() - t, "times": [], "py_peak_mb": _hwm(),
            "jvm_peak_mb": _hwm(jvm) if jvm else None,
            "crossed_mb": getattr(con._engine, "bytes_received", 0) / 2**20}


def run_one(workload: str, backend: str, rows: int, repeats: int) -> dict:
    import numpy as np

    import provsql_dp

    if workload.startswith("release"):
        _, graph, privacy, seed = workload.split(":")
        return run_release(backend, graph, privacy, int(seed))
    spark = _spark() if backend == "spark" else None
    con = provsql_dp.connect(":memory:", engine=spark)
    t0 = time.perf_counter()
    if workload in ("triangles", "distinct"):
        from provsql_dp.graph.load import read_edge_list

        src, dst, _ = read_edge_list(SMOKE_GRAPH or DATA / "ca-HepPh.edges")
        # each undirected edge both ways, as load_edges stores it
        a = np.concatenate([src, dst]).astype(np.int64)
        b = np.concatenate([dst, src]).astype(np.int64)
        if spark is None:
            con._duck.execute("CREATE TABLE edge(src BIGINT, dst BIGINT)")
            con._duck.execute("INSERT INTO edge SELECT * FROM (SELECT unnest(?) AS s, unnest(?) AS d)",
                              [a.tolist(), b.tolist()])
        else:
            import pyarrow as pa

            spark.createDataFrame(pa.table({"src": a, "dst": b})).createOrReplaceTempView("edge_src")
            con.attach("edge", "edge_src")
        con.execute("PROTECT TABLE edge BY (src, dst) AS node")

        query = TRIANGLES if workload == "triangles" else DISTINCT

        def work():
            return len(con.provenance(query))
    else:
        if spark is None:
            con._duck.execute(f"CREATE TABLE people AS SELECT range AS id, "
                              f"(hash(range) % 90)::INT AS age FROM range({rows})")
        else:
            spark.range(rows).selectExpr("id", "CAST(pmod(xxhash64(id), 90) AS INT) AS age") \
                .createOrReplaceTempView("people_src")
            con.attach("people", "people_src")
        con.execute("PROTECT TABLE people")
        con.execute("SET PRIVACY BUDGET 1000")

        def work():
            return con.execute(COUNT).fetchone()[0]
    build_s = time.perf_counter() - t0
    jvm = _jvm_pid() if spark is not None else None
    out = work()  # warm-up
    _reset_hwm()
    if jvm:
        _reset_hwm(jvm)
    received0 = getattr(con._engine, "bytes_received", 0)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = work()
        times.append(time.perf_counter() - t)
    received = (getattr(con._engine, "bytes_received", 0) - received0) / repeats
    return {"workload": workload, "backend": backend, "result": out, "build_s": build_s,
            "median_s": statistics.median(times), "times": times,
            "py_peak_mb": _hwm(), "jvm_peak_mb": _hwm(jvm) if jvm else None,
            "crossed_mb": received / 2**20}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=["triangles", "distinct", "count", "release"], default=None)
    ap.add_argument("--graph", default="ca-HepPh", help="release: a graph of the data folder")
    ap.add_argument("--privacy", choices=["node", "edge"], default="edge", help="release")
    ap.add_argument("--seed", type=int, default=7, help="release: the generator's seed")
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: the bundled karate club, 1,000 rows, one repeat; Spark (one "
                         "JVM start) on the count only, when pyspark is installed; any failure "
                         "exits 1 (CI)")
    args = ap.parse_args()
    global SMOKE_GRAPH
    smoke = ["--smoke"] if args.smoke else []
    if args.smoke:
        import _smoke

        SMOKE_GRAPH = _smoke.graphs_dir() / f"{_smoke.GRAPH}.edges"
        args.rows, args.repeats = min(args.rows, 1000), 1
    if args.one:
        print(json.dumps(run_one(args.one[0], args.one[1], int(args.rows), args.repeats)))
        return
    workloads = [args.only] if args.only else ["triangles", "distinct", "count"]
    if args.only == "release":
        workloads = [f"release:{args.graph}:{args.privacy}:{args.seed}"]
    results, failed = [], 0
    for w in workloads:
        for b in ("duckdb", "spark"):
            if args.smoke and b == "spark" and (w != "count" or not _has_spark()):
                continue
            t_sub = time.perf_counter()
            p = subprocess.run([sys.executable, __file__, "--one", w, b, "--rows", str(args.rows),
                                "--repeats", str(args.repeats), *smoke], capture_output=True,
                               text=True, cwd=Path(__file__).resolve().parents[1])
            line = [x for x in p.stdout.splitlines() if x.startswith("{")]
            if p.returncode or not line:
                print(f"{w} on {b} failed:\n{p.stderr[-2000:]}", file=sys.stderr)
                failed += 1
                continue
            results.append(json.loads(line[-1]) | {"wall_s": time.perf_counter() - t_sub})
    print(f"{'workload':<10} {'backend':<7} {'result':>10} {'build s':>8} {'median s':>9} "
          f"{'py peak MB':>10} {'JVM peak MB':>11} {'crossed MB':>10}")
    for r in results:
        jvm = "-" if r["jvm_peak_mb"] is None else f"{r['jvm_peak_mb']:.0f}"
        print(f"{r['workload']:<10} {r['backend']:<7} {r['result']:>10} {r['build_s']:>8.1f} "
              f"{r['median_s']:>9.2f} {r['py_peak_mb']:>10.0f} {jvm:>11} {r['crossed_mb']:>10.1f}")
    if args.only == "release" and len(results) == 2:
        a, b = results
        print(f"{args.graph} {args.privacy}-private, seed {args.seed}: mechanism "
              f"{a['mechanism']} / {b['mechanism']}; released values "
              f"{'EQUAL' if a['result'] == b['result'] else 'DIFFERENT'} "
              f"({a['result']!r} vs {b['result']!r}); 'median s' is the release statement end to "
              f"end, 'build s' loading (Spark: JVM start, snapshot), subprocess wall "
              f"{a['wall_s']:.1f} s / {b['wall_s']:.1f} s")
        for r in results:
            for what in r["incidents"]:
                print(f"{r['backend']}: released the data-independent fallback: {what}")
    if args.smoke and failed:
        sys.exit(1)


def _has_spark() -> bool:
    import importlib.util
    import shutil

    return importlib.util.find_spec("pyspark") is not None and shutil.which("java") is not None


if __name__ == "__main__":
    main()
