r"""``COUNT(DISTINCT c)`` over a public domain as a histogram of presence, with ε-DP.

For each value ``v`` of the declared domain ``D`` of ``c``, ``n_v`` is the number of
participants who have a row with ``c = v``. Adding or removing one participant changes each
``n_v`` by at most 1, and only the counts of the values they hold: with one row per participant
one count, so the vector ``(n_v)`` has ℓ1-sensitivity ``Δ = 1``; when a participant may own
several rows (a table protected ``BY (owner)``) they may hold every value, so ``Δ = |D|``
(the route says which). Each count is released with exact discrete Laplace noise of scale
``Δ/ε`` (:func:`provsql_dp.mechanisms.global_sensitivity.laplace.release_many`).

Everything after is post-processing of the noisy counts ``ñ_v``:

* **the answer**: the number of values whose noisy count reaches the threshold
  ``τ = max(1, ⌈Δ·ln|D| / ε⌉)`` (:func:`threshold`) — a value present in one row has ``n_v ≥ 1``,
  an absent one ``n_v = 0``; ``τ`` keeps the expected number of absent values counted below
  about one whatever ``|D|``, at the price of missing values held by fewer than ``τ``
  participants (a bias down for rare values, the interval covers it);
* **the interval** at ``p``: with probability ≥ ``p`` every ``|ñ_v − n_v| ≤ t`` (union bound over
  ``|D|``, exact discrete tails); then every value with ``ñ_v ≥ t + 1`` is present and every value
  with ``ñ_v < 1 − t`` absent, so ``[#{ñ_v ≥ t + 1}, #{ñ_v ≥ 1 − t}]`` holds the number of domain
  values present.

The statistic is the number of **declared domain values** present (values outside the domain
are not read).

>>> import numpy as np
>>> r = release_presence([120, 0, 95, 80], 1.0, rng=np.random.default_rng(0))
>>> r.value, r.interval(0.95)
(3, (3, 4))
>>> threshold(4, 1.0), threshold(1000, 0.5), threshold(3, 1.0, sensitivity=3)
(2, 14, 4)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ..noise.sources import tail_units
from . import laplace

__all__ = ["PresenceRelease", "release_presence", "threshold"]


def threshold(domain_size: int, epsilon: float, sensitivity: int = 1) -> int:
    """``τ = max(1, ⌈Δ·ln|D| / ε⌉)``: the noisy count at which a domain value counts as present."""
    return max(1, math.ceil(sensitivity * math.log(max(domain_size, 1)) / float(epsilon)))


@dataclass(frozen=True)
class PresenceRelease:
    """A released distinct count and the noisy per-value counts it is read from (public)."""

    value: int
    epsilon: float
    noisy_counts: tuple
    tau: int
    sensitivity: int = 1
    noise_units: object = None  # the exact discrete Laplace scale the sampler used
    mechanism: str = "presence"
    integer: bool = True

    covers = "the number of declared domain values present (a row with that value exists)"

    def interval(self, p: float = 0.95):
        """``(low, high)`` holding the number of domain values present with probability ≥ p."""
        d = len(self.noisy_counts)
        if d == 0:
            return (0, 0)
        units = self.noise_units if self.noise_units is not None else \
            Fraction(self.sensitivity) / Fraction(str(self.epsilon))
        t = tail_units(units, 1 - (1 - p) / d)
        lo = sum(1 for c in self.noisy_counts if c >= t + 1)
        hi = sum(1 for c in self.noisy_counts if c >= 1 - t)
        return (lo, hi)

    def noise_bound(self, p: float = 0.95) -> float:
        lo, hi = self.interval(p)
        return float(max(self.value - lo, hi - self.value))


def release_presence(counts, epsilon: float, rng=None, sensitivity: int = 1) -> PresenceRelease:
    """Release the distinct count from the true per-value participant counts (one per domain
    value, in the domain's order; computed by the caller after the charge); ``sensitivity``:
    the ℓ1 bound Δ (1 with one row per participant, else the domain's size)."""
    rels = laplace.release_many(list(counts), sensitivity=int(sensitivity),
                                epsilon=float(epsilon), integer=True, rng=rng,
                                changed=int(sensitivity))  # each value's count moves by ≤ 1
    noisy = tuple(int(r.value) for r in rels)
    tau = threshold(len(noisy), epsilon, sensitivity)
    units = rels[0].plan.noise_units if rels else None
    return PresenceRelease(sum(1 for c in noisy if c >= tau), float(epsilon), noisy, tau,
                           int(sensitivity), units)
