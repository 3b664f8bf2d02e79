"""eq. 20 certified by a smoothed Newton path and a balanced dual, before the Kelley rounds.

Private: computes functions of the private data; reached only through
:mod:`provsql_dp.mechanisms.recursive._lp` (:meth:`Solver.x_real`).

eq. 20 over the columns ``C`` of the cut model (:class:`._x_cuts.Eq20Cuts`, every kept tuple one
monomial, equal rows merged) is ``min_{0 ≤ g ≤ 1} Δ̂ mult·g + Σ_r Q_r (1 − a_r g)⁺``. On
ca-HepPh node its optimum is degenerate (``g = 1/3`` on the 185-clique, most rows on their kink),
and Kelley's rounds approach it slowly. Here, **time only**:

1. **Newton** on the smoothed problem (``(·)⁺`` → ``μ log(1 + e^{·/μ})``, the box by a log
   barrier of weight ``μ``; ``μ`` falls from 0.1 to 1e-5; the certificate is tried at the end
   of each weight from :data:`TRY_MU` down), each step one ``|C| × |C|``
   system with the Gram matrix of :class:`._x_barrier.AnchoredBarrier`. Its slopes
   ``π_r = Q_r σ((1 − a_r g)/μ)`` balance the column prices: ``Aᵀπ ≈ Δ̂ mult``.
2. **Polish** the point onto its kinks: the rows within :data:`KINK` ``μ`` of their kink get
   ``a_r g = 1`` exactly (least squares over the columns strictly inside the box, the others
   rounded to 0 or 1), so a kink row's ``π`` costs nothing in the gap.
3. **Balance** ``π`` exactly: ``π`` is ``Q`` below the kink, 0 above, and on the kink rows the
   smoothed slopes plus one linear correction ``D A_K (A_Kᵀ D A_K)⁻¹ (Δ̂ mult − Aᵀπ)`` on the
   columns inside the box (the balance is linear in ``π``; ``D`` the slopes' weights), clipped
   to ``[0, Q]``.

**What decides** (the same certificate as the cut rounds): ``upper`` is the exact objective at
the polished point (feasible: ``0 ≤ g ≤ 1``, ``g = 0`` outside ``C``); ``lower`` the weak-duality
bound of the plain LP over **all** participants at ``π`` (split over the merged tuples by weight,
:func:`._row_merge.split`; ``q`` on tuples whose monomial avoids ``C``):
``const_true + Σ_t π_t − Σ_p (load_p(π) − Δ̂ mult_p)⁺``. When ``upper − lower ≤ 1e-9`` relative
(:data:`._x_cuts._GAP`, as Kelley's test), ``upper`` is eq. 20's value to that tolerance;
otherwise :func:`certify` returns ``None`` and the caller runs the Kelley rounds as before.
Nothing in the bound depends on how ``g`` and ``π`` were found.

>>> from provsql_dp.provenance.krelation import KRelation
>>> from provsql_dp.mechanisms.recursive._structure import Structure
>>> from provsql_dp.mechanisms.recursive._x_cuts import Eq20Cuts
>>> kr = KRelation.from_annotations(
...     rows=[(1,), (2,), (3,)],
...     annotations=[[{("v", "a"), ("v", "b")}], [{("v", "a"), ("v", "c")}], [{("v", "a"), ("v", "d")}]])
>>> st = Structure(kr)
>>> from provsql_dp.mechanisms.recursive._x_barrier import AnchoredBarrier
>>> model = Eq20Cuts(st, st.deg > 0.5, 0.5)
>>> out = certify(model, AnchoredBarrier.of(model))  # withdraw a (cost 0.5), keep no edge
>>> round(out[0], 9), out[1].round(9).tolist()
(0.5, [1.0, 0.0, 0.0, 0.0])
"""

from __future__ import annotations

import time

import numpy as np
from scipy.special import expit

from ..._deadline import check as _check_deadline
from ._row_merge import split
from ._x_cuts import _GAP

__all__ = ["certify", "applicable", "anchored", "box_step"]

#: the smoothing weights of the path (the last one is where the polish starts)
MUS = (1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5)
#: the certificate is tried at the end of every weight from this one down
TRY_MU = 1e-2
#: Newton steps per certificate before giving up (then the Kelley rounds decide)
MAX_STEPS = 120
#: a row within ``KINK μ`` of its kink (``|1 − a g|``, at most 0.1) is put on it by the polish,
#: a column within that of 0 or 1 rounded there
KINK = 10.0


def applicable(model) -> bool:
    """A cut model with the one-monomial arrays (subgraph counts) and at least one column."""
    return getattr(model, "_one", None) is not None and model.nc > 0


def box_step(g: np.ndarray, step: np.ndarray) -> float:
    """The Newton step's length along ``step`` that keeps ``g`` inside the open box (0, 1): 1, or
    0.99 of the distance to the first wall (the barrier's path and :func:`certify` share it)."""
    t = 1.0
    neg, pos = step < 0, step > 0
    if neg.any():
        t = min(t, 0.99 * float(np.min(-g[neg] / step[neg])))
    if pos.any():
        t = min(t, 0.99 * float(np.min((1.0 - g[pos]) / step[pos])))
    return t


def certify(model, bar):
    """``(value, g)`` of eq. 20 (``const`` included; ``g`` over all participants) certified to
    1e-9 relative, or ``None`` (then nothing is decided: the caller runs its rounds). Sets
    ``model.g_star`` and ``model.barrier`` (the :class:`._x_barrier.AnchoredBarrier` whose Gram
    pairs it built) when it decides. ``bar``: the model's
    :class:`._x_barrier.AnchoredBarrier` (``AnchoredBarrier.of(model)``: its rows, Gram matrix)."""
    t0 = time.perf_counter()
    d = model.delta_hat * bar.mult
    out = None
    model.balance_steps = 0
    for mu, g, pi, dw in _path(bar, d, model):  # the certificate at the end of each weight
        g_pol, pi = _polish(bar, d, g, pi, dw, min(0.1, KINK * mu))
        upper = float(d @ g_pol) + bar.objective(g_pol) - bar.const
        lower = _lower(bar, model.delta_hat, pi) - bar.const
        model.balance_gap = (lower, upper)
        if upper - lower <= _GAP * max(1.0, abs(upper)):
            full = np.zeros(model.st.n)
            full[bar.cols] = g_pol
            model.g_star, model.barrier = g_pol, bar  # h_pair's barrier starts from g_pol
            bar.g_star = g_pol
            out = upper + bar.const, full
            break
    model.stats.build_seconds += time.perf_counter() - t0
    return out


def _path(bar, d, model):
    """``(μ, g, π, D)`` at the end of each smoothing weight from :data:`TRY_MU` down (``D`` the
    slopes' weights ``π (1 − σ)``); ends early when a step fails."""
    nc = bar.nc
    g = np.full(nc, 0.5)
    for mu in MUS:
        for _ in range(30):
            if model.balance_steps >= MAX_STEPS:
                return
            _check_deadline("eq. 20's balanced certificate")
            model.balance_steps += 1
            a = (1.0 - bar.A @ g) / mu
            sig = expit(a)
            pi = bar.q * sig
            grad = d - (bar.At @ pi) - mu * (1.0 / g - 1.0 / (1.0 - g))
            live = np.abs(a) < 36.0
            w = np.where(live, pi * (1.0 - sig) / mu, 0.0)
            hess = bar.hessian(w, live)
            hess[np.arange(nc), np.arange(nc)] += mu * (1.0 / g**2 + 1.0 / (1.0 - g) ** 2)
            try:
                step = np.linalg.solve(hess, -grad)
            except np.linalg.LinAlgError:
                return
            if not np.all(np.isfinite(step)):
                return
            dec = -float(grad @ step)
            t = box_step(g, step)
            f0 = _smoothed(bar, d, g, mu, a)
            while t > 1e-12 and _smoothed(bar, d, g + t * step, mu) > f0 - 0.25 * t * max(dec, 0.0):
                t *= 0.5
            g = np.clip(g + t * step, 1e-15, 1 - 1e-15)
            if dec < 1e-9 * max(1.0, abs(f0)):
                break
        if mu <= TRY_MU:
            sig = expit((1.0 - bar.A @ g) / mu)
            pi = bar.q * sig
            yield mu, g, pi, pi * (1.0 - sig)


def _smoothed(bar, d, g, mu, a=None) -> float:
    a = (1.0 - bar.A @ g) / mu if a is None else a
    return float(d @ g) + mu * float(bar.q @ np.logaddexp(0.0, a)) - mu * float(
        np.log(g).sum() + np.log1p(-g).sum())


def _polish(bar, d, g, pi, dw, band, j=None):
    """The point on its kinks (rows within ``band``) and the balanced ``π`` (module, steps 2
    and 3); with ``j`` (``d`` unused), on the row ``Σ mult g = j`` and balanced to a free price."""
    g = g.copy()
    free = (g > band) & (g < 1.0 - band)
    g[~free & (g <= band)] = 0.0
    g[~free & (g >= 1.0 - band)] = 1.0
    s = bar.A @ g
    kink = np.abs(1.0 - s) <= band
    m_f = bar.mult[free]
    if free.any() and kink.any():
        ak = bar.A[kink][:, free]
        gram = (ak.T @ ak).toarray()
        rhs = ak.T @ (1.0 - s[kink])
        if j is not None:  # the row kept: one Lagrange multiplier
            gram = np.block([[gram, m_f[:, None]], [m_f[None, :], np.zeros((1, 1))]])
            rhs = np.concatenate([rhs, [j - float(bar.mult @ g)]])
        g[free] += np.linalg.lstsq(gram, rhs, rcond=None)[0][: int(free.sum())]
        g = np.clip(g, 0.0, 1.0)
        s = bar.A @ g
    pi = np.where(s < 1.0 - band, bar.q, np.where(s > 1.0 + band, 0.0, pi))
    if free.any() and kink.any():
        load = (bar.At @ pi)[free]
        ak = bar.A[kink][:, free]
        w = dw[kink]
        gram = (ak.T @ ak.multiply(w[:, None])).toarray()
        if j is None:
            theta = np.linalg.lstsq(gram, d[free] - load, rcond=None)[0]
        else:  # load + G θ = μ mult on the free columns, μ free
            theta = np.linalg.lstsq(np.hstack([gram, -m_f[:, None]]), -load, rcond=None)[0][:-1]
        pi[kink] = np.clip(pi[kink] + w * (ak @ theta), 0.0, bar.q[kink])
    return g, pi


def _lower(bar, delta_hat: float, pi_rows: np.ndarray) -> float:
    """The weak-duality bound of the plain eq.-20 LP over every participant at ``π``."""
    st = bar.st
    pi = st.q.copy()  # a tuple whose monomial avoids C: π = q
    pi[bar.kept] = split(pi_rows, bar.q, bar._merged, st.q[bar.kept])
    load = np.bincount(st.ent_part, weights=pi[st.mono_tuple[st.ent_mono]] * st.ent_coef,
                       minlength=st.n)
    over = np.maximum(load - delta_hat * st.mult, 0.0)
    return st.const_true + float(pi.sum()) - float(over.sum())


def anchored(bar, j: float, g: np.ndarray, mu: float, lower: float, upper: float):
    """``(lower, upper)`` of ``H(j)`` tightened (certified, over all participants; unchanged when
    the polish leaves the row) from the end ``g`` of the barrier's Newton path at ``j`` (a
    degenerate optimum at the weight ``mu``, :meth:`._x_barrier.AnchoredBarrier.newton`): the
    point polished onto its kinks on
    the row ``Σ mult g = j``, ``π`` balanced to a common price ``μ`` of the columns inside the
    box; :meth:`._x_barrier.AnchoredBarrier.lower` maximises the bound over ``μ``."""
    a = (1.0 - bar.A @ g) / mu
    sig = expit(a)
    pi = bar.q * sig
    g_pol, pi = _polish(bar, None, g, pi, pi * (1.0 - sig), min(0.1, KINK * mu), j)
    if abs(float(bar.mult @ g_pol) - j) > 1e-9 * max(1.0, j):
        return lower, upper
    return max(lower, bar.lower(j, pi)), min(upper, bar.objective(g_pol))
