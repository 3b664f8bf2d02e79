"""The barrier's Newton step builds its Hessian by :func:`_x_barrier._gram` (CSR data scaled in
place) and reuses ``a = (1 − A g)/μ`` for the line search's first value: both are bit for bit the
former formulas (``rows.T @ rows.multiply(d[:, None])``, ``_smoothed`` recomputing ``A g``), so the
Newton path, hence every bound and released value, is unchanged."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as hs
from test_x_barrier import _model

from provsql_dp.mechanisms.recursive import _x_barrier


@settings(max_examples=60, deadline=None)
@given(seed=hs.integers(0, 2**32 - 1), unsorted=hs.booleans())
def test_gram_is_the_former_product_bit_for_bit(seed, unsorted):
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(1, 60)), int(rng.integers(1, 25))
    a = sp.random(m, n, density=float(rng.uniform(0.05, 0.8)), random_state=rng, format="csr")
    a.data = np.round(a.data * 4) / 2 + rng.random(len(a.data)) * (seed % 2)
    if unsorted and a.nnz:  # rows as a column-sliced matrix may leave them
        for r in range(m):
            lo, hi = a.indptr[r], a.indptr[r + 1]
            p = rng.permutation(hi - lo)
            a.indices[lo:hi], a.data[lo:hi] = a.indices[lo:hi][p], a.data[lo:hi][p]
    d = rng.random(m) * 10 ** rng.uniform(-8, 3, size=m)
    assert np.array_equal(_x_barrier._gram(a, d), (a.T @ a.multiply(d[:, None])).toarray())


def _former_newton(monkeypatch):
    monkeypatch.setattr(_x_barrier, "_gram",
                        lambda rows, d: (rows.T @ rows.multiply(d[:, None])).toarray())
    smoothed = _x_barrier.AnchoredBarrier._smoothed
    monkeypatch.setattr(_x_barrier.AnchoredBarrier, "_smoothed",
                        lambda self, g, mu, a=None: smoothed(self, g, mu))


@settings(max_examples=8, deadline=None)
@given(seed=hs.integers(0, 2**32 - 1))
def test_newton_path_is_the_former_one(seed):
    from _pytest.monkeypatch import MonkeyPatch

    kr, st, s, xc, j_real, dh = _model(seed)
    if xc is None or not _x_barrier.applicable(xc):
        return
    j = float(max(0, math.floor(j_real)))
    g_new, pi_new = _x_barrier.AnchoredBarrier.of(xc).newton(j)
    with MonkeyPatch.context() as mp:
        _former_newton(mp)
        g_old, pi_old = _x_barrier.AnchoredBarrier.of(xc).newton(j)
    assert np.array_equal(g_new, g_old) and np.array_equal(pi_new, pi_old)
