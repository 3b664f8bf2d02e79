"""The Laplace mechanism for a statistic whose sensitivity follows from the declarations.

When every participant owns a publicly bounded number of tuples (one row per person, joined to
public tables on their keys) and each tuple's weight is bounded (1 for a count, the declared
clamp for a SUM), removing or adding one participant changes the sum by at most
``sensitivity = rows_per_owner × max(|lower|, |upper|)``: the global sensitivity. Then
``value + Lap(sensitivity / ε)`` is ε-differentially private (Dwork et al. 2006) and, for this
query class, no data-dependent mechanism does better in the worst case. Counts are released
with the discrete Laplace (two-sided geometric) distribution, so the answer is an integer and no
floating-point artefact can leak the true value (Mironov 2012).

>>> import numpy as np
>>> rel = release(1000, sensitivity=1, epsilon=1.0, integer=True, rng=np.random.default_rng(3))
>>> isinstance(rel.value, int), rel.mechanism, rel.noise_scale
(True, 'laplace', 1.0)
>>> bool(rel.noise_bound(0.95) >= 1.0 * np.log(20))
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._numbers import positive
from .noise import discrete_laplace, laplace

__all__ = ["LaplaceRelease", "release"]


@dataclass(frozen=True)
class LaplaceRelease:
    """One release of the Laplace mechanism: the noisy value and its public noise scale."""

    value: float
    epsilon: float
    sensitivity: float
    integer: bool = False
    mechanism: str = "laplace"

    @property
    def noise_scale(self) -> float:
        """The scale ``sensitivity / ε`` of the noise added to the true value."""
        return self.sensitivity / self.epsilon

    def noise_bound(self, p: float = 0.95) -> float:
        """A bound ``b`` with ``Pr[|noise| ≤ b] ≥ p`` — exact for the discrete distribution:
        ``Pr[|K| ≥ k] = 2α^k / (1 + α)`` with ``α = e^{-1/scale}``."""
        if not 0 < p < 1:
            raise ValueError(f"p must be a probability strictly between 0 and 1, got {p!r}")
        s = self.noise_scale
        if not self.integer:
            return s * math.log(1.0 / (1.0 - p))
        alpha = math.exp(-1.0 / s)
        # smallest integer k with Pr[|K| > k] = 2 α^{k+1} / (1 + α) ≤ 1 − p
        k = math.log((1 - p) * (1 + alpha) / 2) / math.log(alpha) - 1
        return float(max(0, math.ceil(k - 1e-12)))


def release(value: float, *, sensitivity: float, epsilon: float, integer: bool = False,
            rng=None) -> LaplaceRelease:
    """``value + Lap(sensitivity / ε)`` (discrete Laplace when ``integer``)."""
    eps = positive("epsilon", epsilon)
    sens = positive("sensitivity", sensitivity)
    scale = sens / eps
    if integer:
        noisy = int(round(value)) + int(discrete_laplace(scale, rng=rng))
    else:
        noisy = float(value) + float(laplace(scale, rng=rng))
    return LaplaceRelease(value=noisy, epsilon=eps, sensitivity=sens, integer=integer)
