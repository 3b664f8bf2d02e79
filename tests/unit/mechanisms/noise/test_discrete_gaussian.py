"""The exact discrete Gaussian: its law (chi-square against the exact pmf), the slow reference
transcription of CKS Algorithm 3, the grid plan's privacy arithmetic, and the (ε, δ) ↔ ρ bounds."""

import math
from fractions import Fraction

import numpy as np
import pytest

from provsql_dp.mechanisms.noise.discrete_gaussian import (
    MIN_RHO,
    discrete_gaussian,
    epsilon_of,
    plan_gaussian,
    reference_discrete_gaussian,
    rho_for,
)
from provsql_dp.mechanisms.noise.safe_noise import on_grid


def _pmf(sigma2: int, lo: int, hi: int) -> np.ndarray:
    ks = np.arange(lo, hi + 1)
    w = np.exp(-(ks.astype(float) ** 2) / (2 * sigma2))
    full = sum(math.exp(-k * k / (2 * sigma2)) for k in range(-60 * int(math.sqrt(sigma2)) - 60,
                                                                60 * int(math.sqrt(sigma2)) + 61))
    return w / full


def _chi2_pvalue(sample: np.ndarray, sigma2: int) -> float:
    """Pearson's chi-square of ``sample`` against the exact pmf, tails pooled into two cells."""
    from scipy import stats

    s = int(3 * math.sqrt(sigma2)) + 1
    pmf = _pmf(sigma2, -s, s)
    tail = (1 - pmf.sum()) / 2
    expected = np.concatenate([[tail], pmf, [tail]]) * sample.size
    clipped = np.clip(sample, -s - 1, s + 1) + s + 1
    observed = np.bincount(clipped, minlength=2 * s + 3)
    keep = expected > 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp_ = np.append(expected[keep], expected[~keep].sum())
    if exp_[-1] == 0:
        obs, exp_ = obs[:-1], exp_[:-1]
    return float(stats.chisquare(obs, exp_ * obs.sum() / exp_.sum()).pvalue)


@pytest.mark.parametrize("sigma2", [1, 3, 50, 1000])
def test_fast_sampler_follows_the_exact_pmf(sigma2):
    k = discrete_gaussian(sigma2, size=60_000, rng=np.random.default_rng(sigma2))
    assert _chi2_pvalue(k, sigma2) > 1e-4


@pytest.mark.parametrize("sigma2", [2, 30])
def test_reference_transcription_follows_the_same_law(sigma2):
    ref = reference_discrete_gaussian(sigma2, 4000, np.random.default_rng(7))
    fast = discrete_gaussian(sigma2, size=4000, rng=np.random.default_rng(8))
    assert _chi2_pvalue(ref, sigma2) > 1e-4
    from scipy import stats
    # the two samplers against each other: one law (two-sample test on the values)
    assert stats.ks_2samp(ref, fast).pvalue > 1e-4


def test_a_wrong_law_is_detected():
    """The chi-square check can fail: a sample of another variance is rejected."""
    k = discrete_gaussian(60, size=60_000, rng=np.random.default_rng(3))
    assert _chi2_pvalue(k, 50) < 1e-6


def test_noise_never_depends_on_the_value_and_stays_on_the_grid():
    plan = plan_gaussian(3.0, Fraction(1, 10))
    a = plan.release_array([0.1, 1e6, -5.5], rng=np.random.default_rng(0))
    b = plan.release_array([0.1, 1e6, -5.5], rng=np.random.default_rng(0))
    assert np.array_equal(a, b)
    assert on_grid(a, plan.grid).all()
    assert plan.rho_spent <= plan.rho


@pytest.mark.parametrize("delta,rho,changed", [(1.0, Fraction(1, 2), 1), (7.5, Fraction(1, 1000), 1),
                                               (2.0, Fraction(3, 100), 5), (1e6, Fraction(1, 4), 1)])
def test_plan_charges_at_most_rho(delta, rho, changed):
    plan = plan_gaussian(delta, rho, changed=changed)
    assert plan.rho_spent <= rho
    # the index sensitivity bounds every floored difference: |⌊a/γ⌋ − ⌊b/γ⌋| < |a − b|/γ + 1
    c = math.sqrt(plan.index_sensitivity2)
    assert c >= delta / plan.grid + (math.sqrt(changed) if changed > 1 else 0) - 1e-9
    assert 1 <= plan.inflation < 1.05


def test_counts_on_the_unit_grid_pay_nothing_for_rounding():
    plan = plan_gaussian(1, Fraction(1, 200), integer=True)
    assert plan.grid == 1.0 and plan.index_sensitivity2 == 1 and plan.sigma2_units == 100
    assert plan.rho_spent == Fraction(1, 200)


def test_plan_refuses_before_anything_runs():
    with pytest.raises(ValueError):
        plan_gaussian(1, MIN_RHO / 2)
    with pytest.raises(ValueError):
        plan_gaussian(0, Fraction(1, 2))
    with pytest.raises(ValueError):
        discrete_gaussian(2**40)


def test_rho_for_and_epsilon_of_are_the_standard_bound():
    for eps, d in [(1, 1e-6), (0.1, 1e-9), (5, 1e-5)]:
        r = rho_for(eps, Fraction(d))
        assert epsilon_of(r, d) <= eps
        assert epsilon_of(r * Fraction(10001, 10000), d) > eps * 0.9999
