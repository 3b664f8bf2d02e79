"""The exact smooth-sensitivity median (``noise="smooth_laplace"``): (ε, δ′)-DP checked on the
output distributions themselves, pair by pair, for random δ-neighbours.

The release is ``γ·(⌊med/γ⌋ + K)`` with K ~ DLap(λ(x)); both laws are known exactly, so the
hockey-stick divergence ``Σ_k max(0, P_x(k) − e^ε P_y(k))`` is summed over every output that
carries mass above 1e-300 and must stay ≤ δ′ (the definition of (ε, δ′)-DP, for this pair).
"""

import math

import numpy as np
import pytest

from provsql_dp.policies.delta import Policy, median
from provsql_dp.policies.delta.smooth_median import smooth_laplace_plan


def _law(x, policy, eps, dp_delta):
    """(offset index, λ) of the release's law in grid units."""
    grid, plan = smooth_laplace_plan(x, policy, eps, dp_delta)
    med = float(np.sort(x)[(len(x) + 1) // 2 - 1])
    return math.floor(med / grid), float(plan.noise_units), grid


def _pmf(center, lam, ks):
    return math.tanh(0.5 / lam) * np.exp(-np.abs(ks - center) / lam)


def _hockey(x, y, policy, eps, dp_delta):
    cx, lx, gx = _law(x, policy, eps, dp_delta)
    cy, ly, gy = _law(y, policy, eps, dp_delta)
    assert gx == gy  # the grid is public: the same for neighbours
    reach = int(60 * max(lx, ly)) + 1
    ks = np.arange(min(cx, cy) - reach, max(cx, cy) + reach + 1)
    return float(np.maximum(0.0, _pmf(cx, lx, ks) - math.exp(eps) * _pmf(cy, ly, ks)).sum())


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.slow  # 4-10 s (a rate or brute-force check): CI's second step
def test_random_delta_neighbours_are_eps_delta_close(seed):
    rng = np.random.default_rng(seed)
    d = float(rng.choice([1.0, 0.3, 0.05]))
    policy = Policy(d)
    eps, dp_delta = float(rng.choice([0.5, 1.0, 2.0])), 1e-6
    n = int(rng.integers(1500, 3000))
    x = np.sort(np.clip(rng.normal(0.5, 0.02, n), 0, 1))  # dense near the median: small λ
    m = (n + 1) // 2 - 1
    worst = 0.0
    for _ in range(10):
        y = x.copy()
        i = int(rng.choice([m, m - 1, m + 1, int(rng.integers(n))]))
        y[i] = float(np.clip(y[i] + rng.uniform(-d, d), 0, 1))  # one record moves by ≤ δ
        for a, b in ((x, y), (y, x)):
            worst = max(worst, _hockey(a, b, policy, eps, dp_delta))
    assert worst <= dp_delta


def test_the_release_lies_on_the_public_grid_and_near_the_median():
    x = np.linspace(0.4, 0.6, 4001)
    vals = [median(x, Policy(1.0), 1.0, noise="smooth_laplace", dp_delta=1e-6,
                   rng=np.random.default_rng(s)) for s in range(20)]
    grid = vals[0].grid
    assert all(float(v.value / grid).is_integer() for v in vals)
    assert abs(np.median([v.value for v in vals]) - 0.5) < 0.005  # the global release: noise ~1


def test_dp_delta_goes_with_smooth_laplace_only():
    x = np.linspace(0, 1, 11)
    with pytest.raises(ValueError, match="dp_delta"):
        median(x, Policy(0.1), 1.0, noise="smooth_laplace")
    with pytest.raises(ValueError, match="dp_delta"):
        median(x, Policy(0.1), 1.0, dp_delta=1e-6)
    with pytest.raises(ValueError, match="delta must lie in"):
        median(x, Policy(0.1), 1.0, noise="smooth_laplace", dp_delta=1.5)
