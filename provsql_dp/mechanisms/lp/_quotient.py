"""An LP reduced by an equitable partition of its rows and columns (colour refinement), with the
same optimal value.

Private: computes functions of the private data; reached only through
:mod:`provsql_dp.mechanisms.subgraph.ktriangle`.

Why it is exact (Grohe, Kersting, Mladenov & Selman, *Dimension reduction via colour
refinement*, ESA 2014). Take ``min c·x`` over ``lo ≤ A x ≤ up``, ``l ≤ x ≤ u``, and partitions of
the rows into classes ``R`` and of the columns into classes ``C`` such that ``lo, up`` are
constant on every ``R``, ``c, l, u`` on every ``C``, and the partition is **equitable**: every row
``i ∈ R`` has the same block sum ``S_{RC} = Σ_{j∈C} A_ij``, and every column ``j ∈ C`` the same
``T_{RC} = Σ_{i∈R} A_ij``. Let ``X`` average a vector over each column class and ``Y`` over each
row class. Entry ``(i, j)`` of both ``A X`` and ``Y A`` is ``Σ_{i'∈R, j'∈C} A_i'j' / (|R|·|C|)``
(``|R| S_{RC} = |C| T_{RC}``, both being the block's sum), so ``A X = Y A``. For an optimal
``x``: ``A X x = Y (A x)`` lies in ``[lo, up]`` (an average of values within bounds constant on the
class), ``X x`` within ``[l, u]``, and ``c·X x = c·x`` (``c`` constant on classes, ``X``
symmetric). So **an optimal solution constant on the column classes exists**, and the LP over
one value ``z_C`` per class, with one row per row class (the rows of a class coincide once ``x``
is constant on classes: ``Σ_C S_{RC} z_C``) and cost ``Σ_{j∈C} c_j`` per class, has the same
optimal value; ``x_j = z_{C(j)}`` is an optimal solution of the original LP.

The classes are found by colour refinement (a row's colour hashes its bounds and the multiset of
(coefficient, column colour) over its entries; a column's likewise), then **verified exactly**
(every block sum and bound compared as floats, which are exact here: small integers); a hash
collision that merged unequal rows or columns fails the check and the caller solves the
original LP. A row or column given a key of its own stays a singleton class, so its bounds or
cost may change afterwards (the mass row ``Σ f = i``; the cost ``−Δ̂`` shared by all f columns
keeps the partition equitable too: it is constant on classes of f columns).

*A coefficient that changes between solves* (``marker``: a matrix ``M`` of the same shape). The
partition is refined with ``M``'s entries as a colour of their own and checked equitable for ``A``
and for ``M`` separately; block sums being linear, it is then equitable for ``A + κ M`` at every
κ, and the quotient of ``A + κ M`` is ``Q(A) + κ Q(M)`` (``Quotient.marker`` is ``Q(M)``): one
partition serves every κ (the node k-triangles' G LP, whose per-node rows carry ``−κ s_v``).

Examples
--------
>>> import numpy as np, scipy.sparse as sp
>>> a = sp.csr_matrix(np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0]]))  # a cycle
>>> q = equitable_quotient(a, np.zeros(3), np.zeros(3), np.ones(3), np.ones(3), np.full(3, 9.0))
>>> q.col_class.tolist(), q.row_class.tolist(), q.a.toarray().tolist()
([0, 0, 0], [0, 0, 0], [[2.0]])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..._deadline import check as _check_deadline
from ._twin_hash import _mix, sum_by

__all__ = ["Quotient", "equitable_quotient"]

_MAX_ROUNDS = 200
#: the coefficient a marker entry is refined as (any value; the partition is checked exactly)
_MARK = 0.6180339887498949


@dataclass(frozen=True)
class Quotient:
    """The reduced LP: ``col_class[j]`` / ``row_class[i]`` (dense labels), ``size`` (columns per
    class), and ``a`` (row class × column class block sums ``S_{RC}``), ``cost`` (summed),
    ``col_lo``, ``col_up``, ``row_lo``, ``row_up`` (the classes' common values)."""

    col_class: np.ndarray
    row_class: np.ndarray
    size: np.ndarray
    a: sp.csr_matrix
    cost: np.ndarray
    col_lo: np.ndarray
    col_up: np.ndarray
    row_lo: np.ndarray
    row_up: np.ndarray
    marker: sp.csr_matrix | None = None


def _bits(x: np.ndarray) -> np.ndarray:
    return _mix(np.ascontiguousarray(x, dtype=np.float64).view(np.uint64))


def _first(cls: np.ndarray) -> np.ndarray:
    """The first index of every class (classes labelled ``0 … n − 1``)."""
    _, idx = np.unique(cls, return_index=True)
    return idx


def _dense(h: np.ndarray) -> tuple[np.ndarray, int]:
    _, lab = np.unique(h, return_inverse=True)
    return lab.astype(np.int64), int(lab.max()) + 1 if len(lab) else 0


def _refine(a: sp.csr_matrix, row_key, col_key) -> tuple[np.ndarray, np.ndarray]:
    coo = a.tocoo()
    r, c, v = coo.row.astype(np.int64), coo.col.astype(np.int64), _bits(coo.data)
    row, n_r = _dense(row_key)
    col, n_c = _dense(col_key)
    for _ in range(_MAX_ROUNDS):
        _check_deadline("colour refinement")  # a release's time budget (_deadline)
        with np.errstate(over="ignore"):
            ch = _mix(col[c].astype(np.uint64) * np.uint64(0x9E3779B1) ^ v)
            row_h = _mix(sum_by(r, ch, a.shape[0]) + _mix(row.astype(np.uint64) + np.uint64(1)))
            new_row, n_r2 = _dense(row_h)
            rh = _mix(new_row[r].astype(np.uint64) * np.uint64(0x85EBCA6B) ^ v ^ np.uint64(77))
            col_h = _mix(sum_by(c, rh, a.shape[1]) + _mix(col.astype(np.uint64) + np.uint64(2)))
            new_col, n_c2 = _dense(col_h)
        if n_r2 == n_r and n_c2 == n_c:
            return new_row, new_col
        row, col, n_r, n_c = new_row, new_col, n_r2, n_c2
    return row, col


def _blocks_equal(a: sp.csr_matrix, row_cls: np.ndarray, col_cls: np.ndarray, n_c: int):
    """Block sums ``S[i, C]`` per row; ``None`` unless every row of a class has the same ones.
    Returns the representative rows' sums as a (row class × column class) CSR matrix."""
    # S = A · indicator(col classes): rows × column classes
    ind = sp.csr_matrix((np.ones(a.shape[1]), (np.arange(a.shape[1]), col_cls)),
                        shape=(a.shape[1], n_c))
    s = (a @ ind).tocsr()
    s.eliminate_zeros()
    s.sort_indices()
    srep = s[_first(row_cls)]  # the first row of every class
    mine = srep[row_cls]  # every row's representative's sums, row by row
    mine.sort_indices()
    if (mine.indptr != s.indptr).any() or (mine.indices != s.indices).any():
        return None
    if (mine.data != s.data).any():
        return None
    return srep


def equitable_quotient(a: sp.csr_matrix, cost, col_lo, col_up, row_lo, row_up, *,
                       col_key=None, row_key=None, marker=None) -> Quotient | None:
    """The quotient LP of ``min cost·x : row_lo ≤ a x ≤ row_up, col_lo ≤ x ≤ col_up`` by the
    coarsest equitable partition colour refinement finds, or ``None`` when the exact check fails
    or nothing merges. ``col_key`` / ``row_key`` (uint64) separate columns / rows from the
    start (a unique key keeps one alone). ``marker`` (same shape as ``a``): the partition is
    equitable for it too, so it serves ``a + κ·marker`` at every κ (see the module doc)."""
    a = sp.csr_matrix(a, dtype=np.float64)
    a.sum_duplicates()
    n_row, n_col = a.shape
    mark = None
    if marker is not None:
        mark = sp.csr_matrix(marker, dtype=np.float64)
        mark.sum_duplicates()
        if mark.shape != a.shape:
            raise ValueError(f"marker has shape {mark.shape}, the LP {a.shape}")
    ck = _mix(_bits(cost) ^ _mix(_bits(col_lo) ^ _mix(_bits(col_up))))
    rk = _mix(_bits(row_lo) ^ _mix(_bits(row_up)))
    if col_key is not None:
        ck = _mix(ck ^ np.asarray(col_key, dtype=np.uint64))
    if row_key is not None:
        rk = _mix(rk ^ np.asarray(row_key, dtype=np.uint64))
    row_cls, col_cls = _refine(a if mark is None else (a + _MARK * mark).tocsr(), rk, ck)
    n_c, n_r = int(col_cls.max()) + 1, int(row_cls.max()) + 1
    if n_c == n_col and n_r == n_row:
        return None
    # exact check: bounds and costs constant on classes, block sums equal both ways
    for vals, cls in ((cost, col_cls), (col_lo, col_cls), (col_up, col_cls),
                      (row_lo, row_cls), (row_up, row_cls)):
        vals = np.asarray(vals, dtype=np.float64)
        if not np.array_equal(vals[_first(cls)][cls], vals):
            return None
    _check_deadline("colour refinement's exact check")  # a release's time budget (_deadline)
    s = _blocks_equal(a, row_cls, col_cls, n_c)
    if s is None or _blocks_equal(a.T.tocsr(), col_cls, row_cls, n_r) is None:
        return None
    qm = None
    if mark is not None:
        qm = _blocks_equal(mark, row_cls, col_cls, n_c)
        if qm is None or _blocks_equal(mark.T.tocsr(), col_cls, row_cls, n_r) is None:
            return None
    size = np.bincount(col_cls, minlength=n_c)
    rep_c, rep_r = _first(col_cls), _first(row_cls)
    cost = np.asarray(cost, dtype=np.float64)
    return Quotient(col_class=col_cls, row_class=row_cls, size=size, a=s,
                    cost=np.bincount(col_cls, weights=cost, minlength=n_c),
                    col_lo=np.asarray(col_lo, dtype=np.float64)[rep_c],
                    col_up=np.asarray(col_up, dtype=np.float64)[rep_c],
                    row_lo=np.asarray(row_lo, dtype=np.float64)[rep_r],
                    row_up=np.asarray(row_up, dtype=np.float64)[rep_r], marker=qm)
