"""The noise of every release plan has exactly its stated law and scale (rigorous tolerances).

Releases of a fixed value ``v`` are ``γ·(⌊v/γ⌋ + K)``, so ``K`` is recovered exactly from each
output. Over ``n`` seeded draws the empirical CDF of ``K`` is compared with the exact discrete
Laplace CDF of the plan (``P[K ≤ k] = 1 − p^{k+1}/(1+p)`` for ``k ≥ 0``, ``p = e^{−1/λ}``) by the
Dvoretzky–Kiefer–Wolfowitz inequality (Massart's constant; valid for any distribution, discrete
ones included): ``P[sup_k |F_n(k) − F(k)| > δ] ≤ 2·exp(−2nδ²)``. With ``δ`` set for a failure
probability of ``ALPHA = 1e-6``, a correct sampler fails a check with probability at most
``1e-6`` (the seeds are fixed, so the outcome is deterministic). A wrong scale shows up: the CDFs
of ``DLap(λ)`` and ``DLap(1.05·λ)`` differ by about ``0.05/(2e) ≈ 0.009`` in sup norm, well
above ``δ ≈ 0.0027`` at ``n = 10**6``.

The same draws check the published error bound (``noise.error_bound``, used by
``cursor.privacy``): its coverage is at least ``p − δ`` (Hoeffding, same ``ALPHA``), and the
bound is the exact discrete quantile (checked analytically, not statistically).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from provsql_dp.mechanisms.noise import sources as noise
from provsql_dp.mechanisms.noise.sources import error_bound, tail_units
from provsql_dp.mechanisms.recursive.release import x_plan
from provsql_dp.mechanisms.noise.safe_noise import plan_laplace

ALPHA = 1e-6
N = 1_000_000


def dkw_delta(n: int, alpha: float = ALPHA) -> float:
    """``δ`` with ``2·exp(−2nδ²) = alpha``."""
    return math.sqrt(math.log(2 / alpha) / (2 * n))


def dlap_cdf(k, lam: float) -> np.ndarray:
    p = math.exp(-1.0 / lam)
    k = np.asarray(k, dtype=float)
    with np.errstate(over="ignore"):
        return np.where(k < 0, p ** (-k) / (1 + p), 1 - p ** (k + 1) / (1 + p))


def sup_distance(k: np.ndarray, lam: float) -> float:
    """``sup_t |F_n(t) − F(t)|`` over integers t (attained at an observed value or just below)."""
    k = np.sort(k)
    u = np.unique(k)
    hi = np.searchsorted(k, u, side="right") / k.size  # F_n(u)
    lo = np.searchsorted(k, u, side="left") / k.size  # F_n(u − 1) (no mass strictly between)
    return float(max(np.max(np.abs(hi - dlap_cdf(u, lam))),
                     np.max(np.abs(lo - dlap_cdf(u - 1, lam)))))


PLANS = {
    "count ε=0.5": (plan_laplace(1, 0.5, integer=True), 1234.0),
    "count Δ=3 ε=0.7": (plan_laplace(3, 0.7, integer=True), 98765.0),
    "sum Δ=250 ε=0.3": (plan_laplace(250.0, 0.3), 17.3),
    "sum Δ=1e5 ε=1": (plan_laplace(100000.0, 1.0), 4.2e10 + 0.37),
    "recursive X, Δ̂=7.3 ε₂=0.4": (x_plan(7.3, 0.4), -3.0 / 7.0),
    "Δ̂'s index, ε₁=0.1": (plan_laplace(1, 0.1, integer=True), 12.0),
}


@pytest.mark.parametrize("name", list(PLANS))
def test_release_noise_has_the_plans_exact_law(name):
    plan, v = PLANS[name]
    out = plan.release_array(np.full(N, v), rng=np.random.default_rng(20260101))
    gamma = plan.grid
    base = math.floor(v / gamma)
    k = out / gamma - base
    assert np.array_equal(k, np.round(k))  # exactly on the grid, an integer K per release
    lam = float(plan.noise_units)
    delta = dkw_delta(N)
    assert sup_distance(k, lam) <= delta, name
    # the scale in value units is the stated one: γλ = Δ/ε up to the documented inflation
    assert plan.noise_scale == pytest.approx(plan.sensitivity / plan.epsilon, rel=2 ** -19)
    # the published bound covers at least p of the releases (Hoeffding at ALPHA)
    for p in (0.5, 0.9, 0.95):
        b = error_bound(plan, p, integer=plan.integer)
        assert np.mean(np.abs(out - v) <= b) >= p - delta, (name, p)


def test_a_wrong_scale_would_be_caught():
    """The check has power: the same draws against a 5 % larger λ fail it by far."""
    plan, v = PLANS["sum Δ=250 ε=0.3"]
    out = plan.release_array(np.full(N, v), rng=np.random.default_rng(5))
    k = out / plan.grid - math.floor(v / plan.grid)
    assert sup_distance(k, 1.05 * float(plan.noise_units)) > 2 * dkw_delta(N)


def test_data_independent_noise_has_its_law():
    z = noise.laplace(3.0, size=N, rng=np.random.default_rng(9))
    plan = plan_laplace(3.0, 1.0)
    k = z / plan.grid
    assert np.array_equal(k, np.round(k))
    assert sup_distance(k, float(plan.noise_units)) <= dkw_delta(N)


@pytest.mark.parametrize("lam", [0.3, 1.0, 2.0, 7.5, 1e3, 2.0**30])
@pytest.mark.parametrize("p", [0.5, 0.9, 0.95, 0.999])
def test_error_bound_is_the_exact_discrete_quantile(lam, p):
    """``tail_units`` is the least k with ``P[|K| > k] = 2p^{k+1}/(1+p) ≤ 1 − p``."""
    from fractions import Fraction

    k = tail_units(Fraction(lam), p)

    def log_tail(t):  # ln P[|K| > t] = ln 2 − (t + 1)/λ − ln(1 + e^{−1/λ}), stable for huge λ
        return math.log(2) - (t + 1) / lam - math.log1p(math.exp(-1 / lam))

    target = math.log1p(-p)
    assert log_tail(k) <= target + 1e-12
    assert k == 0 or log_tail(k - 1) > target - 1e-12
