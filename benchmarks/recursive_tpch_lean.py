"""Benchmark: time and memory of one release of the recursive mechanism and R2T on TPC-H Q7/Q21,
this checkout against another (issue 29, item 2: ≤ 15 s per release and < 4 GB at SF 1).

Per (checkout, query, mechanism) one subprocess, with that checkout's ``provsql_dp`` first on its
path, loads the tables as ``benchmarks/r2t_tpch.py`` does (the authors' queries and protected
relations), captures the K-relation once through SQL (only the columns a release reads), then
runs ``--releases`` releases at ε = 0.8 with seeds 0, 1, …. Every release is **cold**: the
mechanism's caches of the K-relation (structure, twin classes) are dropped first, so each one
pays what a SQL statement pays after its capture. Printed per row: the capture's wall time, the
median wall and CPU seconds of a release (``time.process_time``: the machine is shared, wall
time is inflated by the others' jobs), the slowest release, the subprocess's peak RSS after the
capture and the first release (what one SQL statement needs; ``RSS 1st``) and after all of them
(the allocator keeps freed memory of earlier releases: a larger figure), and the
released values' checksum (the same seeds must give the same values in both checkouts when a
change is only speed). Ratios are ``before / after`` of the medians. The load average is printed
at the start and the end.

Usage::

    nice -n 19 python benchmarks/recursive_tpch_lean.py --before /work/main --sf 1 --releases 5
    nice -n 19 python benchmarks/recursive_tpch_lean.py --smoke     # SF 0.01, one checkout, 2 releases
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
QUERIES = ("Q7", "Q21")
MECHANISMS = ("recursive", "r2t")


def child(checkout: Path, data: Path, query: str, mechanism: str, releases: int, eps: float) -> dict:
    sys.path[:0] = [str(_HERE)]
    import numpy as np
    import r2t_tpch as bench  # puts this checkout first on the path: the other goes before it

    sys.path[:0] = [str(checkout)]
    import provsql_dp

    if Path(provsql_dp.__file__).resolve().parent != (checkout / "provsql_dp").resolve():
        raise SystemExit(f"imported {provsql_dp.__file__}, not {checkout}")
    from provsql_dp.mechanisms.r2t import race as r2t
    from provsql_dp.mechanisms.recursive import efficient as rm
    from provsql_dp.privacy.answer import privacy_style

    con, sql = bench.connect(data, query)
    t0 = time.perf_counter()
    try:
        kr = con.provenance(sql, columns=())
    except TypeError:  # a checkout without the lean capture
        kr = con.provenance(sql)
    capture_s = time.perf_counter() - t0
    style = privacy_style(con.plan(sql))
    walls, cpus, values, first_rss = [], [], [], None
    for seed in range(releases):
        rm._STRUCTURES.clear()
        gc.collect()  # the previous release's garbage, outside the timing  # cold: structure and twin classes rebuilt, as after a capture
        rng = np.random.default_rng(seed)
        t0, c0 = time.perf_counter(), time.process_time()
        if mechanism == "recursive":
            value = rm.release(kr, epsilon=eps, privacy=style, rng=rng, time_limit=600).value
        else:
            value = r2t.release(kr, eps, max_contribution=2.0 ** 20, lp_gap=0.0625, rng=rng,
                                time_limit=600).value
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        values.append(float(value))
        if first_rss is None:  # capture + one release: what one SQL statement needs
            first_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"capture_s": capture_s, "cpus": cpus, "wall": statistics.median(walls), "cpu": statistics.median(cpus),
            "max_wall": max(walls), "rss1_mb": first_rss, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "values": values, "tuples": kr.n_tuples}


def run(checkout: Path, data: Path, query: str, mechanism: str, releases: int, eps: float):
    cmd = [sys.executable, __file__, "--child", str(checkout), str(data), query, mechanism,
           str(releases), str(eps)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode:
        return {"error": (res.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(res.stdout.strip().splitlines()[-1])


def row(label: str, query: str, mech: str, r: dict) -> str:
    if "error" in r:
        return f"{label:<7} {query:<4} {mech:<10} failed: {r['error']}"
    chk = f"{sum(r['values']):.6e}"
    return (f"{label:<7} {query:<4} {mech:<10} {r['tuples']:>10,} {r['capture_s']:8.2f} "
            f"{r['wall']:8.2f} {r['cpu']:8.2f} {r['max_wall']:8.2f} {r['rss1_mb']:8.0f} "
            f"{r['rss_mb']:8.0f}  {chk}  "
            f"CPU s each: {' '.join(f'{c:.1f}' for c in r['cpus'])}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--releases", type=int, default=5)
    ap.add_argument("--eps", type=float, default=0.8)
    ap.add_argument("--queries", nargs="+", default=list(QUERIES), choices=QUERIES)
    ap.add_argument("--mechanisms", nargs="+", default=list(MECHANISMS), choices=MECHANISMS)
    ap.add_argument("--before", type=Path, help="another checkout to compare with (e.g. main)")
    ap.add_argument("--data", type=Path, default=_HERE / ".tpch", help="where the Parquet goes")
    ap.add_argument("--smoke", action="store_true", help="SF 0.01, this checkout, 2 releases")
    ap.add_argument("--child", nargs=6, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        co, d, q, m, n, eps = a.child
        print(json.dumps(child(Path(co), Path(d), q, m, int(n), float(eps))))
        return
    if a.smoke:
        a.sf, a.releases, a.before = 0.01, 2, None
        a.data = Path(tempfile.mkdtemp(prefix="recursive_tpch_lean_smoke_"))
    sys.path[:0] = [str(_HERE)]
    import r2t_tpch as bench

    data = bench.make_data(a.sf, a.data)
    after = _HERE.parent
    print(f"TPC-H SF {a.sf:g}, ε = {a.eps:g}, {a.releases} cold releases each (seeds 0..), "
          f"load average {os.getloadavg()[0]:.1f} at start", flush=True)
    print(f"{'code':<7} {'q':<4} {'mechanism':<10} {'join rows':>10} {'capt. s':>8} {'rel. s':>8} "
          f"{'CPU s':>8} {'max s':>8} {'RSS 1st':>8} {'RSS MB':>8}  value checksum", flush=True)
    failed, ratios = False, []
    for q in a.queries:
        for m in a.mechanisms:
            res = {}
            for label, co in (("before", a.before), ("after", after)):
                if co is None:
                    continue
                res[label] = run(co, data, q, m, a.releases, a.eps)
                print(row(label, q, m, res[label]), flush=True)
                failed |= "error" in res[label]
            b, f = res.get("before"), res["after"]
            if b and "error" not in b and "error" not in f:
                ratios.append((q, m, b["wall"] / f["wall"], b["cpu"] / max(f["cpu"], 1e-9),
                               b["rss1_mb"] / f["rss1_mb"], b["values"] == f["values"]))
    if ratios:
        print(f"\n{'q':<4} {'mechanism':<10} {'wall ×':>7} {'CPU ×':>7} {'RSS1 ×':>7}  same values")
        for q, m, w, c, r, same in ratios:
            print(f"{q:<4} {m:<10} {w:7.2f} {c:7.2f} {r:7.2f}  {same}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end", flush=True)
    if failed and a.smoke:
        sys.exit(1)


if __name__ == "__main__":
    main()
