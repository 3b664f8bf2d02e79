"""Two exact reductions of R2T's truncation LP, apart from :mod:`.truncation` (facts 4 and 6 there):
the class keys of single-monomial columns with the same heavy participants (merged into one
column), and the split of a reduced LP into independent blocks.

>>> import numpy as np
>>> from provsql_dp.provenance.krelation import KRelation
>>> from provsql_dp.mechanisms.r2t.truncation import R2TModel
>>> kr = KRelation.from_annotations(rows=[(k,) for k in range(4)],
...     annotations=[[{("p", 0), ("p", k)}] for k in range(1, 5)])
>>> m = R2TModel(kr)
>>> heavy = np.array([True, False, False, False, False])  # ("p", 0) alone is heavy
>>> keys = class_keys(m, np.arange(4), heavy)
>>> bool(len(set(keys.tolist())) == 1)   # every monomial has the same heavy set {("p", 0)}
True
"""

from __future__ import annotations

import numpy as np

__all__ = ["class_keys"]


def class_keys(model, ms: np.ndarray, rows: np.ndarray) -> np.ndarray | None:
    """One int64 per single-monomial ``ms`` (sorted monomial indices of an
    :class:`~provsql_dp.mechanisms.r2t.truncation.R2TModel`), equal exactly when two monomials have the
    same set of ``rows`` (heavy) participants: the sorted heavy participants in base
    ``n + 1`` (``n`` the participant count, also the padding digit). ``None`` when the keys
    would not fit in 63 bits."""
    n_p = model.n_participants
    k = model._uniform_k
    if k:  # every monomial has k participants (graph patterns): a (monomials × k) view
        if k * np.log2(n_p + 1) >= 62:
            return None
        digits = model.pid.reshape(-1, k)[ms]
        digits = np.where(rows[digits], digits, n_p)
        digits.sort(axis=1)
        kmax = k
    else:
        sel = np.zeros(len(model.t_of_m), dtype=bool)
        sel[ms] = True
        sel = sel[model.mono_of_entry] & rows[model.pid]
        e_m, e_p = model.mono_of_entry[sel], model.pid[sel]  # entries of the kept monomials
        kmax = int(np.bincount(e_m, minlength=len(sel))[ms].max(initial=0))
        if kmax * np.log2(n_p + 1) >= 62:
            return None
        order = np.lexsort((e_p, e_m))
        e_m, e_p = e_m[order], e_p[order]
        col = np.searchsorted(ms, e_m)
        pos = np.arange(len(e_m)) - np.searchsorted(e_m, e_m)
        digits = np.full((len(ms), max(kmax, 1)), n_p, dtype=np.int64)
        digits[col, pos] = e_p
    key = np.zeros(len(ms), dtype=np.int64)
    for j in range(digits.shape[1]):
        key = key * (n_p + 1) + digits[:, j]
    return key


def _blocks(model, min_rows: int) -> list:
    """``model`` (row-wise arrays, as :meth:`R2TModel._model` builds them) split into
    independent LPs: one per connected component with at least ``min_rows`` rows, one for all
    the other rows and columns. The sum of their optima is ``model``'s optimum (fact 6).

    >>> inf = float("inf")
    >>> m = (3, np.array([-1., -1, -1]), np.zeros(3), np.ones(3), np.full(2, -inf),
    ...      np.array([1., 1]), np.array([0, 1]), np.array([0, 2]), np.ones(2))
    >>> [b[0] for b in _blocks(m, 1)]   # rows {x0}, {x2}, and the column x1 in no row
    [1, 1, 1]
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n_col, cost, col_lo, col_up, row_lo, row_up, start, index, value = model
    n_row = len(row_lo)
    if n_row < 2 * min_rows:
        return [model]
    ends = np.append(start[1:n_row], len(index))
    row_of = np.repeat(np.arange(n_row), ends - start[:n_row])
    g = coo_matrix((np.ones(len(index), dtype=np.int8), (row_of, n_row + index)),
                   shape=(n_row + n_col, n_row + n_col))
    n_comp, label = connected_components(g, directed=False)
    rows_in = np.bincount(label[:n_row], minlength=n_comp)
    big = np.flatnonzero(rows_in >= min_rows)
    if len(big) <= 1 and rows_in.max(initial=0) == n_row:
        return [model]
    group = np.full(n_comp, len(big), dtype=np.int64)  # the small ones share the last group
    group[big] = np.arange(len(big))
    g_row, g_col = group[label[:n_row]], group[label[n_row:]]
    out = []
    for k in range(len(big) + 1):
        rs, cs = np.flatnonzero(g_row == k), np.flatnonzero(g_col == k)
        if len(cs) == 0:
            continue
        new_col = np.full(n_col, -1, dtype=np.int64)
        new_col[cs] = np.arange(len(cs))
        counts = (ends - start[:n_row])[rs]
        take = np.repeat(start[rs], counts) + (np.arange(counts.sum()) - np.repeat(
            np.cumsum(counts) - counts, counts))
        st = np.concatenate([[0], np.cumsum(counts)])[:-1]
        out.append((len(cs), cost[cs], col_lo[cs], col_up[cs], row_lo[rs], row_up[rs], st,
                    new_col[index[take]], value[take]))
    return out
