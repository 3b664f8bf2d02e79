"""What a mechanism hands back to an analyst: released quantities only.

A :class:`Release` holds the noisy answer ``X̂``, the noisy scale ``Δ̂``, the budget ``ε`` it was
computed with and every parameter used. It never holds ``Δ``, ``X``, the H/G sequences or the true
answer: those are functions of the private data (Chen & Zhou §4.1) and are shown to the curator
only, through ``recursive.explain``.

``X̂`` is released with exact discrete Laplace noise on a public grid
(:mod:`provsql_dp.mechanisms.noise.safe_noise`): the plan is ``plan_laplace(at_least_min_scale(Δ̂, ε₂),
ε₂)``, a function of the released ``Δ̂`` and the parameters only, exposed as :attr:`Release.plan`
(grid :attr:`Release.grid`, scale :attr:`Release.noise_scale`).

>>> from types import MappingProxyType
>>> rel = Release(value=10.5, epsilon=0.5, delta_hat=2.0,
...               params=MappingProxyType({"eps1": 0.25, "eps2": 0.25}))
>>> round(rel.noise_bound(0.95), 3)   # ≈ 2.0 / 0.25 * ln(1 / 0.05), for the discrete law
23.966
>>> rel.grid == 2.0 ** -19, rel.noise_scale
(True, 8.0)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..noise.sources import error_bound, tail_units
from ..noise.safe_noise import LaplacePlan, at_least_min_scale, plan_laplace

__all__ = ["Release", "capped_delta_hat", "release_delta_hat", "release_x", "x_plan"]

#: Δ̂ = θ·e^{μ+βĵ} is computed with its exponent capped here (e^700 ≈ 1e304; reached with
#: probability far below 2**-1000): capping a released number is post-processing, and X is then
#: computed with the capped Δ̂, so its sensitivity is still at most Δ̂.
_MAX_EXPONENT = 700.0


@functools.lru_cache(maxsize=1024)
def x_plan(delta_hat: float, eps2: float) -> LaplacePlan:
    """The public plan of the release of ``X``: ``plan_laplace(at_least_min_scale(Δ̂, ε₂), ε₂)``.

    ``Δ̂`` is a released value, so the plan (grid included) is post-processing; raising it to the
    admissible minimum only adds noise. Kept per ``(Δ̂, ε₂)`` (public numbers; Δ̂ lies on a
    lattice, so releases repeat them): a plan is immutable.
    """
    return plan_laplace(at_least_min_scale(delta_hat, eps2), eps2)


@functools.lru_cache(maxsize=256)
def _j_plan(eps1: float) -> LaplacePlan:
    """The plan of ĵ's release at ε₁ (public), kept."""
    return plan_laplace(1, eps1, integer=True)


def capped_delta_hat(delta_hat: float, eps2: float) -> float:
    """``min(Δ̂, e^700, 2**63·ε₂)``: the cap :func:`release_delta_hat` applies (post-processing),
    so that the release of ``X`` can always be planned. Also for a Δ̂ computed outside a release
    (``efficient.explain``'s ``e^μΔ``, which is ``+inf`` when the thresholds overflowed).

    >>> capped_delta_hat(math.inf, 1.0) == 2.0 ** 63, capped_delta_hat(3.0, 1.0)
    (True, 3.0)
    """
    return min(float(delta_hat), math.exp(_MAX_EXPONENT), math.ldexp(eps2, 63))


def release_delta_hat(j: int, params: Mapping[str, Any], rng) -> float:
    """Release ``Δ̂`` for ``Δ = θ·e^{jβ}`` (Chen & Zhou Lemma 4, ε₁-DP), with exact noise.

    ``ln Δ = ln θ + jβ`` has sensitivity β because ``j`` changes by at most one between
    neighbours; the textbook release is ``ln Δ + μ + Lap(β/ε₁)``. Here the integer ``j`` itself is
    released with exact discrete Laplace noise, ``ĵ = j + K₁``, ``K₁ ~ DLap(1/ε₁)``
    (``plan_laplace(1, ε₁, integer=True)``: sensitivity 1, the unit grid, ε₁-DP exactly), i.e.
    ``ln Δ + μ`` is released on the lattice ``ln θ + μ + βℤ``; then ``Δ̂ = θ·e^{μ + βĵ}`` is
    computed from the released ``ĵ`` and public parameters only (never as ``Δ·e^{noise}``, whose
    floating-point product would carry Δ's low bits). ``Δ̂`` is capped to ``2**63·ε₂`` (and its
    exponent to 700) — post-processing — so that the release of ``X`` can always be planned.
    Draws once from ``rng`` (None: from the scale's pool of pre-drawn values, OS entropy).
    """
    plan = _j_plan(float(params["eps1"]))
    j_hat = plan.release(int(j), rng=rng)  # an integer-valued float on the unit grid
    exponent = math.log(params["theta"]) + params["mu"] + params["beta"] * j_hat
    return capped_delta_hat(math.exp(min(exponent, _MAX_EXPONENT)), params["eps2"])


def release_x(x: float, delta_hat: float, eps2: float, rng) -> float:
    """Release ``X`` (global sensitivity ``Δ̂`` given the released ``Δ̂``) at ε₂ on the public
    grid of :func:`x_plan`: ``γ·(⌊X/γ⌋ + K)``, ``K ~ DLap(λ)``, ``γλ ≥ Δ̂/ε₂``."""
    return x_plan(delta_hat, eps2).release(float(x), rng=rng)


@dataclass(frozen=True)
class Release:
    """One differentially private release of the recursive (or general) mechanism.

    Attributes
    ----------
    value : float
        The noisy answer ``X̂ = γ·(⌊X/γ⌋ + K)``, ``K ~ DLap(λ)``, ``γλ ≈ Δ̂/ε₂`` (see :attr:`plan`).
    epsilon : float
        The privacy budget this release consumed (``ε₁ + ε₂``, or the sum over :attr:`parts`).
    delta_hat : float
        The released noisy sensitivity ``Δ̂ = θ·e^{μ + β·ĵ}``, ``ĵ = j + K₁``, ``K₁ ~ DLap(1/ε₁)``
        (``Δ = θe^{jβ}``, so ``ln Δ̂ = ln Δ + μ + β·K₁``). For a signed release (two parts) it is
        the larger of the two parts' ``Δ̂``.
    params : Mapping
        Every parameter used: ``theta``, ``beta``, ``mu``, ``eps1``, ``eps2``, ``privacy``.
    mechanism : str
        ``"recursive"``, ``"recursive-signed"`` or ``"general"``.
    parts : tuple of Release
        For a signed SUM, the releases of the positive and the negative part (``value`` is their
        difference); empty otherwise.
    """

    value: float
    epsilon: float
    delta_hat: float
    params: Mapping[str, Any]
    mechanism: str = "recursive"
    parts: tuple[Release, ...] = field(default=())

    @property
    def plan(self) -> LaplacePlan:
        """The public plan ``X̂`` was released with (single releases only)."""
        if self.parts:
            raise AttributeError("a signed release has one plan per part; see .parts")
        return x_plan(self.delta_hat, self.params["eps2"])

    @property
    def grid(self) -> float:
        """The power-of-two grid ``value`` lies on (for a signed release: the finer of the
        parts' grids, on which their difference lies)."""
        if self.parts:
            return min(part.grid for part in self.parts)
        return self.plan.grid

    @property
    def noise_scale(self) -> float:
        """The scale ``γλ`` of the discrete Laplace noise added to ``X`` (≈ ``Δ̂/ε₂``, at most
        ``1 + 2**−20`` above it once ``Δ̂ ≥ 2**−24·ε₂``; single releases only)."""
        if self.parts:
            raise AttributeError("a signed release has one noise scale per part; see .parts")
        return self.plan.noise_scale

    def noise_bound(self, p: float = 0.95) -> float:
        """A bound ``b`` with ``Pr[|X̂ − X| ≤ b] ≥ p``, from ``Δ̂`` and ``ε₂`` only.

        Exact for the discrete law (:func:`provsql_dp.mechanisms.noise.sources.error_bound`): the
        quantile of ``γ|K|`` plus the rounding of ``X`` down to the grid (< γ). It bounds the
        *noise*, not the distance to the true answer: ``X`` under-estimates the true answer by
        a data-dependent truncation bias (Chen & Zhou Lemma 8) that is not published. For a signed
        release the two parts' bounds at ``(1+p)/2`` are added (union bound).
        """
        if not 0 < p < 1:
            raise ValueError(f"p must be a probability strictly between 0 and 1, got {p!r}")
        if self.parts:
            q = (1 + p) / 2
            return sum(part.noise_bound(q) for part in self.parts)
        return error_bound(self.plan, p)

    def interval(self, p: float = 0.95) -> tuple[float | None, float | None]:
        """An interval that holds the **true answer** with probability ≥ ``p`` (None: unbounded).

        The mechanism releases ``X̂ = γ(⌊X/γ⌋ + K)`` with ``X = min_i H_i + (|P| − i)Δ̂ ≤ H_|P|``,
        the true answer (take ``i = |P|``, Chen & Zhou eq. 12). So ``truth ≥ X ≥ X̂ − γK``, and with
        ``k`` the one-sided quantile of ``K ~ DLap(λ)`` (``Pr[K > k] ≤ 1 − p``) the truth is at
        least ``X̂ − γk`` with probability ≥ ``p``. Above, the truncation ``H_|P| − X`` is
        data-dependent and not released: the interval is one-sided, ``(X̂ − γk, None)``. For a
        signed release the negative part's truncation is unbounded too: ``(None, None)``.
        Computed from ``Δ̂``, ``ε₂`` and ``p`` only.
        """
        if not 0.5 < p < 1:
            raise ValueError(f"a one-sided coverage p must lie in (0.5, 1), got {p!r}")
        if self.parts:
            return (None, None)
        plan = self.plan
        # Pr[K > k] = α^{k+1}/(1+α) = Pr[|K| > k]/2
        k = tail_units(plan.noise_units, 2 * p - 1)
        return (self.value - plan.grid * k, None)
