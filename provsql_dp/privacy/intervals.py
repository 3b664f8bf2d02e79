"""The interval every released number carries, and what it covers: one place for the shell,
the demo, ``cursor.privacy`` and pandas.

:func:`interval_of` gives ``(low, high)`` (``None``: unbounded on that side) with
``Pr[statistic ∈ [low, high]] ≥ p``, computed from released and public quantities only;
:func:`covers` says which statistic, in words; :func:`shown` prints it. Per mechanism:

* **recursive** (LPs, the single-owner closed form, the k-star and k-triangle constructions):
  ``truth ≥ X`` always (Chen & Zhou eq. 12 at
  ``i = |P|``), so ``[X̂ − γk, +∞)`` with ``k`` the exact one-sided quantile of the discrete
  Laplace noise (:meth:`provsql_dp.mechanisms.recursive.release.Release.interval`). One-sided: the
  truncation is data-dependent and not released. A signed SUM has no interval (both parts'
  truncations are unbounded): :func:`covers` says so.
* **laplace** (one bounded tuple per participant): ``value ± b`` with ``b`` the exact quantile of
  the discrete noise plus the grid rounding — two-sided, for the exact COUNT, and for a SUM the
  sum of the values *clamped to the declared bounds* (clamping is what the bounds declare).
* **r2t**: every truncated answer ``Q(I, τ) ≤ Q(I)``, so the truth is at least the release minus
  the largest one-sided noise excess over the shift (union bound over the thresholds): one-sided.
* **blowfish**, linear strategies (Laplace on the transform, hierarchical least squares): the
  noise is a fixed linear combination of independent Laplace draws, unbiased, with a
  data-independent variance: ``value ± α`` (Chebyshev/Chernoff, :mod:`..policies.blowfish.accuracy`)
  covers the true count. The ordered strategy (``COUNT CUMULATIVE``: prefix counts, isotonic
  regression, clipping): the variance bounds the noise *before* consistency only, so its
  ``α`` is the bound that holds for all ``m`` prefix draws at once (each at ``p^{1/m}``, exact
  for the discrete law), which the consistency step provably never widens
  (:mod:`..policies.blowfish.consistency`): ``value ± α`` covers the true cumulative count.
  The data-dependent DAWA strategies (``OPTIONS (strategy = 'dawa')``): the variance is the
  noise's given the released partition, whose bias is data dependent: **noise only**.
* **avg**: the ratio box of its SUM and COUNT intervals when both are two-sided Laplace
  intervals (union bound), of the mean of clamped values; otherwise noise only.
* a post-processed COUNT (:mod:`.postprocess`): the endpoints clipped the same way (rounded
  inwards to integers, at least 0) — the true count is a nonnegative integer, so coverage is kept.

>>> from provsql_dp.mechanisms.global_sensitivity import laplace
>>> import numpy as np
>>> rel = laplace.release(100, sensitivity=1, epsilon=1.0, integer=True, rng=np.random.default_rng(1))
>>> lo, hi = interval_of(rel, 0.95)
>>> hi - lo, covers(rel)
(6.0, 'the true count')
>>> shown((1.5, None)), shown((None, None)), shown((2.0, 3.25))
('≥ 1.5', '—', '[2, 3.25]')
"""

from __future__ import annotations

import math

from ..mechanisms.noise.sources import tail_units

__all__ = ["interval_of", "covers", "shown", "one_sided_units"]


def one_sided_units(noise_units, p: float) -> int:
    """The smallest ``k ≥ 0`` with ``Pr[K > k] ≤ 1 − p`` for ``K ~ DLap(λ)`` (exact, ``p > 1/2``):
    ``Pr[K > k] = Pr[|K| > k]/2``."""
    return tail_units(noise_units, 2 * p - 1)


def interval_of(release, p: float = 0.95) -> tuple[float | None, float | None]:
    """``(low, high)`` holding the statistic named by :func:`covers` with probability ≥ ``p``."""
    if not 0 < p < 1:
        raise ValueError(f"p must be a probability strictly between 0 and 1, got {p!r}")
    own = getattr(release, "interval", None)
    if callable(own):
        lo, hi = own(p)
        return (None if lo is None else float(lo), None if hi is None else float(hi))
    value = getattr(release, "value", None)
    if value is None:
        return (None, None)
    mech = getattr(release, "mechanism", "")
    if mech == "r2t":
        return (_r2t_low(release, p), None)
    b = float(release.noise_bound(p))
    return (float(value) - b, float(value) + b)


def _r2t_low(release, p: float) -> float:
    """``value = max_j (γ_j(⌊Q_j/γ_j⌋ + K_j) − s_j) ≤ Q(I) + max_j (γ_j K_j − s_j)`` since every
    ``Q_j = Q(I, τ_j) ≤ Q(I)``; with ``Pr[K_j > k_j] ≤ (1 − p)/L`` for each of the ``L``
    thresholds, ``Q(I) ≥ value − max_j (γ_j k_j − s_j)`` with probability ≥ ``p``. That holds
    when the maximum is positive; a release of 0 is R2T's floor ``max(0, …)``, which says only
    ``Q(I) ≥ 0`` (the statistic is nonnegative), so the lower end is then at most 0 — the shifts
    can exceed the noise quantiles by a grid step, and ``0 − max_j(…)`` would be above 0 = Q(I)."""
    prm = release.params
    big_l = len(prm["thresholds"])
    q = 1 - (1 - p) / big_l
    excess = []
    for scale, shift, grid in zip(prm["noise_scales"], prm["shifts"], prm["grids"]):
        k = one_sided_units(scale / grid, q)
        excess.append(grid * k - shift)
    low = float(release.value) - max(excess)
    return min(low, 0.0) if float(release.value) <= 0 else low


def covers(release) -> str:
    """What the interval of :func:`interval_of` covers, in words (see the module docstring)."""
    own = getattr(release, "covers", None)
    if isinstance(own, str):
        return own
    mech = getattr(release, "mechanism", "")
    if mech == "laplace":
        return ("the true count" if getattr(release, "integer", False)
                else "the true SUM of the values clamped to the declared bounds")
    if mech in ("recursive", "general", "recursive-kstar", "recursive-ktriangle"):
        return ("the true answer, from below only (the mechanism's truncation is data-dependent "
                "and not released)")
    if mech == "recursive-signed":
        return ("nothing: a signed SUM's two truncations are unbounded, so no interval is "
                "honest (noise only: see noise_bound); the curator's SET BOUNDS ON table "
                "(column) BETWEEN a AND b makes it a bounded SUM with a two-sided interval and "
                "far less noise, and a column proved nonnegative (an unsigned type, CHECK "
                "(column >= 0)) an unsigned one with a one-sided interval")
    if mech == "r2t":
        return "the true answer, from below only (R2T's truncation is not released)"
    if mech == "blowfish":
        if getattr(release, "noise_only", False):
            return ("noise only: DAWA's partition adds a data-dependent bias that no released "
                    "quantity bounds")
        if getattr(release, "consistent", False):
            if getattr(release, "simultaneous", None) is None:
                return ("noise only: the variance bounds the noise before the consistency step, "
                        "not the released count")
            return ("the true count (a bound on every prefix draw at once, which the isotonic "
                    "consistency never widens)")
        return "the true count"
    if mech == "avg":
        parts = (release.sum_release, release.count_release)
        if all(getattr(r, "mechanism", "") in ("laplace", "gaussian") for r in parts):
            return "the true mean of the values clamped to the declared bounds"
        return "noise only: the SUM and COUNT parts' truncation is not bounded"
    return "noise only"


def honest(release) -> bool:
    """Whether :func:`covers` names a statistic (not noise only)."""
    text = covers(release)
    return not (text.startswith("noise only") or text.startswith("nothing"))


def shown(interval, digits: int = 6) -> str:
    """``[lo, hi]``, ``≥ lo`` (one-sided) or ``—`` (no interval), numbers as ``%g``-like text."""
    lo, hi = interval

    def num(x: float) -> str:
        if float(x).is_integer() and abs(x) < 1e15:
            return str(int(x))
        if math.isinf(x):
            return str(x)
        if 1e4 <= abs(x) < 1e15:
            return f"{x:.1f}"  # a payroll: every digit before the point
        return f"{x:.{digits}g}"

    if lo is None and hi is None:
        return "—"
    if hi is None:
        return f"≥ {num(lo)}"
    if lo is None:
        return f"≤ {num(hi)}"
    return f"[{num(lo)}, {num(hi)}]"
