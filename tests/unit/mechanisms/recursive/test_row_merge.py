"""Equal rows of eq. 20's restricted objective merged (mechanisms/recursive/_row_merge.py): the
merged rows are the distinct rows, their weights the sums, the objective ``Σ q (1 − a g)⁺`` the
same function (to rounding), and a merged row's multiplier split over its tuples stays in
``[0, q]`` with the same column loads — checked against the unmerged arrays on random matrices
with repeated rows and on the barrier's rows of random triangle instances (twin classes)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as hs
from test_recursive_certify import random_triangles

from provsql_dp.mechanisms.recursive import _lp, _x_barrier
from provsql_dp.mechanisms.recursive._kelley import restricted
from provsql_dp.mechanisms.recursive._row_merge import merge_rows, split
from provsql_dp.mechanisms.recursive._structure import Structure
from provsql_dp.mechanisms.recursive._x_cuts import Eq20Cuts


def _check(a: sp.csr_matrix, q: np.ndarray, rng) -> None:
    m, w, inv = merge_rows(a, q)
    dense, md = a.toarray(), m.toarray()
    # every row is its merged row; the merged rows are distinct; weights are sums
    assert np.array_equal(md[inv], dense)
    assert len(np.unique(md, axis=0)) == md.shape[0] == len(w)
    assert np.allclose(w, np.bincount(inv, weights=q, minlength=len(w)), rtol=0, atol=0)
    for g in (np.zeros(a.shape[1]), rng.random(a.shape[1]), np.full(a.shape[1], 1 / 3)):
        f0 = float(q @ np.maximum(0.0, 1.0 - a @ g))
        f1 = float(w @ np.maximum(0.0, 1.0 - m @ g))
        assert abs(f0 - f1) <= 1e-12 * max(1.0, abs(f0))
    pi_r = rng.uniform(-0.5, 1.5, size=len(w)) * w  # outside [0, Q] on purpose: clipped
    pi_t = split(pi_r, w, inv, q)
    assert np.all(pi_t >= 0.0) and np.all(pi_t <= q * (1 + 1e-12))
    loads_t = a.T @ pi_t
    loads_r = m.T @ np.clip(pi_r, 0.0, w)
    assert np.allclose(loads_t, loads_r, rtol=1e-12, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(seed=hs.integers(0, 2**32 - 1))
def test_merged_rows_are_the_same_objective_and_loads(seed):
    rng = np.random.default_rng(seed)
    n_dist, nc = int(rng.integers(1, 12)), int(rng.integers(1, 6))
    base = np.round(rng.random((n_dist, nc)) * (rng.random((n_dist, nc)) < 0.6) * 3)
    rows = base[rng.integers(0, n_dist, size=int(rng.integers(1, 40)))]
    q = rng.integers(0, 5, size=len(rows)).astype(float) * rng.random()
    a = sp.csr_matrix(rows)
    if rng.random() < 0.3:  # entries given twice (summed first) and unsorted columns
        coo = a.tocoo()
        half = coo.data / 2
        a = sp.csr_matrix((np.concatenate([half, half]), (np.concatenate([coo.row, coo.row]),
                           np.concatenate([coo.col, coo.col]))), shape=a.shape)
    _check(a, q, rng)


def test_no_rows():
    m, w, inv = merge_rows(sp.csr_matrix((0, 3)), np.zeros(0))
    assert m.shape == (0, 3) and len(w) == 0 and len(inv) == 0


@settings(max_examples=25, deadline=None)
@given(seed=hs.integers(0, 2**32 - 1))
def test_barrier_rows_are_the_kept_tuples_merged(seed):
    rng = np.random.default_rng(seed)
    kr = random_triangles(rng, n=int(rng.integers(6, 16)), p=float(rng.uniform(0.4, 0.95)))
    lp = _lp.Solver(Structure(kr)).lp  # the twin quotient
    if not lp.n or lp.n_mono != lp.n_tuples:
        return
    dh = float(rng.uniform(0.05, 0.9)) * float(lp.deg.max())
    cand = lp.deg > dh
    if not cand.any():
        return
    cols, col, _, t_kept, const, e = restricted(lp, cand)
    kept = np.flatnonzero(t_kept)
    row = np.full(lp.n_tuples, -1, dtype=np.int64)
    row[kept] = np.arange(len(kept))
    a = sp.csr_matrix((lp.ent_coef[e], (row[lp.mono_tuple[lp.ent_mono[e]]], col[lp.ent_part[e]])),
                      shape=(len(kept), len(cols)))
    _check(a, lp.q[kept], rng)
    bar = _x_barrier.AnchoredBarrier(lp, cand, np.zeros(lp.n), _lp.LPStats())
    model = Eq20Cuts(lp, cand, dh)
    reused = _x_barrier.AnchoredBarrier.of(model)  # the cut model's merged rows, not rebuilt
    assert (reused.A != bar.A).nnz == 0 and np.array_equal(reused.q, bar.q)
    assert np.array_equal(reused._merged, bar._merged)
    for g in (np.zeros(len(cols)), rng.random(len(cols))):
        f0 = float(lp.q[kept] @ np.maximum(0.0, 1.0 - a @ g)) + const
        assert abs(bar.objective(g) - f0) <= 1e-12 * max(1.0, abs(f0))
        if model._one is not None:
            f1 = model._objective_and_cut_one(g)[0] + const
            assert abs(f1 - f0) <= 1e-12 * max(1.0, abs(f0))
