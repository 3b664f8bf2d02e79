"""The private error estimate of a recursive-mechanism release (mechanisms/recursive/error_estimate.py):
its index is the release's own j, neighbours move it by at most one (so the exact discrete
Laplace release of it is e-DP: checked over every neighbour of small random K-relations), and
the stated noise bound α covers the release's noise at least as often as it says."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import breadth
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from recursive_testkit import neighbour, random_kr

from provsql_dp.mechanisms.recursive import error_estimate as ee
from provsql_dp.mechanisms.recursive import efficient as rm
from provsql_dp.mechanisms.recursive import single_owner as so
from provsql_dp.mechanisms.recursive._framework import resolve_params
from provsql_dp.mechanisms.recursive.release import x_plan
from provsql_dp.mechanisms.noise.safe_noise import plan_laplace
from provsql_dp.provenance.krelation import KRelation


def _pmf(k: int, j: int, e: float) -> float:
    """Pr[j̃ = k | j] of the exact release (DLap on the unit grid, noise units λ)."""
    lam = float(plan_laplace(1, e, integer=True).noise_units)
    a = math.exp(-1.0 / lam)
    return (1 - a) / (1 + a) * a ** abs(k - j)


@pytest.mark.slow  # ~10 s idle (39 s loaded): CI's slow step (session 11)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), eps=st.sampled_from([0.3, 1.0, 3.0]),
       style=st.sampled_from(["node", "edge"]))
def test_the_index_is_the_releases_j_and_neighbours_move_it_by_at_most_one(seed, eps, style):
    rng = np.random.default_rng(seed)
    kr = random_kr(rng, n=5, n_tuples=6, integer_weights=True)
    params = resolve_params(eps, style)
    j = ee.delta_index(kr, params)
    assert j == rm.explain(kr, eps, style).delta_j  # the release's own Δ search
    e = 0.5
    for p in kr.participant_list:  # every neighbour: the possible worlds one participant apart
        j2 = ee.delta_index(neighbour(kr, p), params)
        assert abs(j - j2) <= 1, (j, j2, p)
        # so every output's probability ratio is at most e^e (the exact pmf of the release)
        for k in range(min(j, j2) - 30, max(j, j2) + 30):
            assert _pmf(k, j, e) <= math.exp(e) * _pmf(k, j2, e) * (1 + 1e-12)


@settings(max_examples=30, deadline=None)
@given(c=st.lists(st.floats(0, 50), min_size=1, max_size=30), eps=st.floats(0.05, 4))
def test_single_owner_relations_use_the_closed_form_with_the_same_j(c, eps):
    rows = [(i,) for i in range(len(c))]
    kr = KRelation.from_annotations(rows, [[{("p", i)}] for i in range(len(c))], weights=c)
    params = resolve_params(eps, "edge")
    j = ee.delta_index(kr, params)
    assert j == so.delta(np.asarray(c), params["theta"], params["beta"])[0]


@settings(max_examples=60, deadline=None)
@given(d1=st.floats(1e-3, 1e9), d2=st.floats(1e-3, 1e9), eps2=st.floats(0.01, 5))
def test_the_grid_grows_with_delta_hat_and_the_scale_is_at_most_delta_plus_grid(d1, d2, eps2):
    """The two facts α's proof uses about the release's public plan."""
    lo, hi = sorted((d1, d2))
    p_lo, p_hi = x_plan(lo, eps2), x_plan(hi, eps2)
    assert p_lo.grid <= p_hi.grid
    for d, p in ((lo, p_lo), (hi, p_hi)):
        assert p.noise_scale <= (d + p.grid) / eps2 * ee._ROUNDING


def test_alpha_covers_the_releases_noise_at_least_as_often_as_stated():
    """Over the estimate and the release together (single-owner release: X in closed form)."""
    rng = np.random.default_rng(7)
    c = np.concatenate([rng.integers(1, 4, 200), [40.0, 90.0]]).astype(float)
    eps, e, p = 1.0, 0.5, 0.8
    params = resolve_params(eps, "edge")
    j = so.delta(c, params["theta"], params["beta"])[0]
    hits, n = 0, 300
    for _ in range(n):
        est = ee.release_index(j, e, params, rng)
        rel = so.release(c, eps, "edge", rng)
        x = so.clamped_sum(c, rel.delta_hat)
        hits += abs(rel.value - x) <= est.alpha(p)
    assert hits / n >= p


def test_estimates_are_post_processing_of_the_released_index():
    params = resolve_params(1.0, "node")
    a = ee.NoiseEstimate(j_hat=10.0, epsilon=0.5, params=params)
    b = ee.NoiseEstimate(j_hat=14.0, epsilon=0.5, params=params)
    assert a.delta_estimate < b.delta_estimate and a.alpha() < b.alpha() and a.rmse() < b.rmse()
    lo, hi = a.delta_interval(0.9)
    assert lo <= a.delta_estimate <= hi
    assert a.typical_bound(0.95) < a.alpha(0.95)  # the guarantee is wider than the point value
    assert a.truncation_participants(0.95) >= 2 * 10
    s = ee.SignedNoiseEstimate((a, b))
    assert s.epsilon == 1.0 and s.alpha(0.9) == a.alpha(0.95) + b.alpha(0.95)
    assert math.isclose(s.rmse(), math.hypot(a.rmse(), b.rmse()))
    heavy = resolve_params(1.0, "node", beta=0.9)  # 2β ≥ ε₁: E e^{2βK₁} is infinite
    assert ee.NoiseEstimate(j_hat=3.0, epsilon=0.5, params=heavy).rmse() == math.inf


def test_signed_estimate_uses_half_of_each_budget():
    kr = KRelation.from_annotations([(1,), (2,)], [[{("p", 1)}], [{("p", 2)}]], weights=[3.0, -1.0])
    est = ee.estimate(kr, 1.0, 0.4, "edge", np.random.default_rng(0), signed=True)
    assert [p.epsilon for p in est.parts] == [0.2, 0.2]
    assert all(p.params["eps1"] + p.params["eps2"] == pytest.approx(0.5) for p in est.parts)


@breadth(8, 40, la=st.floats(0.2, 8), lb=st.floats(0.2, 8), b=st.floats(0.001, 0.3))
def test_the_difference_quantile_is_exact_by_brute_force_and_beats_the_union(la, lb, b):
    from fractions import Fraction

    ua, ub = Fraction(la).limit_denominator(1000), Fraction(lb).limit_denominator(1000)
    k = ee._difference_quantile(ua, ub, b)
    a, c = math.exp(-1 / float(ua)), math.exp(-1 / float(ub))
    r = np.arange(-600, 601)
    pa = (1 - a) / (1 + a) * a ** np.abs(r)
    pc = (1 - c) / (1 + c) * c ** np.abs(r)
    diff = np.subtract.outer(r, r)  # A − B on the grid of both supports

    def tail(t):
        return float(np.sum(np.outer(pa, pc)[diff > t]))

    assert tail(k) <= b * (1 + 1e-9)
    assert k == 0 or tail(k - 1) > b * (1 - 1e-6)
    assert k <= ee._one_sided(ua, b / 2) + ee._one_sided(ub, b / 2)


@settings(max_examples=60, deadline=None)
@given(j_hat=st.integers(-60, 40), e=st.sampled_from([0.05, 0.5, 2.0]),
       theta=st.sampled_from([1.0, 3.5]), p=st.sampled_from([0.5, 0.9, 0.99]))
def test_printed_deltas_are_deltas_the_release_can_compute(j_hat, e, theta, p):
    """A negative draw j̃ < 0 printed Δ ≈ θe^{βj̃} < θ (and an interval whose upper end fell
    below its lower one); every Δ of the release is θe^{jβ} with j ≥ 0 (eq. 11)."""
    params = resolve_params(1.0, "node", theta=theta)
    est = ee.NoiseEstimate(j_hat=float(j_hat), epsilon=e, params=params)
    lo, hi = est.delta_interval(p)
    assert theta <= lo <= est.delta_estimate <= hi
    for delta in (lo, est.delta_estimate, hi):  # on the release's lattice θe^{jβ}, j ≥ 0 whole
        j = math.log(delta / theta) / params["beta"]
        assert j >= -1e-9 and abs(j - round(j)) < 1e-6
    at_zero = ee.NoiseEstimate(j_hat=0.0, epsilon=e, params=params)
    if j_hat < 0:  # the point estimates are those of j = 0, the likeliest j then
        assert est.delta_estimate == theta
        assert est.rmse() == at_zero.rmse()
        assert est.typical_bound(p) == at_zero.typical_bound(p)
