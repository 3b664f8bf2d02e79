"""Two numeric columns: a series of shifted equi-width histograms (Fang & Chang §5.3) and the
equi-width baseline, answering range counts by proportional overlap (eq. 8).

Construction
------------
Bins are squares of side ``w = m·δ`` (a whole number ``m`` of shifts). Histogram ``h`` (``h = 0 …
m−1``) has its bin boundaries at ``lo − w + h·δ + j·w`` on both axes (the paper's diagonal
shift), so together the ``m`` histograms have a boundary every δ on each axis, and each boundary
belongs to exactly one histogram. Every bin is noised with Laplace(Δ/ε) — exact discrete Laplace
on the unit grid (:func:`provsql_dp.mechanisms.noise.safe_noise.plan_laplace` with ``integer=True``:
the noisy counts are integers, all bins of the series released as one vector of L1 sensitivity
Δ) — and a range query is answered by eq. 8 on each histogram, averaged over the series.

Sensitivity (checked by brute force over every δ-neighbouring pair of cells in the tests)
----------------------------------------------------------------------------------------
A record moved by at most δ (Euclidean or L1 — both bound each coordinate's move by δ) crosses at
most one boundary on each axis, hence changes at most two histograms, each by 2 in L1:
**Δ = 4** (2 when ``m = 1``). With sources, adding a record changes every histogram by one, so
``Δ = max(4, m)`` — the construction pays for presence through the number of shifts. The plain
equi-width histogram (the baseline) has Δ = 2 under any neighbourhood.

Bin width — choose it without looking at the data
-------------------------------------------------
The default width is a function of δ and the box only (:func:`default_bin_width`). The paper's
baseline picks the best width *empirically* on the data (its footnote 3): that choice reveals
information about the data and **is not differentially private**; the benchmark does it only to
reproduce the paper's comparison. Never tune ``bin_width`` on the table being released.

Examples
--------
>>> import numpy as np
>>> from provsql_dp.policies.delta import Policy, shifted_histograms, equiwidth_histogram
>>> rng = np.random.default_rng(0)
>>> pts = rng.uniform(0, 1, size=(20000, 2))
>>> pol = Policy(0.01, dims=2)
>>> rel = shifted_histograms(pts, pol, 1.0, bin_width=0.05, rng=rng)
>>> rel.shifts, rel.sensitivity
(5, 4)
>>> q = rel.range_count([0.2], [0.5], [0.1], [0.4])
>>> truth = np.sum((pts[:, 0] >= 0.2) & (pts[:, 0] < 0.5) & (pts[:, 1] >= 0.1) & (pts[:, 1] < 0.4))
>>> bool(abs(q[0] - truth) < 60)
True
>>> base = equiwidth_histogram(pts, pol, 1.0, bin_width=0.05, rng=rng)
>>> bool(rel.variance([0.2], [0.5], [0.1], [0.4])[0] < base.variance([0.2], [0.5], [0.1], [0.4])[0])
True
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...mechanisms.noise.sources import resolve_rng
from ...mechanisms.noise.safe_noise import plan_laplace
from ._overlap import fractions_sq_1d, overlap_2d
from .policy import Policy, exact

__all__ = ["HistogramSeries", "shifted_histograms", "equiwidth_histogram", "default_bin_width",
           "series_sensitivity", "shift_strategy_matrix", "MAX_BINS"]

#: the default width never makes the series publish more than this many bins
MAX_BINS = 20_000_000


def _eps(epsilon) -> float:
    e = float(epsilon)
    if not (e > 0 and np.isfinite(e)):
        raise ValueError(f"epsilon must be positive and finite, got {epsilon!r}")
    return e


def _need_2d(policy):
    if not isinstance(policy, Policy):
        raise TypeError("policy must be a provsql_dp.policies.delta.Policy")
    if policy.dims != 2:
        raise ValueError("histogram series are for two numeric columns (a 2-D policy)")


def series_sensitivity(m: int, bounded: bool) -> int:
    """Δ of ``m`` shifted histograms: 4 (2 if ``m = 1``), or ``max(that, m)`` with sources."""
    base = 2 if m == 1 else 4
    return base if bounded else max(base, int(m))


def default_bin_width(policy: Policy, epsilon=1.0) -> float:
    """A bin width chosen from δ, ε and the box only (never from the data).

    The noise variance of a query of side ``s`` is about ``32·s²·δ / (ε²·w³)`` (Δ = 4, ``m = w/δ``
    histograms, ``(s/w)²`` bins each), while the error of partly covered bins grows with ``w``.
    Keeping the noise term fixed across δ and ε gives ``w ∝ (δ·L²/ε²)^{1/3}`` (``L`` the longer side
    of the box); the constant 0.05 was calibrated once on public data (the Twitter grid of
    ``benchmarks/delta.py``: widths 0.005 at δ = 0.001 and 0.0023 at δ = 0.0001, ε = 1). ``w`` is
    rounded to a whole number ``m ≥ 1`` of shifts δ, and ``m`` is raised (wider bins) if the
    series would exceed :data:`MAX_BINS` bins (about ``(L/δ)²/m`` of them).

    >>> from provsql_dp.policies.delta import Policy
    >>> default_bin_width(Policy(0.001, dims=2)), default_bin_width(Policy(0.0001, dims=2))
    (0.005, 0.0023)
    """
    _need_2d(policy)
    e = _eps(epsilon)
    L = float(max(policy.extent))
    d = float(policy.delta)
    w = 0.05 * (d * L * L / (e * e)) ** (1 / 3)
    m = max(1, int(round(w / d)))
    while _n_bins_total(policy, m) > MAX_BINS:
        m = m * 2
    return float(m * policy.delta)


def _n_bins_total(policy, m):
    K = [_fine_cells(policy, a) for a in range(2)]
    tot = 0
    for h in range(m):
        off = (m - h) % m
        tot += ((K[0] - 1 + off) // m + 1) * ((K[1] - 1 + off) // m + 1)
    return tot


def _fine_cells(policy, axis) -> int:
    lo, hi = policy.bbox[axis]
    r = (hi - lo) / policy.delta
    return max(1, -((-r.numerator) // r.denominator))


@dataclass
class HistogramSeries:
    """Published noisy histograms; every method below is post-processing.

    Attributes
    ----------
    width : float
        Bin side.
    shifts : int
        ``m``, the number of histograms (1 for the equi-width baseline).
    origins : list of (float, float)
        Lower-left corner of bin ``(0, 0)`` of each histogram.
    counts : list of numpy.ndarray
        Noisy counts of each histogram.
    sensitivity : int
    grid : float
        The public grid of the released counts (1: integers).
    """

    policy: Policy
    epsilon: float
    width: float
    shifts: int
    origins: list
    counts: list = field(repr=False)
    sensitivity: int
    detail: str
    grid: float = 1.0

    def range_count(self, x0, x1, y0, y1) -> np.ndarray:
        """Estimated counts of ``[x0, x1) × [y0, y1)`` (vectorised): eq. 8, averaged over the
        series."""
        tot = 0.0
        for o, c in zip(self.origins, self.counts):
            tot = tot + overlap_2d(c, o, self.width, x0, x1, y0, y1)
        return np.asarray(tot / len(self.counts), dtype=float)

    def variance(self, x0, x1, y0, y1) -> np.ndarray:
        """Noise variance of :meth:`range_count` (excluding the approximation error of partly
        covered bins): ``2(Δ/ε)²/m² · Σ_h (Σᵢ fᵢ²)(Σⱼ gⱼ²)``, that of Laplace(Δ/ε) bins — an upper
        bound for the exact discrete Laplace released (variance ``2p/(1 − p)² ≤ 2λ²``, with
        ``λ = Δ/ε`` up to ``2**−52``)."""
        tot = 0.0
        for o, c in zip(self.origins, self.counts):
            fx = fractions_sq_1d(c.shape[0], o[0], self.width, x0, x1)
            fy = fractions_sq_1d(c.shape[1], o[1], self.width, y0, y1)
            tot = tot + fx * fy
        m = len(self.counts)
        return np.asarray(2.0 * (self.sensitivity / self.epsilon) ** 2 * tot / m ** 2, dtype=float)

    @property
    def n_bins(self) -> int:
        return int(sum(c.size for c in self.counts))


def _fine_index(policy, pts):
    """Index of every point on the δ-lattice of each axis (the top edge is closed)."""
    out = []
    for a in range(2):
        K = _fine_cells(policy, a)
        f = np.floor((pts[:, a] - float(policy.bbox[a][0])) / float(policy.delta)).astype(np.int64)
        out.append(np.clip(f, 0, K - 1))
    return out


def _shifts_of(policy, bin_width, epsilon=1.0):
    if bin_width is None:
        bin_width = default_bin_width(policy, epsilon)
    w = exact(bin_width)
    r = w / policy.delta
    if r.denominator != 1 or r < 1:
        lo = max(1, int(r))
        raise ValueError(f"bin_width must be a whole multiple of delta = {float(policy.delta):g} "
                         f"(the shifts are δ apart); e.g. {float(lo * policy.delta):g} or "
                         f"{float((lo + 1) * policy.delta):g}")
    return int(r), w


def shifted_histograms(points, policy: Policy, epsilon, bin_width=None, rng=None) -> HistogramSeries:
    """Publish the series of shifted equi-width histograms (Fang & Chang §5.3).

    Parameters
    ----------
    points : array_like, shape (n, 2)
        Points inside the policy's box.
    policy : Policy
        A 2-D δ-neighbourhood (Euclidean or L1).
    epsilon : float
        Budget; the caller charges its ledger first.
    bin_width : float, optional
        A whole multiple of δ, **chosen without looking at the data**; default
        :func:`default_bin_width` (of δ, ε and the box).
    rng : numpy.random.Generator, optional
        Tests only; default OS entropy.
    """
    _need_2d(policy)
    eps = _eps(epsilon)
    pts = policy.check_points(points)
    m, w = _shifts_of(policy, bin_width, eps)
    fi = _fine_index(policy, pts)
    K = [_fine_cells(policy, a) for a in range(2)]
    delta = float(policy.delta)
    lo = policy.lo
    sens = series_sensitivity(m, policy.bounded)
    plan = plan_laplace(sens, eps, integer=True, changed=max(1, int(sens)))  # ≤ Δ bins move
    g = resolve_rng(rng)
    origins, exact_counts = [], []
    for h in range(m):
        off = (m - h) % m
        n1 = (K[0] - 1 + off) // m + 1
        n2 = (K[1] - 1 + off) // m + 1
        b1 = (fi[0] + off) // m
        b2 = (fi[1] + off) // m
        c = np.bincount(b1 * n2 + b2, minlength=n1 * n2).astype(float).reshape(n1, n2)
        origins.append((float(lo[0] - off * delta), float(lo[1] - off * delta)))
        exact_counts.append(c)
    # one release of every bin of the series: a record changes them by at most Δ in L1
    flat = plan.release_array(np.concatenate([c.ravel() for c in exact_counts]), rng=g)
    counts, start = [], 0
    for c in exact_counts:
        counts.append(flat[start:start + c.size].reshape(c.shape))
        start += c.size
    det = (f"{m} shifted equi-width histograms, bin width {float(w):g} = {m}·δ, "
           f"sensitivity {sens}")
    return HistogramSeries(policy, eps, float(w), m, origins, counts, sens, det, plan.grid)


def equiwidth_histogram(points, policy: Policy, epsilon, bin_width, rng=None) -> HistogramSeries:
    """The baseline: one equi-width histogram from the box's corner, Laplace(2/ε) per bin
    (exact discrete Laplace on the unit grid).

    ``bin_width`` is any positive width; pick it without looking at the data.
    """
    _need_2d(policy)
    eps = _eps(epsilon)
    pts = policy.check_points(points)
    w = float(bin_width)
    if not w > 0:
        raise ValueError("bin_width must be positive")
    lo, ext = policy.lo, policy.extent
    n = [max(1, int(np.ceil(ext[a] / w - 1e-12))) for a in range(2)]
    idx = [np.clip(np.floor((pts[:, a] - lo[a]) / w).astype(np.int64), 0, n[a] - 1)
           for a in range(2)]
    c = np.bincount(idx[0] * n[1] + idx[1], minlength=n[0] * n[1]).astype(float).reshape(n)
    plan = plan_laplace(2, eps, integer=True, changed=2)
    g = resolve_rng(rng)
    c = plan.release_array(c, rng=g)
    return HistogramSeries(policy, eps, w, 1, [(float(lo[0]), float(lo[1]))], [c], 2,
                           f"equi-width histogram, bin width {w:g}, sensitivity 2", plan.grid)


def shift_strategy_matrix(policy: Policy, m: int) -> np.ndarray:
    """The strategy matrix ``A`` of ``m`` shifted histograms over the δ-lattice cells of the box
    (one column per lattice cell, row-major; one row per bin of each histogram).

    Every lattice cell lies inside one bin of every histogram, so ``A`` is exact on the lattice:
    its Blowfish sensitivity under ``policy.blowfish(lattice shape)`` is the series' Δ. For
    tests and small boxes only (dense).
    """
    _need_2d(policy)
    K = [_fine_cells(policy, a) for a in range(2)]
    i, j = np.meshgrid(np.arange(K[0]), np.arange(K[1]), indexing="ij")
    i, j = i.ravel(), j.ravel()
    rows = []
    for h in range(m):
        off = (m - h) % m
        n2 = (K[1] - 1 + off) // m + 1
        n1 = (K[0] - 1 + off) // m + 1
        b = ((i + off) // m) * n2 + (j + off) // m
        A = np.zeros((n1 * n2, K[0] * K[1]))
        A[b, np.arange(i.size)] = 1.0
        rows.append(A)
    return np.vstack(rows)


def lattice_shape(policy: Policy) -> tuple[int, int]:
    """Number of δ-lattice cells on each axis."""
    return (_fine_cells(policy, 0), _fine_cells(policy, 1))


__all__.append("lattice_shape")

