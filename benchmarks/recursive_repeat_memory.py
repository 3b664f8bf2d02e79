"""Benchmark: resident memory of a process that runs recursive-mechanism release after release
(a server), this checkout against another (issue 29: 5.9 GB after a few cold Q7/Q21 releases at
SF 1 unless ``gc.collect()`` ran between them, 2.7 GB for the first).

Per (checkout, query) one subprocess, with that checkout's ``provsql_dp`` first on its path, loads
the tables as ``benchmarks/r2t_tpch.py`` does, captures the K-relation once, then runs
``--releases`` releases at ε = 0.8 (seeds 0, 1, …), each **cold** (the mechanism's structure
cache is dropped first, as when a statement's K-relation goes away) and — unlike
``recursive_tpch_lean.py`` — **without** calling ``gc.collect()`` between them: what a server
that never collects by hand holds. After each release it records the process's current RSS
(``/proc/self/statm``) and its peak RSS (``ru_maxrss``). Printed per row: the peak after the
first release, after the last, the current RSS after the last, and the median release time; the
time one ``gc.collect()`` takes after a release (what collecting at the end of every release would
cost) and how many objects it found; the released values' checksum (a change that only frees
memory must give the same values under the same seeds). The load average is printed at the
start and the end.

Usage::

    nice -n 19 python benchmarks/recursive_repeat_memory.py --before /work/main --sf 1 --releases 10
    nice -n 19 python benchmarks/recursive_repeat_memory.py --smoke     # SF 0.01, one checkout
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


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def child(checkout: Path, data: Path, query: str, releases: int, eps: float) -> dict:
    sys.path[:0] = [str(_HERE)]
    import numpy as np
    import r2t_tpch as bench

    sys.path[:0] = [str(checkout)]
    import provsql_dp

    if Path(provsql_dp.__file__).resolve().parent != (checkout / "provsql_dp").resolve():
        raise SystemExit(f"imported {provsql_dp.__file__}, not {checkout}")
    from provsql_dp.mechanisms.recursive import efficient as rm
    from provsql_dp.privacy.answer import privacy_style

    con, sql = bench.connect(data, query)
    kr = con.provenance(sql, columns=())
    style = privacy_style(con.plan(sql))
    gc.collect()
    peaks, rss, walls, values = [], [], [], []
    for seed in range(releases):
        rm._STRUCTURES.clear()  # cold: no gc.collect() — what a server holds between statements
        t0 = time.perf_counter()
        value = rm.release(kr, epsilon=eps, privacy=style, rng=np.random.default_rng(seed),
                           time_limit=600).value
        walls.append(time.perf_counter() - t0)
        values.append(float(value))
        peaks.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        rss.append(_rss_mb())
    rm._STRUCTURES.clear()
    t0 = time.perf_counter()
    found = gc.collect()
    collect_s = time.perf_counter() - t0
    return {"peaks": peaks, "rss": rss, "wall": statistics.median(walls), "values": values,
            "collect_s": collect_s, "found": found, "rss_collected": _rss_mb(),
            "tuples": kr.n_tuples}


def run(checkout: Path, data: Path, query: str, releases: int, eps: float) -> dict:
    cmd = [sys.executable, __file__, "--child", str(checkout), str(data), query, str(releases),
           str(eps)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode:
        return {"error": (res.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(res.stdout.strip().splitlines()[-1])


def row(label: str, query: str, r: dict) -> str:
    if "error" in r:
        return f"{label:<7} {query:<4} failed: {r['error']}"
    return (f"{label:<7} {query:<4} {r['tuples']:>10,} {r['wall']:8.2f} {r['peaks'][0]:9.0f} "
            f"{r['peaks'][-1]:9.0f} {r['rss'][-1]:9.0f} {r['rss_collected']:9.0f} "
            f"{r['collect_s'] * 1000:9.1f} {r['found']:7d}  {sum(r['values']):.6e}  "
            f"RSS MB after each: {' '.join(f'{x:.0f}' for x in r['rss'])}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--releases", type=int, default=10)
    ap.add_argument("--eps", type=float, default=0.8)
    ap.add_argument("--queries", nargs="+", default=list(QUERIES), choices=QUERIES)
    ap.add_argument("--before", type=Path, help="another checkout to compare with (e.g. main)")
    ap.add_argument("--data", type=Path, default=_HERE / ".tpch", help="where the Parquet goes")
    ap.add_argument("--smoke", action="store_true", help="SF 0.01, this checkout, 2 releases")
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        co, d, q, n, eps = a.child
        print(json.dumps(child(Path(co), Path(d), q, int(n), float(eps))))
        return
    if a.smoke:
        a.sf, a.releases, a.before, a.queries = 0.01, 2, None, ["Q7"]
        a.data = Path(tempfile.mkdtemp(prefix="recursive_repeat_memory_smoke_"))
    sys.path[:0] = [str(_HERE)]
    import r2t_tpch as bench

    data = bench.make_data(a.sf, a.data)
    print(f"TPC-H SF {a.sf:g}, ε = {a.eps:g}, {a.releases} cold releases in one process, no "
          f"gc.collect() between them; load average {os.getloadavg()[0]:.1f} at start", flush=True)
    print(f"{'code':<7} {'q':<4} {'join rows':>10} {'rel. s':>8} {'peak 1st':>9} {'peak end':>9} "
          f"{'RSS end':>9} {'RSS gc':>9} {'gc ms':>9} {'gc objs':>7}  value checksum (MB)",
          flush=True)
    failed, ratios = False, []
    for q in a.queries:
        res = {}
        for label, co in (("before", a.before), ("after", _HERE.parent)):
            if co is None:
                continue
            res[label] = run(co, data, q, a.releases, a.eps)
            print(row(label, q, res[label]), flush=True)
            failed |= "error" in res[label]
        b, f = res.get("before"), res["after"]
        if b and "error" not in b and "error" not in f:
            ratios.append((q, b["peaks"][-1] / f["peaks"][-1], b["values"] == f["values"]))
    if ratios:
        print(f"\n{'q':<4} {'peak end ×':>10}  same values")
        for q, r, same in ratios:
            print(f"{q:<4} {r:10.2f}  {same}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end", flush=True)
    if failed and a.smoke:
        sys.exit(1)


if __name__ == "__main__":
    main()
