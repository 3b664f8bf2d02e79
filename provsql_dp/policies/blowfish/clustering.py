"""SuLQ k-means under Blowfish policies (He et al. §6), with a sensitivity we can prove.

Each of ``iterations`` rounds assigns the points to the nearest public centroid, then releases
per cluster the count ``N_j`` and the sum ``S_j`` of the points (both with Laplace noise, the
round's budget split evenly), and moves the centroid to ``S_j / N_j``. The domain is the box
``[lo, hi]`` (public); the points are clipped into it. The noise is exact discrete Laplace on a
public grid (:func:`provsql_dp.mechanisms.noise.safe_noise.plan_laplace`): counts on the unit grid,
sums on ``γ ≤ 2**−20·min(Δ/r, Δ/ε)`` with ``r`` the coordinates one record can change — no
floating-point Laplace noise touches a private number. (The sums are computed in floating point
in the data's order: as for any library, their sensitivity holds for the exact sums, up to
rounding; see Casacuberta et al. 2022 in ``safe_noise``.)

Policy-specific sensitivity (for one neighbouring pair ``x → y`` of the policy; bounded: the
record changes value, unbounded: it is added or removed):

* both in the same cluster: counts do not change, sums change by ``‖x − y‖₁``, at most the
  policy's edge length ``L``: the L1 diameter of the box (``dp``), the largest attribute range
  (``attribute``: secrets differ in one attribute), ``θ`` (``threshold``: L1 distance ≤ θ), the
  largest cell's L1 diameter (``partition``: secrets within a cell of a grid);
* in different clusters: two counts change by 1 and two sums by ``‖x − o‖₁ + ‖y − o‖₁``, up to
  twice the box's L1 diameter (``o`` the box's lower corner). He et al. Lemma 6.1 states the
  smaller, same-cluster bounds only; a pair split by the clusters' boundary breaks them, so we
  keep the cross term **unless no secret pair can be split**: for a partition, when no cell
  straddles two clusters' Voronoi regions (checked on the cells' corners — the regions are
  convex — from the public centroids, so the check is data independent). A partition whose
  cells never straddle releases counts with sensitivity 0 and sums with the cell diameter: the
  clustering is then (nearly) exact, as the paper observes for its finest partition.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = np.vstack([rng.normal(c, 0.05, (1000, 2)) for c in ([0.2, 0.2], [0.8, 0.7])])
>>> res = kmeans(X, 2, 5.0, lo=0, hi=1, init=[[0.4, 0.4], [0.6, 0.6]], rng=rng)
>>> sorted(np.round(res.centers[:, 0], 1).tolist())
[0.2, 0.8]
>>> res.history[0]                  # (count, sum) sensitivity of a round: bounded DP on [0, 1]²
(2.0, 4.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...mechanisms.noise.sources import resolve_rng
from ...mechanisms.noise.safe_noise import plan_laplace

__all__ = ["kmeans", "KMeansResult", "objective", "sensitivities", "lloyd"]

POLICIES = ("dp", "attribute", "threshold", "partition")


@dataclass
class KMeansResult:
    centers: np.ndarray
    epsilon: float
    policy: str
    history: list = field(default_factory=list)  # per round: (count sensitivity, sum sensitivity)

    def objective(self, X) -> float:
        return objective(X, self.centers)


def objective(X, centers) -> float:
    """Σ over points of the squared L2 distance to the nearest centre."""
    X = np.asarray(X, dtype=float)
    d2 = ((X[:, None, :] - np.asarray(centers)[None, :, :]) ** 2).sum(axis=2)
    return float(d2.min(axis=1).sum())


def _assign(X, centers):
    d2 = ((X[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
    return d2.argmin(axis=1)


def _cells_straddle(centers, lo, hi, cells) -> bool:
    """Whether some grid cell has corners in two Voronoi regions of ``centers``."""
    dims = lo.size
    edges = [np.linspace(lo[i], hi[i], cells[i] + 1) for i in range(dims)]
    if np.prod([c + 1 for c in cells]) > 2_000_000:
        return True  # too many corners to check: assume the worst
    grids = np.meshgrid(*edges, indexing="ij")
    corners = np.stack([g.ravel() for g in grids], axis=1)
    lab = _assign(corners, centers).reshape([c + 1 for c in cells])
    # a cell straddles when its 2^d corners do not all share one label
    for axis in range(dims):
        sl_a = [slice(None)] * dims
        sl_b = [slice(None)] * dims
        sl_a[axis] = slice(0, -1)
        sl_b[axis] = slice(1, None)
        if np.any(lab[tuple(sl_a)] != lab[tuple(sl_b)]):
            return True
    return False


def sensitivities(policy, lo, hi, centers, *, theta=None, cells=None, bounded=True):
    """``(count sensitivity, sum sensitivity)`` (L1) of one round under the policy."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    width = hi - lo
    diam = float(width.sum())
    k = len(centers)
    if not bounded:  # one record added or removed: one count, one sum of ‖x − lo‖₁
        if policy != "dp":
            raise ValueError("unbounded k-means is plain DP (policy='dp'); Blowfish policies "
                             "here move a record between values (bounded)")
        return 1.0, diam
    if policy == "dp":
        same = diam
    elif policy == "attribute":
        same = float(width.max())
    elif policy == "threshold":
        if theta is None or theta <= 0:
            raise ValueError("policy='threshold' needs theta > 0 (an L1 distance)")
        same = min(float(theta), diam)
    elif policy == "partition":
        if cells is None:
            raise ValueError("policy='partition' needs cells (cells per axis of a uniform grid)")
        same = float((width / np.asarray(cells, dtype=float)).sum())
    else:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}")
    cross = k > 1
    if cross and policy == "partition":
        cross = _cells_straddle(np.asarray(centers, float), lo, hi,
                                np.broadcast_to(np.asarray(cells, dtype=int), lo.shape))
    if not cross:
        return 0.0, same
    return 2.0, max(same, 2.0 * diam)


def kmeans(X, k, epsilon, *, lo, hi, policy="dp", theta=None, cells=None, bounded=True,
           iterations=10, init=None, rng=None) -> KMeansResult:
    """SuLQ k-means at total budget ``epsilon`` under a Blowfish ``policy``.

    Parameters
    ----------
    X : (n, d) array
        The points (clipped into the public box ``[lo, hi]``).
    k : int
        Number of clusters.
    epsilon : float
        Total budget, split evenly over ``iterations`` and, in each, between counts and sums.
    lo, hi : float or (d,) array
        The public domain box.
    policy : {"dp", "attribute", "threshold", "partition"}
        ``dp``: any change of a record (differential privacy, bounded unless ``bounded=False``);
        ``attribute``: changes of one attribute; ``threshold``: changes of L1 length ≤ ``theta``;
        ``partition``: changes within a cell of the uniform grid with ``cells`` cells per axis.
    init : (k, d) array, optional
        Initial centres (public); default: uniform in the box from ``rng``.
    rng : numpy.random.Generator, optional
        Tests and benchmarks only; default OS entropy.
    """
    g = resolve_rng(rng)
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    lo = np.broadcast_to(np.asarray(lo, float), (d,)).copy()
    hi = np.broadcast_to(np.asarray(hi, float), (d,)).copy()
    if not (epsilon > 0):
        raise ValueError("epsilon must be positive")
    X = np.clip(X, lo, hi)
    centers = (g.uniform(lo, hi, size=(k, d)) if init is None
               else np.array(init, dtype=float).reshape(k, d))
    eps_round = epsilon / iterations
    history = []
    for _ in range(iterations):
        s_count, s_sum = sensitivities(policy, lo, hi, centers, theta=theta, cells=cells,
                                       bounded=bounded)
        history.append((s_count, s_sum))
        lab = _assign(X, centers)
        counts = np.bincount(lab, minlength=k).astype(float)
        sums = np.zeros((k, d))
        np.add.at(sums, lab, X - lo)
        e = eps_round / 2
        # exact discrete Laplace on public grids (provsql_dp.mechanisms.noise.safe_noise): counts are
        # integers (the unit grid); the sums change in at most d coordinates per cluster a record
        # moves between (2 clusters when the counts change, else 1; one cluster when unbounded)
        if s_count > 0:
            plan = plan_laplace(s_count, e, integer=True, changed=max(1, min(int(s_count), k)))
            counts = plan.release_array(counts, rng=g)
        if s_sum > 0:
            changed = d * (2 if (bounded and s_count > 0) else 1)
            sums = plan_laplace(s_sum, e, changed=min(changed, k * d)).release_array(sums, rng=g)
        ok = counts >= 1
        new = centers.copy()
        new[ok] = lo + sums[ok] / counts[ok, None]
        centers = np.clip(new, lo, hi)
    return KMeansResult(centers, float(epsilon), policy, history)


def lloyd(X, k, *, iterations=10, init) -> np.ndarray:
    """Non-private k-means (Lloyd's iterations from ``init``), the baseline of He et al. Fig. 1."""
    X = np.asarray(X, dtype=float)
    centers = np.array(init, dtype=float)
    for _ in range(iterations):
        lab = _assign(X, centers)
        for j in range(k):
            if np.any(lab == j):
                centers[j] = X[lab == j].mean(axis=0)
    return centers
