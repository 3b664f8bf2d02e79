"""Benchmark (issue 30): issue 30's Spark workload through provsql_dp and through Tumult Analytics,
side by side with plain Spark SQL: time per release and relative error at the same ε.

The table and the statements are ``benchmarks/spark_scale.py``'s: ``people(id, age, g, amount)``
(``g`` in 0…49 declared as group keys, ``amount`` in [0, 100) with declared bounds [0, 100], ``age``
in 0…89 with no declared bounds), one participant per row, written once as Parquet by Spark
(``--workdir`` keeps it and our attached catalog for the next run). Four statements at ε per
release — ``count`` (``COUNT(*) … WHERE age > 40``), ``bounded_sum`` (``SUM(amount)``),
``group_by_50`` (``g, COUNT(*) … GROUP BY g``), ``unbounded_sum`` (``SUM(age)``) — and, for the
first three, the zCDP variant at ρ = ε²/2 (``WITH RHO`` here, ``RhoZCDPBudget`` there).

* **ours**: provsql_dp on Spark ``local[2]`` (our pins: pyspark 4.3), attached by the curator
  once (not timed per release), then an analyst's connection;
* **Tumult**: ``tmlt.analytics`` in its own virtualenv (pyspark 3.5, pandas 1.5: it cannot
  install beside our pins), driven through ``benchmarks/_tumult_runner.py`` in a subprocess on
  the same Parquet file, ``AddOneRow`` (our privacy unit), the same bounds and keys; where we
  declare no bounds (``unbounded_sum``) its recommended ``get_bounds`` at ε/2 then ``sum`` at
  ε/2. Its JVM start and session creation are reported apart, like ours;
* **plain**: the same query in plain Spark SQL in each process (ours: Spark 4.3, Tumult's: 3.5).

Each time is the median of ``--repeats`` releases after one warm-up; the relative error is the
median over those releases of |released − true| / true (mean over the groups for the ``GROUP
BY``). Our side runs first, its SparkSession is stopped, then Tumult's subprocess runs (one JVM at
a time). Measured figures: ``benchmarks/peers_tumult_measured.md``.

Usage::

    python3.11 -m venv /tmp/tmltvenv && /tmp/tmltvenv/bin/pip install tmlt.analytics
    nice -n 19 python benchmarks/peers_tumult.py --rows 1e7 --tumult-python /tmp/tmltvenv/bin/python
    PROVSQL_DP_TUMULT_PYTHON=/tmp/tmltvenv/bin/python nice -n 19 python benchmarks/peers_tumult.py
    python benchmarks/peers_tumult.py --smoke       # 10^4 rows, one release; Tumult if given

>>> rel_error([[5.0]], [[4.0]], 0)
0.25
>>> rel_error([[1, 11.0], [0, 18.0]], [[0, 20.0], [1, 10.0]], 1)
0.1
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(_HERE.parent), str(_HERE)]  # this checkout's provsql_dp; the runner

import _tumult_runner as tr  # noqa: E402

ENV = "PROVSQL_DP_TUMULT_PYTHON"
HOW = ("python3.11 -m venv /tmp/tmltvenv && /tmp/tmltvenv/bin/pip install tmlt.analytics, then "
       f"--tumult-python /tmp/tmltvenv/bin/python (or {ENV}=…)")
PRIVATE = {  # name → our statement (the runner's SCALE holds the plain one)
    "count": "SELECT COUNT(*) FROM people WHERE age > 40",
    "bounded_sum": "SELECT SUM(amount) FROM people",
    "group_by_50": "SELECT g, COUNT(*) FROM people GROUP BY g",
    "unbounded_sum": "SELECT SUM(age) FROM people",
}


def rel_error(released: list, true: list, keys: int) -> float:
    """|released − true| / |true| of one release, the mean over the groups (the first ``keys``
    columns) both have; a group missing from the release counts as error 1."""
    t = {tuple(r[:keys]): float(r[keys]) for r in true}
    got = {tuple(r[:keys]): r[keys] for r in released}
    errs = [abs(float(got[k]) - v) / abs(v) if k in got and got[k] is not None else 1.0
            for k, v in t.items()]
    return statistics.fmean(errs)


def _generate(spark, rows: int, workdir: str) -> str:
    parquet = os.path.join(workdir, f"people_{rows}.parquet")
    if not os.path.exists(os.path.join(parquet, "_SUCCESS")):  # same rows as spark_scale.py
        spark.range(rows).selectExpr(
            "id", "CAST(pmod(xxhash64(id), 90) AS INT) AS age", "CAST(pmod(id, 50) AS INT) AS g",
            "CAST(pmod(xxhash64(id, 7), 10000) AS DOUBLE) / 100 AS amount") \
            .write.mode("overwrite").parquet(parquet)
    return parquet


def _timed(fn, repeats: int, warm: bool) -> tuple[list, list]:
    if warm:
        fn()
    times, values = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        values.append(fn())
        times.append(time.perf_counter() - t)
    return times, values


def run_ours(rows: int, repeats: int, eps: float, workdir: str, warm: bool, only=None) -> dict:
    """Our side and the truths, in this process; the SparkSession is stopped at the end."""
    import numpy as np

    import provsql_dp
    from spark_scale import _spark

    t = time.perf_counter()
    spark = _spark()
    out = {"jvm_s": time.perf_counter() - t, "work": [], "truth": {}}
    parquet = _generate(spark, rows, workdir)
    out["parquet"] = parquet
    spark.read.parquet(parquet).createOrReplaceTempView("src")
    catalog = os.path.join(workdir, f"catalog_peers_{rows}.duckdb")
    out["attach_s"] = math.nan
    if not os.path.exists(catalog):
        cur = provsql_dp.connect(catalog, engine=spark)
        t = time.perf_counter()
        cur.attach("people", "src", primary_key=["id"])
        out["attach_s"] = time.perf_counter() - t
        keys = ", ".join(str(i) for i in range(50))
        cur.execute("PROTECT TABLE people; SET PRIVACY BUDGET 1e9 FOR USER ann; "
                    "SET PRIVACY BUDGET RHO 1e9 FOR USER zed; "
                    "SET BOUNDS ON people (amount) BETWEEN 0 AND 100; "
                    f"SET GROUP KEYS ON people (g) VALUES ({keys})")
        cur.commit()
        cur.close()
    cons = {u: provsql_dp.connect(catalog, engine=spark, role="analyst", user=who)
            for u, who in (("pure", "ann"), ("zcdp", "zed"))}
    for c in cons.values():
        c._rng = np.random.default_rng(1)
    for name, private in PRIVATE.items():
        if only and name != only:
            continue
        plain, has_zcdp = tr.SCALE[name]
        plain_times, truths = _timed(lambda: [list(r) for r in spark.sql(plain).collect()],
                                     repeats, warm)
        out["truth"][name] = truths[-1]
        units = [("pure", f"WITH EPSILON {eps:g}")] + (
            [("zcdp", f"WITH RHO {tr.rho_of(eps):g}")] if has_zcdp else [])
        for unit, clause in units:
            mech = []

            def ours(con=cons[unit], clause=clause):
                cur = con.execute(f"{private} {clause}")
                mech[:] = [cur.privacy.mechanism]
                return [list(r) for r in cur.fetchall()]

            try:
                times, values = _timed(ours, repeats, warm)
            except Exception as e:  # noqa: BLE001 (a refusal is a result: printed as such)
                out["work"].append({"workload": name, "unit": unit, "plain_s": plain_times,
                                    "refused": str(e).split("\n")[0][:160]})
                continue
            out["work"].append({"workload": name, "unit": unit, "plain_s": plain_times,
                                "ours_s": times, "values": values, "mechanism": mech[0]})
    for c in cons.values():
        c.close()
    spark.stop()
    return out


def run_tumult(python: str, parquet: str, eps: float, repeats: int, warm: bool,
               only=None) -> dict:
    """Tumult's side: ``_tumult_runner.py scale`` in ``python``'s interpreter (JSON back)."""
    cmd = [python, str(_HERE / "_tumult_runner.py"), "scale", parquet, "--eps", str(eps),
           "--repeats", str(repeats)] + (["--no-warm"] if not warm else []) + (
           ["--only", only] if only else [])
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode:
        raise RuntimeError(f"the Tumult runner failed: {res.stderr.strip()[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def tumult_python(given: str | None) -> str | None:
    """The interpreter with ``tmlt.analytics``, or None (with the reason printed)."""
    python = given or os.environ.get(ENV)
    if not python:
        print(f"Tumult Analytics: not installed (no --tumult-python, no {ENV}); to make its "
              f"virtualenv: {HOW}")
        return None
    ok = subprocess.run([python, "-c", "import tmlt.analytics"], capture_output=True,
                        check=False).returncode == 0
    if not ok:
        print(f"Tumult Analytics: not installed for {python}; to make its virtualenv: {HOW}")
        return None
    return python


def table(ours: dict, tumult: dict | None) -> list[str]:
    """The side-by-side table: medians of seconds per release and of relative errors."""
    med = statistics.median
    lines = [f"{'workload':<14} {'unit':<5} {'plain s':>8} {'ours s':>8} {'ours err':>9} "
             f"{'T plain s':>9} {'Tumult s':>9} {'T err':>9} {'ours/T':>7}  our route"]
    keys = {"group_by_50": 1}
    twork = {(w["workload"], w["unit"]): w for w in (tumult or {}).get("work", [])}
    for w in ours["work"]:
        name, unit = w["workload"], w["unit"]
        truth = ours["truth"][name]
        k = keys.get(name, 0)
        t = twork.get((name, unit))
        t_cells = "         –          –          –        –"
        if t and "refused" in t:
            t_cells = f"  Tumult refused: {t['refused'][:40]}"
            t = None
        elif t:
            t_err = med(rel_error(v, truth, k) for v in t["values"])
            t_cells = (f"{med(t['plain_s']):>9.2f} {med(t['tumult_s']):>9.2f} {t_err:>9.2e}")
        if "refused" in w:
            lines.append(f"{name:<14} {unit:<5} {med(w['plain_s']):>8.2f}  refused: "
                         f"{w['refused'][:60]} | {t_cells}")
            continue
        o_err = med(rel_error(v, truth, k) for v in w["values"])
        ratio = (f"{med(w['ours_s']) / med(t['tumult_s']):>7.2f}" if t else "      –")
        lines.append(f"{name:<14} {unit:<5} {med(w['plain_s']):>8.2f} {med(w['ours_s']):>8.2f} "
                     f"{o_err:>9.2e} {t_cells if t else t_cells[:30]} {ratio}  {w['mechanism']}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--only", choices=sorted(PRIVATE), default=None)
    ap.add_argument("--tumult-python", default=None,
                    help=f"an interpreter with tmlt.analytics (or ${ENV})")
    ap.add_argument("--workdir", default=None,
                    help="keep the Parquet table and our attached catalog there for later runs")
    ap.add_argument("--smoke", action="store_true",
                    help="10,000 rows, one release without warm-up; exits 0 saying so without "
                         "pyspark or Java; Tumult only if given")
    a = ap.parse_args()
    warm = True
    if a.smoke:
        a.rows, a.repeats, warm = 1e4, 1, False
        from backends import _has_spark

        if not _has_spark():
            print("peers_tumult: skipped, pyspark or Java is missing (pip install '.[spark]')")
            return
    python = tumult_python(a.tumult_python)
    workdir = a.workdir or tempfile.mkdtemp(prefix="provsql_dp_peers_tumult_")
    os.makedirs(workdir, exist_ok=True)
    load = os.getloadavg()
    try:
        ours = run_ours(int(a.rows), a.repeats, a.eps, workdir, warm, a.only)
        if python:  # ours first: Tumult's side can take long on a loaded machine
            print("ours alone (Tumult's side follows):\n" + "\n".join(table(ours, None)),
                  flush=True)
        tumult = (run_tumult(python, ours["parquet"], a.eps, a.repeats, warm, a.only)
                  if python else None)
    finally:
        if not a.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    load = [max(x, y) for x, y in zip(load, os.getloadavg())]
    print(f"rows={int(a.rows):,}  ε={a.eps:g} (zCDP rows: ρ={tr.rho_of(a.eps):g})  "
          f"{a.repeats} releases after {'a' if warm else 'no'} warm-up  load average "
          f"(max of start/end) {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print(f"ours: JVM start {ours['jvm_s']:.1f} s, attach (once, by the curator) "
          f"{ours['attach_s']:.1f} s")
    if tumult:
        print(f"Tumult {tumult['tumult']} (pyspark {tumult['pyspark']}): JVM start "
              f"{tumult['jvm_s']:.1f} s, Session.from_dataframe {tumult['session_pure_s']:.1f} s "
              f"(PureDP), {tumult['session_zcdp_s']:.1f} s (zCDP)")
    print("\n".join(table(ours, tumult)))
    print("(seconds: medians per release; err: median relative error; plain: the same query "
          "in plain Spark SQL, ours in Spark 4.3, 'T plain' in Tumult's Spark 3.5; "
          "unbounded_sum: Tumult's get_bounds at ε/2 then sum at ε/2)")


if __name__ == "__main__":
    main()
