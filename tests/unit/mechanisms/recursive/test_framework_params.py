"""The recursive mechanism's parameter defaults at large ε and its guards against overflow
(:mod:`provsql_dp.mechanisms.recursive._framework`): β = min(ε/5, 1), thresholds θe^{jβ} that
saturate at +inf, ε₁ within the exact sampler's range."""

from __future__ import annotations

import math

import numpy as np
import pytest
from recursive_testkit import make_kr

from provsql_dp.mechanisms.noise.safe_noise import plan_laplace
from provsql_dp.mechanisms.recursive import efficient as rm
from provsql_dp.mechanisms.recursive import single_owner as so
from provsql_dp.mechanisms.recursive.buckets import Buckets, delta_buckets
from provsql_dp.mechanisms.recursive._framework import (
    BETA_CAP, MAX_EPS1, accuracy_bound, delta_search, resolve_params, threshold,
)
from provsql_dp.mechanisms.recursive.release import release_delta_hat


@pytest.mark.parametrize("eps, beta", [(0.5, 0.1), (1.0, 0.2), (5.0, 1.0), (50.0, 1.0),
                                       (5000.0, 1.0), (1e6, 1.0)])
def test_default_beta_is_the_papers_up_to_the_cap(eps, beta):
    p = resolve_params(eps, "edge")
    assert p["beta"] == pytest.approx(beta) and p["beta"] <= BETA_CAP
    assert (p["eps1"], p["eps2"]) == (eps / 2, eps / 2)


def test_explicit_beta_is_kept():
    assert resolve_params(50.0, "node", beta=7.0)["beta"] == 7.0


def test_epsilon_beyond_the_samplers_range_is_refused():
    resolve_params(2 * MAX_EPS1, "edge")  # ε₁ = 2**24 exactly: the smallest admissible scale
    plan_laplace(1, MAX_EPS1, integer=True)
    with pytest.raises(ValueError, match=r"exceeds the recursive mechanism's maximum 2\*\*24"):
        resolve_params(2.001 * MAX_EPS1, "edge")
    with pytest.raises(ValueError, match="eps1"):  # a split can put ε₁ past it alone
        resolve_params(2e7, "edge", eps1=1.8e7)
    with pytest.raises(ValueError, match="below the smallest epsilon"):
        resolve_params(1e-13, "edge")


def test_threshold_saturates_instead_of_overflowing():
    assert threshold(3, 2.0, 0.5) == 2.0 * math.exp(1.5)
    assert threshold(1, 1.0, 709.0) == math.exp(709.0)
    assert threshold(1, 1.0, 710.0) == math.inf
    assert threshold(10**9, 1e-9, 1.0) == math.inf
    assert threshold(1, 1e300, 700.0) == math.inf  # the product overflows: inf, no exception


@pytest.mark.parametrize("beta", [720.0, 1000.0, 1e6])
def test_delta_search_with_overflowing_thresholds(beta):
    c = np.array([5.0, 5.0, 3.0, 40.0])
    assert so.delta(c, 1.0, beta) == (1, math.inf)
    assert delta_buckets(Buckets.from_totals(c, 1.0, beta, 1.0), 1.0, beta) == (1, math.inf)
    assert delta_search(lambda j: [80.0, 10.0, 6.0, 0.0, 0.0][j], 80.0, 4, 1.0, beta) == (
        1, math.inf)
    kr = make_kr([[{0}], [{0, 1}], [{1}], [{2}]], [5.0, 2.0, 3.0, 1.0], 3)
    e = rm.explain(kr, 1.0, beta=beta)
    assert (e.delta_j, e.delta) == (1, math.inf)
    assert math.isfinite(e.delta_hat) and math.isfinite(e.x)  # capped as the release caps it
    bound, _ = accuracy_bound(80.0, theta=1.0, beta=beta, mu=1.0, eps1=0.5, eps2=0.5, c=3.0)
    assert bound == math.inf


@pytest.mark.parametrize("beta", [720.0, 1e6])
def test_releases_with_huge_beta_are_finite_and_never_fall_back(beta):
    rng = np.random.default_rng(3)
    c = np.array([5.0, 5.0, 3.0, 40.0])
    kr = make_kr([[{0}], [{0, 1}], [{1}], [{2}]], [5.0, 2.0, 3.0, 1.0], 3)
    for _ in range(20):
        for rel in (so.release(c, 1.0, "edge", rng, beta=beta),
                    so.release_signed(c, c[::-1], 1.0, "edge", rng, beta=beta),
                    rm.release(kr, 1.0, "edge", rng, beta=beta)):
            assert math.isfinite(rel.value) and math.isfinite(rel.delta_hat)
            assert rel.delta_hat <= math.ldexp(rel.params["eps2"], 63)
    p = resolve_params(1.0, "edge", beta=beta)
    assert release_delta_hat(10**6, p, rng) == math.ldexp(0.5, 63)  # exponent capped


def test_lp_and_closed_form_agree_at_large_epsilon():
    """The LP path and the closed forms draw the same Δ̂ and X̂ at ε = 10⁴ (β capped)."""
    c = [5.0, 5.0, 3.0, 40.0, 0.5]
    kr = make_kr([[{i}] for i in range(5)], c, 5)
    a = so.release(np.array(c), 1e4, "node", np.random.default_rng(11))
    b = rm.release(kr, 1e4, "node", np.random.default_rng(11))
    assert a.params == b.params and a.params["beta"] == 1.0
    assert a.delta_hat == b.delta_hat and a.value == pytest.approx(b.value, abs=1e-6)
    # Δ = e^{2β}: J(e²/2) ≈ 1.43 ≤ 2 < J(e/2) ≈ 2.98; ĵ = j (the index noise is 0 with
    # probability 1 − 2e^{−5000}), Δ̂ = e^{μ+2} and X = Σ min(c, Δ̂) truncates the heavy total
    assert a.delta_hat == pytest.approx(math.exp(3.0))
    assert a.value == pytest.approx(so.clamped_sum(c, math.exp(3.0)), abs=0.05)


def test_lp_path_median_error_does_not_grow_with_epsilon():
    """Tuples owned by two participants (the LP path, node privacy): the median error of 25
    releases shrinks from ε = 1 to 1000 (with β = ε/5 it exploded past ε = 5)."""
    rng = np.random.default_rng(0)
    pairs = rng.integers(0, 30, size=(80, 2))
    ann = [[{int(a), int(b)}] for a, b in pairs if a != b] + [[{3}]] * 10
    kr = make_kr(ann, None, 30)
    medians = [float(np.median([abs(rm.release(kr, eps, "node", rng).value - len(ann))
                                for _ in range(25)])) for eps in (1, 10, 100, 1000)]
    for lower, higher in zip(medians, medians[1:]):
        assert higher <= 1.25 * lower + 0.5, medians
    assert medians[-1] < 0.5, medians
