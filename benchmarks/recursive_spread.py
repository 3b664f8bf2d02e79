"""Benchmark: the spread of the recursive mechanism's release time over Δ̂ draws, phase by phase.

The time of a release of node-private triangles on the scale graphs varies several-fold with the
noisy Δ̂ (the X LPs grow as Δ̂ falls). This script builds the triangle K-relation with numpy
(``recursive.py``'s ``triangles_direct``), then the structure and the Δ search **once** (they do
not depend on the noise), and then X at the Δ̂ of ``--releases`` draws of the mechanism's own
noise (``release_delta_hat`` under seeds 0, 1, …; a Δ̂ drawn twice is solved once), each on a
fresh eq.-20 model. It prints one row per draw — Δ̂, X's CPU and wall seconds, the load average —
and the per-release total ``structure + Δ search + X`` (CPU), with its min / median / max.
A release through SQL also captures the K-relation (≈ 1–3 s CPU on ca-HepPh) and builds the
structure each time; that is in the "structure" column. CPU seconds are the process's
(``getrusage``): the machine is shared, wall time is inflated by the other jobs.

Usage::

    nice -n 19 python benchmarks/recursive_spread.py --graph ca-HepPh --releases 10
    nice -n 19 python benchmarks/recursive_spread.py --graph ca-HepPh --delta-hat 7332 13359.7
    python benchmarks/recursive_spread.py --smoke   # seconds: the bundled karate club, 2 draws
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", default="ca-HepPh")
    ap.add_argument("--privacy", default="node", choices=("node", "edge"))
    ap.add_argument("--eps", type=float, default=0.5)
    ap.add_argument("--releases", type=int, default=10)
    ap.add_argument("--delta-hat", type=float, nargs="*", default=None,
                    help="solve X at these Δ̂ instead of drawn ones")
    ap.add_argument("--time-limit", type=float, default=120.0, help="seconds per LP")
    ap.add_argument("--smoke", action="store_true", help="the bundled karate club, 2 draws")
    args = ap.parse_args()
    if args.smoke:
        import _smoke

        os.environ["PROVSQL_DP_GRAPHS"] = str(_smoke.graphs_dir())  # read by recursive.DATA
        args.graph, args.releases = _smoke.GRAPH, 2
    from recursive import DATA, triangles_direct

    from provsql_dp.mechanisms.recursive import efficient as rm
    from provsql_dp.mechanisms.recursive._framework import resolve_params
    from provsql_dp.mechanisms.recursive.release import release_delta_hat

    kr = triangles_direct(DATA / f"{args.graph}.edges", args.privacy)
    params = resolve_params(args.eps, args.privacy)
    c0 = _cpu()
    st = rm._structure(kr)
    run = rm._Run(st, params, solver="ipm", time_limit=args.time_limit)
    c1 = _cpu()
    j, _ = run.delta()
    c2 = _cpu()
    base = c2 - c0
    print(f"{args.graph} {args.privacy}: {kr.n_tuples} triangles; structure {c1 - c0:.1f} s CPU, "
          f"Δ search (j = {j}) {c2 - c1:.1f} s CPU; load {os.getloadavg()[0]:.1f}")
    draws = args.delta_hat or [float(release_delta_hat(j, params, np.random.default_rng(s)))
                               for s in range(args.releases)]
    print(f"{'draw':>4} {'Δ̂':>10} {'X':>14} {'X CPU s':>8} {'X wall s':>8} {'load':>5} "
          f"{'release CPU s':>13}")
    solved, totals = {}, []
    for i, dh in enumerate(draws):
        if dh not in solved:
            run.solver._xcuts = run.solver._xmodel = None  # a fresh eq.-20 model per Δ̂
            c, w = _cpu(), time.perf_counter()
            try:
                x = f"{run.x(dh)[0]:.1f}"
            except Exception as e:  # an LP over its time limit: the SQL path's fallback
                x = type(e).__name__
            solved[dh] = (x, _cpu() - c, time.perf_counter() - w, os.getloadavg()[0])
        x, cpu, wall, load = solved[dh]
        totals.append(base + cpu)
        print(f"{i:>4} {dh:>10.1f} {x:>14} {cpu:>8.1f} {wall:>8.1f} {load:>5.1f} {base + cpu:>13.1f}")
    print(f"release CPU s (structure + Δ + X): min {min(totals):.1f} / median "
          f"{statistics.median(totals):.1f} / max {max(totals):.1f} over {len(totals)} draws")


if __name__ == "__main__":
    main()
