"""Data-independent accuracy: expected MSE, (α, β) bounds, and accuracy-first budgets (Liu et al. §3).

The noise of every strategy here is a fixed linear combination ``X = Σ aᵢ Lᵢ`` of independent
Laplace variables, so its variance ``σ² = 2 Σ aᵢ²bᵢ²`` is known exactly and does not depend on the
data. Two tail bounds hold for *any* such combination and we report the smaller:

* Chebyshev: ``P(|X| ≥ α) ≤ σ²/α²``;
* Chernoff: with ``ν² = σ²/2`` and ``uᵢ = t²aᵢ²bᵢ²``, ``Σuᵢ = U = t²ν² < 1``,
  ``log E e^{tX} = −Σ log(1 − uᵢ) ≤ −log(1 − U)`` (a convex function of ``u`` on the simplex is
  largest at a vertex), so ``P(|X| ≥ rν) ≤ 2 (1 − U)⁻¹ e^{−√U·r}``, minimised over ``U``.

For a single Laplace variable the exact ``α = b ln(1/β)`` is within a small factor of this.

>>> import numpy as np
>>> round(alpha_bound(2.0, 0.05), 3)          # one Laplace(1): exact α is ln 20 = 2.996
5.847
>>> epsilon_for_alpha(np.array([2.0]), alpha=1.0, beta=0.05) > 5.8
True
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.optimize import brentq, minimize_scalar

__all__ = ["alpha_bound", "alphas", "epsilon_for_alpha", "chernoff_ratio"]


@functools.lru_cache(maxsize=256)
def chernoff_ratio(beta: float) -> float:
    """Smallest ``r`` with ``2·min_U (1−U)⁻¹ e^{−√U r} ≤ β`` (so ``α = r·σ/√2``)."""
    if not 0 < beta < 1:
        raise ValueError(f"beta must be in (0, 1), got {beta!r}")
    target = math.log(beta / 2)

    def g(r):
        res = minimize_scalar(lambda t: -math.log1p(-t * t) - t * r, bounds=(1e-9, 1 - 1e-12),
                              method="bounded", options={"xatol": 1e-12})
        return res.fun - target

    hi = 1.0
    while g(hi) > 0:
        hi *= 2
    return brentq(g, 0.0, hi, xtol=1e-10)


def alpha_bound(variance, beta):
    """α such that ``P(|error| ≥ α) ≤ β`` for one query whose noise has this variance."""
    v = np.asarray(variance, dtype=float)
    cheb = np.sqrt(v / beta)
    cher = chernoff_ratio(float(beta)) * np.sqrt(v / 2)
    out = np.minimum(cheb, cher)
    return float(out) if out.ndim == 0 else out


def alphas(variances, beta=0.05, simultaneous=False):
    """Per-query α at confidence ``1 − β``; with ``simultaneous`` all queries at once (union bound)."""
    v = np.asarray(variances, dtype=float)
    b = beta / max(v.size, 1) if simultaneous else beta
    return alpha_bound(v, b)


def epsilon_for_alpha(unit_variances, alpha, beta=0.05, simultaneous=False):
    """Smallest ε with every query within ``alpha`` w.p. ``1 − β``, given variances at ε = 1.

    Every strategy's variance scales as ``1/ε²``, so α scales as ``1/ε``.
    """
    if not alpha > 0:
        raise ValueError(f"alpha must be positive, got {alpha!r}")
    a1 = alphas(unit_variances, beta, simultaneous)
    m = float(np.max(a1)) if np.size(a1) else 0.0
    return m / alpha
