r"""A quantile over a public grid by report-noisy-max with exact discrete Laplace noise — the
exponential-mechanism family, sampled with integers only.

Why not Laplace noise on the value
----------------------------------
Under declared bounds ``[lo, hi]`` (a record added, removed or replaced) the quantile itself can
move by the whole interval, so Laplace noise on the value has scale ``(hi − lo)/ε``: at ε = 1 on
``[2500, 6500]`` its standard deviation is 5,657 — the release is the clamp of noise. A quantile
is a *rank* statement, and a rank moves by at most one record: selecting a grid point whose rank
is close to ``q·n`` costs noise in ranks, not in values.

The mechanism
-------------
Public grid ``g_k = lo + k·(hi − lo)/G``, ``k = 0 … G`` (``G`` = :data:`GRID_STEPS` by default,
fixed from the statement: never from the data). With ``C_k = #{x ≤ g_k}`` and
``L_k = #{x < g_k}`` (values clamped to ``[lo, hi]``, NULLs dropped), ``n`` the number of values
and ``q = a/b`` in lowest terms (the statement's literal, read exactly), ``g_k`` is a q-quantile
when ``L_k ≤ q·n ≤ C_k``, and the score of grid point ``k`` is the integer distance ::

    u_k = −max(0, b·L_k − a·n, a·n − b·C_k)

Adding or removing one record changes ``b·L_k`` and ``b·C_k`` by 0 or ``b`` and ``a·n`` by
``a``, so each term moves by at most ``max(a, b − a) ≤ b``; replacing one changes each count by at
most 1 and ``n`` not at all. A maximum of terms that each move by at most ``b`` moves by at most
``b``: ``|u_k − u'_k| ≤ b`` for every ``k`` (sensitivity ``Δu = b`` in score units). (Each
record's bin and whether it sits on a grid point are fixed by its own value, so the counts are
counts of records whatever the floating-point binning does.) The release is ::

    k* = argmax_k (u_k + Z_k),   Z_k ~ DLap(2b/ε) i.i.d. (exact, integers only)

ties broken by a fixed public priority: the tied point nearest the middle of the grid, the lower
one first (so a table with no values — every score 0 — releases the midpoint when the noise is
small, as the Laplace route did, not the lower bound).

and the value released is ``g_{k*}``.

**Privacy (ε-DP, exactly).** Fix ``k`` and every ``Z_j`` with ``j ≠ k``. Grid point ``k`` wins
iff ``Z_k ≥ T(D) = max(max_{j ≺ k}(u_j + Z_j) + 1, max_{j ≻ k}(u_j + Z_j)) − u_k`` (``≺``: the
priority order), an integer threshold; on a neighbour each ``u_j`` moves by at most ``b``, so ``|T(D) − T(D')| ≤ 2b``. For the
discrete Laplace law of scale ``λ``, ``P[Z ≥ t] ≤ e^{s/λ}·P[Z ≥ t + s]`` for every integer ``t``
and ``s ≥ 0``, so with ``λ = 2b/ε`` the probability that ``k`` wins changes by at most ``e^ε``;
the ``Z_j`` (``j ≠ k``) have the same law on both databases. This is report-noisy-max with
Laplace noise of scale ``2Δu/ε`` (Dwork & Roth, *The Algorithmic Foundations of Differential
Privacy*, §3.3), the discrete law replacing the continuous one; the deterministic tie-break is
part of the threshold. Its accuracy is the exponential mechanism's at ``ε`` (both select a point
whose score is within ``O(Δu·log G/ε)`` of the best).

**Exactness.** The scores are integers and the noise is the codebase's exact discrete Laplace
sampler (Canonne, Kamath & Steinke 2020; :mod:`provsql_dp.mechanisms.noise`) at the exact
rational scale ``2b/ε`` (ε read exactly, :func:`noise_scale`): no floating-point number enters
the selection, so there is no Mironov-style leak. (A floating-point Gumbel-max — the textbook
sampler of the exponential mechanism — is not exact: its low-order bits depend on the scores.)
The released value ``g_{k*}`` is a public function of ``k*``.

**Timing.** The ``G + 1`` noises are drawn in one vectorised call whose cost depends on ``G``
and ε only, and the scores come from one DuckDB aggregate (a histogram on the grid): the running
time does not depend on the data beyond its size.

**Accuracy statement** (:meth:`GridQuantileRelease.rank_error`). With probability ≥ ``p`` every
``|Z_k| ≤ t`` (union bound over the ``G + 1`` points, exact discrete tails), so the released
point's score is within ``2t`` of the best grid point's: its rank ``c_{k*}`` is within ``2t/b``
of ``q·n`` plus the best point's own distance. It is a statement in ranks; turning it into a
value interval needs the data's density, which is not released — so the interval the release
carries is the declared bounds (always true, and inside them).

>>> import numpy as np
>>> rng = np.random.default_rng(1)
>>> xs = np.sort(rng.normal(4200, 800, 300))
>>> r = release_grid_quantile(xs, 0.5, 2500.0, 6500.0, 1.0, rng=np.random.default_rng(2))
>>> abs(r.value - float(np.median(xs))) < 300, 2500 <= r.value <= 6500, r.interval(0.95)
(True, True, (2500.0, 6500.0))
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..noise.safe_noise import discrete_laplace
from ..noise.sources import resolve_rng, tail_units

__all__ = ["GRID_STEPS", "GridQuantileRelease", "grid_of", "grid_scores", "noise_scale",
           "rank_fraction",
           "release_from_counts", "release_grid_quantile"]

#: the number of grid steps between the declared bounds (G): 256 points of step (hi − lo)/256
GRID_STEPS = 256


def rank_fraction(q) -> Fraction:
    """``q`` as an exact fraction ``a/b`` in lowest terms (a decimal literal read as written:
    ``0.9`` is 9/10, not the binary double), within [0, 1].

    >>> rank_fraction("0.9"), rank_fraction(0.5)
    (Fraction(9, 10), Fraction(1, 2))
    """
    f = Fraction(str(q)) if not isinstance(q, Fraction) else q
    if not 0 <= f <= 1:
        raise ValueError(f"q = {q} is outside [0, 1]")
    if f.denominator > 10 ** 6:
        raise ValueError(f"q = {q} has more than six decimals; round it")
    return f


def grid_of(lo: float, hi: float, steps: int = GRID_STEPS) -> np.ndarray:
    """The public grid ``lo + k·(hi − lo)/steps``, ``k = 0 … steps`` (its last point is ``hi``)."""
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
        raise ValueError(f"the interval [{lo}, {hi}] must be finite and non-empty")
    g = lo + (hi - lo) * (np.arange(steps + 1, dtype=float) / steps)
    g[-1] = hi
    return g


def grid_scores(at_or_below: np.ndarray, below: np.ndarray, n: int, q: Fraction) -> np.ndarray:
    """The integer scores ``u_k = −max(0, b·L_k − a·n, a·n − b·C_k)`` (``q = a/b``; ``C``:
    ``at_or_below``, ``L``: ``below``) in int64.

    >>> grid_scores(np.array([0, 2, 4]), np.array([0, 0, 2]), 4, Fraction(1, 2)).tolist()
    [-4, 0, 0]
    """
    a, b = q.numerator, q.denominator
    c = np.asarray(at_or_below, dtype=np.int64)
    low = np.asarray(below, dtype=np.int64)
    an = a * int(n)
    return -np.maximum(0, np.maximum(b * low - an, an - b * c))


@dataclass(frozen=True)
class GridQuantileRelease:
    """One released quantile (a grid point) and the public parameters of its selection."""

    value: float
    epsilon: float
    lower: float
    upper: float
    steps: int
    q: Fraction
    statistic: str = "MEDIAN"
    mechanism: str = "quantile-grid"

    @property
    def noise_units(self) -> Fraction:
        """The discrete Laplace scale of each score's noise, ``2b/ε`` (score units)."""
        return noise_scale(self.q, self.epsilon)

    @property
    def grid(self) -> float:
        return (self.upper - self.lower) / self.steps

    def rank_error(self, p: float = 0.95) -> float:
        """``r`` such that with probability ≥ ``p`` the released point's rank is within ``r``
        ranks of the best grid point's (union bound over the grid, exact discrete tails)."""
        t = tail_units(self.noise_units, 1 - (1 - p) / (self.steps + 1))
        return 2 * t / self.q.denominator

    def interval(self, p: float = 0.95):
        """The declared bounds: the truth (of the clamped values) always lies there; the rank
        guarantee (:meth:`rank_error`) has no value form without the data's density."""
        return (self.lower, self.upper)

    covers = ("the true quantile of the values clamped to the declared bounds (the interval is "
              "the bounds: the selection's error is in ranks, see rank_error)")

    def noise_bound(self, p: float = 0.95) -> float:
        """The half-width of :meth:`interval` (the declared bounds)."""
        return (self.upper - self.lower) / 2


def release_from_counts(bin_counts: np.ndarray, on_point: np.ndarray, q, lo: float, hi: float,
                        epsilon: float, rng=None, steps: int = GRID_STEPS,
                        statistic: str = "MEDIAN") -> GridQuantileRelease:
    """Select a grid point from the per-bin counts: ``bin_counts[k]`` is the number of values
    ``x`` with ``g_{k−1} < x ≤ g_k`` (``bin_counts[0]``: ``x ≤ lo``), ``on_point[k]`` how many of
    them equal ``g_k``; both of length ``steps + 1``."""
    qf = rank_fraction(q)
    counts = np.asarray(bin_counts, dtype=np.int64)
    exact = np.asarray(on_point, dtype=np.int64)
    if counts.shape != (steps + 1,) or exact.shape != counts.shape or (counts < 0).any() \
            or (exact < 0).any() or (exact > counts).any():
        raise ValueError("bin_counts and on_point must hold steps + 1 nonnegative counts, "
                         "on_point ≤ bin_counts")
    cum = np.cumsum(counts)
    scores = grid_scores(cum, cum - exact, int(cum[-1]), qf)
    noise = discrete_laplace(noise_scale(qf, epsilon), size=steps + 1, rng=resolve_rng(rng))
    noisy = scores + noise
    tied = np.flatnonzero(noisy == noisy.max())
    k = int(tied[np.argmin(_priority(steps)[tied])])  # a fixed public tie-break
    value = float(grid_of(lo, hi, steps)[k])
    return GridQuantileRelease(value, float(epsilon), float(lo), float(hi), steps, qf, statistic)


def noise_scale(q: Fraction, epsilon) -> Fraction:
    """The exact scale ``2b/ε`` of each score's noise (``q = a/b``), ε read exactly (a
    Fraction as it is, a float or string by its decimal text: ``0.1`` is 1/10), rounded *up* to
    a multiple of 2**−20 when its numerator or denominator would exceed the sampler's limits
    (a larger scale only lowers the privacy loss below the ε charged).

    >>> noise_scale(Fraction(1, 2), 0.1), noise_scale(Fraction(9, 10), Fraction(1, 3))
    (Fraction(40, 1), Fraction(60, 1))
    """
    eps = epsilon if isinstance(epsilon, Fraction) else Fraction(str(epsilon))
    if not eps > 0:
        raise ValueError("epsilon must be positive")
    lam = Fraction(2 * q.denominator) / eps
    if lam.numerator > 2 ** 53 or lam.denominator > 2 ** 62:
        lam = Fraction(math.ceil(lam * 2 ** 20), 2 ** 20)
    return lam


def _priority(steps: int) -> np.ndarray:
    """The public tie-break rank of each grid point: by distance to the middle, lower first."""
    k = np.arange(steps + 1)
    order = np.lexsort((k, np.abs(2 * k - steps)))
    prio = np.empty(steps + 1, dtype=np.int64)
    prio[order] = np.arange(steps + 1)
    return prio


def bin_index(values, lo: float, hi: float, steps: int = GRID_STEPS):
    """Reference binning (the DuckDB query of the route computes the same): for ``x`` clamped
    to ``[lo, hi]`` and ``p = (x − lo)/(hi − lo)·steps``, the bin ``⌈p⌉`` (the smallest ``k`` with
    ``x ≤ g_k``) and whether ``x`` is on the grid point (``p`` an integer)."""
    x = np.clip(np.asarray(values, dtype=float), lo, hi)
    p = (x - lo) / (hi - lo) * steps
    k = np.ceil(p)
    return np.clip(k, 0, steps).astype(np.int64), p == k


def release_grid_quantile(values, q, lo: float, hi: float, epsilon: float, rng=None,
                          steps: int = GRID_STEPS, statistic: str = "MEDIAN"
                          ) -> GridQuantileRelease:
    """:func:`release_from_counts` over the values themselves (NaN/None dropped)."""
    x = np.array([v for v in values if v is not None], dtype=float)
    x = x[~np.isnan(x)]
    k, on = bin_index(x, lo, hi, steps)
    counts = np.bincount(k, minlength=steps + 1)
    exact = np.bincount(k[on], minlength=steps + 1)
    return release_from_counts(counts, exact, q, lo, hi, epsilon, rng=rng, steps=steps,
                               statistic=statistic)
