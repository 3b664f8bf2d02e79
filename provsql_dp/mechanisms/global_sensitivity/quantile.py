"""Quantiles (``MEDIAN``, ``QUANTILE_CONT``, ``QUANTILE_DISC``) of one numeric column with ε-DP,
released with exact discrete Laplace noise on a public grid.

The statistic
-------------
Values are clamped to a public interval ``[lo, hi]`` first (NULLs ignored); the statistic is an
order statistic of fixed rank (``QUANTILE_DISC``) or the interpolation between two adjacent ones
(``QUANTILE_CONT``, ``MEDIAN`` = ``QUANTILE_CONT(·, 0.5)``), as DuckDB computes them. Over no
values at all it is the midpoint ``(lo + hi)/2``.

Sensitivity (:func:`quantile_sensitivity`)
------------------------------------------
* **δ-neighbourhood** (Fang & Chang §5.5.2, bounded: records move, none appear): moving one record by
  at most δ moves every order statistic by at most δ (the sorted vector is 1-Lipschitz in ℓ∞),
  so every fixed-rank order statistic and every convex combination of two of them moves by at most
  ``min(δ, hi − lo)``. Clamping is 1-Lipschitz, so this holds for records that leave the interval.
* **declared bounds only** (standard neighbourhood, a record added, removed or replaced): every
  value of the statistic lies in ``[lo, hi]``, the empty table's midpoint too, so it moves by at
  most ``hi − lo``. Honest, and large: the error is of the order of the whole interval over ε
  — so the SQL route (:mod:`provsql_dp.privacy.quantile_route`) selects a grid point by rank
  instead in this case (:mod:`.quantile_grid`), and uses this module under a bounded δ policy.

A rounding margin (a few units in the last place of ``max(|lo|, |hi|)``) is added: DuckDB's
interpolation is computed in floating point, and the exact sampler's guarantee is about the
computed value (:mod:`provsql_dp.mechanisms.noise.safe_noise`, first caveat).

The release (:func:`release_quantile`) is ``plan_laplace(Δ, ε).release(value)`` — the exact
sampler — clamped to ``[lo, hi]`` afterwards (post-processing; the truth lies in ``[lo, hi]``, so
clamping never increases the error and :meth:`QuantileRelease.noise_bound` stays a valid bound).
The smooth-sensitivity Cauchy variant of :func:`provsql_dp.policies.delta.median` is continuous
noise of a data-dependent scale and is deliberately not offered here.

>>> import numpy as np
>>> quantile_sensitivity(0.0, 100.0, delta=0.5) < 0.5 + 1e-9
True
>>> r = release_quantile(42.0, 0.0, 100.0, quantile_sensitivity(0.0, 100.0, delta=0.5), 1.0,
...                      rng=np.random.default_rng(0))
>>> 0.0 <= r.value <= 100.0, r.noise_bound(0.95) < 2.0
(True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..noise.sources import error_bound, resolve_rng
from ..noise.safe_noise import plan_laplace

__all__ = [
    "STATISTICS",
    "QuantileRelease",
    "quantile_of",
    "quantile_sensitivity",
    "release_quantile",
]

#: statistic name → (DuckDB aggregate, fixed q or None)
STATISTICS = {"MEDIAN": ("quantile_cont", 0.5), "QUANTILE_CONT": ("quantile_cont", None),
              "QUANTILE_DISC": ("quantile_disc", None)}


def quantile_sensitivity(lo: float, hi: float, delta: float | None = None) -> float:
    """Δ of a clamped quantile: ``min(δ, hi − lo)`` under a bounded δ-neighbourhood, else
    ``hi − lo``; plus a floating-point margin of 16 ulps of ``max(|lo|, |hi|)``."""
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
        raise ValueError(f"the interval [{lo}, {hi}] must be finite and non-empty")
    width = hi - lo
    base = width if delta is None else min(float(delta), width)
    if not base > 0:
        raise ValueError("delta must be positive")
    return base + 16 * math.ulp(max(abs(lo), abs(hi), base))


def quantile_of(values, q: float, lo: float, hi: float, discrete: bool = False) -> float:
    """Reference implementation of the clamped statistic (DuckDB's definitions): ``q``-quantile
    of ``values`` clamped to ``[lo, hi]`` (NaN counts as ``hi``, as in DuckDB's ordering),
    NULL/None dropped; ``(lo + hi)/2`` when nothing is left.

    >>> quantile_of([1, 2, 3, 4], 0.25, 0, 10), quantile_of([1, 2, 3, 4], 0.9, 0, 10, True)
    (1.75, 4.0)
    >>> quantile_of([], 0.5, 0, 10)
    5.0
    """
    x = np.array([v for v in values if v is not None], dtype=float)
    if x.size == 0:
        return (float(lo) + float(hi)) / 2
    x = np.where(np.isnan(x), hi, np.clip(x, lo, hi))
    x.sort()
    n = x.size
    if discrete:
        return float(x[max(0, math.ceil(n * q) - 1)])
    pos = (n - 1) * q
    i = math.floor(pos)
    j = min(i + 1, n - 1)
    return float(x[i] + (pos - i) * (x[j] - x[i]))


@dataclass(frozen=True)
class QuantileRelease:
    """One released quantile and the mechanism's public parameters (never the true value)."""

    value: float
    epsilon: float
    sensitivity: float
    lower: float
    upper: float
    statistic: str
    neighbourhood: str       # "δ = …" or "bounds"
    grid: float
    noise_scale: float
    _noise_units: object = None
    mechanism: str = "quantile"

    def noise_bound(self, p: float = 0.95) -> float:
        """``b`` with ``P(|release − truth| ≤ b) ≥ p`` (exact discrete Laplace quantile; the
        final clamp only shrinks the error)."""
        if not 0 < p < 1:
            raise ValueError(f"p must be a probability strictly between 0 and 1, got {p!r}")
        plan = plan_laplace(self.sensitivity, self.epsilon)
        return float(min(error_bound(plan, p), self.upper - self.lower))


def release_quantile(value: float, lo: float, hi: float, sensitivity: float, epsilon: float,
                     rng=None, statistic: str = "MEDIAN",
                     neighbourhood: str = "bounds") -> QuantileRelease:
    """Release ``value`` (already clamped, computed by the caller after charging ε) with exact
    discrete Laplace noise of scale ``sensitivity/ε`` and clamp the result to ``[lo, hi]``."""
    plan = plan_laplace(sensitivity, epsilon)
    v = float(value)
    if not math.isfinite(v):  # a computed value outside the interval cannot happen; be total
        v = (float(lo) + float(hi)) / 2
    v = min(max(v, float(lo)), float(hi))
    out = plan.release(v, rng=resolve_rng(rng))
    out = min(max(out, float(lo)), float(hi))
    return QuantileRelease(out, float(epsilon), float(sensitivity), float(lo), float(hi),
                           statistic, neighbourhood, plan.grid, plan.noise_scale,
                           plan.noise_units)
