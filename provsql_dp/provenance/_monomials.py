"""Derivation rows grouped into a K-relation's tuples: canonical monomials, duplicates and
absorbed monomials dropped (``x ∨ x∧y = x``), all in numpy — the last step of
:func:`provsql_dp.provenance.capture.capture`.

>>> import numpy as np
>>> P = np.array([[0, 1], [1, 0], [0, -1]])        # x∧y, y∧x, x — one tuple
>>> kr = _grouped(("c",), (np.array([7, 7, 7]),), np.ones(3), P, np.zeros(3, dtype=np.int64),
...               ["x", "y"], "")
>>> kr.annotation(0)                                 # x∧y is absorbed by x
frozenset({frozenset({'x'})})
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .krelation import KRelation
from .participant_list import ParticipantList


def _dedupe_within(P: np.ndarray) -> None:
    """Blank (set to -1) a participant that repeats an earlier one in the same row, in place."""
    w = P.shape[1]
    for j in range(1, w):
        dup = np.zeros(len(P), dtype=bool)
        for i in range(j):
            dup |= P[:, j] == P[:, i]
        P[dup & (P[:, j] >= 0), j] = -1


def _grouped(names, values, weights, P, tid, plist, sql) -> KRelation:
    """Group derivation rows into tuples (by tuple id ``tid``, in any order); drop duplicate and
    absorbed monomials."""
    n_rows, w = P.shape
    n_t = int(tid.max()) + 1 if n_rows else 0
    # canonical monomials: sort each row, -1 (empty) slots last
    big = np.iinfo(np.int64).max
    S = np.sort(np.where(P < 0, big, P), axis=1)
    # dedupe identical (tuple, monomial) rows
    keys = np.column_stack([tid, S]) if w else tid[:, None]
    order = np.lexsort(keys.T[::-1])
    keys_sorted = keys[order]
    first = np.ones(n_rows, dtype=bool)
    if n_rows > 1:
        first[1:] = np.any(keys_sorted[1:] != keys_sorted[:-1], axis=1)
    rows_m = order[first]  # one derivation row per distinct monomial, ordered by (tid, monomial)
    mono_tid = tid[rows_m]
    M = S[rows_m]
    sizes = (M != big).sum(axis=1)
    keep = _absorption(mono_tid, M, sizes, big)
    rows_m, mono_tid, M, sizes = rows_m[keep], mono_tid[keep], M[keep], sizes[keep]
    # tuples: the first derivation row of each tid gives the values and the weight
    first_row = order[np.searchsorted(keys_sorted[:, 0], np.arange(n_t))]
    mono_counts = np.bincount(mono_tid, minlength=n_t)
    valid = M != big
    return KRelation(
        columns=names,
        values=tuple(v[first_row] for v in values),
        weights=weights[first_row],
        tuple_ptr=np.concatenate([[0], np.cumsum(mono_counts)]).astype(np.int64),
        mono_ptr=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        mono_part=M[valid],
        participant_list=plist if isinstance(plist, ParticipantList) else tuple(plist),
        sql=sql,
    )


def _absorption(mono_tid: np.ndarray, M: np.ndarray, sizes: np.ndarray, big: int) -> np.ndarray:
    """Mask of monomials to keep: a monomial is dropped when another monomial of the same tuple
    is a proper subset of it. Only tuples whose monomials differ in size can absorb."""
    n_m = len(mono_tid)
    keep = np.ones(n_m, dtype=bool)
    if n_m == 0:
        return keep
    n_t = int(mono_tid.max()) + 1
    smin = np.full(n_t, np.iinfo(np.int64).max)
    np.minimum.at(smin, mono_tid, sizes)
    smax = np.zeros(n_t, dtype=np.int64)
    np.maximum.at(smax, mono_tid, sizes)
    cand_t = smin < smax
    if not cand_t.any():
        return keep
    # the empty monomial (True) absorbs everything else of its tuple
    has_true = np.zeros(n_t, dtype=bool)
    has_true[mono_tid[sizes == 0]] = True
    keep &= ~(has_true[mono_tid] & (sizes > 0))
    sel = np.flatnonzero(cand_t[mono_tid] & keep & (sizes > 0))
    if len(sel) == 0:
        return keep
    sub = M[sel]
    valid = sub != big
    rows = np.repeat(np.arange(len(sel)), valid.sum(axis=1))
    cols = sub[valid]
    # incidence monomial × participant; A·Aᵀ counts shared participants of each pair
    A = sp.csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(len(sel), int(cols.max()) + 1))
    shared = (A @ A.T).tocoo()
    r, c, v = shared.row, shared.col, shared.data
    sz = sizes[sel]
    same_t = mono_tid[sel][r] == mono_tid[sel][c]
    # r is a proper subset of c
    absorbed = same_t & (v == sz[r]) & (sz[r] < sz[c])
    keep[sel[np.unique(c[absorbed])]] = False
    return keep
