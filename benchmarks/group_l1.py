"""One ℓ1 bound across groups vs ε split over groups, single-owner GROUP BY (issue 28).

On synthetic per-(group, owner) totals where each participant falls in ``spread`` of ``G``
groups (TPC-H Q21's shape: a customer's orders reach many suppliers), releases every group
both ways, in one run, at the same ε:

* **split** — the former route: each group with the scalar closed form
  (:func:`provsql_dp.mechanisms.recursive.single_owner.release`) at ε / G;
* **ℓ1** — :func:`provsql_dp.mechanisms.recursive.single_owner_groups.release_groups` at ε.

Prints the median (over releases) of the mean relative error over the groups, the ratio, and
the time per release of each. ``--smoke``: a tiny case.

    python benchmarks/group_l1.py [--releases 20] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from provsql_dp.mechanisms.recursive import single_owner as so
from provsql_dp.mechanisms.recursive import single_owner_groups as sg


def data(rng, n: int, G: int, spread: int):
    """Each of ``n`` owners in ``spread`` random groups, a heavy-tailed count in each."""
    owner = np.repeat(np.arange(n), spread)
    group = np.concatenate([rng.choice(G, size=spread, replace=False) for _ in range(n)])
    vals = np.ceil(rng.pareto(2.0, size=n * spread) + 1.0)
    return owner, group, vals


def split_release(owner, group, vals, G, eps, rng):
    out = np.zeros(G)
    for g in range(G):
        sel = group == g
        c = np.bincount(owner[sel], weights=vals[sel])
        out[g] = so.release(c[c > 0], eps / G, "edge", rng).value
    return out


def l1_release(owner, group, vals, G, eps, rng):
    return np.array([r.value for r in sg.release_groups(owner, group, vals, G, eps, "edge", rng)])


def rel_err(est, truth):
    return float(np.mean(np.abs(est - truth) / np.maximum(truth, 1.0)))


def run(cases, releases: int, eps: float, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for n, G, spread in cases:
        owner, group, vals = data(rng, n, G, spread)
        truth = np.bincount(group, weights=vals, minlength=G)
        res = {}
        for name, fn in (("split", split_release), ("l1", l1_release)):
            errs, times = [], []
            for _ in range(releases):
                t = time.perf_counter()
                est = fn(owner, group, vals, G, eps, rng)
                times.append(time.perf_counter() - t)
                errs.append(rel_err(est, truth))
            res[name] = (float(np.median(errs)), float(np.median(times)))
        rows.append(dict(n=n, G=G, spread=spread, mean_true=float(truth.mean()), **{
            f"{k}_err": v[0] for k, v in res.items()}, **{f"{k}_s": v[1] for k, v in res.items()}))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--releases", type=int, default=20)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--smoke", action="store_true", help="a tiny case (CI)")
    a = ap.parse_args()
    cases = ([(200, 4, 2)] if a.smoke else
             [(10_000, 2, 2), (10_000, 10, 1), (10_000, 10, 3), (10_000, 100, 5),
              (100_000, 411, 5), (100_000, 411, 40)])
    releases = 2 if a.smoke else a.releases
    rows = run(cases, releases, a.eps)
    print(f"single-owner GROUP BY, ε = {a.eps:g}, {releases} releases per cell, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'owners':>8} {'groups':>6} {'spread':>6} {'mean truth':>11} {'split err':>10} "
          f"{'ℓ1 err':>9} {'split/ℓ1':>9} {'split s':>8} {'ℓ1 s':>7}")
    for r in rows:
        print(f"{r['n']:>8} {r['G']:>6} {r['spread']:>6} {r['mean_true']:>11.1f} "
              f"{100 * r['split_err']:>9.2f}% {100 * r['l1_err']:>8.2f}% "
              f"{r['split_err'] / max(r['l1_err'], 1e-12):>9.1f} {r['split_s']:>8.3f} "
              f"{r['l1_s']:>7.3f}")


if __name__ == "__main__":
    main()
