"""One numeric column under a δ-neighbourhood: the cumulative strategy C_{n,δ} and sorted points
(Fang & Chang §5.1, §5.4.1, §5.5.1).

**C_{n,δ}** publishes the cumulative histogram of ``k`` equal cells with Laplace noise (exact
discrete Laplace on the unit grid: the released cumulative counts are integers). Moving a
record by at most δ changes at most ``θ = ⌈δ/w⌉`` cumulative counts by one (cells ``θ`` apart are
the farthest δ-neighbours), so the sensitivity is θ, not ``k − 1``: it is set by δ. This is the
Blowfish Laplace strategy on the path spanning tree of the threshold policy ``Gᶿₖ``
(:meth:`provsql_dp.policies.delta.Policy.blowfish`), whose stretch is θ; with sources the path is hung on
⊥ at a source (cumulating *towards* it, as in the paper's Table 2), and adding a record at a
source ``r`` cells from that one costs ``r + 1``. We reuse the Blowfish trees for both.

**Sorted points** (Fang & Chang 2012) publish the sorted values themselves. Replacing one value
``a`` by ``b`` changes the sorted vector by exactly ``|a − b|`` in L1, so under a δ-neighbourhood
the Laplace scale drops from ``extent/ε`` to ``δ/ε``. The noisy values are made consistent (sorted
by isotonic regression and clipped to the box — post-processing) and a range count is the number
of published points inside the range. The release has as many points as the table has rows, so it
needs a bounded policy (no sources: the size is public).

Examples
--------
>>> import numpy as np
>>> from provsql_dp.policies.delta import Policy, cumulative, sorted_points
>>> rng = np.random.default_rng(0)
>>> pts = rng.uniform(0, 1, 1000)
>>> rel = cumulative(pts, Policy(0.01), 1.0, cells=100, rng=rng)
>>> rel.sensitivity, rel.detail
(1, 'C_{n,δ}: Laplace on the cumulative counts of 100 cells (θ=1, sensitivity 1)')
>>> est = rel.range_count([0.2], [0.5])
>>> bool(abs(est[0] - np.sum((pts >= 0.2) & (pts < 0.5))) < 20)
True
>>> s = sorted_points(pts, Policy(0.01), 1.0, rng=rng)
>>> s.points.size, round(s.scale, 6)                # δ/ε (the exact noise: ≤ 1 + 2**-20 above)
(1000, 0.01)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import isotonic_regression

from ...mechanisms.noise.sources import resolve_rng
from ...mechanisms.noise.safe_noise import plan_laplace
from ..blowfish._transform import Forest, line_tree, source_path_tree
from ._overlap import overlap_1d
from .policy import Policy

__all__ = ["CumulativeRelease", "SortedRelease", "cumulative", "cumulative_tree",
           "sorted_points", "default_cells", "MAX_CELLS"]

#: the data-independent default grid never has more cells than this
MAX_CELLS = 1 << 20


def _eps(epsilon) -> float:
    e = float(epsilon)
    if not (e > 0 and np.isfinite(e)):
        raise ValueError(f"epsilon must be positive and finite, got {epsilon!r}")
    return e


def _need_1d(policy):
    if not isinstance(policy, Policy):
        raise TypeError("policy must be a provsql_dp.policies.delta.Policy")
    if policy.dims != 1:
        raise ValueError("this strategy is for one numeric column (a 1-D policy)")


def default_cells(policy: Policy) -> int:
    """Data-independent number of cells: cell width δ (so θ = 1), capped at :data:`MAX_CELLS`.

    Finer cells cut the approximation error of partly covered cells but raise θ (the noise);
    with width δ the noise is that of the line graph. Never choose the grid from the data: that
    choice would itself leak (Fang & Chang footnote 3).
    """
    ext = policy.bbox[0][1] - policy.bbox[0][0]
    k = ext / policy.delta
    return int(min(MAX_CELLS, max(1, -((-k.numerator) // k.denominator))))


def cumulative_tree(policy: Policy, k: int) -> Forest:
    """The Blowfish spanning tree C_{n,δ} uses on ``k`` cells (its ``ell`` is the sensitivity)."""
    bp = policy.blowfish(k)
    return line_tree(bp) if bp.bounded else source_path_tree(bp)


@dataclass
class CumulativeRelease:
    """A published C_{n,δ}: noisy cumulative counts on ``k`` cells; answers ranges later.

    Attributes
    ----------
    cumulative : numpy.ndarray
        The noisy released vector (subtree sums of the tree, integers: exact discrete Laplace on
        the unit grid); a root slot holds the public total under a bounded policy and 0 for the
        ⊥ root with sources (the total is not public there, so it is not published).
    counts : numpy.ndarray
        Cell counts reconstructed from it (unbiased, possibly negative).
    sensitivity : int
        θ (bounded) or the tree's stretch with sources.
    grid : float
        The public grid of the released values (1: counts are integers).
    """

    policy: Policy
    epsilon: float
    k: int
    cumulative: np.ndarray
    counts: np.ndarray
    sensitivity: int
    detail: str
    tree: Forest = field(repr=False)
    grid: float = 1.0

    @property
    def width(self) -> float:
        return float(self.policy.extent[0]) / self.k

    def range_count(self, lo, hi) -> np.ndarray:
        """Estimated number of points in each ``[lo, hi)`` (partly covered cells contribute
        proportionally, eq. 8)."""
        return overlap_1d(self.counts, float(self.policy.lo[0]), self.width, lo, hi)

    def variance(self, lo, hi) -> np.ndarray:
        """Noise variance of :meth:`range_count` (the approximation error of partly covered
        cells is not included): that of Laplace(ℓ/ε) counts, an upper bound for the exact
        discrete Laplace released (``2p/(1 − p)² ≤ 2λ²``, ``λ = ℓ/ε`` up to ``2**−52``)."""
        lo = np.atleast_1d(np.asarray(lo, dtype=float))
        hi = np.atleast_1d(np.asarray(hi, dtype=float))
        t = self.tree
        # the estimate is Σ f_i x̂_i with x̂ = P_T a: noise coefficient on slot v is f_v − f_parent(v)
        o, w, k = float(self.policy.lo[0]), self.width, self.k
        out = np.empty(lo.size)
        for q in range(lo.size):
            f = np.zeros(t.n)
            f[:k] = np.clip((hi[q] - o) / w - np.arange(k), 0, 1) - np.clip(
                (lo[q] - o) / w - np.arange(k), 0, 1)
            ch = np.flatnonzero(t.parent >= 0)
            coef = f[ch] - f[t.parent[ch]]
            out[q] = 2.0 * (self.sensitivity / self.epsilon) ** 2 * float(coef @ coef)
        return out


def cumulative(points, policy: Policy, epsilon, cells=None, rng=None) -> CumulativeRelease:
    """Publish C_{n,δ} (Fang & Chang §5.4.1) on ``cells`` equal cells of the policy's box.

    Parameters
    ----------
    points : array_like
        The column's values (inside the policy's box).
    policy : Policy
        A 1-D δ-neighbourhood.
    epsilon : float
        Budget (the caller charges its ledger first).
    cells : int, optional
        Number of cells; default :func:`default_cells` (data independent).
    rng : numpy.random.Generator, optional
        Tests only; default OS entropy.
    """
    _need_1d(policy)
    eps = _eps(epsilon)
    k = default_cells(policy) if cells is None else int(cells)
    if k < 1:
        raise ValueError("cells must be a positive integer")
    x = policy.histogram(points, k)
    tree = cumulative_tree(policy, k)
    xt = tree.forward(x)
    noisy = xt.copy()
    mask = tree.parent >= 0
    noisy[tree.roots[tree.roots >= k]] = 0.0  # the ⊥ root's subtree sum (the total) is private
    g = resolve_rng(rng)
    # a δ-move changes at most ℓ cumulative counts by one: integers, L1 sensitivity ℓ
    plan = plan_laplace(tree.ell, eps, integer=True, changed=int(tree.ell))
    noisy[mask] = plan.release_array(xt[mask], rng=g)
    counts = tree.backward(noisy)
    th = policy.threshold_of(k)
    det = (f"C_{{n,δ}}: Laplace on the cumulative counts of {k} cells (θ={th}, "
           f"sensitivity {tree.ell})")
    if not policy.bounded:
        det += f", cumulated towards the source cell {tree.name.split('@')[-1]}"
    return CumulativeRelease(policy, eps, k, noisy[: tree.n], counts, int(tree.ell), det, tree,
                             plan.grid)


@dataclass
class SortedRelease:
    """Published sorted points (consistent: sorted and clipped to the box)."""

    policy: Policy
    epsilon: float
    points: np.ndarray
    scale: float
    grid: float = float("nan")

    def range_count(self, lo, hi) -> np.ndarray:
        """Number of published points in each ``[lo, hi)``."""
        lo = np.asarray(lo, dtype=float)
        hi = np.asarray(hi, dtype=float)
        return (np.searchsorted(self.points, hi, side="left")
                - np.searchsorted(self.points, lo, side="left")).astype(float)


def sorted_points(points, policy: Policy, epsilon, rng=None) -> SortedRelease:
    """Publish the sorted values with Laplace(δ/ε) noise each (Fang & Chang §5.5.1).

    The L1 sensitivity of the sorted vector under a δ-neighbourhood is δ (a bounded policy is
    required: the number of values released is the table size). The noise is exact discrete
    Laplace on the public grid of ``plan_laplace(δ, ε, changed=n)`` — one moved value can shift
    every sorted position — and ``SortedRelease.grid`` is that grid before the consistency step
    (isotonic regression, clipping: post-processing); ``scale`` is the plan's noise scale.
    """
    _need_1d(policy)
    if not policy.bounded:
        raise ValueError("sorted points publish one value per row, so the row count must be "
                         "public: use a policy without sources")
    eps = _eps(epsilon)
    p = np.sort(policy.check_points(points))
    plan = plan_laplace(float(policy.delta), eps, changed=max(1, p.size))
    g = resolve_rng(rng)
    noisy = plan.release_array(p, rng=g)
    if noisy.size:
        noisy = isotonic_regression(noisy, increasing=True).x
    noisy = np.clip(noisy, policy.lo[0], policy.hi[0])
    return SortedRelease(policy, eps, noisy, plan.noise_scale, plan.grid)
