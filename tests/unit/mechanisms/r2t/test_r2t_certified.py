"""R2T's certified approximate LPs held to the exact ones: every certificate brackets the plain
LP's optimum (HiGHS, and PuLP on tiny instances) whatever the iterate, the interval R2TModel
returns is within the gap on the safe side, and a race with ``lp_gap`` lies between the eager
races at ``Q − γτ`` and at ``Q`` (so its values are admissible, the premise of the privacy proof
in :mod:`provsql_dp.mechanisms.r2t.race`). The three properties of :meth:`R2TModel.value_interval`
and the race hold for both accelerators and are checked here once, parametrised over
``SOLVERS``: the interior-point method (:mod:`._r2t_certified`) and Newton's method on the
smoothed dual (:mod:`._r2t_smooth`, whose own tests are in test_r2t_smooth.py)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import breadth
from hypothesis import given, settings, strategies as st

from provsql_dp.mechanisms.r2t import _certified as cert
from provsql_dp.mechanisms.r2t import race as r2t
from provsql_dp.mechanisms.r2t.truncation import R2TModel

from recursive_testkit import random_kr
from test_r2t import pulp_truncation

seeds = st.integers(0, 2**32 - 1)
shapes = st.sampled_from([(5, 7, 3), (8, 30, 2), (10, 40, 1), (6, 20, 3), (12, 80, 1)])
SOLVERS = ("certified", "smooth")


def route(target, solver: str):
    """Send every small block of ``target`` (an R2TModel or the class) through ``solver``: the
    interior-point method (``certified``) or, taking precedence, ``_r2t_smooth`` (``smooth``)."""
    target.certified_min_columns = 0
    if solver == "smooth":
        target.smooth_min_columns = 0


def model_of(seed, shape, integer=False, solver="certified"):
    n, n_tuples, max_monos = shape
    kr = random_kr(np.random.default_rng(seed), n=n, n_tuples=n_tuples, max_monos=max_monos,
                   integer_weights=integer)
    m = R2TModel(kr)
    route(m, solver)
    return kr, m


def reduced(m, tau):
    """The reduced LP (without its free part) and that free part."""
    _, done_t = m._split(tau)
    keep_m = ~done_t[m.t_of_m]
    return m._merged_model(keep_m, m.load > tau, tau), float(m.w[done_t].sum()), keep_m.any()


@breadth(12, 60, seeds, shapes, st.booleans(), st.floats(0.05, 1.0), st.sampled_from([1, 2, 5, 80]))
def test_certificates_bracket_the_optimum_at_any_iterate(seed, shape, integer, frac, iters):
    kr, m = model_of(seed, shape, integer)
    tau = frac * m.max_load
    model, free, any_kept = reduced(m, tau)
    if not any_kept:
        return
    q = m.plain_value(tau)
    lo, hi = cert.solve(model, rel_gap=0.0, max_iterations=iters)
    assert free + lo <= q + 1e-9 * max(1.0, q)
    assert q <= free + hi + 1e-9 * max(1.0, q)


@settings(max_examples=40, deadline=None)
@given(seeds, shapes, st.floats(0.05, 1.0), seeds)
def test_any_dual_point_bounds_and_any_repaired_point_is_feasible(seed, shape, frac, pseed):
    kr, m = model_of(seed, shape)
    tau = frac * m.max_load
    model, free, any_kept = reduced(m, tau)
    if not any_kept:
        return
    q = m.plain_value(tau)
    rng = np.random.default_rng(pseed)
    n_col, n_row = model[0], len(model[4])
    y = rng.exponential(rng.choice([0.01, 0.3, 3.0]), n_row) * (rng.random(n_row) < 0.7)
    assert q <= free + cert.upper_bound(model, y) + 1e-9
    x = rng.random(n_col) * model[3] * rng.choice([0.1, 1.0, 3.0])
    assert free + cert.feasible_value(model, x) <= q + 1e-9


@pytest.mark.parametrize("solver", SOLVERS)
@breadth(12, 60, seeds, shapes, st.booleans(), st.floats(0.0, 1.2),
         st.sampled_from([1e-6, 0.05, 0.5]))
def test_value_interval_is_within_the_gap_on_the_safe_side(solver, seed, shape, integer, frac,
                                                           gamma):
    kr, m = model_of(seed, shape, integer, solver)
    tau = frac * m.max_load
    f, up = m.value_interval(tau, gap=gamma * tau)
    q = m.plain_value(tau)
    tol = 1e-7 * max(1.0, q)  # HiGHS's own optimality tolerance on the exact blocks
    assert f <= q + tol and q <= up + tol
    assert q - f <= gamma * tau + tol


@pytest.mark.parametrize("solver", SOLVERS)
@breadth(4, 20, seeds, st.sampled_from([0.5, 1.0, 2.0, 4.0]))
def test_value_interval_against_pulp(solver, seed, tau):
    kr, m = model_of(seed, (5, 7, 3), solver=solver)
    f, up = m.value_interval(tau, gap=0.01 * tau)
    q = pulp_truncation(kr, tau)
    assert f <= q + 1e-6 and q <= up + 1e-6 and q - f <= 0.01 * tau + 1e-6


@pytest.mark.parametrize("solver", SOLVERS)
@breadth(8, 40, seeds, shapes, st.sampled_from([0.5, 2.0, 10.0]), st.sampled_from([4, 16, 2**10]),
         st.sampled_from([0.01, 0.25, 1.0]), seeds)
def test_race_with_a_gap_lies_between_the_eager_races(solver, seed, shape, eps, gs, gamma,
                                                      noise_seed):
    kr, _ = model_of(seed, shape)
    old = R2TModel.certified_min_columns, R2TModel.smooth_min_columns
    route(R2TModel, solver)
    try:
        fast = r2t.release(kr, eps, max_contribution=gs, lp_gap=gamma,
                           rng=np.random.default_rng(noise_seed))
    finally:
        R2TModel.certified_min_columns, R2TModel.smooth_min_columns = old
    m = R2TModel(kr)
    taus = r2t.thresholds(gs)
    exact = [m.plain_value(t) for t in taus]
    low = [max(0.0, q - gamma * t) for q, t in zip(exact, taus)]
    hi = r2t._race(exact, eps, gs, r2t.DEFAULT_BETA, np.random.default_rng(noise_seed), gamma)
    lo = r2t._race(low, eps, gs, r2t.DEFAULT_BETA, np.random.default_rng(noise_seed), gamma)
    assert lo.value <= fast.value <= hi.value


def test_the_gap_sets_the_noise_and_zero_changes_nothing():
    plans0, shifts0, _, _ = r2t.plan(1.0, 16, 0.1)
    plans_g, shifts_g, _, _ = r2t.plan(1.0, 16, 0.1, 0.25)
    plans_z, shifts_z, _, _ = r2t.plan(1.0, 16, 0.1, 0.0)
    assert [p.noise_scale for p in plans_z] == [p.noise_scale for p in plans0]
    for p0, pg in zip(plans0, plans_g):
        assert pg.noise_scale == pytest.approx(1.25 * p0.noise_scale)
    with pytest.raises(ValueError, match="lp_gap"):
        r2t.plan(1.0, 16, 0.1, -0.5)
    rel = r2t.fallback(1.0, max_contribution=16, lp_gap=0.25, rng=np.random.default_rng(0))
    assert rel.params["lp_gap"] == 0.25


def test_snap_down_never_rounds_up():
    from provsql_dp.mechanisms.r2t.truncation import _snap_down

    rng = np.random.default_rng(5)
    for q in rng.random(200) * 10.0 ** rng.integers(-5, 9, 200):
        assert _snap_down(float(q)) <= q


@settings(max_examples=60, deadline=None)
@given(seeds, st.integers(1, 12), st.integers(1, 40), st.floats(0.0, 1.0))
def test_column_factor_through_the_violated_rows_equals_the_column_min(seed, m, n, share):
    """The repair's per-column factor through the few rows with ``f < 1`` (``minimum.at``)
    equals the per-column ``reduceat`` over every entry, zero and negative entries included."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    a = sp.random(m, n, density=0.4, random_state=rng, format="csr")
    a.data = np.round(a.data * 4 - 1)  # some entries 0 or negative: ignored by both
    f = np.where(rng.random(m) < share, rng.random(m), 1.0)
    want = cert._column_min(a.tocsc(), f)
    assert np.array_equal(cert._column_factor(a, a.tocsc(), f), want)


@settings(max_examples=200, deadline=None)
@given(seeds, st.sampled_from([1.0, 1 / 0.99, 1 / 0.9]))
def test_step_ratio_is_the_capped_exact_ratio_without_overflow(seed, cap):
    """``_ratio`` is ``min(cap, min over dv < 0 of v/(−dv))``, compared exactly (fractions), with
    denormal and zero directions among normal values: no overflow warning, never above cap."""
    import warnings
    from fractions import Fraction

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 12))
    v = rng.exponential(1.0, n) * 10.0 ** rng.integers(-3, 4, n)
    v[rng.random(n) < 0.2] = 1e-300  # the iterates' floor
    dv = rng.normal(size=n) * 10.0 ** rng.integers(-3, 4, n)
    dv[rng.random(n) < 0.3] = -5e-324  # the smallest denormal: v/(−dv) overflows
    dv[rng.random(n) < 0.1] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = cert._ratio(v, dv, cap)
    exact = [Fraction(float(a)) / -Fraction(float(b)) for a, b in zip(v, dv) if b < 0]
    want = min([Fraction(cap)] + exact)
    assert got <= cap
    assert abs(Fraction(got) - want) <= Fraction(1, 2**50) * want
