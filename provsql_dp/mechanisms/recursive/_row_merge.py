"""Equal rows of eq. 20's restricted objective merged into one row of summed weight.

Private: computes functions of the private data; reached only through
:mod:`provsql_dp.mechanisms.recursive._x_barrier` and :mod:`provsql_dp.mechanisms.recursive._x_cuts`.

Restricted to the candidate columns ``C`` (``g = 0`` elsewhere), every kept tuple of a
one-monomial structure is the term ``q_t (1 − a_t g)⁺`` with ``a_t`` its row over ``C``. Tuples
whose rows are equal are the same function of ``g`` — on ca-HepPh node, the triangles with one
or two corners in the 185-column clique and the others outside it (their outside corners are
``g = 0``) — so ``Σ_t q_t (1 − a_t g)⁺ = Σ_r Q_r (1 − a_r g)⁺`` with one row ``r`` per distinct
``a`` and ``Q_r`` the sum of its tuples' weights: the same function, **exactly**, summed in
another order (equal to rounding). Measured on ca-HepPh node: 1,243,967 kept tuples → 1,048,087
rows at Δ̂ = 12 k–20 k (185 columns), 1,144,018 → 177,568 at Δ̂ = 29.7 k (102 columns). Every
pass of the Newton path (``A g``, the smoothed objective, the Hessian's pairs) and of the cut
rounds reads the merged rows.

A multiplier ``π_r ∈ [0, Q_r]`` of a merged row splits into ``π_t = π_r q_t / Q_r ∈ [0, q_t]``
over its tuples (:func:`split`): the same loads on every participant (the tuples of a row have
the same entries over ``C``; outside ``C`` each carries its own share), so the weak-duality
bound of :meth:`._x_barrier.AnchoredBarrier.lower` stays a bound over the plain LP's tuples.

>>> import scipy.sparse as sp
>>> a = sp.csr_matrix(np.array([[1.0, 1.0, 0.0], [0.0, 2.0, 0.0], [1.0, 1.0, 0.0], [0.0, 2.0, 0.0]]))
>>> m, w, inv = merge_rows(a, np.array([1.0, 2.0, 3.0, 4.0]))
>>> m.toarray().tolist(), w.tolist(), inv.tolist()
([[0.0, 2.0, 0.0], [1.0, 1.0, 0.0]], [6.0, 4.0], [1, 0, 1, 0])
>>> split(np.array([3.0, 2.0]), w, inv, np.array([1.0, 2.0, 3.0, 4.0])).tolist()
[0.5, 1.0, 1.5, 2.0]
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["merge_rows", "split"]


def merge_rows(a: sp.csr_matrix, q: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """``(A', Q, inverse)``: the distinct rows of ``a`` (entries summed per column first), each
    row's summed weight ``Q = Σ q`` over the rows equal to it, and each row's merged row."""
    a = a.tocsr(copy=True)
    a.sum_duplicates()  # sorted column indices, one entry per column: equal rows, equal arrays
    n = a.shape[0]
    k = np.diff(a.indptr)
    k_max = int(k.max()) if n else 0
    keys = [k]
    for i in range(k_max):  # the i-th entry of every row (column and value), -1/0 past its end
        has = k > i
        pos = np.where(has, a.indptr[:-1] + i, 0)
        keys.append(np.where(has, a.indices[pos] if a.nnz else 0, -1))
        keys.append(np.where(has, a.data[pos] if a.nnz else 0.0, 0.0))
    order = np.lexsort(keys[::-1])
    new = np.ones(n, dtype=bool)
    if n > 1:
        same = np.ones(n - 1, dtype=bool)
        for key in keys:
            ks = key[order]
            same &= ks[1:] == ks[:-1]
        new[1:] = ~same
    group = np.cumsum(new) - 1
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = group
    merged = a[order[new]]
    weight = np.bincount(inverse, weights=q, minlength=int(new.sum()))
    return merged, weight, inverse


def split(pi_rows: np.ndarray, weight: np.ndarray, inverse: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Per-tuple multipliers ``π_t = clip(π_r, 0, Q_r) · q_t / Q_r`` of merged-row ones ``π_r``."""
    w = weight[inverse]
    share = np.divide(q, w, out=np.zeros(len(q)), where=w > 0)
    return np.clip(pi_rows, 0.0, weight)[inverse] * share
