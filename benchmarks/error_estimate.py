"""Benchmark: the private error estimate's noise bound α, stated vs observed coverage (issue 13).

``EXPLAIN PRIVACY … WITH EPSILON ε ESTIMATE ERROR WITH EPSILON e`` states α with
``Pr[|release − X| ≤ α] ≥ p`` over the estimate and the release together
(:mod:`provsql_dp.mechanisms.recursive.error_estimate`). This script draws the estimate and then the
release, independently, many times, on single-owner per-participant totals (a heavy-tailed
table: many participants with 1–3 rows, a few with 40–300; X in closed form), and prints, per
(ε, e, p): the observed coverage (which must be ≥ p) and the median ratio of α to the bound the
release itself states after the fact (``Release.noise_bound(p)``) — the price of knowing before.

Run: ``PYTHONPATH=. python benchmarks/error_estimate.py [--trials N]`` from the repository (so
this checkout's package is measured); the last run is in
``benchmarks/error_estimate_measured.md``. ``--smoke`` (CI, seconds): 20 trials per setting, the
coverage printed but not enforced (20 draws cannot show it).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from provsql_dp.mechanisms.recursive import error_estimate as ee
from provsql_dp.mechanisms.recursive import single_owner as so
from provsql_dp.mechanisms.recursive._framework import resolve_params

CONFIGS = ((1.0, 1.0), (1.0, 0.5), (1.0, 0.25), (0.2, 0.1))
LEVELS = (0.5, 0.8, 0.95)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: 20 trials, coverage not enforced (CI)")
    args = ap.parse_args(argv)
    if args.smoke:
        args.trials = 20
    rng = np.random.default_rng(args.seed)
    c = np.concatenate([rng.integers(1, 4, 500), [40.0, 90.0, 300.0]]).astype(float)
    print("| ε | e | stated p | observed | median α / release's own bound |")
    print("|---|---|---|---|---|")
    bad = 0
    for eps, e in CONFIGS:
        params = resolve_params(eps, "edge")
        j = so.delta(c, params["theta"], params["beta"])[0]
        for p in LEVELS:
            hits, ratios = 0, []
            for _ in range(args.trials):
                est = ee.release_index(j, e, params, rng)
                rel = so.release(c, eps, "edge", rng)
                x = so.clamped_sum(c, rel.delta_hat)
                alpha = est.alpha(p)
                hits += abs(rel.value - x) <= alpha
                ratios.append(alpha / rel.noise_bound(p))
            observed = hits / args.trials
            bad += observed < p
            print(f"| {eps:g} | {e:g} | {p:g} | {observed:.3f} | {np.median(ratios):.1f} |")
    return 1 if bad and not args.smoke else 0


if __name__ == "__main__":
    sys.exit(main())
