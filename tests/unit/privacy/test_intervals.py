"""Coverage of the released intervals, computed exactly from the discrete Laplace law (no sampling:
cannot flake), and the post-processing of COUNTs (integers, never negative, coverage kept)."""

from __future__ import annotations

import math
from fractions import Fraction
from types import MappingProxyType

import numpy as np
from conftest import breadth
from hypothesis import given, settings
from hypothesis import strategies as st

from provsql_dp.mechanisms.global_sensitivity import laplace
from provsql_dp.mechanisms.r2t import race as r2t
from provsql_dp.mechanisms.recursive.release import Release
from provsql_dp.privacy.intervals import covers, interval_of, shown
from provsql_dp.privacy.postprocess import CountRelease, consistent_counts


def dlap_mass(noise_units, lo: int, hi: int) -> float:
    """``Pr[lo ≤ K ≤ hi]`` for ``K ~ DLap(λ)`` from the pmf ``(1 − a)/(1 + a)·a^{|k|}``, summed as
    geometric series over the negative and the nonnegative integers separately (an independent
    derivation from the one-sided tail the code uses)."""
    t = 1.0 / float(noise_units)
    a = math.exp(-t)

    def geo(m0: int, m1: int) -> float:  # (1 − a)·Σ_{m=m0}^{m1} a^m, without cancellation
        if m1 < m0:
            return 0.0
        return math.exp(-m0 * t) - math.exp(-(m1 + 1) * t)

    big = 10 ** 15
    lo, hi = max(lo, -big), min(hi, big)
    neg = geo(max(1, -hi), -lo) if lo < 0 else 0.0  # k = −m, m ≥ 1
    pos = geo(max(0, lo), hi) if hi >= 0 else 0.0
    return (neg + pos) / (1 + a)


P = st.sampled_from([0.8, 0.9, 0.95, 0.99])


@settings(max_examples=60, deadline=None)
@given(sens=st.integers(1, 5), eps=st.floats(0.05, 3.0), p=P, truth=st.integers(0, 10_000),
       k=st.integers(-50, 50))
def test_laplace_count_interval_has_exact_coverage_at_least_p(sens, eps, p, truth, k):
    # the release is truth + K on the unit grid; the interval covers the truth iff |K| ≤ b
    rel = laplace.LaplaceRelease(value=truth + k, epsilon=eps, sensitivity=sens, integer=True)
    lo, hi = interval_of(rel, p)
    b = rel.noise_bound(p)
    assert (lo, hi) == (truth + k - b, truth + k + b)
    assert (lo <= truth <= hi) == (abs(k) <= b)
    assert float(b).is_integer()
    assert dlap_mass(rel.plan.noise_units, -int(b), int(b)) >= p - 1e-9
    assert covers(rel) == "the true count"


@settings(max_examples=60, deadline=None)
@given(delta_hat=st.floats(0.1, 1e4), eps2=st.floats(0.05, 2.0), p=P,
       x=st.floats(0, 1e6), shortfall=st.floats(0, 1e4), k=st.integers(-100, 100))
def test_recursive_interval_covers_whenever_the_noise_is_below_its_one_sided_quantile(
        delta_hat, eps2, p, x, shortfall, k):
    params = MappingProxyType({"eps1": eps2, "eps2": eps2, "theta": 1.0, "beta": 0.1, "mu": 1.0})
    plan = Release(value=0.0, epsilon=2 * eps2, delta_hat=delta_hat, params=params).plan
    g = plan.grid
    value = g * (math.floor(x / g) + k)  # X̂ = γ(⌊X/γ⌋ + K)
    rel = Release(value=value, epsilon=2 * eps2, delta_hat=delta_hat, params=params)
    lo, hi = interval_of(rel, p)
    assert hi is None
    kq = round((value - lo) / g)
    truth = x + shortfall  # the truth is at least X, by any data-dependent truncation
    if k <= kq:
        assert lo <= truth
    # exact coverage of the event K ≤ k_q, from the pmf: at least p whatever the truncation
    assert dlap_mass(plan.noise_units, -10**15, kq) >= p - 1e-9


def test_signed_release_has_no_interval_and_says_so():
    params = MappingProxyType({"eps1": 0.25, "eps2": 0.25, "theta": 1.0, "beta": 0.1, "mu": 1.0})
    part = Release(value=3.0, epsilon=0.5, delta_hat=2.0, params=params)
    signed = Release(value=1.0, epsilon=1.0, delta_hat=2.0, params=params,
                     mechanism="recursive-signed", parts=(part, part))
    assert interval_of(signed) == (None, None)
    assert covers(signed).startswith("nothing") and shown(interval_of(signed)) == "—"


def test_r2t_interval_is_one_sided_and_holds_for_a_truth_of_zero():
    # fallback(): every truncated answer is 0 ≤ truth = 0; the lower end must not exceed it
    # with probability ≥ p — here checked on all 400 seeded draws' union-bound margin
    # (a release of 0 is the race's floor: its lower end was once 0 − max_j(γ_j k_j − s_j), above
    # 0 whenever every shift exceeded its noise quantile — all 400 draws at lp_gap = 1/16)
    for gap in (0.0, r2t.DEFAULT_LP_GAP, 0.5):
        misses = 0
        for seed in range(400):
            rel = r2t.fallback(1.0, max_contribution=16, rng=np.random.default_rng(seed), lp_gap=gap)
            lo, hi = interval_of(rel, 0.95)
            assert hi is None and (lo <= 0 or rel.value > 0)
            misses += lo > 0
        # coverage ≥ 0.95 means misses ~ Binomial(400, ≤ 0.05): mean ≤ 20, P[misses > 42] < 1e-6
        assert misses <= 42


@settings(max_examples=6, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0.0, 1 / 16, 0.5]), st.sampled_from([0.5, 2.0]))
def test_r2t_lower_end_covers_a_positive_truth(seed, gap, eps):
    """A K-relation whose tuples have one participant each (Q(I, τ) = Q(I) for τ ≥ 1): over
    400 releases the lower end exceeds the true answer at most as often as 5 % allows."""
    from provsql_dp.provenance.krelation import KRelation

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    kr = KRelation.from_annotations(rows=[(k,) for k in range(n)],
                                    annotations=[[{("p", k)}] for k in range(n)])
    truth = float(n)
    misses = 0
    for k in range(400):
        rel = r2t.release(kr, eps, max_contribution=8, rng=np.random.default_rng([seed, k]), lp_gap=gap)
        lo, _ = interval_of(rel, 0.95)
        misses += lo > truth
    assert misses <= 42  # Binomial(400, ≤ 0.05) passes 42 with probability < 1e-6


@settings(max_examples=200, deadline=None)
@given(lo=st.one_of(st.none(), st.floats(-1e6, 1e6)), width=st.one_of(st.none(), st.floats(0, 1e6)),
       truth=st.integers(0, 10**6), value=st.floats(-1e6, 1e6))
def test_count_post_processing_keeps_coverage(lo, width, truth, value):
    hi = None if width is None or lo is None else lo + width

    class Raw:
        mechanism = "laplace"
        integer = True
        epsilon = 1.0

        def __init__(self):
            self.value = value

        def interval(self, p):
            return (lo, hi)

        def noise_bound(self, p):
            return 1.0

    c = CountRelease.of(Raw())
    assert isinstance(c.value, int) and c.value >= 0 and c.value == max(0, round(value))
    lo2, hi2 = c.interval(0.95)
    if lo is None and hi is None:
        assert (lo2, hi2) == (None, None)
        return
    raw_covers = (lo is None or lo <= truth) and (hi is None or truth <= hi)
    new_covers = lo2 <= truth and (hi2 is None or truth <= hi2)
    assert not raw_covers or new_covers  # monotone post-processing keeps the coverage
    assert lo2 >= 0 and float(lo2).is_integer()
    assert lo2 <= c.value and (hi2 is None or c.value <= hi2)  # the shown value is inside


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.floats(-50, 500), min_size=2, max_size=12),
       half=st.floats(0, 60), truth=st.lists(st.integers(0, 400), min_size=12, max_size=12))
def test_consistent_bins_intervals_hold_their_shown_value_and_the_raw_coverage(values, half, truth):
    # a histogram whose rounded bins keep their total: the shown bin may move away from the raw
    # release; its interval is the raw one (clipped) widened to hold it, never narrowed
    class Raw:
        mechanism, integer, epsilon = "blowfish", True, 1.0

        def __init__(self, v):
            self.value = v

        def interval(self, p):
            return (self.value - half, self.value + half)

        def noise_bound(self, p):
            return half

    shown_bins = consistent_counts(values)
    for v, s, t in zip(values, shown_bins, truth):
        c = CountRelease(Raw(v), s)
        lo, hi = c.interval(0.95)
        assert lo <= s <= hi
        if v - half <= t <= v + half:
            assert lo <= t <= hi


@breadth(40, 200, st.lists(st.floats(-50, 500), min_size=1, max_size=30))
def test_consistent_counts_are_whole_nonnegative_and_keep_the_total(values):
    out = consistent_counts(values)
    assert all(isinstance(v, int) and v >= 0 for v in out)
    assert sum(out) == max(0, round(sum(values)))


def test_exact_fraction_noise_units_work():
    rel = laplace.LaplaceRelease(value=5, epsilon=Fraction(1, 3), sensitivity=1, integer=True)
    lo, hi = interval_of(rel, 0.95)
    assert hi - lo == 2 * rel.noise_bound(0.95)
