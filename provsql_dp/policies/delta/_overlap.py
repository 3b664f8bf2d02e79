"""Proportional overlap of ranges with equal-width bins (Fang & Chang eq. 8), 1-D and 2-D.

A bin that a query range covers only partly contributes the covered fraction of its count. Along
one axis, the covered fraction of bin ``i`` (``[o + i·w, o + (i+1)·w)``) by ``[a, b)`` is
``clip((b − o)/w − i, 0, 1) − clip((a − o)/w − i, 0, 1)``, so the estimate is a difference of the
piecewise-linear interpolation of the prefix sums of the counts — and, in 2-D, of the bilinear
interpolation of the 2-D prefix sums at the four corners. Everything here is vectorised over
queries.

>>> import numpy as np
>>> c = np.array([4.0, 2.0, 6.0])                # bins [0,1), [1,2), [2,3)
>>> float(overlap_1d(c, 0.0, 1.0, [0.5], [2.5])[0])   # half of 4, all of 2, half of 6
7.0
>>> C = np.ones((2, 2))
>>> float(overlap_2d(C, (0.0, 0.0), 1.0, [0.5], [1.5], [0.0], [2.0])[0])
2.0
"""

from __future__ import annotations

import numpy as np

__all__ = ["overlap_1d", "overlap_2d", "fractions_sq_1d", "interp_prefix"]


def interp_prefix(S, t):
    """Linear interpolation of a prefix-sum table ``S`` (``S[0] = 0``) at real bin positions
    ``t`` (clipped to the table), along the last axis of ``S`` if ``S`` is 1-D."""
    n = S.shape[0] - 1
    t = np.clip(np.asarray(t, dtype=float), 0.0, float(n))
    i = np.minimum(np.floor(t).astype(np.int64), max(n - 1, 0))
    f = t - i
    return S[i] * (1 - f) + S[np.minimum(i + 1, n)] * f


def overlap_1d(counts, origin, width, a, b):
    """Σ over bins of (covered fraction) × count, for ranges ``[a, b)``."""
    c = np.asarray(counts, dtype=float)
    S = np.r_[0.0, np.cumsum(c)]
    ta = (np.asarray(a, dtype=float) - origin) / width
    tb = (np.asarray(b, dtype=float) - origin) / width
    return interp_prefix(S, tb) - interp_prefix(S, ta)


def _bilinear(S, tx, ty):
    n1, n2 = S.shape[0] - 1, S.shape[1] - 1
    tx = np.clip(tx, 0.0, float(n1))
    ty = np.clip(ty, 0.0, float(n2))
    i = np.minimum(np.floor(tx).astype(np.int64), max(n1 - 1, 0))
    j = np.minimum(np.floor(ty).astype(np.int64), max(n2 - 1, 0))
    fx, fy = tx - i, ty - j
    i1, j1 = np.minimum(i + 1, n1), np.minimum(j + 1, n2)
    return ((S[i, j] * (1 - fx) + S[i1, j] * fx) * (1 - fy)
            + (S[i, j1] * (1 - fx) + S[i1, j1] * fx) * fy)


def overlap_2d(counts, origin, width, x0, x1, y0, y1):
    """Eq. 8 for rectangles ``[x0, x1) × [y0, y1)`` over a grid of square bins.

    ``counts[i, j]`` is the bin ``[ox + i·w, ox + (i+1)·w) × [oy + j·w, oy + (j+1)·w)``.
    """
    C = np.asarray(counts, dtype=float)
    S = np.zeros((C.shape[0] + 1, C.shape[1] + 1))
    S[1:, 1:] = C.cumsum(0).cumsum(1)
    ox, oy = origin
    tx0 = (np.asarray(x0, dtype=float) - ox) / width
    tx1 = (np.asarray(x1, dtype=float) - ox) / width
    ty0 = (np.asarray(y0, dtype=float) - oy) / width
    ty1 = (np.asarray(y1, dtype=float) - oy) / width
    return (_bilinear(S, tx1, ty1) - _bilinear(S, tx0, ty1) - _bilinear(S, tx1, ty0)
            + _bilinear(S, tx0, ty0))


def fractions_sq_1d(n, origin, width, a, b):
    """Σ over the ``n`` bins of the squared covered fraction, for ranges ``[a, b)``.

    Used for exact noise variances: i.i.d. noise of variance σ² on every bin gives the estimate
    a noise variance ``σ² · Σ fᵢ²`` (1-D) or ``σ² · (Σ fᵢ²)(Σ gⱼ²)`` (2-D rectangles).

    >>> float(fractions_sq_1d(3, 0.0, 1.0, [0.5], [2.5])[0])     # 1/4 + 1 + 1/4
    1.5
    """
    ta = np.clip((np.asarray(a, dtype=float) - origin) / width, 0.0, float(n))
    tb = np.clip((np.asarray(b, dtype=float) - origin) / width, 0.0, float(n))
    ta, tb = np.minimum(ta, tb), np.maximum(ta, tb)
    ia, ib = np.floor(ta), np.floor(tb)
    same = ia == ib
    fa = np.where(ta > ia, ia + 1 - ta, 1.0)  # fraction of the first bin (if partial)
    first_partial = ta > ia
    last_frac = tb - ib
    full = np.maximum(ib - np.where(first_partial, ia + 1, ia), 0)
    out = full + np.where(first_partial, fa ** 2, 0.0) + last_frac ** 2
    return np.where(same, (tb - ta) ** 2, out)
