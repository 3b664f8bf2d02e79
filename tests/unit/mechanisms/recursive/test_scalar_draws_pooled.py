"""The single-owner releases' draws with OS entropy (no test generator) come from the per-scale
pools of pre-drawn exact values (``noise.sources.scalar_draws``), as every scalar release's do:
the bucket path and the per-participant path alike, with the exact law; a test generator is
still used as before (same draws, same order: ``test_buckets.py`` compares the two paths)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from provsql_dp.mechanisms.noise import _dlap
from provsql_dp.mechanisms.noise.safe_noise import plan_laplace
from provsql_dp.mechanisms.noise.sources import scalar_draws
from provsql_dp.mechanisms.recursive import buckets, single_owner

C = np.array([0.0, 1.0, 3.0, 2.0, 7.5, 7.5, 40.0])


def _j_hat_scale(epsilon: float) -> tuple[int, int]:
    eps1 = single_owner.release(C, epsilon, "node", np.random.default_rng(0)).params["eps1"]
    units = Fraction(plan_laplace(1, eps1, integer=True).noise_units)
    return units.numerator, units.denominator


def test_os_entropy_draws_take_pooled_values_on_both_paths():
    key = _j_hat_scale(1.0)
    b = buckets.Buckets.from_totals(C, theta=1.0, beta=0.2, mu=math.log(2))
    for release in (lambda: single_owner.release(C, 1.0, "node"),
                    lambda: buckets.release_buckets([b], 1.0, "node"),
                    lambda: single_owner.release_signed(C, C[::-1], 2.0, "node")):
        _dlap._forget_pools()
        release()
        assert key in _dlap._pools and _dlap._pools[key].pos >= 1  # ĵ from its scale's pool


def test_a_test_generator_bypasses_the_pools_and_is_validated():
    _dlap._forget_pools()
    a = single_owner.release(C, 1.0, "node", np.random.default_rng(5))
    b = single_owner.release(C, 1.0, "node", np.random.default_rng(5))
    assert a.value == b.value and a.delta_hat == b.delta_hat and not _dlap._pools
    assert scalar_draws(None) is None
    try:
        scalar_draws(3)
    except TypeError as e:
        assert "Generator" in str(e)
    else:
        raise AssertionError("a seed that is no Generator must be refused")


def test_pooled_j_hat_has_the_exact_discrete_laplace_law():
    """ĵ − j over 4000 OS-entropy releases against DLap(1/ε₁) (DKW, failure prob. 1e-6)."""
    _dlap._forget_pools()
    eps = 1.0
    params = single_owner.release(C, eps, "node", np.random.default_rng(0)).params
    j, _ = single_owner.delta(C, params["theta"], params["beta"])
    n = 4000
    k = np.empty(n)
    for i in range(n):
        rel = single_owner.release(C, eps, "node")
        ln = math.log(rel.delta_hat) - math.log(params["theta"]) - params["mu"]
        k[i] = round(ln / params["beta"]) - j
    lam = 1 / params["eps1"]
    p = math.exp(-1 / lam)
    u = np.arange(k.min() - 1, k.max() + 1)
    cdf = np.where(u < 0, p ** (-u) / (1 + p), 1 - p ** (u + 1) / (1 + p))
    emp = np.searchsorted(np.sort(k), u, side="right") / n
    assert np.max(np.abs(emp - cdf)) <= math.sqrt(math.log(2 / 1e-6) / (2 * n))
