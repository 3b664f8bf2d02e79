r"""``VAR_POP``, ``VAR_SAMP``, ``STDDEV_POP``, ``STDDEV_SAMP`` of a bounded column with ε-DP:
released from a noisy count, a noisy sum and a noisy sum of squares (post-processing).

The statistic
-------------
Values are clamped to the declared bounds ``[lo, hi]`` (NULLs dropped) and centred on the
midpoint ``c = (lo + hi)/2``: ``y = clamp(x) − c ∈ [−h, h]`` with ``h = (hi − lo)/2`` (the variance
does not change under a shift, and centring makes the squares' range ``[0, h²]`` instead of
``[0, max(lo², hi²)]``). From ``n = #y``, ``S = Σy``, ``Q = Σy²``::

    VAR_POP = Q/n − (S/n)²          VAR_SAMP = VAR_POP · n/(n − 1)          STDDEV = √VAR

Mechanism and the ε split
-------------------------
Adding or removing one participant's record (one row per participant) changes ``n`` by 1, ``S``
by at most ``h`` and ``Q`` by at most ``h²``. Each is released with exact discrete Laplace noise
(:func:`provsql_dp.mechanisms.global_sensitivity.laplace.release_many`) at its share of ε:
**ε/4 for the count, ε/4 for the sum, ε/2 for the sum of squares** (:data:`SPLIT`) — ``Q/n``
carries the variance, so its numerator gets the largest share; the three shares add to ε
(sequential composition). Post-processing: ``n̂ = max(ñ, 1)``; the variance is clamped to
``[0, h²]`` (``h² = (hi − lo)²/4`` is the largest population variance of values in
``[lo, hi]``; for VAR_SAMP the bound is ``h²·n̂/(n̂ − 1)``, and ``2h²`` when ``n̂ < 2``).

Interval (:meth:`VarianceRelease.interval`)
-------------------------------------------
With probability ≥ ``p`` the three noises are within their exact discrete-Laplace bounds at
``1 − (1 − p)/3`` each (union bound). On that event the truth ``(n, S, Q)`` is in the box
``[ñ ± a_n] × [S̃ ± a_S] × [Q̃ ± a_Q]`` (intersected with ``n ≥ 1``, ``0 ≤ Q ≤ n·h²``,
``|S| ≤ n·h``), and interval arithmetic of the formula over the box contains the true variance:
the interval covers it with probability ≥ ``p``. When the box allows ``n ≤ 1`` (VAR_SAMP) the
interval is the whole ``[0, bound]``.

>>> import numpy as np
>>> xs = np.random.default_rng(0).normal(4200, 800, 300).clip(2500, 6500)
>>> n, s, q = len(xs), float((xs - 4500).sum()), float(((xs - 4500) ** 2).sum())
>>> r = release_variance(n, s, q, 2500.0, 6500.0, 1.0, "VAR_POP", rng=np.random.default_rng(1))
>>> lo, hi = r.interval(0.95)
>>> bool(lo <= xs.var() <= hi), 0 <= r.value <= 2000 ** 2
(True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from . import laplace

__all__ = ["SPLIT", "STATISTICS", "VarianceRelease", "release_variance"]

#: the shares of ε of the count, the sum and the sum of squares
SPLIT = (Fraction(1, 4), Fraction(1, 4), Fraction(1, 2))
#: statistic → (sample variance?, square root?)
STATISTICS = {"VAR_POP": (False, False), "VAR_SAMP": (True, False),
              "STDDEV_POP": (False, True), "STDDEV_SAMP": (True, True)}


def _formula(n: float, s: float, q: float, sample: bool) -> float:
    v = q / n - (s / n) ** 2
    return v * n / (n - 1) if sample else v


def _cap(h2: float, n: float, sample: bool) -> float:
    """The largest variance of ``n`` values in an interval of half-width ``h``: ``h²`` (population),
    ``h²·n/(n − 1)`` (sample; ``2h²`` at ``n = 2``, the most when ``n`` is not known ≥ 2)."""
    if not sample:
        return h2
    return h2 * (n / (n - 1) if n >= 2 else 2.0)


@dataclass(frozen=True)
class VarianceRelease:
    """A released variance or standard deviation and its three noisy parts (public)."""

    value: float
    statistic: str
    lower: float
    upper: float
    count: object        # the LaplaceRelease of n, S and Q
    total: object
    squares: object
    mechanism: str = "variance"

    covers = "the true statistic of the values clamped to the declared bounds"

    @property
    def _h2(self) -> float:
        return ((self.upper - self.lower) / 2) ** 2

    def interval(self, p: float = 0.95):
        """``(low, high)`` covering the true statistic with probability ≥ ``p`` (module
        docstring); always within ``[0, bound]`` (its square root for a STDDEV)."""
        sample, root = STATISTICS[self.statistic]
        pp = 1 - (1 - p) / 3
        an, as_, aq = (r.noise_bound(pp) for r in (self.count, self.total, self.squares))
        h2, h = self._h2, math.sqrt(self._h2)
        n_lo, n_hi = max(self.count.value - an, 1.0), self.count.value + an
        cap = _cap(h2, n_lo, sample)
        if n_hi < 1 or (sample and n_lo <= 1):
            lo, hi = 0.0, (h2 if not sample else math.inf)
        else:
            q_lo, q_hi = max(self.squares.value - aq, 0.0), min(self.squares.value + aq, n_hi * h2)
            s_lo, s_hi = max(self.total.value - as_, -n_hi * h), min(self.total.value + as_, n_hi * h)
            if q_lo > q_hi or s_lo > s_hi:
                lo, hi = 0.0, cap
            else:
                m = [s / n for s in (s_lo, s_hi) for n in (n_lo, n_hi)]
                m2_lo = 0.0 if min(m) <= 0 <= max(m) else min(x * x for x in m)
                m2_hi = max(x * x for x in m)
                lo = q_lo / n_hi - m2_hi
                hi = q_hi / n_lo - m2_lo
                if sample:
                    lo *= n_hi / (n_hi - 1)
                    hi *= n_lo / (n_lo - 1)
        lo, hi = max(lo, 0.0), min(hi, cap)
        if lo > hi:
            lo = hi = min(max(lo, 0.0), cap)
        return (math.sqrt(lo), math.sqrt(hi)) if root else (lo, hi)

    def noise_bound(self, p: float = 0.95) -> float:
        """The larger distance from the value to an end of :meth:`interval`."""
        lo, hi = self.interval(p)
        return max(self.value - lo, hi - self.value)


def release_variance(n, s, q, lo: float, hi: float, epsilon, statistic: str = "VAR_SAMP",
                     rng=None) -> VarianceRelease:
    """Release ``statistic`` from the true count ``n``, centred sum ``s`` and centred sum of
    squares ``q`` of the clamped values (computed by the caller after the charge)."""
    return release_many_variances([(n, s, q)], lo, hi, epsilon, statistic, rng)[0]


def release_many_variances(parts, lo: float, hi: float, epsilon, statistic: str = "VAR_SAMP",
                           rng=None) -> list[VarianceRelease]:
    """:func:`release_variance` per group (``parts``: ``(n, s, q)`` per group; a participant is
    in one group, so every group is released at the full ε)."""
    if statistic not in STATISTICS:
        raise ValueError(f"unknown statistic {statistic!r}")
    sample, root = STATISTICS[statistic]
    h = (float(hi) - float(lo)) / 2
    eps = Fraction(epsilon) if not isinstance(epsilon, float) else Fraction(str(epsilon))
    e_n, e_s, e_q = (float(eps * share) for share in SPLIT)
    ns = laplace.release_many([p[0] for p in parts], sensitivity=1, epsilon=e_n, integer=True,
                              rng=rng)
    ss = laplace.release_many([p[1] for p in parts], sensitivity=h, epsilon=e_s, rng=rng)
    qs = laplace.release_many([p[2] for p in parts], sensitivity=h * h, epsilon=e_q, rng=rng)
    out = []
    for rn, rs, rq in zip(ns, ss, qs):
        nh = max(float(rn.value), 1.0)
        if sample and nh < 2:
            v = h * h
        else:
            v = _formula(nh, float(rs.value), float(rq.value), sample)
        cap = _cap(h * h, nh, sample)
        v = min(max(v, 0.0), cap)
        out.append(VarianceRelease(math.sqrt(v) if root else v, statistic, float(lo), float(hi),
                                   rn, rs, rq))
    return out
