"""Newton's method on R2T's smoothed dual (:mod:`provsql_dp.mechanisms.r2t._smooth`) held to the
exact LPs: its ``(L, U)`` brackets the plain LP's optimum (HiGHS) after any number of iterations
and it reaches small gaps by itself (not only through the exact fallback of
:meth:`R2TModel.value_interval`). That value_interval through it is within the gap on the safe
side (against HiGHS and PuLP) and that a race through it lies between the eager races at
``Q − γτ`` and at ``Q`` (the premise of the privacy proof in :mod:`provsql_dp.mechanisms.r2t.race`) are
checked in test_r2t_certified.py, parametrised over both accelerators."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings, strategies as st

from provsql_dp.mechanisms.r2t import _smooth as smooth
from provsql_dp.mechanisms.r2t.truncation import R2TModel
from provsql_dp.provenance.krelation import KRelation

from test_r2t_certified import model_of as _model_of, reduced, seeds, shapes


def model_of(seed, shape, integer=False):
    """A random K-relation's R2TModel with every small block through _r2t_smooth."""
    return _model_of(seed, shape, integer, solver="smooth")


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
    import provsql_dp.mechanisms.r2t.truncation as r2t_lp

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
