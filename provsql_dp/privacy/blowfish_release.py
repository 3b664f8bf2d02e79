"""One count released on the policy route (Blowfish), and its error bound.

A linear strategy's noise is a fixed linear combination of independent Laplace draws with a
data-independent variance: Chebyshev/Chernoff on it (:mod:`provsql_dp.policies.blowfish.accuracy`)
bound the error of the released count. The ordered strategy's isotonic consistency is not linear:
its bound holds for every prefix draw at once and the consistency step never widens it
(:mod:`provsql_dp.policies.blowfish.consistency`). DAWA's partition adds a data-dependent bias: its
bound is the noise's only (:mod:`.intervals` says so).

>>> rel = BlowfishRelease(10.0, 2.0, 1.0)
>>> round(rel.noise_bound(0.95), 3)
5.847
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..policies.blowfish import accuracy as _acc

__all__ = ["BlowfishRelease"]


@dataclass(frozen=True)
class BlowfishRelease:
    """One released count and its data-independent noise variance."""

    value: float
    variance: float
    epsilon: float
    mechanism: str = "blowfish"
    #: the strategy ends in a nonlinear consistency step (isotonic regression): the variance then
    #: bounds the noise before it only, and the bound comes from :attr:`simultaneous`
    consistent: bool = False
    #: for a consistent release: ``(SimultaneousBound, weight index, LaplacePlan drawn)`` — the
    #: honest bound through the consistency step (:mod:`provsql_dp.policies.blowfish.consistency`)
    simultaneous: tuple | None = field(default=None, repr=False, compare=False)
    #: a data-dependent strategy (DAWA): the variance is the noise's given the released
    #: partition; the partition's bias is not bounded, so the interval is noise only
    noise_only: bool = False

    def noise_bound(self, p: float = 0.95) -> float:
        """A bound ``b`` with ``P(|released − true count| ≤ b) ≥ p``: Chebyshev/Chernoff on the
        Laplace sum for a linear strategy; for the ordered strategy the bound that holds for all
        its prefix draws at once, which its isotonic consistency never widens."""
        if not 0 < p < 1:
            raise ValueError(f"p must be a probability strictly between 0 and 1, got {p!r}")
        if self.simultaneous is not None:
            bound, q, plan = self.simultaneous
            return float(bound.alphas(self.epsilon, p, plan=plan)[q])
        if self.consistent:
            raise ValueError("a consistent Blowfish release needs its simultaneous bound")
        return float(_acc.alpha_bound(self.variance, 1 - p))
