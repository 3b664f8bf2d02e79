"""A certified approximate optimum of R2T's reduced truncation LP by Newton's method on its
entropy-smoothed dual: for few rows and millions of columns (ca-HepPh node privacy).

The reduced LP (:mod:`.truncation`) is ``max cᵀx  s.t.  Ax ≤ b,  0 ≤ x ≤ u`` (``c ≥ 0``, ``b ≥ 0``).
Its Lagrangian dual ``min_{y ≥ 0} U(y) = bᵀy + Σ_j u_j·(c_j − a_jᵀy)⁺`` is a convex function of
the ``m`` row prices only. Replacing ``t⁺`` by ``μ·log(1 + e^{t/μ})`` and adding a barrier
``−μ·Σ log y_i`` gives a smooth, strictly convex function of ``y``,

    φ_μ(y) = (1 − η)·bᵀy + μ·Σ_j u_j·log(1 + e^{(c_j − a_jᵀy)/μ}) − μ·Σ_i log y_i,

whose gradient is ``(1 − η)·b − A·x(y) − μ/y`` with ``x_j(y) = u_j·σ((c_j − a_jᵀy)/μ)`` strictly
inside the box: at the minimiser, ``A·x ≤ (1 − η)·b`` — a primal point with a margin, and the
primal–dual gap is at most ``m·μ + η·bᵀy + 0.28·μ·Σ u_j`` (far less in practice: only columns
with ``|c_j − a_jᵀy| ≈ μ`` contribute). Newton's method on ``φ_μ`` needs the ``m × m`` Hessian
``A·diag(u·σ(1 − σ)/μ)·Aᵀ + diag(μ/y²)`` (one weighted count over the pairs of entries of every
column, then a dense Cholesky) — the columns never enter a factorisation, and unlike a
primal–dual interior point method no column can get stuck at its bounds (the box is handled in
closed form). ``μ`` shrinks by :data:`SHRINK` each time the iterate is centred.

Nothing here needs to be exact: every iterate is *certified* by
:class:`~provsql_dp.mechanisms.r2t._certified._Certificates` — ``U(y) ≥ OPT`` for any ``y ≥ 0``
(weak duality) and the value of ``x(y)`` repaired to exact feasibility ``≤ OPT`` — and
:func:`solve` returns the best ``(L, U)`` found, ``L ≤ OPT ≤ U``, stopping once ``U − L`` is
within the requested gap. ca-HepPh node privacy, τ = 4096 (409 rows, 2.57 M columns): a gap of
``τ/16`` in ~40 Newton steps, where the primal–dual method stalled at ``1.8·τ``.

>>> import numpy as np
>>> inf = float("inf")
>>> # max x0 + x1 + x2, x0 + x1 ≤ 1, x1 + x2 ≤ 1, 0 ≤ x ≤ 1: optimum 2
>>> model = (3, -np.ones(3), np.zeros(3), np.ones(3), np.full(2, -inf), np.ones(2),
...          np.array([0, 2]), np.array([0, 1, 1, 2]), np.ones(4))
>>> lo, hi = solve(model, abs_gap=1e-3)
>>> bool(lo <= 2.0 <= hi and hi - lo <= 1e-3)
True
"""

from __future__ import annotations

import time

import numpy as np

from ..lp._blas import one_blas_thread

from ._certified import _Certificates, _ratio

__all__ = ["solve", "MAX_ITERATIONS", "SHRINK"]

#: Newton steps before giving up (the caller then solves the LP exactly)
MAX_ITERATIONS = 120
#: factor by which μ shrinks once an iterate is centred
SHRINK = 0.3
#: the first μ (reduced costs are O(1): c ∈ {0, 1}, entries ±1)
MU0 = 0.3
#: the starting row prices (None: ``1/k`` with ``k`` the most positive entries of a column)
Y0: float | None = None
#: an iterate is centred when a full Newton step was taken and ``λ² ≤ CENTRED·m·μ``
CENTRED = 10.0
#: predict the next centre along the central path's tangent after each shrink of μ
PREDICT = True
#: at the first μ, from the far start, clamp each price's decrease per step instead of one
#: fraction-to-the-boundary step for all (ca-HepPh node τ = 4096: 11 → 4 Newton steps there);
#: later, near the path, the clamped move is a poor direction (τ = 1024: 2.5× slower)
CLAMP = True
#: relative margin η kept below every right-hand side by the smoothed primal point
MARGIN = 5e-5
#: a list to which every iteration appends ``(μ, step, λ², L, U, seconds)`` (experiments)
TRACE: list | None = None
#: a list that receives ``[y, c − Aᵀy, μ]`` of the last iterate (experiments)
FINAL: list | None = None
#: columns with more entries than this enter the Hessian through scipy's sparse product
_PAIR_K = 8


class _Hessian:
    """``A·diag(d)·Aᵀ`` (dense, ``m × m``) for many ``d``: for the columns with ``k`` ≤
    :data:`_PAIR_K` entries, the flat positions ``i·m + i'`` of the pairs of their entries
    (``i ≤ i'``; CSC indices are sorted within a column) are listed once, so each Hessian is a
    few weighted ``bincount``; the other columns go through scipy's sparse product."""

    def __init__(self, a_csc, m: int):
        self.m = m
        a_csc.sort_indices()
        ptr, ind, val = a_csc.indptr, a_csc.indices, a_csc.data
        nnz = np.diff(ptr)
        key_t = np.int32 if m * m < 2 ** 31 else np.int64
        self.groups = []  # (columns, [(flat pair positions, value products or None)])
        for k in range(1, _PAIR_K + 1):
            cs = np.flatnonzero(nnz == k)
            if not len(cs):
                continue
            at = ptr[cs][:, None] + np.arange(k)  # (columns × k) entry positions
            ri, rv = ind[at].astype(key_t), val[at]
            ones = bool(np.all(rv == 1.0))
            slots = [(ri[:, p] * key_t(m) + ri[:, q], None if ones else rv[:, p] * rv[:, q])
                     for p in range(k) for q in range(p, k)]
            self.groups.append((cs if len(cs) < len(nnz) else None, slots))
        wide = np.flatnonzero(nnz > _PAIR_K)
        self.wide = wide
        self.a_wide = a_csc[:, wide].tocsr() if len(wide) else None

    def __call__(self, d: np.ndarray) -> np.ndarray:
        m = self.m
        h = np.zeros(m * m)
        for cs, slots in self.groups:
            dc = d if cs is None else d[cs]
            for key, prod in slots:
                h += np.bincount(key, weights=dc if prod is None else dc * prod, minlength=m * m)
        h = h.reshape(m, m)
        h = h + h.T
        h[np.diag_indices(m)] *= 0.5
        if self.a_wide is not None:
            h += (self.a_wide.multiply(d[self.wide]) @ self.a_wide.T).toarray()
        return h


@one_blas_thread
def solve(model, *, abs_gap: float, rel_gap: float = 0.0, time_limit: float | None = None,
          max_iterations: int = MAX_ITERATIONS) -> tuple[float, float]:
    """``(L, U)`` with ``L ≤ OPT ≤ U`` for the max problem of ``model`` (row-wise arrays as
    :meth:`~provsql_dp.mechanisms.r2t.truncation.R2TModel._model` builds them, costs negated); stops
    once ``U − L ≤ max(abs_gap, rel_gap·U)``, or after ``max_iterations`` / ``time_limit`` with
    the best certificates found (the gap may then be larger). BLAS on one thread, as
    :func:`~provsql_dp.mechanisms.r2t._certified.solve`."""
    return _solve(model, abs_gap=abs_gap, rel_gap=rel_gap, time_limit=time_limit,
                  max_iterations=max_iterations)


def _solve(model, *, abs_gap, rel_gap, time_limit, max_iterations):
    from scipy.linalg import cho_factor, cho_solve
    from scipy.special import expit

    t_end = None if time_limit is None else time.perf_counter() + float(time_limit)
    cert = _Certificates(model)
    a, c, u, b, at = cert.a, cert.c, cert.u, cert.b, cert.at
    m, n = a.shape
    if np.any(c < 0) or np.any(b < 0):
        raise ValueError("the smoothed dual needs nonnegative costs and right-hand sides")
    best_hi = cert.upper(np.zeros(m))
    if n == 0 or m == 0:
        val = float(c @ u) if m == 0 else 0.0
        return min(val, best_hi), best_hi
    best_lo = 0.0

    def done():
        return best_hi - best_lo <= max(abs_gap, rel_gap * abs(best_hi))

    hess = _Hessian(at.T.tocsc(copy=False), m)  # Aᵀ in CSR is A in CSC: no copy
    kmax = max(1, int(np.diff(cert.pos_csc.indptr).max()))
    if Y0 is None:  # rows far above their bound start near 1/k, rows near it near 0
        with np.errstate(divide="ignore", invalid="ignore"):
            over = np.nan_to_num(1.0 - b / (cert.pos @ u), nan=0.0)
        y = np.clip(over, 0.0, 1.0) / kmax + 1e-3
    else:
        y = np.full(m, float(Y0))
    b_in = b * (1.0 - MARGIN)
    mu = MU0
    hi, r = cert.upper_and_reduced(y)
    best_hi = min(best_hi, hi)
    base = None  # log(1 + e^{r/μ}) at the current y, when the line search computed it
    for _ in range(max_iterations):
        sig = expit(r / mu)
        x = u * sig
        grad = b_in - a @ x - mu / y
        sig -= 1.0
        sig *= x
        sig *= -1.0 / mu  # u·σ·(1 − σ)/μ, in place
        mat = hess(sig)
        mat[np.diag_indices(m)] += mu / y ** 2 + 1e-12
        try:
            fac = cho_factor(mat, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            break
        dy = -cho_solve(fac, grad, check_finite=False)
        lam2 = -float(grad @ dy)  # Newton decrement squared
        if not (np.all(np.isfinite(dy)) and lam2 >= 0):
            break
        if base is None:
            base = np.logaddexp(0.0, r / mu)
        if CLAMP and mu == MU0:  # first μ only: each price at most 100× lower per step
            step = 1.0
            while True:  # Armijo on φ_μ along the clamped move, its change summed term by term
                move = np.maximum(y + step * dy, 0.01 * y) - y
                slope = float(grad @ move)
                trial = np.logaddexp(0.0, (r - at @ move) / mu)
                change = (float(b_in @ move) + mu * float(u @ (trial - base))
                          - mu * float(np.log1p(move / y).sum()))
                if change <= 0.1 * slope or step < 1e-8:
                    break
                step *= 0.5
            full = step == 1.0 and bool(np.all(y + dy >= 0.01 * y))
            y = np.maximum(y + move, 1e-300)
            step = 1.0 if full else min(step, 0.999)
        else:
            step = min(1.0, 0.99 * _ratio(y, dy, 1 / 0.99))
            dr = -(at @ dy)
            trial = None  # a first step below 1e-8 skips the search: the next one recomputes
            while step > 1e-8:  # Armijo on φ_μ, its change summed term by term
                trial = np.logaddexp(0.0, (r + step * dr) / mu)
                change = (step * float(b_in @ dy) + mu * float(u @ (trial - base))
                          - mu * float(np.log1p(step * dy / y).sum()))
                if change <= -0.1 * step * lam2:
                    break
                step *= 0.5
            y = np.maximum(y + step * dy, 1e-300)
        hi, r = cert.upper_and_reduced(y)
        best_hi = min(best_hi, hi)
        base = trial  # at the accepted step (r recomputed exactly: only the line search uses it)
        centred = step == 1.0 and lam2 <= CENTRED * m * mu
        if centred:  # the repaired primal point is good only near the central path
            x = u * expit(r / mu)
            # repairing only lowers cᵀx: skip it when even cᵀx could not close the gap
            if best_hi - float(c @ x) <= max(abs_gap, rel_gap * abs(best_hi)):
                try:
                    best_lo = max(best_lo, cert.lower(x))
                except ArithmeticError:
                    pass
        if TRACE is not None:
            TRACE.append((mu, step, lam2, best_lo, best_hi, time.perf_counter(),
                          int(np.count_nonzero(np.abs(r) < 30 * mu))))
        if done() or (t_end is not None and time.perf_counter() > t_end):
            break
        if centred:
            if PREDICT:  # move along the central path's tangent dy*/dμ to the next μ
                d_mu = mu * (SHRINK - 1.0)
                dydmu = -cho_solve(fac, a @ (sig * r / mu) - 1.0 / y,  # sig: u·σ(1 − σ)/μ
                                   check_finite=False)
                dp = d_mu * dydmu
                y = y + min(1.0, 0.9 * _ratio(y, dp, 1 / 0.9)) * dp
                base = None
                hi, r = cert.upper_and_reduced(y)
                best_hi = min(best_hi, hi)
            mu *= SHRINK
            base = None
            if mu < 1e-12:
                break
    if FINAL is not None:
        FINAL[:] = [y, r, mu]
    return min(best_lo, best_hi), best_hi
