"""What a mechanism hands back to an analyst: released quantities only.

A :class:`Release` holds the noisy answer ``X̂``, the noisy scale ``Δ̂``, the budget ``ε`` it was
computed with and every parameter used. It never holds ``Δ``, ``X``, the H/G sequences or the true
answer: those are functions of the private data (papers/003 §4.1) and are shown to the curator
only, through ``recursive.explain``.

>>> from types import MappingProxyType
>>> rel = Release(value=10.5, epsilon=0.5, delta_hat=2.0,
...               params=MappingProxyType({"eps1": 0.25, "eps2": 0.25}))
>>> round(rel.noise_bound(0.95), 3)   # 2.0 / 0.25 * ln(1 / 0.05)
23.966
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Release"]


@dataclass(frozen=True)
class Release:
    """One differentially private release of the recursive (or general) mechanism.

    Attributes
    ----------
    value : float
        The noisy answer ``X̂ = X + Lap(Δ̂/ε₂)``.
    epsilon : float
        The privacy budget this release consumed (``ε₁ + ε₂``, or the sum over :attr:`parts`).
    delta_hat : float
        The released noisy sensitivity ``Δ̂ = e^{μ+Y} Δ``, ``Y ~ Lap(β/ε₁)``. For a signed release
        (two parts) it is the larger of the two parts' ``Δ̂``.
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
    def noise_scale(self) -> float:
        """The Laplace scale ``Δ̂/ε₂`` of the noise added to ``X`` (single releases only)."""
        if self.parts:
            raise AttributeError("a signed release has one noise scale per part; see .parts")
        return self.delta_hat / self.params["eps2"]

    def noise_bound(self, p: float = 0.95) -> float:
        """A bound ``b`` with ``Pr[|X̂ − X| ≤ b] ≥ p``, from ``Δ̂`` and ``ε₂`` only.

        For Laplace noise of scale ``s``, ``Pr[|Y| > s·ln(1/(1−p))] = 1 − p``. It bounds the
        *noise*, not the distance to the true answer: ``X`` under-estimates the true answer by
        a data-dependent truncation bias (papers/003 Lemma 8) that is not published. For a signed
        release the two parts' bounds at ``(1+p)/2`` are added (union bound).
        """
        if not 0 < p < 1:
            raise ValueError(f"p must be a probability strictly between 0 and 1, got {p!r}")
        if self.parts:
            q = (1 + p) / 2
            return sum(part.noise_bound(q) for part in self.parts)
        return self.noise_scale * math.log(1.0 / (1.0 - p))
