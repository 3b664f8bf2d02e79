"""Noise sources for every release: exact discrete Laplace on public grids, OS entropy by default.

Every released number is drawn through :mod:`provsql_dp.mechanisms.noise.safe_noise` (exact discrete
Laplace noise added to the value rounded to a grid fixed from public quantities; see its
docstring for the privacy statement). Continuous floating-point Laplace noise is not used
anywhere: ``x + scale·log(u)`` in floating point leaks the true value through the low-order bits
of the release (Mironov 2012).

* :func:`resolve_rng` — the generator of one release: ``rng`` if a test passes one, else a fresh
  :func:`~provsql_dp.mechanisms.noise.safe_noise.release_rng` (Philox keyed by OS entropy). A seed can
  be fixed only from Python, never from SQL (README, "No side channels").
* :func:`discrete_laplace` — exact ``DLap(scale)`` integers (Canonne, Kamath & Steinke 2020).
* :func:`laplace` — *data-independent* Laplace-shaped noise of scale ≥ ``scale`` on the public grid
  of ``plan_laplace(scale, 1)``, for releases that read no data (a fallback answering 0). Never
  add it to a private value yourself: release private values with
  :func:`~provsql_dp.mechanisms.noise.safe_noise.plan_laplace`, which rounds the value to the grid first.
* :func:`error_bound` — an exact bound on ``|release − value|`` of a plan's release, from the
  discrete distribution.

>>> import numpy as np
>>> from provsql_dp.mechanisms.noise.safe_noise import on_grid, plan_laplace
>>> rng = np.random.default_rng(7)
>>> isinstance(discrete_laplace(2.0, rng=rng), int)
True
>>> z = laplace(1.0, rng=rng)
>>> on_grid(z, plan_laplace(1.0, 1.0).grid) and abs(z) < 50
True
>>> round(error_bound(plan_laplace(1, 1.0, integer=True), 0.95, integer=True), 1)
3.0
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .safe_noise import (
    LaplacePlan,
    at_least_min_scale,
    plan_laplace,
    release_rng,
)
from .safe_noise import discrete_laplace as _exact_discrete_laplace
from .safe_noise import resolve_rng as _resolve

__all__ = ["resolve_rng", "scalar_draws", "release_rng", "discrete_laplace", "laplace",
           "error_bound", "tail_units"]


def resolve_rng(rng: np.random.Generator | None) -> np.random.Generator:
    """``rng`` if given (tests only), else a fresh per-release :func:`release_rng`."""
    return _resolve(rng)


def scalar_draws(rng: np.random.Generator | None) -> np.random.Generator | None:
    """The source of a release whose draws are a few scalars (the recursive mechanism's ĵ and
    X): ``rng`` if a test passes one (validated, used in order as before), else None — each
    draw then takes pre-drawn i.i.d. values of its scale's pool
    (:func:`~provsql_dp.mechanisms.noise.safe_noise.discrete_laplace`, ``POOL_TAKE_MAX``), as
    every scalar release with OS entropy does, instead of a fresh generator and a
    ``MIN_POOL``-candidate draw of its own (~0.15 ms each). The same exact law; each value is
    handed out once.

    >>> scalar_draws(None) is None
    True
    >>> g = np.random.default_rng(0)
    >>> scalar_draws(g) is g
    True
    """
    return None if rng is None else _resolve(rng)


def discrete_laplace(scale, size=None, *, rng: np.random.Generator | None = None):
    """Exact two-sided geometric noise ``P(k) ∝ exp(−|k|/scale)`` (integer arithmetic only).

    ``scale`` is taken exactly (a float as its binary fraction); see
    :func:`provsql_dp.mechanisms.noise.safe_noise.discrete_laplace`.
    """
    if isinstance(scale, float) and not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"discrete Laplace scale must be positive and finite, got {scale!r}")
    return _exact_discrete_laplace(scale, size=size, rng=rng)


def laplace(scale: float, size=None, *, rng: np.random.Generator | None = None):
    """Data-independent noise of Laplace scale ≥ ``scale``, on a public power-of-two grid.

    ``γ·K`` with ``K ~ DLap(λ)`` exactly, where ``γ`` and ``λ`` are those of
    ``plan_laplace(scale, 1)`` (``γλ ≤ (1 + 2**−20)·scale``). For releases that read no data only
    (e.g. the recursive mechanism's fallback ``0 + noise``); a private value must be released
    with :func:`~provsql_dp.mechanisms.noise.safe_noise.plan_laplace` instead.
    """
    scale = float(scale)
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"Laplace scale must be positive and finite, got {scale!r}")
    plan = plan_laplace(at_least_min_scale(scale, 1.0), 1.0)
    shape = () if size is None else ((size,) if np.ndim(size) == 0 else tuple(size))
    out = plan.release_array(np.zeros(shape), rng=rng)
    return float(out) if size is None else out


def tail_units(noise_units, p: float) -> int:
    """The smallest integer ``k ≥ 0`` with ``Pr[|K| > k] ≤ 1 − p`` for ``K ~ DLap(λ)``.

    ``Pr[|K| > k] = 2α^{k+1}/(1 + α)`` with ``α = e^{−1/λ}`` (exact for the discrete law).

    >>> tail_units(1, 0.95), tail_units(Fraction(1, 2), 0.5)
    (3, 0)
    """
    if not 0 < p < 1:
        raise ValueError(f"p must be a probability strictly between 0 and 1, got {p!r}")
    inv = float(1 / Fraction(noise_units))  # 1/λ, correctly rounded
    log_alpha = -inv
    log1p_alpha = math.log1p(math.exp(log_alpha))
    target = math.log1p(-p)  # ln(1 − p)

    def log_tail(k: int) -> float:  # ln Pr[|K| > k]
        return math.log(2.0) + (k + 1) * log_alpha - log1p_alpha

    k = max(0, math.ceil((math.log(2.0) - log1p_alpha - target) / inv) - 1)
    while k > 0 and log_tail(k - 1) <= target:
        k -= 1
    while log_tail(k) > target:
        k += 1
    return k


def error_bound(plan: LaplacePlan, p: float = 0.95, *, integer: bool = False) -> float:
    """A bound ``b`` with ``Pr[|release − value| ≤ b] ≥ p`` for ``plan.release(value)``.

    The release is ``γ·(⌊value/γ⌋ + K)``, so ``release − value = γK − f`` with the flooring
    ``f = value − γ⌊value/γ⌋ ∈ [0, γ)``: ``|release − value| ≤ γ|K| + f``. With ``k`` the exact
    discrete quantile of ``|K|`` (:func:`tail_units`), ``b = γk + f_max`` where ``f_max = γ − 1``
    for integer values (``0`` on the unit grid: the bound is then exact) and ``γ`` otherwise
    (``f < γ``). Public: a function of the plan and ``p`` only.
    """
    gamma = plan.grid
    k = tail_units(plan.noise_units, p)
    slack = (gamma - 1.0) if integer and gamma >= 1 else gamma
    return gamma * k + slack
