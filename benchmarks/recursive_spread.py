"""Benchmark: the spread of the recursive mechanism's release time over Δ̂ draws, phase by phase.

The time of a release of node-private triangles on the scale graphs varies several-fold with the
noisy Δ̂ (the X LPs grow as Δ̂ falls). This script builds the triangle K-relation with numpy
(``recursive.py``'s ``triangles_direct``), then the structure and the Δ search **once** (they do
not depend on the noise), and then X at the Δ̂ of ``--releases`` draws of the mechanism's own
noise (``release_delta_hat`` under seeds 0, 1, …; a Δ̂ drawn twice is solved once), each on a
fresh eq.-20 model. It prints one row per draw — Δ̂, X's CPU and wall seconds, the load average —
and the per-release totals ``structure + Δ search + X`` (CPU and wall), with their min / median /
max (``--digits``: decimals of X).
A release through SQL also captures the K-relation (≈ 1–3 s CPU on ca-HepPh) and builds the
structure each time; that is in the "structure" column. CPU seconds are the process's
(``getrusage``): the machine is shared, wall time is inflated by the other jobs.

Usage::

    nice -n 19 python benchmarks/recursive_spread.py --graph ca-HepPh --releases 10
    nice -n 19 python benchmarks/recursive_spread.py --graph ca-HepPh --delta-hat 7332 13359.7
    nice -n 19 python benchmarks/recursive_spread.py --graph ca-HepPh --releases 10 --compare

``--compare`` solves X at each Δ̂ twice in the same process, first with the barrier's speed-ups
of issue 29 (h43hep) off — the whole Newton path at a degenerate optimum, the pairs' Hessian on
every step, no one-column seed (``_x_barrier.DEGENERATE_MU = 0``, ``FEW_LIVE = -1``,
``SINGLE_MOVE = False``; the line search's reuse is bit-identical and stays on) — then on, and
prints both CPU times, their ratio and both X to the last digit.
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
    ap.add_argument("--digits", type=int, default=1, help="decimals of X in the table")
    ap.add_argument("--compare", action="store_true",
                    help="X with the barrier's speed-ups off, then on (same process)")
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
    c0, w0 = _cpu(), time.perf_counter()
    st = rm._structure(kr)
    run = rm._Run(st, params, solver="ipm", time_limit=args.time_limit)
    c1, w1 = _cpu(), time.perf_counter()
    j, _ = run.delta()
    c2, w2 = _cpu(), time.perf_counter()
    base, base_wall = c2 - c0, w2 - w0
    print(f"{args.graph} {args.privacy}: {kr.n_tuples} triangles; structure {c1 - c0:.1f} s CPU "
          f"({w1 - w0:.1f} s wall), Δ search (j = {j}) {c2 - c1:.1f} s CPU ({w2 - w1:.1f} s wall); "
          f"load {os.getloadavg()[0]:.1f}")
    draws = args.delta_hat or [float(release_delta_hat(j, params, np.random.default_rng(s)))
                               for s in range(args.releases)]
    if args.compare:
        _compare(run, draws, base)
        return
    print(f"{'draw':>4} {'Δ̂':>10} {'X':>{14 + args.digits}} {'X CPU s':>8} {'X wall s':>8} "
          f"{'load':>5} {'release CPU s':>13} {'release wall s':>14}")
    solved, totals, walls = {}, [], []
    for i, dh in enumerate(draws):
        if dh not in solved:
            solved[dh] = _solve_x(run, dh, args.digits)
        x, cpu, wall, load = solved[dh]
        totals.append(base + cpu)
        walls.append(base_wall + wall)  # a Δ̂ drawn twice: its one solve's wall time
        print(f"{i:>4} {dh:>10.1f} {x:>{14 + args.digits}} {cpu:>8.1f} {wall:>8.1f} {load:>5.1f} "
              f"{base + cpu:>13.1f} {base_wall + wall:>14.1f}")
    for name, tot in (("CPU", totals), ("wall", walls)):
        print(f"release {name} s (structure + Δ + X): min {min(tot):.1f} / median "
              f"{statistics.median(tot):.1f} / max {max(tot):.1f} over {len(tot)} draws")


def _solve_x(run, dh, digits=1):
    """``(X as text, CPU s, wall s, load)`` of X at ``dh`` on a fresh eq.-20 model."""
    run.solver._xcuts = run.solver._xmodel = None  # a fresh eq.-20 model per Δ̂
    c, w = _cpu(), time.perf_counter()
    try:
        x = f"{run.x(dh)[0]:.{digits}f}"
    except Exception as e:  # an LP over its time limit: the SQL path's fallback
        x = type(e).__name__
    return x, _cpu() - c, time.perf_counter() - w, os.getloadavg()[0]


#: the barrier's knobs with its issue-29 speed-ups off (see the module docstring)
_BEFORE = {"DEGENERATE_MU": 0.0, "FEW_LIVE": -1.0, "SINGLE_MOVE": False}


def _compare(run, draws, base) -> None:
    from provsql_dp.mechanisms.recursive import _x_barrier

    after = {k: getattr(_x_barrier, k) for k in _BEFORE}
    print(f"{'draw':>4} {'Δ̂':>10} {'X before':>20} {'X after':>20} {'before s':>8} "
          f"{'after s':>8} {'ratio':>6} {'load':>5}")
    solved, tot_b, tot_a = {}, [], []
    for i, dh in enumerate(draws):
        if dh not in solved:
            for k, v in _BEFORE.items():
                setattr(_x_barrier, k, v)
            xb, cb, _, _ = _solve_x(run, dh, 7)
            for k, v in after.items():
                setattr(_x_barrier, k, v)
            xa, ca, _, load = _solve_x(run, dh, 7)
            solved[dh] = (xb, xa, cb, ca, load)
        xb, xa, cb, ca, load = solved[dh]
        tot_b.append(base + cb)
        tot_a.append(base + ca)
        print(f"{i:>4} {dh:>10.1f} {xb:>20} {xa:>20} {cb:>8.1f} {ca:>8.1f} "
              f"{cb / max(ca, 1e-9):>6.2f} {load:>5.1f}")
    for name, tot in (("before", tot_b), ("after", tot_a)):
        print(f"release CPU s {name} (structure + Δ + X): min {min(tot):.1f} / median "
              f"{statistics.median(tot):.1f} / max {max(tot):.1f} over {len(tot)} draws")
    print(f"median ratio before / after: {statistics.median(tot_b) / statistics.median(tot_a):.2f}")


if __name__ == "__main__":
    main()
