"""The Gaussian mechanism for a statistic whose ℓ₂ sensitivity follows from the declarations.

The zCDP twin of :mod:`.laplace`: ``γ·(⌊value/γ⌋ + K)`` with K the exact discrete Gaussian of
:func:`~provsql_dp.mechanisms.noise.discrete_gaussian.plan_gaussian` — ρ-zCDP for a value of ℓ₂
sensitivity Δ₂ (Canonne, Kamath & Steinke 2020, Theorem 14), hence (ρ + 2√(ρ ln(1/δ)), δ)-DP
for every δ. Counts use the unit grid (integer answers, no rounding at all).

>>> import numpy as np
>>> from fractions import Fraction
>>> rels = release_many([100, 200], sensitivity=1, rho=Fraction(1, 2), integer=True,
...                     rng=np.random.default_rng(0))
>>> [type(r.value).__name__ for r in rels], rels[0].mechanism, rels[0].noise_scale
(['int', 'int'], 'gaussian', 1.0)
>>> 1.0 < rels[0].noise_bound(0.95) <= 3.0
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np

from ..._numbers import positive
from ..noise.discrete_gaussian import GaussianPlan, plan_gaussian
from ._release import GridRelease

__all__ = ["GaussianRelease", "release_many", "tail_units"]


@dataclass(frozen=True)
class GaussianRelease(GridRelease):
    """One release of the Gaussian mechanism: the noisy value and its public noise parameters
    (``plan``, ``grid``, ``covers``: :class:`~._release.GridRelease`)."""

    value: float
    rho: Fraction
    sensitivity: float
    integer: bool = False
    changed: int = 1
    mechanism: str = "gaussian"

    def _plan(self) -> GaussianPlan:
        return plan_gaussian(self.sensitivity, self.rho, integer=self.integer,
                             changed=self.changed)

    @property
    def noise_scale(self) -> float:
        """σ of the discrete Gaussian actually added, in value units."""
        return self.plan.sigma

    def noise_bound(self, p: float = 0.95) -> float:
        """``b`` with ``Pr[|value − true value| ≤ b] ≥ p``: the exact discrete quantile of |K|
        (:func:`tail_units`) in grid units, plus the flooring of a real value (< γ)."""
        gamma = self.plan.grid
        slack = (gamma - 1.0) if self.integer and gamma >= 1 else gamma
        return gamma * tail_units(self.plan.sigma2_units, p) + slack


@lru_cache(maxsize=256)
def tail_units(sigma2: int, p: float) -> int:
    """The smallest integer ``k ≥ 0`` with ``Pr[|K| > k] ≤ 1 − p`` for ``K ~ N_ℤ(0, σ²)``,
    from the pmf summed over ±(12σ + 12) (the mass beyond is below 1e-30).

    >>> tail_units(1, 0.95), tail_units(10_000, 0.95)
    (2, 196)
    """
    if not 0 < p < 1:
        raise ValueError(f"p must be a probability strictly between 0 and 1, got {p!r}")
    span = int(12 * math.sqrt(sigma2)) + 12
    ks = np.arange(0, span + 1, dtype=np.float64)
    w = np.exp(-ks * ks / (2.0 * sigma2))
    total = w[0] + 2.0 * w[1:].sum()
    inside = (w[0] + 2.0 * np.cumsum(np.concatenate([[0.0], w[1:]]))) / total  # Pr[|K| ≤ k]
    k = int(np.searchsorted(inside, p * (1 + 1e-12), side="left"))
    return min(k, span)


def release_many(values, *, sensitivity: float, rho, integer: bool = False, changed: int = 1,
                 rng=None) -> list[GaussianRelease]:
    """Each value released with i.i.d. discrete Gaussian noise of one plan: a vector of ℓ₂
    sensitivity ``sensitivity`` (at most ``changed`` coordinates differ between neighbours) at
    ``rho``-zCDP in total."""
    sens = positive("sensitivity", sensitivity)
    rho = Fraction(rho)
    plan = plan_gaussian(sens, rho, integer=integer, changed=changed)
    x = np.asarray(values, dtype=np.float64)
    if integer:
        x = np.round(x)
    noisy = plan.release_array(x, rng=rng)
    out = noisy.astype(np.int64).tolist() if integer else noisy.tolist()
    return [GaussianRelease(value=v, rho=rho, sensitivity=sens, integer=integer, changed=changed)
            for v in out]
