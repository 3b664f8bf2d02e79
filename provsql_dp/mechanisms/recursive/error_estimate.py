"""A differentially private estimate of a recursive-mechanism release's noise, before the release.

The recursive mechanism's error cannot be stated from public information: its noise scale
``Δ̂/ε₂`` follows ``Δ = θe^{jβ}`` (Chen & Zhou eq. 11), a function of the data. This module
releases, at a budget ``e`` of its own, the index ``j`` the release will compute, and derives
from it (post-processing) what the release's noise will be.

The release (Chen & Zhou §4.1, :mod:`provsql_dp.mechanisms.recursive.efficient`)
------------------------------------------------------------------------
``ĵ = j + K₁``, ``K₁ ~ DLap(1/ε₁)``; ``Δ̂ = θe^{μ+βĵ}``; ``X = min_i H_i + (|P|−i)Δ̂ ≤ H_|P|``
(the truth); ``X̂ = γ(⌊X/γ⌋ + K)``, ``K ~ DLap(λ)``, ``γλ ≈ Δ̂/ε₂`` (:func:`.release.x_plan`).

The estimate
------------
``j̃ = j + K'``, ``K' ~ DLap(1/e)`` (exact, ``plan_laplace(1, e, integer=True)``), where ``j`` is
the index the release computes with **its** parameters (θ, β, μ at the query's ε).

*Privacy.* Between neighbouring databases (one participant added or removed) ``|j − j'| ≤ 1``:
``GS_{ln Δ} ≤ β`` (Chen & Zhou Lemma 1) and ``ln Δ = ln θ + jβ``. This is exactly the fact the
release's own ``ĵ`` relies on (Lemma 4): the estimate is the discrete Laplace mechanism on a
sensitivity-1 integer, hence ``e``-DP, and everything :class:`NoiseEstimate` derives (Δ̃, α,
the RMSE, the participant count) is post-processing of ``j̃`` and public parameters. Several
estimates (groups, the two parts of a signed SUM, several aggregates) compose as the caller
splits ``e`` (sequentially, or in parallel when each participant is in one group); the later
release composes sequentially with the estimate: ``e + ε`` in all, both charged to the ledger.

*Accuracy statement* (:meth:`NoiseEstimate.alpha`). With ``b = (1 − p)/3``: the release's index
is ``j + K₁ = j̃ + (K₁ − K')``, and ``k`` is the smallest integer with ``Pr[K₁ − K' > k] ≤ 2b``
(the exact law of the difference of two independent discrete Laplace variables, summed in numpy
— :func:`_difference_quantile`; never more than the sum of the two one-sided quantiles at ``b``,
which is used when the sum would be too long). So with probability ``≥ 1 − 2b``
``Δ̂ ≤ Δ̂⁺ = θe^{μ+β(j̃+k)}``; the noise ``|X̂ − X| ≤ γ|K| + γ`` and
``Pr[γ|K| > s ln(2/b)] ≤ b`` for any ``s ≥ γλ``; ``γ`` grows with Δ̂ and ``γλ ≤ (Δ̂ + γ)/ε₂``
(up to the dyadic rounding of λ, covered by a factor ``1 + 2⁻⁴⁰``). So
``α = s⁺ ln(2/b) + γ⁺`` (``s⁺``, ``γ⁺`` at ``Δ̂⁺``) bounds ``|X̂ − X|`` with probability ``≥ p``
over the estimate and the release together. It bounds the **noise** only: the truncation
``H_|P| − X ≥ 0`` depends on the data and is not estimated; when ``Δ̂ ≥ Δ`` (probability
``≥ 1 − ½e^{−με₁/β}``, Lemma 6) it is at most what the ``2j`` participants whose removal lowers
the answer most contribute (Lemma 8, ``g = 2``): :meth:`NoiseEstimate.truncation_participants`.

>>> import numpy as np
>>> from provsql_dp.mechanisms.recursive._framework import resolve_params
>>> params = resolve_params(1.0, "node")
>>> est = release_index(12, 0.5, params, rng=np.random.default_rng(3))
>>> est.epsilon, est.j_hat == round(est.j_hat)
(0.5, True)
>>> lo, hi = est.delta_interval(0.95)
>>> lo <= est.delta_estimate <= hi and est.alpha(0.95) > est.rmse() > 0
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._framework import resolve_params
from ..noise.sources import error_bound, tail_units
from .efficient import _Run, _structure
from .release import _MAX_EXPONENT, x_plan
from ..noise.safe_noise import MIN_SCALE, plan_laplace
from .single_owner import delta as single_owner_delta
from .single_owner import is_single_owner, owner_totals

__all__ = ["NoiseEstimate", "SignedNoiseEstimate", "delta_index", "release_index", "estimate"]

#: covers the dyadic rounding of the noise units λ (relative error below 2**-49)
_ROUNDING = 1.0 + 2.0 ** -40


def _one_sided(noise_units, b: float) -> int:
    """The smallest ``k ≥ 0`` with ``Pr[K > k] ≤ b`` for ``K ~ DLap(λ)`` (symmetric law:
    ``Pr[K > k] = Pr[|K| > k]/2``, so ``k = 0`` once ``b ≥ ½`` — a confidence ≤ ½ asked of
    :meth:`NoiseEstimate.truncation_participants` used to fail after the charge).

    >>> _one_sided(1, 0.5), _one_sided(1, 0.9), _one_sided(1, 0.025) == tail_units(1, 0.95)
    (0, 0, True)
    """
    if not 0 < b < 1:
        raise ValueError(f"b must lie strictly between 0 and 1, got {b!r}")
    if 2.0 * b >= 1.0:
        return 0
    return tail_units(noise_units, 1.0 - 2.0 * b)


#: the most terms :func:`_difference_quantile` sums (beyond them: the union of the two quantiles)
_MAX_TERMS = 200_000


def _tail(a: float, t: np.ndarray) -> np.ndarray:
    """``Pr[A > t]`` for ``A ~ DLap`` with ``a = e^{−1/λ}`` (integer ``t``, exact law)."""
    pos = np.power(a, np.maximum(t, -1) + 1.0) / (1.0 + a)
    neg = 1.0 - np.power(a, -np.minimum(t, 0).astype(np.float64)) / (1.0 + a)
    return np.where(t >= 0, pos, neg)


def _difference_quantile(units_a, units_b, b: float) -> int:
    """The smallest integer ``k ≥ 0`` with ``Pr[A − B > k] ≤ b`` (an upper bound of it), for
    independent ``A ~ DLap(λ_a)``, ``B ~ DLap(λ_b)``: ``Σ_{|i|≤m} Pr[B = i] Pr[A > k + i]`` plus
    ``Pr[|B| > m]`` (B is symmetric), bisected over ``k`` up to the union bound
    ``k_a + k_b`` (each one-sided at ``b/2``), which it returns when ``m`` would be too large.

    >>> _difference_quantile(2, 2, 0.0333), _one_sided(2, 0.01665) * 2
    (7, 14)
    """
    union = _one_sided(units_a, b / 2) + _one_sided(units_b, b / 2)
    lam_b = float(units_b)
    m = int(math.ceil(lam_b * 40.0)) + 1
    if m > _MAX_TERMS:
        return union
    a, c = math.exp(-1.0 / float(units_a)), math.exp(-1.0 / lam_b)
    i = np.arange(-m, m + 1, dtype=np.int64)
    p_b = (1.0 - c) / (1.0 + c) * np.power(c, np.abs(i).astype(np.float64))
    rest = 2.0 * c ** (m + 1) / (1.0 + c)

    def tail(k: int) -> float:  # Pr[A − B > k] = Pr[A + B > k], bounded above
        return float(np.sum(p_b * _tail(a, k + i))) + rest

    if tail(union) > b:  # rounding: keep the union bound
        return union
    lo, hi = -1, union  # tail(hi) ≤ b
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if mid >= 0 and tail(mid) <= b:
            hi = mid
        else:
            lo = mid
    return hi


def _delta_hat(params: Mapping[str, Any], j: float) -> float:
    """``Δ̂ = θe^{μ+βj}`` capped as :func:`.release.release_delta_hat` caps it (monotone in j)."""
    exponent = math.log(params["theta"]) + params["mu"] + params["beta"] * j
    return min(math.exp(min(exponent, _MAX_EXPONENT)), math.ldexp(params["eps2"], 63))


@dataclass(frozen=True)
class NoiseEstimate:
    """A released ``j̃ = j + DLap(1/epsilon)`` and what it says of the release's noise (see the
    module doc). Safe to show: ``j_hat`` is the release; the rest is post-processing."""

    j_hat: float  #: the released index
    epsilon: float  #: the ε this estimate spent
    params: Mapping[str, Any]  #: the release's parameters (θ, β, μ, ε₁, ε₂)

    def _units(self):
        return plan_laplace(1, self.epsilon, integer=True).noise_units

    def j_upper(self, b: float) -> float:
        """``j ≤ j̃ + k'`` with probability ``≥ 1 − b`` (over this estimate)."""
        return self.j_hat + _one_sided(self._units(), b)

    @property
    def j_estimate(self) -> float:
        """``max(j̃, 0)``: the release's ``j`` is never negative (Δ = θe^{jβ} ≥ θ, eq. 11), so a
        negative draw of the noise says ``j = 0`` is the likeliest (post-processing)."""
        return max(0.0, self.j_hat)

    def _delta(self, j: float) -> float:
        """``θe^{β·max(j, 0)}``, a Δ the release can compute (never below θ)."""
        beta = self.params["beta"]
        return self.params["theta"] * math.exp(min(beta * max(0.0, j), _MAX_EXPONENT))

    @property
    def delta_estimate(self) -> float:
        """``θe^{β·max(j̃, 0)}``: the estimate of Δ (median-unbiased on its log scale; at least θ,
        like every Δ of the release)."""
        return self._delta(self.j_hat)

    def delta_interval(self, p: float = 0.95) -> tuple[float, float]:
        """``Δ`` lies in this interval with probability ``≥ p``; both ends are Δ's the release can
        compute (``θ ≤ lo ≤ delta_estimate ≤ hi``), whatever the draw."""
        k = tail_units(self._units(), p)
        return self._delta(self.j_hat - k), self._delta(self.j_hat + k)

    def alpha(self, p: float = 0.95) -> float:
        """A bound on the release's noise ``|X̂ − X|`` holding with probability ``≥ p`` over this
        estimate and the release together (module doc)."""
        if not 0 < p < 1:
            raise ValueError(f"p must lie strictly between 0 and 1, got {p!r}")
        b = (1.0 - p) / 3.0
        k = _difference_quantile(plan_laplace(1, self.params["eps1"], integer=True).noise_units,
                                 self._units(), 2.0 * b)
        eps2 = self.params["eps2"]
        top = max(_delta_hat(self.params, self.j_hat + k), MIN_SCALE * eps2)
        gamma = x_plan(top, eps2).grid
        return (top + gamma) / eps2 * _ROUNDING * math.log(2.0 / b) + gamma

    def rmse(self) -> float:
        """A point estimate of the release's root-mean-square noise ``√E(X̂ − X)²`` over both of
        its draws, with ``max(j̃, 0)`` in place of ``j``: ``√2·θe^{μ+βj̃}/ε₂·√E e^{2βK₁}`` (Var K ≤ 2λ²);
        ``inf`` when ``2β ≥ ε₁``-ish makes ``E e^{2βK₁}`` infinite. Not a bound."""
        a = math.exp(-1.0 / float(plan_laplace(1, self.params["eps1"], integer=True).noise_units))
        t = 2.0 * self.params["beta"]
        if t >= _MAX_EXPONENT or a * math.exp(t) >= 1.0:  # (e^t would overflow)
            return math.inf
        mgf = (1.0 - a) ** 2 / ((1.0 - a * math.exp(t)) * (1.0 - a * math.exp(-t)))
        return math.sqrt(2.0 * mgf) * _delta_hat(self.params, self.j_estimate) / self.params["eps2"]

    def typical_bound(self, p: float = 0.95) -> float:
        """The noise bound the release would state (``Release.noise_bound(p)``) at the median
        ``Δ̂ = θe^{μ+βj̃}`` if ``j`` were ``max(j̃, 0)``: a point estimate, not a guarantee."""
        return error_bound(x_plan(max(_delta_hat(self.params, self.j_estimate),
                                      MIN_SCALE * self.params["eps2"]), self.params["eps2"]), p)

    def truncation_participants(self, p: float = 0.95) -> int:
        """``2(j̃ + k')``: with probability ``≥ p`` (and ``Δ̂ ≥ Δ``), the release's truncation is at
        most what this many participants — those whose removal lowers the answer most — add."""
        return int(2 * max(0.0, self.j_upper(1.0 - p)))


@dataclass(frozen=True)
class SignedNoiseEstimate:
    """The estimates of a signed SUM's two parts (each released at ε/2, estimated at e/2)."""

    parts: tuple[NoiseEstimate, NoiseEstimate]

    @property
    def epsilon(self) -> float:
        return sum(p.epsilon for p in self.parts)

    @property
    def delta_estimate(self) -> float:
        return max(p.delta_estimate for p in self.parts)

    def delta_interval(self, p: float = 0.95) -> tuple[float, float]:
        q = (1 + p) / 2
        ends = [part.delta_interval(q) for part in self.parts]
        return max(e[0] for e in ends), max(e[1] for e in ends)

    def alpha(self, p: float = 0.95) -> float:
        """Union bound: each part's α at ``(1 + p)/2``, added."""
        return sum(part.alpha((1 + p) / 2) for part in self.parts)

    def rmse(self) -> float:
        return math.sqrt(sum(part.rmse() ** 2 for part in self.parts))

    def typical_bound(self, p: float = 0.95) -> float:
        return sum(part.typical_bound((1 + p) / 2) for part in self.parts)

    def truncation_participants(self, p: float = 0.95) -> int:
        return max(part.truncation_participants((1 + p) / 2) for part in self.parts)


def delta_index(kr, params: Mapping[str, Any], *, weights=None, time_limit=None) -> int:
    """The ``j`` of ``Δ = θe^{jβ}`` that a release of ``kr`` with ``params`` computes (**private**):
    the single-owner closed form when every tuple has one owner, else the LP search — the same
    ``j`` either way (:func:`provsql_dp.mechanisms.recursive.single_owner.delta`)."""
    if is_single_owner(kr):
        c, _ = owner_totals(kr, weights)
        return int(single_owner_delta(c, params["theta"], params["beta"])[0])
    st = _structure(kr, None if weights is None else np.asarray(weights, dtype=np.float64))
    j, _ = _Run(st, params, time_limit=time_limit).delta()
    return int(j)


def release_index(j: int, epsilon: float, params: Mapping[str, Any], rng=None) -> NoiseEstimate:
    """Release ``j + DLap(1/epsilon)`` with the exact sampler: ``epsilon``-DP (module doc)."""
    j_hat = plan_laplace(1, epsilon, integer=True).release(int(j), rng=rng)
    return NoiseEstimate(j_hat=float(j_hat), epsilon=float(epsilon), params=params)


def estimate(kr, release_epsilon: float, epsilon: float, privacy: str = "node", rng=None, *,
             signed: bool = False, time_limit=None, **kwargs) -> NoiseEstimate | SignedNoiseEstimate:
    """Estimate, at ``epsilon``, the noise of a release of ``kr`` at ``release_epsilon``
    (``kwargs``: θ, β, μ, ε₁, ε₂ as for :func:`provsql_dp.mechanisms.recursive.efficient.release`). A
    ``signed`` SUM is estimated per part, like :func:`~.recursive.release_signed` releases it.

    >>> from provsql_dp.provenance.krelation import KRelation
    >>> kr = KRelation.from_annotations([(1,), (2,)], [[{("p", 1), ("p", 2)}], [{("p", 2)}]])
    >>> est = estimate(kr, 1.0, 0.5, rng=np.random.default_rng(0))
    >>> est.params["eps2"], est.epsilon
    (0.5, 0.5)
    """
    if not signed:
        params = resolve_params(release_epsilon, privacy, **kwargs)
        return release_index(delta_index(kr, params, time_limit=time_limit), epsilon, params, rng)
    w = np.asarray(kr.weights, dtype=np.float64)
    params = resolve_params(release_epsilon / 2, privacy, **kwargs)
    parts = tuple(
        release_index(delta_index(kr, params, weights=part, time_limit=time_limit), epsilon / 2,
                      params, rng)
        for part in (np.maximum(w, 0.0), np.maximum(-w, 0.0)))
    return SignedNoiseEstimate(parts)
