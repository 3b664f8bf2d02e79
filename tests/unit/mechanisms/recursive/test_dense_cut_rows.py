"""The cut rows of the Δ search (``_j_cuts.cuts_at``) and of eq. 20 (``Eq20Cuts._objective_and_cut``)
on one-monomial structures (subgraph counts) are summed by bincounts in dense arrays built from
arrays kept per model, not through a COO → CSR conversion over every tuple: the same rows (same
pattern, values to rounding) and the same exact objective as the general path, on random triangle
K-relations with weights and twin classes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as hs
from test_recursive_certify import random_triangles

from provsql_dp.mechanisms.recursive import _j_cuts
from provsql_dp.mechanisms.recursive._lp import Solver
from provsql_dp.mechanisms.recursive._structure import Structure
from provsql_dp.mechanisms.recursive._x_cuts import Eq20Cuts


def _instance(seed, symmetry=True):
    rng = np.random.default_rng(seed)
    kr = random_triangles(rng, n=int(rng.integers(5, 16)), p=float(rng.uniform(0.3, 0.95)))
    w = np.round(rng.uniform(0.0, 3.0, size=kr.n_tuples) * 4) / 4 if seed % 3 else None
    st = Structure(kr, w) if w is not None else Structure(kr)
    return rng, Solver(st, symmetry=symmetry).lp  # the twin-class quotient, or st itself


def _same(a, b):
    a, b = a.tocsr(), b.tocsr()
    a.eliminate_zeros()
    b.eliminate_zeros()
    assert a.shape == b.shape
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
    assert np.allclose(a.data, b.data, rtol=1e-12, atol=0.0)


@settings(max_examples=40, deadline=None)
@given(seed=hs.integers(0, 2**32 - 1), blocks=hs.sampled_from([1, 2, 3]))
def test_delta_cut_rows_dense_equal_the_sparse_ones(seed, blocks):
    rng, lp = _instance(seed, symmetry=False)
    v = lp.load_view()
    if v._layout()[0] != 3:  # not the fixed-arity layout (rare)
        return
    _dense_equals_sparse(rng, v, blocks)


@settings(max_examples=40, deadline=None)
@given(seed=hs.integers(0, 2**32 - 1), blocks=hs.sampled_from([1, 2, 3]))
def test_delta_cut_rows_dense_equal_the_sparse_ones_on_the_twin_quotient(seed, blocks):
    # the quotient merges twins within a triangle: monomials of 1, 2 or 3 entries with
    # coefficients k = 1, 2, 3 (ca-HepPh's Δ search: 1.42 M tuples of all three sizes)
    rng, lp = _instance(seed, symmetry=True)
    v = lp.load_view()
    if v.n_mono != v.n_tuples or not v.n:
        return
    _dense_equals_sparse(rng, v, blocks)


def _dense_equals_sparse(rng, v, blocks):
    g = np.where(rng.random(v.n) < 0.5, rng.random(v.n), 0.0)
    parts = np.flatnonzero(rng.random(v.n) < 0.6)
    old = _j_cuts._DENSE_CELLS
    try:  # dense blocks of ⌈|parts| / blocks⌉ rows
        _j_cuts._DENSE_CELLS = max(1, -(-len(parts) // blocks)) * v.n
        a1, q1 = _j_cuts.cuts_at(v, g, parts)
    finally:
        _j_cuts._DENSE_CELLS = old
    old = _j_cuts._DENSE_BLOCKS
    try:
        _j_cuts._DENSE_BLOCKS = 0  # the general path
        a0, q0 = _j_cuts.cuts_at(v, g, parts)
    finally:
        _j_cuts._DENSE_BLOCKS = old
    _same(a1, a0)
    assert np.array_equal(q1, q0)


@settings(max_examples=40, deadline=None)
@given(seed=hs.integers(0, 2**32 - 1))
def test_eq20_cut_rows_from_kept_arrays_equal_the_general_ones(seed):
    rng, lp = _instance(seed)
    if not lp.deg.size:  # an instance with no participant left (seed 2833060): nothing to cut
        return
    dh = float(rng.uniform(0.05, 1.0)) * max(float(lp.deg.max()), 1e-9)
    cand = lp.deg > dh
    if not cand.any():
        return
    model = Eq20Cuts(lp, cand, dh)
    assert model._one is not None
    for gc in (np.zeros(model.nc), rng.random(model.nc), np.full(model.nc, 1 / 3)):
        f1, q1, a1 = model._objective_and_cut(gc)
        fg1 = model._f_grp.copy()
        one, model._one = model._one, None
        try:
            f0, q0, a0 = model._objective_and_cut(gc)
        finally:
            model._one = one
        assert abs(f1 - f0) <= 1e-12 * max(1.0, abs(f0))
        assert np.allclose(q1, q0, rtol=1e-12, atol=0.0)
        assert np.allclose(fg1, model._f_grp, rtol=1e-12, atol=1e-12)
        _same(a1, a0)
