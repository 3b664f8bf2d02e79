"""An honest error bound for the ordered strategy, whose isotonic consistency is not linear.

The ordered mechanism (He et al. §7.1; Hay et al. 2010) releases the ``m`` prefix counts
``c_1 ≤ … ≤ c_m`` of a path tree as ``y_i = c_i + e_i`` (exact discrete Laplace on a public grid,
:meth:`provsql_dp.mechanisms.noise.safe_noise.LaplacePlan.release_array`), then replaces ``y`` by its
isotonic regression ``f`` clipped to ``[0, n]``, and answers each query ``q`` as
``public_q + Σ_j W_T[q, j] f_j``. The variance of the unconstrained ``e`` does not bound the
error of ``f``: the projection lowers the *total* squared error, not each coordinate's. What does
hold, for every realisation:

**Lemma.** If ``c`` is non-decreasing and ``|y_i − c_i| ≤ a`` for every ``i``, then the isotonic
fit satisfies ``|f_i − c_i| ≤ a`` for every ``i``. (Min–max formula
``f_i = max_{s≤i} min_{t≥i} ȳ[s..t]``: taking ``t = i`` gives ``f_i ≤ max_s ȳ[s..i] ≤
max_s c̄[s..i] + a ≤ c_i + a``; symmetrically ``f_i ≥ min_t ȳ[i..t] ≥ c_i − a``.) Clipping to
``[0, n] ∋ c_i`` is 1-Lipschitz and fixes ``c_i``, so it keeps the bound.

So with ``a`` the bound that holds for **all** ``m`` draws at once with probability ≥ ``p`` —
the draws are independent, so each at level ``p^{1/m}``, exact for the discrete law
(:func:`provsql_dp.mechanisms.noise.sources.error_bound`, grid rounding included) — every query's error
is at most ``a·‖W_T[q]‖₁`` simultaneously, with probability ≥ ``p``. Public: a function of the
plan (``Δ = ℓ``, ε, the grid) and of the workload only.

>>> import numpy as np
>>> b = SimultaneousBound(np.array([1.0, 1.0, 0.0]), count=2, sensitivity=1, changed=1)
>>> [round(float(x), 2) for x in b.alphas(1.0, 0.95)]  # two Laplace(1) draws, each at 0.95**(1/2)
[3.68, 3.68, 0.0]
>>> float(b.epsilon_for(3.68, 0.95)) <= 1.0
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..._numbers import round_up_decimal
from ...mechanisms.noise.sources import error_bound
from ...mechanisms.noise.safe_noise import LaplacePlan, plan_laplace

__all__ = ["SimultaneousBound", "per_draw_level"]


def per_draw_level(p: float, m: int) -> float:
    """The level ``q`` each of ``m`` independent draws is bounded at so that all ``m`` bounds
    hold together with probability ≥ ``p`` (``q^m ≥ p``), rounded so as to err on the safe side.

    >>> per_draw_level(0.95, 1), per_draw_level(0.95, 2) ** 2 >= 0.95
    (0.95, True)
    """
    if not 0 < p < 1:
        raise ValueError(f"p must be a probability strictly between 0 and 1, got {p!r}")
    if m <= 1:
        return p
    tail = -math.expm1(math.log(p) / m) * (1 - 1e-9)  # 1 − p^{1/m}, made slightly smaller
    return 1.0 - tail


@dataclass(frozen=True)
class SimultaneousBound:
    """Per-query error bounds of a release whose ``count`` draws go through a consistency step
    that never moves any value further from a monotone truth than the largest draw error (see
    the module docstring). ``weights[q] = ‖W_T[q]‖₁`` over the drawn slots; ``sensitivity`` and
    ``changed`` are those the draws were planned with (``plan_laplace``)."""

    weights: np.ndarray
    count: int
    sensitivity: float
    changed: int

    def noise_plan(self, epsilon) -> LaplacePlan:
        """The public plan the draws are made with at ``epsilon`` (as ``SafeNoise.release``)."""
        return plan_laplace(self.sensitivity, epsilon, changed=self.changed)

    def draw_bound(self, plan: LaplacePlan, p: float) -> float:
        """``a``: every draw's error is at most ``a`` at once with probability ≥ ``p`` (integer
        values: the grid rounding is included)."""
        return float(error_bound(plan, per_draw_level(p, self.count), integer=True))

    def alphas(self, epsilon, p: float, plan: LaplacePlan | None = None) -> np.ndarray:
        """Per-query α with ``P(every |error_q| ≤ α_q) ≥ p`` (``plan``: the plan actually drawn
        with; default the one ``epsilon`` gives)."""
        a = self.draw_bound(self.noise_plan(epsilon) if plan is None else plan, p)
        return np.asarray(self.weights, dtype=float) * a

    def epsilon_for(self, alpha: float, p: float) -> Fraction:
        """The smallest three-significant-digit ε whose largest α is at most ``alpha``."""
        if not alpha > 0:
            raise ValueError(f"alpha must be positive, got {alpha!r}")
        w = float(np.max(self.weights)) if np.size(self.weights) else 0.0
        if w == 0:
            return Fraction(1, 1000)
        # a continuous Laplace(Δ/ε) has Pr[|X| > x] = e^{−xε/Δ}: α = wΔ·ln(1/t)/ε; the discrete
        # law on its grid is about as wide: start below that ε, step up by 1 % until α is met,
        # then down by the last digit while it still is
        def ok(e) -> bool:
            return float(np.max(self.alphas(float(e), p))) <= alpha

        t = 1 - per_draw_level(p, self.count)
        eps = round_up_decimal(0.8 * w * float(self.sensitivity) * math.log(1 / t) / alpha)
        for _ in range(400):
            if ok(eps):
                while True:
                    unit = Fraction(10) ** (math.floor(math.log10(eps)) - 2)
                    lower = eps - unit
                    if lower <= 0 or not ok(lower):
                        return eps
                    eps = lower
            eps = round_up_decimal(float(eps) * 1.01)
        raise ValueError(f"no ε reaches the accuracy α = {alpha:g} for this query; ask for a "
                         "larger α")
