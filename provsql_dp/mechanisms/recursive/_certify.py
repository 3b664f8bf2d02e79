"""Certified bounds on the Δ-search LP from an approximate (first-order) solution.

Private: computes functions of the private data; reached only through
:mod:`provsql_dp.mechanisms.recursive._lp`.

The Δ search of eq. 11 never needs the value of ``J(W) = min {Σ g : load_p(g) ≤ W ∀p}``, only the
**decision** ``J(τ_j/2) ≤ j`` and a valid tangent cut below ``J`` (see
:meth:`provsql_dp.mechanisms.recursive._lp.Solver.j_value`). Both follow from a pair of bounds
``L ≤ J(W) ≤ U`` certified exactly in numpy, whatever solver produced the approximate solution:

* **upper bound** (:func:`primal_upper`): any ``g ∈ [0,1]^P`` whose loads, recomputed exactly
  from the structure, are all ``≤ W`` is feasible, so ``J(W) ≤ Σ mult·g``. An approximate
  solution is first clipped to the box and scaled up by the smallest of a few factors that makes
  it feasible (loads only fall as ``g`` grows), or rounded to a grid of {0, 1/6, …, 1} when
  that is feasible and not larger (exact at vertices such as whole withdrawals); failing that, participants whose recomputed load
  still exceeds ``W`` are withdrawn fully (``g_p = 1`` sets every monomial containing ``p`` to φ = 0, so ``load_p = 0``,
  and other loads only fall since φ is nonincreasing in ``g``). The bound is therefore always
  certified, never larger than ``J`` by more than the repair;
* **lower bound** (:func:`lagrangian_lower`): every variable of the model is boxed
  (``0 ≤ g, y ≤ 1``), so for **any** row multipliers ``π`` (clipped to the sign of each row's
  finite bound) the Lagrangian dual function
  ``ℓ(π) = Σ_r π_r b_r + Σ_c min(0, c_c − (Aᵀπ)_c)`` is a lower bound of the LP (weak duality;
  no dual feasibility is needed). For the J model ``b_r`` is 1 on monomial rows and ``W`` on load
  rows, so ``ℓ`` is affine in ``W``: ``ℓ(W') = ℓ(W) + s (W' − W)`` with ``s = Σ_load π_r ≤ 0``, a
  lower bound of the model's value at every ``W'`` — the tangent cut the Δ search uses.

So with approximate duals and primal the decision is made **exactly** (the same ``j`` as an exact
solver) whenever ``U ≤ j`` or ``L > j``; only when ``j`` falls between the two is an exact solve
needed. No approximation ever changes Δ.

Examples
--------
>>> import numpy as np
>>> # min x0 + x1  s.t.  x0 + x1 >= 1,  0 <= x <= 1: any multiplier gives a lower bound
>>> start, idx, val = np.array([0, 2]), np.array([0, 1]), np.array([1.0, 1.0])
>>> lagrangian_lower(np.ones(2), np.array([1.0]), np.array([np.inf]), start, idx, val,
...                  np.array([0.7]), load_rows=np.array([], dtype=int))[0] <= 0.7
True
"""

from __future__ import annotations

import numpy as np

__all__ = ["lagrangian_lower", "primal_upper"]


def lagrangian_lower(
    cost: np.ndarray,
    row_lower: np.ndarray,
    row_upper: np.ndarray,
    a_start: np.ndarray,
    a_index: np.ndarray,
    a_value: np.ndarray,
    row_dual: np.ndarray,
    *,
    load_rows: np.ndarray,
) -> tuple[float, float]:
    """``(ℓ, s)``: a certified lower bound of ``min cost·x`` over ``lo ≤ Ax ≤ up``, ``x ∈ [0,1]``,
    and its slope in the common upper bound of ``load_rows``.

    ``a_start``/``a_index``/``a_value`` are the row-wise model (``a_start`` has one entry per row,
    plus an optional final end pointer). ``row_dual`` follows HiGHS's sign convention for a
    minimisation (≥ 0 on an active lower bound, ≤ 0 on an active upper bound); a multiplier of the
    wrong sign for a row's finite bounds is clipped to 0, which keeps the bound valid.
    """
    n_row = len(row_lower)
    pi = np.asarray(row_dual, dtype=np.float64).copy()
    pi[~np.isfinite(pi)] = 0.0
    lo_fin = np.isfinite(row_lower) & (np.abs(row_lower) < 1e300)
    up_fin = np.isfinite(row_upper) & (np.abs(row_upper) < 1e300)
    pi = np.where(pi > 0, np.where(lo_fin, pi, 0.0), np.where(up_fin, pi, 0.0))
    rhs = np.where(pi > 0, np.where(lo_fin, row_lower, 0.0), np.where(up_fin, row_upper, 0.0))
    nnz = len(a_index)
    ends = np.append(np.asarray(a_start[:n_row], dtype=np.int64), nnz)
    row_of = np.repeat(np.arange(n_row), np.diff(ends))
    at_pi = np.bincount(a_index, weights=a_value * pi[row_of], minlength=len(cost))
    reduced = np.asarray(cost, dtype=np.float64) - at_pi
    neg = np.minimum(reduced, 0.0)
    value = float(np.dot(pi, rhs) + neg.sum())
    # floating-point summation error, bounded generously: the bound must never exceed the LP
    value -= 1e-12 * float(np.abs(pi * rhs).sum() + np.abs(neg).sum()) + 1e-300
    slope = float(pi[load_rows].sum()) if len(load_rows) else 0.0
    return value, slope


def primal_upper(view, g: np.ndarray, cap: float) -> tuple[float, np.ndarray]:
    """``(U, g')``: a certified upper bound ``J(cap) ≤ U = Σ mult·g'`` from an approximate ``g``.

    ``view`` is the load view the J model was built on (a
    :class:`~provsql_dp.mechanisms.recursive._structure.Structure`, possibly a quotient with multiplicities);
    ``g`` has one entry per participant (class) of the view. ``g'`` is ``g`` clipped to ``[0, 1]``
    with every participant whose exactly recomputed load exceeds ``cap`` withdrawn fully.
    """
    g0 = np.clip(np.asarray(g, dtype=np.float64), 0.0, 1.0)
    # J is often attained at a vertex with entries in {0, 1/2, 1/3, 1}: the approximate g rounded
    # to such a grid, when feasible, certifies that value exactly (no scaling error), which
    # decides probes ``J ≤ j`` where J is exactly the integer j
    best = None
    for den in (1, 2, 3, 6):
        gr = np.round(g0 * den) / den
        if not (view.loads(gr) > cap).any():
            u = float(np.dot(view.mult, gr))
            if best is None or u < best[0]:
                best = (u, gr)
    # first scale the approximate solution up a little (loads only fall as g grows): an
    # iterate that is feasible up to a relative tolerance usually needs a tiny factor
    for t in _SCALES:
        g = np.minimum(1.0, g0 * (1.0 + t))
        over = view.loads(g) > cap
        if not over.any():
            u = float(np.dot(view.mult, g))
            return (u, g) if best is None or u <= best[0] else best
    if best is not None:
        return best
    for _ in range(3):
        g[over] = 1.0
        over = view.loads(g) > cap
        if not over.any():
            break
    else:  # loads of fully withdrawn participants are 0 and others only fall: cannot happen
        g[over] = 1.0
    return float(np.dot(view.mult, g)), g


#: relative scalings of an approximate ``g`` tried before withdrawing violators fully
_SCALES = (0.0, 1e-6, 1e-4, 1e-3, 1e-2, 3e-2)
