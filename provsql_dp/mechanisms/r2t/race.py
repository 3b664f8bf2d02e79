"""R2T: race-to-the-top truncation (Dong, Fang, Yi, Tao, Machanavajjhala, SIGMOD 2022).

A second mechanism on the same :class:`~provsql_dp.provenance.krelation.KRelation` as the
recursive mechanism: faster (one truncation LP per threshold, no binary search), at an accuracy
cost (a ``log(GS)·ln(log(GS)/β)`` factor in the error).

For every threshold ``τ_j = GS^{j/L}``, ``j = 1..L`` (``GS`` a *public* bound on one participant's
contribution, never read from the data; ``L`` chosen by :func:`threshold_count` from ``GS`` and
``β`` only), the truncation LP is

    Q(I, τ) = max Σ_t u_t   s.t.   0 ≤ u_t ≤ ψ(t),   u_t ≤ Σ_{m ∈ D_t} v_m,
                                  Σ_{m ∋ i} v_m ≤ τ for every participant i,   v ≥ 0,

with one variable ``v_m`` per monomial (join result) and ``D_t`` the monomials of output tuple
``t`` (the paper's LP with projection, §6). A tuple with one monomial needs no ``u``: its ``v``
is bounded by ``ψ(t)`` directly. Removing one participant ``i`` removes the monomials containing
it: ``Q`` drops by at most ``τ`` (the ``v`` on those monomials sum to ≤ τ) and never rises, so
``Q(·, τ)`` has sensitivity ``τ``. Each ``Q(I, τ_j)`` is released with ``ε/L`` through the exact
sampler, shifted down by ``s_j·ln(L/(β(1 + e^{−1/λ_j})))`` ≈ ``s_j·ln(L/(2β))`` (``s_j`` the
noise scale actually used, ``λ_j`` it in grid units; :func:`plan`), and the output
is the largest of these and 0. Privacy is ε by basic composition whatever ``GS`` and ``L`` are
(the race is post-processing of ``L`` releases, each ``ε/L``-DP); ``GS`` and ``L`` only set which
thresholds race. Both are public: the thresholds, noise scales and shifts are fixed before the
data is read.

**The threshold rule** (:func:`threshold_count`). With base ``b = GS^{1/L}``, let ``DS`` be the
largest contribution of one participant and ``τ*`` the smallest threshold ``≥ DS`` (when
``DS ≤ GS``). Then ``Q(I, τ*) = Q(I)``, and the release, at least threshold ``τ*``'s, is below
``Q(I)`` by at most its shift plus its noise: with probability ``≥ 1 − β``,

    Q(I) − release ≤ τ*·(L/ε)·(ln(L/(2β)) + ln(1/β))     (+ the grid and γ·τ*, below),

one noise, no union bound on this side (the union bound over the ``L`` noises is the shift's
``ln(L/(2β))``, for the upper side). ``τ*/DS`` lies in ``[1, b)``; where ``DS`` falls between two
thresholds is unknown, and over a log-uniform position its mean is ``(b − 1)/ln b``. The rule
minimises the mean bound ``(b − 1)/ln b · L · (ln(L/(2β)) + ln(1/β))`` over
``L = 1 … ⌈log₂ GS⌉``: fewer thresholds cut ``L`` and ``ln(L/(2β))``, wider spacing costs
``(b − 1)/ln b``. At
``GS = 2^20, β = 0.1`` it picks ``L = 8`` (``b ≈ 5.66``) — 8 thresholds, not 20 powers of two:
a bound 1.5× lower (the authors' code uses base 5.5 for the same reason). The rule reads ``GS``
and ``β`` only (``ε`` and ``γ`` scale every ``L`` alike), never the data. ``count = L`` forces a
ladder (``count = ⌈log₂ GS⌉`` with ``GS`` a power of two is the powers of two ``2, 4, …, GS``).

**Approximate LPs with a public tolerance** (``lp_gap = γ ≥ 0``, fixed before the data is read;
default :data:`DEFAULT_LP_GAP` = 1/16; ``0``: every LP exact). With ``γ > 0`` the value released
for threshold ``τ`` is any ``f(I, τ)`` with ``Q(I, τ) − γτ ≤ f(I, τ) ≤ Q(I, τ)``, certified by the solver
(:meth:`R2TModel.value_interval`: ``f`` is the value of a feasible point, an upper bound ``U`` on
``Q`` comes from a dual point, and ``U − f ≤ γτ``; otherwise the LP is solved exactly, which
also lies in the range), and each noise is calibrated to ``(1 + γ)·τ``. *Proof of privacy.* For
neighbours ``I, I'`` and any values ``f ∈ [Q(I) − γτ, Q(I)]``, ``f' ∈ [Q(I') − γτ, Q(I')]``:
``|f − f'| ≤ |Q(I) − Q(I')| + γτ ≤ (1 + γ)τ``. The values may depend on the solver's path
(iterations, time, which blocks were solved exactly), so they are random variables, but they
are independent of the noise and their support lies in those intervals: the density of the
``L`` noisy values at any output is an average, over the values, of products of Laplace
densities, each within ``e^{ε/L}`` per coordinate of the same product at *every* admissible
``f'`` — hence within ``e^ε`` of the average for ``I'`` (the exact sampler's grid rounding is a
post-processing of the same argument, as for exact values). The upper-side guarantee below
holds unchanged because ``f ≤ Q``: an approximate value can only lower the release. Which
solver runs depends on the reduced LP's shape (data), like the block split; it changes the
running time, never the calibration, which depends on ``γ`` only.

Guarantees. *Upper side* (paper Theorem 5.1; proven here for the exact sampler): each noise
exceeds its shift with probability ``≤ β/L`` (discrete Laplace:
``P(K ≥ k) = q^k/(1 + q)``, ``q = e^{−1/λ}``; :func:`_shift_units`), so by the union bound
over the ``L`` thresholds the release exceeds
``Q(I)`` with probability ``≤ β``. *Lower side*, stated ex ante by
:meth:`R2TRelease.error_bound`: for any one threshold ``τ_j``, with probability ``≥ p`` the
release is at least ``Q(I, τ_j) − (s_j·ln(1/(1 − p)) + shift_j + grid_j + γ·τ_j)`` (the
value rounded down to the grid loses ``< grid_j``; ``P(γK < −s·t) ≤ P(K ≤ −⌊λt⌋ − 1) ≤ e^{−t}``); at
``τ_j = τ*`` that is ``Q(I)`` minus a bound proportional to ``τ* < b·DS``. How large ``DS`` is
depends on the data and is not published (``EXPLAIN PRIVACY`` states the bound at ``DS = GS``
and its factor per unit of ``DS``).

Example
-------
>>> import numpy as np
>>> from provsql_dp.provenance.krelation import KRelation
>>> kr = KRelation.from_annotations(rows=[(k,) for k in range(6)],
...     annotations=[[{("p", k % 3), ("p", 3)}] for k in range(6)])
>>> truncation_value(kr, 2.0), truncation_value(kr, 8.0)
(2.0, 6.0)
>>> rel = release(kr, 1.0, max_contribution=8, rng=np.random.default_rng(0))
>>> rel.mechanism, rel.params["thresholds"]  # GS = 8: one threshold beats 2, 4, 8
('r2t', (8.0,))
>>> release(kr, 1.0, max_contribution=2 ** 20).params["thresholds"][:2]  # base 2^(20/8)
(5.656854249492381, 32.0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from ..._deadline import time_limit as within_deadline
from ...provenance.krelation import KRelation
from ..lp._highs import LPStats
from .truncation import R2TModel
from ..noise.safe_noise import MAX_ABS_VALUE, plan_laplace

__all__ = ["R2TModel", "R2TRelease", "truncation_value", "release", "fallback", "plan",
           "thresholds", "race_value", "released_with", "DEFAULT_MAX_CONTRIBUTION",
           "DEFAULT_BETA", "DEFAULT_LP_GAP"]

#: GS when the user declares none: data-independent, 2**20 (20 thresholds)
DEFAULT_MAX_CONTRIBUTION = 2.0 ** 20
#: the failure probability of the upper-side guarantee (the paper's experiments use 0.1)
DEFAULT_BETA = 0.1
#: the public LP tolerance γ when the user sets none: 1/16 costs 6.25 % more noise and keeps the
#: release within reach on LPs with millions of columns (ca-HepPh node triangles: no release
#: within 120 s exact, 6.7 s at 1/16); on the small graphs it is as fast as exact. ``0``: exact.
DEFAULT_LP_GAP = 1.0 / 16


def threshold_cost(max_contribution: float, count: int, beta: float = DEFAULT_BETA) -> float:
    """The mean lower-side bound of ``count`` thresholds, in units of ``DS/ε`` (module docstring).

    ``(b − 1)/ln b · L · (ln(L/(2β)) + ln(1/β))`` with ``b = GS^{1/L}``: the factor ``(b − 1)/ln b``
    is the mean of ``τ*/DS`` over a log-uniform position of ``DS`` between two thresholds
    (``1`` when ``b = 1``). Public: ``GS``, ``L`` and ``β`` only.

    >>> round(threshold_cost(2 ** 20, 20), 1), round(threshold_cost(2 ** 20, 8), 1)
    (199.3, 128.8)
    """
    gs, big_l = float(max_contribution), int(count)
    log_b = math.log(gs) / big_l if gs > 1 else 0.0
    spread = math.expm1(log_b) / log_b if log_b > 0 else 1.0
    return spread * big_l * (max(0.0, math.log(big_l / (2.0 * beta))) + math.log(1.0 / beta))


def threshold_count(max_contribution: float, beta: float = DEFAULT_BETA) -> int:
    """``L``, the number of thresholds: the one of ``1 … ⌈log₂ GS⌉`` that minimises
    :func:`threshold_cost` (the first on a tie). Reads ``GS`` and ``β`` only.

    >>> threshold_count(2 ** 20), threshold_count(1000, 0.05), threshold_count(8), threshold_count(1)
    (8, 4, 1, 1)
    """
    gs = _check_gs(max_contribution)
    top = max(1, math.ceil(math.log2(gs))) if gs > 1 else 1
    return min(range(1, top + 1), key=lambda n: (threshold_cost(gs, n, beta), n))


def thresholds(max_contribution: float, beta: float = DEFAULT_BETA,
               count: int | None = None) -> tuple[float, ...]:
    """The public thresholds ``GS^{1/L}, GS^{2/L}, …, GS`` (``L`` = ``count``, by default
    :func:`threshold_count`); exact powers of two when ``GS = 2^k`` and ``L`` divides ``k``.

    >>> thresholds(2 ** 20, count=20)[:3], len(thresholds(2 ** 20)), thresholds(2 ** 20)[-1]
    ((2.0, 4.0, 8.0), 8, 1048576.0)
    >>> thresholds(16, count=2), thresholds(9, count=1), thresholds(0.5)
    ((4.0, 16.0), (9.0,), (0.5,))
    """
    gs = _check_gs(max_contribution)
    big_l = threshold_count(gs, beta) if count is None else int(count)
    if not 1 <= big_l <= 64 or (count is not None and big_l != count):
        raise ValueError(f"the number of thresholds must be an integer from 1 to 64, got {count!r}")
    k = math.log2(gs)
    if k.is_integer() and k > 0 and int(k) % big_l == 0:  # an exact ladder of powers of two
        step = int(k) // big_l
        return tuple(math.ldexp(1.0, step * j) for j in range(1, big_l + 1))
    return tuple(gs ** (j / big_l) for j in range(1, big_l)) + (gs,)


def _check_gs(max_contribution) -> float:
    gs = float(max_contribution)
    if not (math.isfinite(gs) and gs > 0):
        raise ValueError(f"max_contribution must be a positive number, got {max_contribution!r}")
    if gs > 2.0 ** 64:
        raise ValueError("max_contribution must be at most 2**64")
    return gs


def truncation_value(kr: KRelation, tau: float) -> float:
    """``Q(I, τ)`` of a K-relation (one LP; see :class:`R2TModel`)."""
    return R2TModel(kr).value(tau)


def release(kr: KRelation, epsilon: float, *, max_contribution: float = DEFAULT_MAX_CONTRIBUTION,
            beta: float = DEFAULT_BETA, rng: np.random.Generator | None = None,
            time_limit: float | None = None, stats: LPStats | None = None,
            lp_gap: float = DEFAULT_LP_GAP, count: int | None = None) -> R2TRelease:
    """One ε-DP R2T release of ``Σ_t ψ(t)`` over the present tuples of ``kr``.

    The plans (grids, noise scales, shifts) are fixed from ``epsilon``, ``max_contribution`` and
    ``beta`` (and ``lp_gap``) before the LP is built. ``time_limit`` bounds each LP; on a timeout
    the :class:`~provsql_dp.errors.SolverError` propagates and the caller releases its fallback.
    ``lp_gap = γ > 0``: each threshold's LP may be solved approximately within ``γτ`` on the
    safe side, and the noise is calibrated to ``(1 + γ)τ`` (see the module docstring).
    ``count`` forces the number of thresholds (default: :func:`threshold_count`).
    """
    plans, shifts, taus, eps_each = plan(epsilon, max_contribution, beta, lp_gap, count)
    # the noise of every threshold, drawn in order before the data is read (as _race would)
    noises = [p.release(0.0, rng=rng) for p in plans]
    model = R2TModel(kr, stats=stats)
    best = race_value(model, plans, shifts, taus, noises, time_limit=time_limit,
                      lp_gap=float(lp_gap))
    return _describe(best, epsilon, max_contribution, beta, lp_gap, count)


def released_with(p, q: float, noise: float) -> float:
    """``p.release(q)`` when the same draw gave ``noise = p.release(0.0)`` (that is ``γ·K``).

    Both are ``γ·(⌊q/γ⌋ + K)`` with the integer sum rounded once, so the race can draw every
    noise first and evaluate thresholds in any order (``tests`` check equality bit for bit).
    """
    k = p.grid_exponent
    units = math.ldexp(noise, -k)
    if not (units.is_integer() and abs(units) < 2.0 ** 53):
        raise ArithmeticError("noise draw outside the exactly representable range")
    x = min(float(q), MAX_ABS_VALUE)
    m = 0 if x < math.ldexp(1.0, k) else math.floor(math.ldexp(x, -k))
    return math.ldexp(float(m + int(units)), k)


def race_value(model: R2TModel, plans, shifts, taus, noises, *, time_limit=None,
               lp_gap: float = 0.0) -> float:
    """``max(0, max_j released_j(Q(I, τ_j)) − shift_j)``, solving only the LPs that can matter.

    Exact, not an approximation: ``released_j`` is nondecreasing in ``Q`` for a fixed draw, so a
    threshold whose release at an *upper* bound of ``Q(I, τ_j)`` cannot beat some threshold's
    release at a *lower* bound never changes the maximum. Bounds come from
    :meth:`R2TModel.bounds` (tightened by :meth:`R2TModel.dual_bound` before a threshold's LP is
    solved) and, once some ``Q(I, τ_a)`` is solved, from ``Q`` nondecreasing and
    ``Q(τ)/τ`` nonincreasing in ``τ``. The threshold with the highest optimistic release is
    solved next, until no unsolved one can matter.
    """
    n = len(taus)
    lo, hi = map(list, zip(*(model.bounds(t) for t in taus)))
    solved = [lo[j] == hi[j] for j in range(n)]
    refined = [False] * n  # whether hi[j] was tightened by R2TModel.dual_bound

    def rel(j, q):
        return released_with(plans[j], q, noises[j]) - shifts[j]

    while True:
        left = within_deadline(time_limit, "R2T's threshold race")  # a release's budget
        best = max([0.0] + [rel(j, lo[j]) for j in range(n)])
        open_ = [(rel(j, hi[j]), j) for j in range(n) if not solved[j] and rel(j, hi[j]) > best]
        if not open_:
            return best
        j = max(open_)[1]
        if not refined[j]:  # a cheap dual bound first: it may close the threshold without an LP
            refined[j] = True
            hi[j] = max(lo[j], min(hi[j], model.dual_bound(taus[j])))
            continue
        if lp_gap > 0:
            f, up = model.value_interval(taus[j], gap=lp_gap * taus[j], time_limit=left)
        else:
            f = up = model.value(taus[j], time_limit=left)
        q = min(max(f, lo[j]), hi[j])  # still in [Q − γτ, Q]: lo ≤ Q ≤ hi
        up = max(min(up, hi[j]), q)
        lo[j] = hi[j] = q
        solved[j] = True
        for i in range(n):  # Q nondecreasing, Q(τ)/τ nonincreasing; q ≤ Q ≤ up
            if taus[i] > taus[j]:
                lo[i], hi[i] = max(lo[i], q), min(hi[i], up * taus[i] / taus[j])
            elif taus[i] < taus[j]:
                lo[i], hi[i] = max(lo[i], q * taus[i] / taus[j]), min(hi[i], up)
            lo[i] = min(lo[i], hi[i])
            solved[i] = solved[i] or lo[i] == hi[i]


def fallback(epsilon: float, *, max_contribution: float = DEFAULT_MAX_CONTRIBUTION,
             beta: float = DEFAULT_BETA, rng: np.random.Generator | None = None,
             lp_gap: float = DEFAULT_LP_GAP, count: int | None = None) -> R2TRelease:
    """The release of an empty instance (every ``Q(I, τ) = 0``): reads no data.

    What :mod:`provsql_dp.privacy` releases when an LP fails, shaped like any R2T release.

    >>> fallback(1.0, max_contribution=4, rng=np.random.default_rng(0)).value >= 0
    True
    """
    n = len(thresholds(max_contribution, beta, count))
    return _race([0.0] * n, epsilon, max_contribution, beta, rng, lp_gap, count)


def _race(values, epsilon, max_contribution, beta, rng, lp_gap=0.0, count=None) -> R2TRelease:
    plans, shifts, taus, eps_each = plan(epsilon, max_contribution, beta, lp_gap, count)
    best = 0.0
    for q, p, shift in zip(values, plans, shifts):
        best = max(best, p.release(q, rng=rng) - shift)
    return _describe(best, epsilon, max_contribution, beta, lp_gap, count)


def _describe(best, epsilon, max_contribution, beta, lp_gap=0.0, count=None) -> R2TRelease:
    plans, shifts, taus, eps_each = plan(epsilon, max_contribution, beta, lp_gap, count)
    params = MappingProxyType({
        "max_contribution": float(max_contribution), "beta": float(beta), "thresholds": taus,
        "lp_gap": float(lp_gap),
        "eps_each": eps_each, "noise_scales": tuple(p.noise_scale for p in plans),
        "shifts": shifts, "grids": tuple(p.grid for p in plans)})
    return R2TRelease(value=best, epsilon=float(epsilon), params=params)


@dataclass(frozen=True)
class R2TRelease:
    """One R2T release: the value, the ε it consumed and its public parameters.

    ``params``: ``max_contribution`` (GS), ``beta``, ``thresholds``, ``lp_gap`` (γ), ``eps_each`` (ε/L),
    ``noise_scales`` and ``shifts`` per threshold — all public, none read from the data.
    """

    value: float
    epsilon: float
    params: Mapping[str, Any]
    mechanism: str = "r2t"
    parts: tuple = ()

    def noise_bound(self, p: float = 0.95) -> float:
        """A ``b`` such that with probability ≥ ``p`` the release is at least
        ``Q(I, τ_j) − b`` for every threshold ``τ_j`` (union bound over the ``L`` noises; with
        ``lp_gap = γ`` it includes the ``γ·τ_j`` an approximate LP may lose).

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
        gap = self.params.get("lp_gap", 0.0)  # an approximate LP may sit γτ below Q(I, τ)
        return max(s * t + shift + g + gap * tau for s, shift, g, tau in zip(
            self.params["noise_scales"], self.params["shifts"], self.params["grids"],
            self.params["thresholds"]))


    def error_bound(self, p: float = 0.95, largest: float | None = None) -> float:
        """The ex-ante bound on how far below the truth the release lies: a ``b`` such that,
        with probability ≥ ``p``, the release is at least ``Q(I) − b`` whenever no participant
        contributes more than ``largest`` (default: ``GS``, every instance the declared bound
        admits; above ``GS``, ``Q(I)`` is to be read as ``Q(I, GS)``).

        Threshold ``τ*``, the smallest ``≥ largest``, has ``Q(I, τ*) = Q(I)``; the release is at
        least its value: ``Q(I) − γτ*`` rounded down to the grid (``≥ − grid``), plus a noise
        ``≥ −s·ln(1/(1 − p))`` with probability ``≥ p`` (discrete Laplace:
        ``P(K ≤ −k) ≤ e^{−k/λ}``), minus the shift. One noise: no union bound. ``largest``
        is private data in general — the analyst's bound is the default; the curator may ask
        at the true largest contribution.

        >>> rel = fallback(1.0, max_contribution=2 ** 20, rng=np.random.default_rng(0))
        >>> rel.error_bound(0.95, largest=3) < rel.error_bound(0.95) / 1000
        True
        """
        if not 0 < p < 1:
            raise ValueError(f"p must be a probability strictly between 0 and 1, got {p!r}")
        taus = self.params["thresholds"]
        j = len(taus) - 1 if largest is None else next(
            (i for i, t in enumerate(taus) if t >= largest), len(taus) - 1)
        t = math.log(1.0 / (1.0 - p))
        gap = self.params.get("lp_gap", 0.0)
        return (self.params["noise_scales"][j] * t + self.params["shifts"][j]
                + self.params["grids"][j] + gap * taus[j])

    def error_factor(self, p: float = 0.95) -> float:
        """``c`` with :meth:`error_bound` ``≤ c·max(τ₁, b·DS)`` for every largest contribution
        ``DS ≤ GS`` (``b = GS^{1/L}``, ``τ₁`` the lowest threshold): the bound per unit of the
        threshold that covers ``DS``, the largest over the thresholds.

        >>> rel = fallback(0.8, max_contribution=2 ** 20, rng=np.random.default_rng(0))
        >>> 70 < rel.error_factor(0.95) < 90
        True
        """
        taus = self.params["thresholds"]
        return max(self.error_bound(p, t) / t for t in taus)


def plan(epsilon: float, max_contribution: float, beta: float, lp_gap: float = 0.0,
         count: int | None = None):
    """The public plan of a release: per-threshold noise plans, shifts, thresholds, ε each.

    The shift is ``s·ln(L/(β(1 + e^{−1/λ})))`` ≈ ``s·ln(L/(2β))`` rounded up to the plan's
    grid (:func:`_shift_units`: the exact one-sided tail of the discrete Laplace noise; the
    paper's ``s·ln(L/β)`` bounds the two-sided tail), so released values stay on the grid.
    Threshold ``τ``'s noise is calibrated to the sensitivity ``(1 + lp_gap)·τ``.

    >>> plans, shifts, taus, eps_each = plan(1.0, 4, 0.1, count=2)
    >>> taus, eps_each, [s > 0 for s in shifts]
    ((2.0, 4.0), 0.5, [True, True])
    >>> plan(1.0, 4, 0.1)[2]  # the rule: one threshold at GS = 4 beats two
    (4.0,)
    """
    eps = float(epsilon)
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"epsilon must be positive, got {epsilon!r}")
    if not 0 < beta < 1:
        raise ValueError(f"beta must lie strictly between 0 and 1, got {beta!r}")
    gap = float(lp_gap)
    if not (math.isfinite(gap) and gap >= 0):
        raise ValueError(f"lp_gap must be a nonnegative number, got {lp_gap!r}")
    taus = thresholds(max_contribution, beta, count)
    big_l = len(taus)
    eps_each = eps / big_l
    plans = tuple(plan_laplace(t * (1.0 + gap), eps_each) for t in taus)
    shifts = tuple(_shift_units(p, big_l, beta) * p.grid for p in plans)
    return plans, shifts, taus, eps_each


def _shift_units(p, big_l: int, beta: float) -> int:
    """``k``, the shift in grid units: the least ``k ≥ 0`` with ``P(K > k) ≤ β/L`` guaranteed.

    ``K`` is discrete Laplace with ``λ`` = ``p.noise_units``: ``P(K ≥ k + 1) = q^{k+1}/(1 + q)``
    with ``q = e^{−1/λ}``, which is ``≤ β/L`` once ``k ≥ λ·ln(L/(β(1 + q)))`` (a relative margin
    of 10⁻⁹ covers the floating-point evaluation; ``k = 0`` when that is negative: then
    ``P(K ≥ 1) = q/(1 + q) ≤ β/L`` already).
    """
    lam = float(p.noise_units)
    q = math.exp(-1.0 / lam)
    x = lam * math.log(big_l / (beta * (1.0 + q)))
    return max(0, math.ceil(x * (1.0 + 1e-9) + 1e-9))
