"""Newton's method on R2T's smoothed dual (:mod:`provsql_dp.mechanisms._r2t_smooth`) held to the
exact LPs: its ``(L, U)`` brackets the plain LP's optimum (HiGHS, and PuLP on tiny instances)
after any number of iterations, it reaches small gaps by itself (not only through the exact
fallback of :meth:`R2TModel.value_interval`), and a race through it lies between the eager races
at ``Q − γτ`` and at ``Q`` (the premise of the privacy proof in
:mod:`provsql_dp.mechanisms.r2t`)."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings, strategies as st

from provsql_dp.mechanisms import _r2t_smooth as smooth, r2t
from provsql_dp.mechanisms.r2t_lp import R2TModel
from provsql_dp.provenance.krelation import KRelation

from recursive_testkit import random_kr
from test_r2t import pulp_truncation

seeds = st.integers(0, 2**32 - 1)
shapes = st.sampled_from([(5, 7, 3), (8, 30, 2), (10, 40, 1), (6, 20, 3), (12, 80, 1)])


def model_of(seed, shape, integer=False):
    n, n_tuples, max_monos = shape
    kr = random_kr(np.random.default_rng(seed), n=n, n_tuples=n_tuples, max_monos=max_monos,
                   integer_weights=integer)
    m = R2TModel(kr)
    m.certified_min_columns = m.smooth_min_columns = 0  # every small block through _r2t_smooth
    return kr, m


def reduced(m, tau):
    """The reduced LP (without its free part) and that free part."""
    _, done_t = m._split(tau)
    keep_m = ~done_t[m.t_of_m]
    return m._merged_model(keep_m, m.load > tau, tau), float(m.w[done_t].sum()), keep_m.any()


def clique_triangles(n: int) -> KRelation:
    """Node-private triangles of the complete graph ``K_n``: one monomial ``{a, b, c}`` each."""
    tri = list(itertools.combinations(range(n), 3))
    return KRelation.from_annotations(rows=tri, annotations=[[{("v", v) for v in t}] for t in tri])


@settings(max_examples=60, deadline=None)
@given(seeds, shapes, st.booleans(), st.floats(0.05, 1.0), st.sampled_from([1, 2, 5, 120]))
def test_certificates_bracket_the_optimum_at_any_iterate(seed, shape, integer, frac, iters):
    kr, m = model_of(seed, shape, integer)
    tau = frac * m.max_load
    model, free, any_kept = reduced(m, tau)
    if not any_kept:
        return
    q = m.plain_value(tau)
    lo, hi = smooth.solve(model, abs_gap=0.0, max_iterations=iters)
    assert free + lo <= q + 1e-9 * max(1.0, q)
    assert q <= free + hi + 1e-9 * max(1.0, q)


def test_it_reaches_small_gaps_by_itself():
    """Without the exact fallback: most random reduced LPs (multi-monomial tuples, so linking
    rows, included) get within 1 % of τ, and the clique (the ca-HepPh shape) within 1e-3·τ."""
    met = tried = 0
    for seed in range(40):
        kr, m = model_of(seed, [(8, 30, 2), (10, 40, 1), (12, 80, 1)][seed % 3])
        tau = 0.4 * m.max_load
        model, free, any_kept = reduced(m, tau)
        if not any_kept:
            continue
        lo, hi = smooth.solve(model, abs_gap=0.01 * tau)
        tried += 1
        met += hi - lo <= 0.01 * tau
    assert tried >= 30 and met >= 0.9 * tried, (met, tried)
    m = R2TModel(clique_triangles(14))  # load 66 per node; Q(τ) = 14·τ/3 for τ ≤ 66
    for tau in (3.0, 12.0, 48.0):
        model, free, _ = reduced(m, tau)
        lo, hi = smooth.solve(model, abs_gap=1e-3 * tau)
        assert free + lo <= 14 * tau / 3 <= free + hi + 1e-9 and hi - lo <= 1e-3 * tau


@settings(max_examples=60, deadline=None)
@given(seeds, shapes, st.booleans(), st.floats(0.0, 1.2), st.sampled_from([1e-6, 0.05, 0.5]))
def test_value_interval_is_within_the_gap_on_the_safe_side(seed, shape, integer, frac, gamma):
    kr, m = model_of(seed, shape, integer)
    tau = frac * m.max_load
    f, up = m.value_interval(tau, gap=gamma * tau)
    q = m.plain_value(tau)
    tol = 1e-7 * max(1.0, q)  # HiGHS's own optimality tolerance on the exact blocks
    assert f <= q + tol and q <= up + tol
    assert q - f <= gamma * tau + tol


@settings(max_examples=20, deadline=None)
@given(seeds, st.sampled_from([0.5, 1.0, 2.0, 4.0]))
def test_value_interval_against_pulp(seed, tau):
    kr, m = model_of(seed, (5, 7, 3))
    f, up = m.value_interval(tau, gap=0.01 * tau)
    q = pulp_truncation(kr, tau)
    assert f <= q + 1e-6 and q <= up + 1e-6 and q - f <= 0.01 * tau + 1e-6


@settings(max_examples=30, deadline=None)
@given(seeds, shapes, st.sampled_from([0.5, 2.0, 10.0]), st.sampled_from([4, 16, 2**10]),
       st.sampled_from([0.01, 0.25, 1.0]), seeds)
def test_race_with_a_gap_lies_between_the_eager_races(seed, shape, eps, gs, gamma, noise_seed):
    kr, _ = model_of(seed, shape)
    old = R2TModel.certified_min_columns, R2TModel.smooth_min_columns
    R2TModel.certified_min_columns = R2TModel.smooth_min_columns = 0
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


def test_hessian_matches_the_sparse_product():
    """The pair-count Hessian ``A·diag(d)·Aᵀ`` equals scipy's, wide columns included."""
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    a = sp.random(7, 60, density=0.3, random_state=4, format="csc")
    a = sp.hstack([a, sp.csc_matrix(np.ones((7, 2)))]).tocsc()  # two columns with 7 > 6 entries
    old, smooth._PAIR_K = smooth._PAIR_K, 6
    try:
        h = smooth._Hessian(a, 7)
    finally:
        smooth._PAIR_K = old
    d = rng.random(a.shape[1])
    want = (a @ sp.diags(d) @ a.T).toarray()
    assert np.allclose(h(d), want)


def test_a_crashing_certified_solver_falls_to_the_exact_lp(monkeypatch):
    """The certified solvers only accelerate: any exception in them (a bug included) gets the
    block's exact LP, never a failed release (a failure an analyst could see)."""
    import provsql_dp.mechanisms.r2t_lp as r2t_lp

    def crash(*a, **k):
        raise UnboundLocalError("a bug in the accelerator")

    monkeypatch.setattr(r2t_lp, "smooth_solve", crash)
    monkeypatch.setattr(r2t_lp, "certified_solve", crash)
    m = R2TModel(clique_triangles(9))
    m.certified_min_columns = m.smooth_min_columns = 0
    tau = 0.5 * m.max_load
    f, up = m.value_interval(tau, gap=0.05 * tau)
    q = m.plain_value(tau)
    assert abs(f - q) <= 1e-7 * q and abs(up - q) <= 1e-6 * q
