"""Benchmark (issue 28): a bounded AVG released from its centred sum, against the plain SUM/COUNT
ratio it replaced — the penguins' ``avg`` and ``avg by group`` statements of
``benchmarks/analyst_sql.py`` (body mass, declared bounds [2500, 6500]), ``--releases`` releases
each at ε = ``--eps`` (and at ρ = ε²/2 on the Gaussian route), in one run.

* **before**: :func:`provsql_dp.privacy.centred_avg.centre_avg_sums` switched off in this
  process (the SUM part at sensitivity ``max(|L|, |U|)`` = 6,500): the release as it was;
* **after**: as shipped, the centred sum at ``(U − L)/2`` = 2,000.

Route ``1-owner``: the same statements with ``OPTIONS (mechanism = 'recursive')``, answered on
the single-owner route, where *after* releases the AVG's SUM as the signed single-owner SUM of
``x − m`` (:func:`provsql_dp.privacy.centred_avg.centred_decision`).

Both draw from generators seeded alike. It prints per statement and variant the median relative
error (mean over the groups for the grouped one), the mean relative error, the median time per
release, and the ratio before/after of the median error, with the load average. Tumult's figures
at ε = 1 (``benchmarks/peers_tumult_measured.md``): ``avg`` 0.2 %, ``avg by group`` 0.9 %.

Usage::

    nice -n 19 python benchmarks/centred_avg.py --releases 200
    python benchmarks/centred_avg.py --smoke      # 3 releases

Measured: ``benchmarks/centred_avg_measured.md``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(_HERE.parent), str(_HERE)]

import numpy as np  # noqa: E402

import _analyst_workload as w  # noqa: E402

NAMES = ("avg", "avg by group")


@contextmanager
def uncentred():
    """The release as it was before the centred sum: no AVG part is marked centred."""
    from provsql_dp.privacy import centred_avg, explain_route, gaussian_several

    def none(plan, decisions):
        return [None] * len(plan.columns)

    saved = (centred_avg.centre_avg_sums, gaussian_several.centre_avg_sums,
             explain_route.centre_avg_sums)
    centred_avg.centre_avg_sums = gaussian_several.centre_avg_sums = none
    explain_route.centre_avg_sums = none
    try:
        yield
    finally:
        (centred_avg.centre_avg_sums, gaussian_several.centre_avg_sums,
         explain_route.centre_avg_sums) = saved


def connect(releases: int, eps: float, rho: bool):
    import provsql_dp

    con = provsql_dp.connect(":memory:")
    w.load(con)
    for decl in w.DECLARATIONS:
        con.execute(decl)
    total = 10 * releases * eps * len(NAMES)
    con.execute(f"SET PRIVACY BUDGET RHO {total:g}" if rho else f"SET PRIVACY BUDGET {total:g}")
    return con


def measure(st, releases: int, eps: float, rho: bool, seed: int, recursive: bool = False) -> dict:
    con = connect(releases, eps, rho)
    con._rng = np.random.default_rng(seed)
    clause = f"WITH RHO {eps * eps / 2:g}" if rho else f"WITH EPSILON {eps:g}"
    if recursive:  # the single-owner route (the recursive mechanism's closed form)
        clause += " OPTIONS (mechanism = 'recursive')"
    true_rows = w.truth(st)
    rels, secs = [], []
    for _ in range(releases):
        t0 = time.perf_counter()
        rows = con.execute(f"{st.sql} {clause}").fetchall()
        secs.append(time.perf_counter() - t0)
        rels.append(w.errors(st, rows, true_rows)["rel"])
    return {"median": statistics.median(rels), "mean": statistics.fmean(rels),
            "seconds": statistics.median(secs)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--releases", type=int, default=200)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--smoke", action="store_true", help="3 releases")
    args = ap.parse_args(argv)
    releases = 3 if args.smoke else args.releases
    load = os.getloadavg()
    print(f"penguins, ε = {args.eps:g} (ρ = ε²/2 on the Gaussian route), {releases} releases "
          f"per cell; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    head = (f"{'statement':<14}{'route':<10}{'before med':>11}{'after med':>11}{'ratio':>7}"
            f"{'before mean':>13}{'after mean':>12}{'before ms':>11}{'after ms':>10}")
    print(head)
    print("-" * len(head))
    statements = [s for s in w.STATEMENTS if s.name in NAMES]
    for st in statements:
        for rho, rec in ((False, False), (True, False), (False, True)):
            with uncentred():
                b = measure(st, releases, args.eps, rho, seed=7, recursive=rec)
            a = measure(st, releases, args.eps, rho, seed=7, recursive=rec)
            ratio = b["median"] / a["median"] if a["median"] else float("inf")
            route = "zCDP" if rho else "1-owner" if rec else "pure ε"
            print(f"{st.name:<14}{route:<10}{b['median']:>10.3%}"
                  f"{a['median']:>11.3%}{ratio:>6.1f}×{b['mean']:>12.3%}{a['mean']:>12.3%}"
                  f"{b['seconds'] * 1e3:>10.1f} {a['seconds'] * 1e3:>9.1f}")
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
