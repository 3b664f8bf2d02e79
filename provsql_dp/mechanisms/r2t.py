"""R2T: race-to-the-top truncation (Dong, Fang, Yi, Tao, Machanavajjhala, SIGMOD 2022).

A second mechanism on the same :class:`~provsql_dp.provenance.krelation.KRelation` as the
recursive mechanism: faster (one truncation LP per threshold, no binary search), at an accuracy
cost (a ``log(GS)·ln(log(GS)/β)`` factor in the error).

For every threshold ``τ_j = 2^j``, ``j = 1..L`` with ``L = ⌈log₂ GS⌉`` (``GS`` a *public* bound
on one participant's contribution, never read from the data), the truncation LP is

    Q(I, τ) = max Σ_t u_t   s.t.   0 ≤ u_t ≤ ψ(t),   u_t ≤ Σ_{m ∈ D_t} v_m,
                                  Σ_{m ∋ i} v_m ≤ τ for every participant i,   v ≥ 0,

with one variable ``v_m`` per monomial (join result) and ``D_t`` the monomials of output tuple
``t`` (the paper's LP with projection, §6). A tuple with one monomial needs no ``u``: its ``v``
is bounded by ``ψ(t)`` directly. Removing one participant ``i`` removes the monomials containing
it: ``Q`` drops by at most ``τ`` (the ``v`` on those monomials sum to ≤ τ) and never rises, so
``Q(·, τ)`` has sensitivity ``τ``. Each ``Q(I, τ_j)`` is released with ``ε/L`` through the exact
sampler, shifted down by ``s_j·ln(L/β)`` (``s_j`` the noise scale actually used), and the output
is the largest of these and 0. Privacy is ε by basic composition whatever ``GS`` is; ``GS`` only
sets how far the race goes.

Guarantee (paper Theorem 5.1 for the upper side; proven here for the exact sampler): with
probability at least ``1 − β`` the released value is ≤ ``Q(I)``, the true answer. The lower side
(error ≤ ``4·L·ln(L/β)·DS_Q(I)/ε``) depends on the downward sensitivity of the data and is not
published.

Example
-------
>>> import numpy as np
>>> from provsql_dp.provenance.krelation import KRelation
>>> kr = KRelation.from_annotations(rows=[(k,) for k in range(6)],
...     annotations=[[{("p", k % 3), ("p", 3)}] for k in range(6)])
>>> truncation_value(kr, 2.0), truncation_value(kr, 8.0)
(2.0, 6.0)
>>> rel = release(kr, 1.0, max_contribution=8, rng=np.random.default_rng(0))
>>> rel.mechanism, rel.params["thresholds"]
('r2t', (2.0, 4.0, 8.0))
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from ..provenance.krelation import KRelation
from ._highs import INF, LPStats, resolve_lp, solve_lp
from .safe_noise import plan_laplace

__all__ = ["R2TModel", "R2TRelease", "truncation_value", "release", "fallback", "plan",
           "thresholds", "DEFAULT_MAX_CONTRIBUTION", "DEFAULT_BETA"]

#: GS when the user declares none: data-independent, 2**20 (20 thresholds)
DEFAULT_MAX_CONTRIBUTION = 2.0 ** 20
#: the failure probability of the upper-side guarantee (the paper's experiments use 0.1)
DEFAULT_BETA = 0.1


def thresholds(max_contribution: float) -> tuple[float, ...]:
    """The public thresholds ``2, 4, …, 2^⌈log₂ GS⌉``.

    >>> thresholds(8), thresholds(9), thresholds(1)
    ((2.0, 4.0, 8.0), (2.0, 4.0, 8.0, 16.0), (2.0,))
    """
    gs = float(max_contribution)
    if not (math.isfinite(gs) and gs > 0):
        raise ValueError(f"max_contribution must be a positive number, got {max_contribution!r}")
    top = max(1, math.ceil(math.log2(gs)))
    if top > 64:
        raise ValueError("max_contribution must be at most 2**64")
    return tuple(math.ldexp(1.0, j) for j in range(1, top + 1))


class R2TModel:
    """The truncation LP of one K-relation, built once from its arrays and re-solved per τ.

    Columns: one ``v`` per monomial, then one ``u`` per tuple with several monomials. Rows: one
    per participant occurring in some monomial (``Σ v ≤ τ``), then one per multi-monomial tuple
    (``u − Σ v ≤ 0``). HiGHS minimises ``−Σ objective``; a larger τ only relaxes row bounds, so
    each re-solve starts warm from the previous optimum (still feasible).
    """

    def __init__(self, kr: KRelation, *, stats: LPStats | None = None):
        t0 = time.perf_counter()
        w = np.asarray(kr.weights, dtype=np.float64)
        if np.any(w < 0) or not np.all(np.isfinite(w)):
            raise ValueError("R2T needs nonnegative finite tuple weights (clamp a SUM to lower = 0)")
        n_mono_of = np.diff(kr.tuple_ptr)
        t_of_m = kr.tuple_of_monomial
        single = n_mono_of[t_of_m] == 1  # per monomial: its tuple has only this one
        multi_t = np.flatnonzero(n_mono_of > 1)
        n_m, n_u = len(t_of_m), len(multi_t)
        self.stats = stats if stats is not None else LPStats()
        self.n_tuples = len(w)
        cost = np.zeros(n_m + n_u)
        cost[:n_m][single] = -1.0
        cost[n_m:] = -1.0
        upper = np.full(n_m + n_u, INF)
        upper[:n_m][single] = w[t_of_m[single]]
        upper[n_m:] = w[multi_t]
        # participant rows: CSR of the incidence participant -> monomials
        sizes = np.diff(kr.mono_ptr)
        mono_of_entry = np.repeat(np.arange(n_m, dtype=np.int64), sizes)
        part = np.asarray(kr.mono_part, dtype=np.int64)
        used, row_of_entry = np.unique(part, return_inverse=True)
        order = np.argsort(row_of_entry, kind="stable")
        p_start = np.zeros(len(used) + 1, dtype=np.int64)
        np.cumsum(np.bincount(row_of_entry, minlength=len(used)), out=p_start[1:])
        p_index = mono_of_entry[order]
        # linking rows of multi-monomial tuples: u_t − Σ_{m ∈ D_t} v_m ≤ 0
        link_rank = np.full(len(w), -1, dtype=np.int64)
        link_rank[multi_t] = np.arange(n_u)
        m_multi = np.flatnonzero(~single)  # sorted by tuple (monomials are tuple-contiguous)
        cnt = n_mono_of[multi_t]
        l_start = p_start[-1] + np.concatenate([[0], np.cumsum(cnt + 1)])
        l_index = np.empty(int(cnt.sum()) + n_u, dtype=np.int64)
        l_value = np.empty_like(l_index, dtype=np.float64)
        first = l_start[:-1] - p_start[-1]
        l_index[first] = n_m + np.arange(n_u)
        l_value[first] = 1.0
        rest = np.ones(len(l_index), dtype=bool)
        rest[first] = False
        l_index[rest] = m_multi
        l_value[rest] = -1.0
        self.n_participant_rows = len(used)
        self._cols = n_m + n_u
        self._model = (
            cost,
            np.zeros(n_m + n_u),
            upper,
            np.concatenate([np.full(len(used), -INF), np.full(n_u, -INF)]),
            np.concatenate([np.zeros(len(used)), np.zeros(n_u)]),  # τ set per solve
            np.concatenate([p_start[:-1], l_start[:-1]]),
            np.concatenate([p_index, l_index]),
            np.concatenate([np.ones(len(p_index)), l_value]),
        )
        self._h = None
        self.stats.build_seconds += time.perf_counter() - t0

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns) of the LP."""
        return len(self._model[3]), self._cols

    def value(self, tau: float, *, time_limit: float | None = None) -> float:
        """``Q(I, τ)``; raises :class:`~provsql_dp.errors.SolverError` unless solved optimally."""
        tau = float(tau)
        if not tau >= 0:
            raise ValueError(f"τ must be nonnegative, got {tau!r}")
        n_p = self.n_participant_rows
        if self._cols == 0:
            return 0.0
        if self._h is None:
            cost, lo, up, rlo, rup, start, index, value = self._model
            rup = rup.copy()
            rup[:n_p] = tau
            obj, _, _, self._h = solve_lp(self._cols, cost, lo, up, rlo, rup, start, index, value,
                                          time_limit=time_limit, stats=self.stats,
                                          what="R2T truncation LP", keep=True)
        else:
            idx = np.arange(n_p, dtype=np.int32)
            self._h.changeRowsBounds(n_p, idx, np.full(n_p, -INF), np.full(n_p, tau))
            obj, _, _ = resolve_lp(self._h, time_limit=time_limit, stats=self.stats,
                                   what="R2T truncation LP")
        return max(0.0, -float(obj))


def truncation_value(kr: KRelation, tau: float) -> float:
    """``Q(I, τ)`` of a K-relation (one LP; see :class:`R2TModel`)."""
    return R2TModel(kr).value(tau)


def release(kr: KRelation, epsilon: float, *, max_contribution: float = DEFAULT_MAX_CONTRIBUTION,
            beta: float = DEFAULT_BETA, rng: np.random.Generator | None = None,
            time_limit: float | None = None, stats: LPStats | None = None) -> R2TRelease:
    """One ε-DP R2T release of ``Σ_t ψ(t)`` over the present tuples of ``kr``.

    The plans (grids, noise scales, shifts) are fixed from ``epsilon``, ``max_contribution`` and
    ``beta`` before the LP is built. ``time_limit`` bounds each LP; on a timeout the
    :class:`~provsql_dp.errors.SolverError` propagates and the caller releases its fallback.
    """
    plans, shifts, taus, eps_each = plan(epsilon, max_contribution, beta)
    model = R2TModel(kr, stats=stats)
    values = [model.value(tau, time_limit=time_limit) for tau in taus]
    return _race(values, epsilon, max_contribution, beta, rng)


def fallback(epsilon: float, *, max_contribution: float = DEFAULT_MAX_CONTRIBUTION,
             beta: float = DEFAULT_BETA, rng: np.random.Generator | None = None) -> R2TRelease:
    """The release of an empty instance (every ``Q(I, τ) = 0``): reads no data.

    What :mod:`provsql_dp.privacy` releases when an LP fails, shaped like any R2T release.

    >>> fallback(1.0, max_contribution=4, rng=np.random.default_rng(0)).value >= 0
    True
    """
    return _race([0.0] * len(thresholds(max_contribution)), epsilon, max_contribution, beta, rng)


def _race(values, epsilon, max_contribution, beta, rng) -> R2TRelease:
    plans, shifts, taus, eps_each = plan(epsilon, max_contribution, beta)
    best = 0.0
    for q, p, shift in zip(values, plans, shifts):
        best = max(best, p.release(q, rng=rng) - shift)
    params = MappingProxyType({
        "max_contribution": float(max_contribution), "beta": float(beta), "thresholds": taus,
        "eps_each": eps_each, "noise_scales": tuple(p.noise_scale for p in plans),
        "shifts": shifts, "grids": tuple(p.grid for p in plans)})
    return R2TRelease(value=best, epsilon=float(epsilon), params=params)


@dataclass(frozen=True)
class R2TRelease:
    """One R2T release: the value, the ε it consumed and its public parameters.

    ``params``: ``max_contribution`` (GS), ``beta``, ``thresholds``, ``eps_each`` (ε/L),
    ``noise_scales`` and ``shifts`` per threshold — all public, none read from the data.
    """

    value: float
    epsilon: float
    params: Mapping[str, Any]
    mechanism: str = "r2t"
    parts: tuple = ()

    def noise_bound(self, p: float = 0.95) -> float:
        """A ``b`` such that with probability ≥ ``p`` the release is at least
        ``Q(I, τ_j) − b`` for every threshold ``τ_j`` (union bound over the ``L`` noises).

        It says nothing about the truncation shortfall ``Q(I) − Q(I, τ_j)``, which depends on the
        data. Separately, the release exceeds the true answer with probability ≤ β.

        >>> rel = fallback(1.0, max_contribution=4, rng=np.random.default_rng(0))
        >>> rel.noise_bound(0.95) > rel.params["shifts"][-1]
        True
        """
        if not 0 < p < 1:
            raise ValueError(f"p must be a probability strictly between 0 and 1, got {p!r}")
        big_l = len(self.params["thresholds"])
        t = math.log(big_l / (1.0 - p))
        return max(s * t + shift + g for s, shift, g in zip(
            self.params["noise_scales"], self.params["shifts"], self.params["grids"]))


def plan(epsilon: float, max_contribution: float, beta: float):
    """The public plan of a release: per-threshold noise plans, shifts, thresholds, ε each.

    The shift ``s·ln(L/β)`` is rounded up to the plan's grid, so released values stay on it.

    >>> plans, shifts, taus, eps_each = plan(1.0, 4, 0.1)
    >>> taus, eps_each, [s > 0 for s in shifts]
    ((2.0, 4.0), 0.5, [True, True])
    """
    eps = float(epsilon)
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"epsilon must be positive, got {epsilon!r}")
    if not 0 < beta < 1:
        raise ValueError(f"beta must lie strictly between 0 and 1, got {beta!r}")
    taus = thresholds(max_contribution)
    big_l = len(taus)
    eps_each = eps / big_l
    plans = tuple(plan_laplace(t, eps_each) for t in taus)
    shifts = tuple(math.ceil(p.noise_scale * math.log(big_l / beta) / p.grid) * p.grid
                   for p in plans)
    return plans, shifts, taus, eps_each
