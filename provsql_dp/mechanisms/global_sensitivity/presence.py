r"""``COUNT(DISTINCT c)`` over a public domain as a histogram of presence, with ε-DP.

For each value ``v`` of the declared domain ``D`` of ``c``, ``n_v`` is the number of
participants whose row has ``c = v``. With one row per participant, adding or removing one
participant changes one ``n_v`` by 1: the vector ``(n_v)`` has ℓ1-sensitivity 1, so each count
is released with exact discrete Laplace noise of scale ``1/ε`` at the full ε (parallel
composition) — :func:`provsql_dp.mechanisms.global_sensitivity.laplace.release_many`. (A
participant who owned rows with several values would move several counts: the route only takes
row-per-participant tables and says so otherwise.)

Everything after is post-processing of the noisy counts ``ñ_v``:

* **the answer**: the number of values whose noisy count reaches the threshold
  ``τ = max(1, ⌈ln|D| / ε⌉)`` (:func:`threshold`) — a value present in one row has ``n_v ≥ 1``,
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
>>> threshold(4, 1.0), threshold(1000, 0.5)
(2, 14)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..noise.sources import tail_units
from . import laplace

__all__ = ["PresenceRelease", "release_presence", "threshold"]


def threshold(domain_size: int, epsilon: float) -> int:
    """``τ = max(1, ⌈ln|D| / ε⌉)``: the noisy count at which a domain value counts as present."""
    return max(1, math.ceil(math.log(max(domain_size, 1)) / float(epsilon)))


@dataclass(frozen=True)
class PresenceRelease:
    """A released distinct count and the noisy per-value counts it is read from (public)."""

    value: int
    epsilon: float
    noisy_counts: tuple
    tau: int
    mechanism: str = "presence"
    integer: bool = True

    covers = "the number of declared domain values present (a row with that value exists)"

    def interval(self, p: float = 0.95):
        """``(low, high)`` holding the number of domain values present with probability ≥ p."""
        d = len(self.noisy_counts)
        if d == 0:
            return (0, 0)
        t = tail_units(1 / self.epsilon, 1 - (1 - p) / d)
        lo = sum(1 for c in self.noisy_counts if c >= t + 1)
        hi = sum(1 for c in self.noisy_counts if c >= 1 - t)
        return (lo, hi)

    def noise_bound(self, p: float = 0.95) -> float:
        lo, hi = self.interval(p)
        return float(max(self.value - lo, hi - self.value))


def release_presence(counts, epsilon: float, rng=None) -> PresenceRelease:
    """Release the distinct count from the true per-value participant counts (one per domain
    value, in the domain's order; computed by the caller after the charge)."""
    rels = laplace.release_many(list(counts), sensitivity=1, epsilon=float(epsilon),
                                integer=True, rng=rng)
    noisy = tuple(int(r.value) for r in rels)
    tau = threshold(len(noisy), epsilon)
    return PresenceRelease(sum(1 for c in noisy if c >= tau), float(epsilon), noisy, tau)
