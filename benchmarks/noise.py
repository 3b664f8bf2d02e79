"""Per-draw cost of the exact discrete Laplace sampler: new vs old vs numpy's continuous Laplace.

Prints one table, all figures measured in this run (medians of repeats, µs per value):

* ``new``    — :mod:`provsql_dp.mechanisms.noise._dlap` as releases use it (OS-entropy Philox; scalars
  from the per-scale pre-drawn pool);
* ``old``    — the previous sampler, kept callable as :mod:`provsql_dp.mechanisms.noise._dlap_reference`,
  on the previous release path (a fresh :func:`release_rng` and the array code for a scalar);
* ``numpy``  — ``Generator.laplace`` (continuous, floating point: *not* private, shown for scale).

Usage: ``python benchmarks/noise.py [--repeats R]``. The machine may be shared: compare ratios.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from fractions import Fraction
from unittest import mock

import numpy as np

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))  # this checkout

from provsql_dp.mechanisms.noise import safe_noise  # noqa: E402
from provsql_dp.mechanisms.noise._dlap_reference import reference_discrete_laplace  # noqa: E402
from provsql_dp.mechanisms.noise.safe_noise import (  # noqa: E402
    discrete_laplace,
    plan_laplace,
    release_rng,
)


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def old_scalar_release(plan, value):
    """The previous scalar path: release_array on one value, fresh generator, old sampler."""
    with mock.patch.object(safe_noise, "discrete_laplace", reference_discrete_laplace):
        return float(plan.release_array(np.array([value]), rng=release_rng())[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: vectors of 10^3 and 10^4 draws, one repeat (CI)")
    args = ap.parse_args()
    big = 10**4 if args.smoke else 10**6  # the large vectors
    n_scalar = 50 if args.smoke else 2000
    if args.smoke:
        args.repeats = 1
    plan = plan_laplace(1.0, 1.0)  # λ ≈ 2**20 grid units, the common real-valued case
    lam = plan.noise_units
    scale = plan.noise_scale
    npg = np.random.default_rng()
    rows = []

    # scalar release
    new = median_time(lambda: [plan.release(1.0) for _ in range(n_scalar)], args.repeats) / n_scalar
    n_old = n_scalar // 10
    old = median_time(lambda: [old_scalar_release(plan, 1.0) for _ in range(n_old)],
                      args.repeats) / n_old
    ref = median_time(lambda: [npg.laplace(1.0, scale) for _ in range(n_scalar)], args.repeats) / n_scalar
    rows.append(("scalar release", new, old, ref))

    for n in (10**3, big):
        reps = args.repeats if n < big else max(min(3, args.repeats), args.repeats // 2)
        new = median_time(lambda: discrete_laplace(lam, size=n), reps) / n  # OS entropy, as releases
        old = median_time(lambda: reference_discrete_laplace(lam, size=n, rng=release_rng()), reps) / n
        ref = median_time(lambda: npg.laplace(0.0, scale, size=n), reps) / n
        rows.append((f"vector 10^{len(str(n)) - 1}", new, old, ref))
        new = median_time(lambda: plan.release_array(np.zeros(n)), reps) / n
        with mock.patch.object(safe_noise, "discrete_laplace", reference_discrete_laplace):
            old = median_time(lambda: plan.release_array(np.zeros(n), rng=release_rng()), reps) / n
        rows.append((f"release_array 10^{len(str(n)) - 1}", new, old, ref))

    # tiny and integer scales
    exp10 = len(str(big)) - 1
    for name, lam2 in ((f"vector 10^{exp10}, λ=2 (counts)", Fraction(2)),
                       (f"vector 10^{exp10}, λ=1/2", Fraction(1, 2))):
        n = big
        reps = max(min(3, args.repeats), args.repeats // 2)
        new = median_time(lambda: discrete_laplace(lam2, size=n), reps) / n
        old = median_time(lambda: reference_discrete_laplace(lam2, size=n, rng=release_rng()), reps) / n
        ref = median_time(lambda: npg.laplace(0.0, float(lam2), size=n), reps) / n
        rows.append((name, new, old, ref))

    print(f"{'draw':28s} {'new µs':>9s} {'old µs':>9s} {'numpy µs':>9s} {'new/numpy':>10s} "
          f"{'old/numpy':>10s} {'speed-up':>9s}")
    for name, new, old, ref in rows:
        print(f"{name:28s} {new * 1e6:9.3f} {old * 1e6:9.3f} {ref * 1e6:9.3f} {new / ref:10.1f} "
              f"{old / ref:10.1f} {old / new:9.1f}")


if __name__ == "__main__":
    main()
