"""A certified approximate optimum of R2T's reduced truncation LP: few rows, millions of columns.

The reduced LP of a threshold (:mod:`.truncation`) is ``max cᵀx  s.t.  Ax ≤ b,  0 ≤ x ≤ u`` with
few rows (heavy participants, plus the linking rows of multi-monomial tuples) and possibly
millions of columns (ca-HepPh node privacy: 409 rows, 2.57 M columns, where HiGHS's presolve,
IPX and PDLP each take minutes). Two facts make an approximate solve safe:

* **Any** ``y ≥ 0`` certifies ``OPT ≤ U(y) = bᵀy + Σ_j u_j·(c_j − (Aᵀy)_j)⁺`` (weak duality:
  for feasible ``x``, ``cᵀx = yᵀAx + Σ_j (c_j − (Aᵀy)_j)·x_j ≤ yᵀb + Σ_j u_j·(c_j − (Aᵀy)_j)⁺``).
* **Any** feasible ``x`` certifies ``OPT ≥ cᵀx``; :func:`feasible_value` makes an approximate
  primal point feasible exactly (clip to the box, scale every column by the worst factor
  ``b_i / (Ax)_i`` of its packing rows, lower the positive-coefficient columns of the other
  rows) and returns its value, shrunk by a relative ``1e-9`` against rounding.

So :func:`solve` returns ``(L, U)`` with ``L ≤ OPT ≤ U`` whatever the iterate's quality; the
caller (:meth:`~provsql_dp.mechanisms.r2t.truncation.R2TModel.value_interval`) accepts ``L`` when
``U − L`` is within the public tolerance and otherwise solves the LP exactly.

The solver is Mehrotra's primal–dual interior point method with the *dense* normal matrix
``A·D⁻¹·Aᵀ + S·Y⁻¹`` (rows × rows: 409² on ca-HepPh node), formed by one sparse product per
iteration and factored by Cholesky — every per-column operation is numpy over the columns.

>>> import numpy as np
>>> inf = float("inf")
>>> # max x0 + x1 + x2, x0 + x1 ≤ 1, x1 + x2 ≤ 1, 0 ≤ x ≤ 1: optimum 2
>>> model = (3, -np.ones(3), np.zeros(3), np.ones(3), np.full(2, -inf), np.ones(2),
...          np.array([0, 2]), np.array([0, 1, 1, 2]), np.ones(4))
>>> lo, hi = solve(model, rel_gap=1e-9)
>>> bool(lo <= 2.0 <= hi and hi - lo < 1e-6)
True
"""

from __future__ import annotations

import time

import numpy as np

from ..lp._blas import one_blas_thread

__all__ = ["solve", "upper_bound", "feasible_value", "MAX_ITERATIONS"]

#: iterations of the interior point method before it gives up (the caller then solves exactly)
MAX_ITERATIONS = 80
#: relative margin for floating-point rounding in the certificates
_SLACK = 1e-9


def _parts(model):
    n_col, cost, col_lo, col_up, row_lo, row_up, start, index, value = model
    import scipy.sparse as sp

    n_row = len(row_up)
    if np.any(np.isfinite(row_lo)) or np.any(col_lo != 0) or not np.all(np.isfinite(col_up)):
        raise ValueError("the certified solver needs rows Ax ≤ b and columns 0 ≤ x ≤ u < ∞")
    ptr = np.append(np.asarray(start[:n_row], dtype=np.int64), len(index))
    a = sp.csr_matrix((np.asarray(value, dtype=np.float64), np.asarray(index, dtype=np.int64),
                       ptr), shape=(n_row, n_col))
    return a, -np.asarray(cost, dtype=np.float64), np.asarray(col_up, dtype=np.float64), \
        np.asarray(row_up, dtype=np.float64)


class _Certificates:
    """The two certificates of one model, with its matrices prepared once."""

    def __init__(self, model):
        self.a, self.c, self.u, self.b = _parts(model)
        a = self.a
        self.at = a.T.tocsr()
        if np.all(a.data >= 0):  # packing rows only (graph patterns): no copies
            self.pos, self.neg = a, None
            self.packing = np.ones(a.shape[0], dtype=bool)
            self.pos_csc = self.at.T.tocsc(copy=False)  # Aᵀ in CSR is A in CSC
            self.other_csc = None
            return
        pos = a.copy()
        pos.data = np.maximum(pos.data, 0.0)
        neg = a.copy()
        neg.data = np.maximum(-neg.data, 0.0)
        self.pos, self.neg = pos, neg
        self.packing = (neg @ np.ones(a.shape[1])) == 0  # rows with nonnegative entries only
        self.pos_csc = pos.tocsc()
        self.other_csc = (pos.multiply(~self.packing[:, None]).tocsc() if not self.packing.all()
                          else None)

    def upper(self, y: np.ndarray) -> float:
        return self.upper_and_reduced(y)[0]

    def upper_and_reduced(self, y: np.ndarray) -> tuple[float, np.ndarray]:
        """``U(y)`` (``y``'s negative entries taken as 0) and the reduced costs ``c − Aᵀy``."""
        y = np.maximum(np.nan_to_num(np.asarray(y, dtype=np.float64), nan=0.0), 0.0)
        red = self.c - self.at @ y
        val = float(self.b @ y) + float(self.u @ np.maximum(red, 0.0))
        return val + _SLACK * abs(val), red

    def lower(self, x: np.ndarray) -> float:
        c, u, b = self.c, self.u, self.b
        if np.any(c < 0) or np.any(b < 0):
            raise ValueError("feasible_value needs nonnegative costs and right-hand sides")
        x = np.clip(np.nan_to_num(np.asarray(x, dtype=np.float64), nan=0.0), 0.0, u)
        shrink = 1.0 - _SLACK
        # 1. packing rows: every column scaled by the worst factor of the packing rows it is in
        act = self.pos @ x
        with np.errstate(divide="ignore", invalid="ignore"):
            f = np.where(self.packing & (act > b * shrink), b * shrink / act, 1.0)
        x = x * _column_factor(self.pos, self.pos_csc, f)
        # 2. the other rows (u_t − Σ v ≤ 0): lower their positive-coefficient columns
        if self.other_csc is not None:
            act_pos, act_neg = self.pos @ x, self.neg @ x
            with np.errstate(divide="ignore", invalid="ignore"):
                f = np.where(~self.packing & (act_pos > (b + act_neg) * shrink),
                             (b + act_neg) * shrink / act_pos, 1.0)
            f = np.clip(np.nan_to_num(f, nan=0.0), 0.0, 1.0)
            x = x * _column_factor(self.pos, self.other_csc, f)  # f = 1 on packing rows
        if np.any(self.a @ x > b):
            raise ArithmeticError("the repaired point is not feasible")
        val = float(c @ x)
        return val - _SLACK * abs(val)


def upper_bound(model, y: np.ndarray) -> float:
    """``U(y) ≥ OPT`` of the max problem ``model`` (costs negated, as HiGHS minimises) for any
    ``y``: its negative entries are taken as 0. Widened by a relative ``1e-9``."""
    return _Certificates(model).upper(y)


def feasible_value(model, x: np.ndarray) -> float:
    """The value ``cᵀx'`` of a point ``x'`` made feasible from ``x`` (see the module), minus a
    relative ``1e-9``; ``x'`` is checked against every row before its value is trusted
    (:class:`ArithmeticError` if it fails).

    Columns must not have negative costs (true of R2T's models: ``c ∈ {0, 1}``), so lowering a
    column never raises the value beyond ``cᵀx``.
    """
    return _Certificates(model).lower(x)


def _column_factor(csr, csc, f: np.ndarray) -> np.ndarray:
    """:func:`_column_min` of ``f ≤ 1``; through the rows with ``f < 1`` only (``csr``, the
    same matrix row-wise) when they are few — near an optimum, few rows or none need repair."""
    rows = np.flatnonzero(f < 1.0)
    if len(rows) > len(f) // 4:
        return _column_min(csc, f)
    out = np.ones(csr.shape[1])
    counts = csr.indptr[rows + 1] - csr.indptr[rows]
    at = np.repeat(csr.indptr[rows] - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
    pos = csr.data[at] > 0
    np.minimum.at(out, csr.indices[at][pos], np.repeat(f[rows], counts)[pos])
    return out


def _column_min(csc, f: np.ndarray) -> np.ndarray:
    """Per column, the smallest ``f`` over the rows where ``csc`` has an entry (1 if none)."""
    out = np.ones(csc.shape[1])
    has = np.diff(csc.indptr) > 0
    if csc.nnz:
        vals = np.where(csc.data > 0, f[csc.indices], 1.0)
        out[has] = np.minimum.reduceat(vals, csc.indptr[:-1][has])
    return out


@one_blas_thread
def solve(model, *, rel_gap: float, abs_gap: float = 0.0, time_limit: float | None = None,
          max_iterations: int = MAX_ITERATIONS) -> tuple[float, float]:
    """``(L, U)`` with ``L ≤ OPT ≤ U`` for the max problem of ``model`` (row-wise arrays as
    :meth:`~provsql_dp.mechanisms.r2t.truncation.R2TModel._model` builds them, costs negated); stops
    once ``U − L ≤ max(abs_gap, rel_gap·U)``, or after ``max_iterations`` / ``time_limit``
    with the best certificates found (the gap may then be larger). BLAS runs on one thread
    (its threads spin on a loaded machine: a 309 × 309 Cholesky took 0.64 s threaded)."""
    return _solve(model, rel_gap=rel_gap, abs_gap=abs_gap, time_limit=time_limit,
                  max_iterations=max_iterations)


def _solve(model, *, rel_gap: float, abs_gap: float = 0.0, time_limit: float | None = None,
          max_iterations: int = MAX_ITERATIONS) -> tuple[float, float]:
    """``(L, U)`` with ``L ≤ OPT ≤ U`` for the max problem of ``model`` (row-wise arrays as
    :meth:`~provsql_dp.mechanisms.r2t.truncation.R2TModel._model` builds them, costs negated); stops
    once ``U − L ≤ max(abs_gap, rel_gap·U)``, or after ``max_iterations`` / ``time_limit``
    with the best certificates found (the gap may then be larger)."""
    from scipy.linalg import cho_factor, cho_solve
    import scipy.sparse as sp

    t_end = None if time_limit is None else time.perf_counter() + float(time_limit)
    cert = _Certificates(model)
    a, c, u, b, at = cert.a, cert.c, cert.u, cert.b, cert.at
    m, n = a.shape
    best_lo, best_hi = 0.0, cert.upper(np.zeros(m))
    if n == 0 or m == 0:
        val = float(c @ u) if m == 0 else 0.0
        return min(val, best_hi), best_hi
    scale = max(1.0, float(np.max(u)))
    # a strictly interior start, primal and dual feasible: every column at a share of its bound
    # that keeps each row at most half full (rows with negative entries: linking rows, which
    # the same share of their positive and negative columns keeps at ≤ 0 only if b ≥ 0 — their
    # columns start lower, at a quarter, below their negative partners' half)
    pos_load = cert.pos @ u
    with np.errstate(divide="ignore", invalid="ignore"):
        f_row = np.where(pos_load > 0, np.maximum(b, 0.0) / pos_load, 1.0)
    share = np.minimum(0.5, 0.5 * _column_min(cert.pos_csc, np.where(cert.packing, f_row, 1.0)))
    if cert.other_csc is not None:
        share = share * np.where(np.diff(cert.other_csc.indptr) > 0, 0.25, 1.0)
    x = np.maximum(u * share, 1e-12 * np.maximum(u, 1.0))
    x = np.minimum(x, 0.5 * u)
    s = np.maximum(b - a @ x, 1e-3 * np.maximum(1.0, np.abs(b)))
    y = np.full(m, 0.5)
    red = -c + at @ y  # c̃ + Aᵀy with c̃ = −c
    delta = np.maximum(np.abs(red), 1.0)
    z = np.maximum(red, 0.0) + delta
    w = z - red
    for _ in range(max_iterations):
        ux = u - x
        mu = (x @ z + ux @ w + s @ y) / (2 * n + m)
        r_p = b - a @ x - s
        r_d = -(-c + at @ y - z + w)
        dd = z / x + w / ux
        mat = (a.multiply(1.0 / dd)) @ a.T
        mat = mat.toarray() if sp.issparse(mat) else np.asarray(mat)
        mat[np.diag_indices(m)] += s / y + 1e-12 * scale
        try:
            fac = cho_factor(mat, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            break

        def direction(r_xz, r_w, r_sy):
            rhat = r_d + r_xz / x - r_w / ux
            dy = cho_solve(fac, a @ (rhat / dd) + r_sy / y - r_p, check_finite=False)
            dx = (rhat - at @ dy) / dd
            return dx, dy, (r_xz - z * dx) / x, (r_w + w * dx) / ux, (r_sy - s * dy) / y

        def steps(dx, dy, dz, dw, ds):
            ap = min(_ratio(x, dx), _ratio(ux, -dx), _ratio(s, ds))
            ad = min(_ratio(z, dz), _ratio(w, dw), _ratio(y, dy))
            return ap, ad

        dx, dy, dz, dw, ds = direction(-x * z, -ux * w, -s * y)
        ap, ad = steps(dx, dy, dz, dw, ds)
        mu_aff = ((x + ap * dx) @ (z + ad * dz) + (ux - ap * dx) @ (w + ad * dw)
                  + (s + ap * ds) @ (y + ad * dy)) / (2 * n + m)
        sig = (mu_aff / mu) ** 3
        dx2, dy2, dz2, dw2, ds2 = direction(sig * mu - x * z - dx * dz,
                                            sig * mu - ux * w + dx * dw,
                                            sig * mu - s * y - ds * dy)
        ap, ad = steps(dx2, dy2, dz2, dw2, ds2)
        ap, ad = 0.995 * ap, 0.995 * ad
        x = np.clip(x + ap * dx2, 1e-300, None)
        x = np.minimum(x, u * (1 - 1e-15))
        s = np.maximum(s + ap * ds2, 1e-300)
        y, z, w = y + ad * dy2, z + ad * dz2, w + ad * dw2
        y, z, w = np.maximum(y, 1e-300), np.maximum(z, 1e-300), np.maximum(w, 1e-300)
        best_hi = min(best_hi, cert.upper(y))
        try:
            best_lo = max(best_lo, cert.lower(x))
        except ArithmeticError:
            pass
        if best_hi - best_lo <= max(abs_gap, rel_gap * abs(best_hi)):
            break
        if t_end is not None and time.perf_counter() > t_end:
            break
    return min(best_lo, best_hi), best_hi


def _ratio(v: np.ndarray, dv: np.ndarray, cap: float = 1.0) -> float:
    """The largest ``α ≤ cap`` with ``v + α·dv ≥ 0`` (``v ≥ 0``, ``0 < cap`` of order 1).

    Only the components that block before ``cap`` (``v + cap·dv < 0``) are divided: their
    quotient ``v/(−dv)`` is below ``cap``, so it cannot overflow. Dividing every ``dv < 0``
    overflowed to ∞ for a denormal ``dv`` against a normal ``v`` — a component that never blocks,
    which the step's ``min`` with 1 then discarded — and warned.
    """
    block = dv * cap < -v
    if not block.any():
        return cap
    return float(np.min(v[block] / -dv[block]))
