"""The transformational equivalence of Haney et al. §4: ``(W, x) → (W·P_G, P_G⁻¹x)``.

``P_G`` (Haney et al. §4.4) has one row per value and one column per edge (+1/−1; a ⊥-edge has a
single +1). Unbounded policies (Case I) keep all ``k`` rows (rank ``k``); bounded policies
(Case II) replace one vertex ``r`` by ⊥: its row is dropped, and ``W·x = W'·x₋ᵣ + n·W[:, r]``
with the public total ``n`` (Lemma 4.10).

No pseudo-inverse is ever formed. For a spanning **forest** ``T`` of the policy graph (rooted at ⊥
when present, otherwise at one vertex per component whose total is public), ``P_T`` is square on
the non-root vertices and ``P_T⁻¹x`` is the vector of **subtree sums** — prefix sums for the line
graph — computed in ``O(k)``. We index the transformed vector by the child vertex of each tree
edge and keep a slot for each root (its subtree sum: the public component total, or ``n`` under
⊥), so that exactly

    ``W_T · x_T = W · x``   with   ``W_T[:, v] = W[:, v] − W[:, parent(v)]``

for every query, the all-ones query included (the root slot carries the public total; under ⊥
the ⊥ column of ``W`` is zero). Noise is only ever added to non-root slots.

A tree used for a non-tree policy costs its stretch ``ℓ`` (Haney et al. Lemma 4.5): the largest
tree distance between the endpoints of a policy edge; strategies run at ``ε/ℓ``.

>>> import numpy as np
>>> from provsql_dp.policies.blowfish.policy import Policy
>>> t = line_tree(Policy.line(5))
>>> x = np.array([3., 0., 2., 1., 4.])
>>> t.forward(x).tolist()                  # prefix sums; the root slot holds n
[3.0, 3.0, 5.0, 6.0, 10.0]
>>> W = np.ones((1, 5))                    # the all-ones query survives the transform
>>> float((t.workload(W) @ t.forward(x))[0])
10.0
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, connected_components
from scipy.sparse.linalg import spsolve_triangular

from .policy import Policy

__all__ = [
    "incidence", "right_inverse", "Forest", "line_tree", "htheta_tree", "star_tree",
    "source_path_tree", "bfs_forest", "stretch", "candidate_trees", "policy_sensitivity",
]


# ---------------------------------------------------------------------------- P_G itself
def incidence(policy: Policy, drop=None):
    """``P_G`` of Haney et al. §4.4 as a sparse matrix.

    Returns ``(P, dropped)``. Unbounded (Case I): ``k × |E|``, ⊥-edges have a single ``+1``.
    Bounded (Case II): vertex ``dropped`` (default the last value) is replaced by ⊥, its row is
    removed: ``(k−1) × |E|``.
    """
    u, v = policy.edges()
    k = policy.k
    if policy.bounded:
        r = k - 1 if drop is None else int(drop)
        rows_keep = np.r_[0:r, r + 1:k]
        rowmap = np.full(k + 1, -1)
        rowmap[rows_keep] = np.arange(k - 1)
    else:
        r = None
        rowmap = np.r_[np.arange(k), -1]
    e = np.arange(len(u))
    ru, rv = rowmap[u], rowmap[v]
    mu, mv = ru >= 0, rv >= 0
    rows = np.concatenate([ru[mu], rv[mv]])
    cols = np.concatenate([e[mu], e[mv]])
    data = np.concatenate([np.ones(mu.sum()), -np.ones(mv.sum())])
    nrows = k - 1 if policy.bounded else k
    return sp.csr_matrix((data, (rows, cols)), shape=(nrows, len(u))), r


def right_inverse(policy: Policy, x, tree: "Forest | None" = None, drop=None):
    """``P_G⁻¹ x``: an edge-domain vector ``y`` with ``P_G y = x`` (Case I) or ``= x₋ᵣ`` (Case II).

    Built from a spanning tree (tree edges carry the subtree sums, other edges zero) in ``O(k)``;
    any right inverse gives the same ``W·P_G·y = W·x``, which is all a matrix mechanism needs
    (Haney et al. Thm 4.1).
    """
    if tree is None:
        tree = bfs_forest(policy, root=drop)
    if policy.bounded and tree.roots.size != 1:
        raise ValueError("right_inverse for a disconnected bounded policy is not defined")
    xt = tree.forward(np.asarray(x, dtype=float))
    u, v = policy.edges()
    # map tree edge (child, parent) -> column index
    key = np.minimum(u, v) * (policy.n_vertices + 1) + np.maximum(u, v)
    order = np.argsort(key)
    y = np.zeros(len(u))
    ch = np.flatnonzero(tree.parent >= 0)
    a, b = ch, tree.parent[ch]
    tk = np.minimum(a, b) * (policy.n_vertices + 1) + np.maximum(a, b)
    pos = order[np.searchsorted(key[order], tk)]
    if not np.array_equal(key[pos], tk):
        raise ValueError("the tree is not a subgraph of the policy graph")
    # edge column is +1 at u, -1 at v; tree coordinate for child c is +subtree(c) at c
    sign = np.where(u[pos] == a, 1.0, -1.0)
    y[pos] = sign * xt[ch]
    if policy.bounded and drop is not None and tree.roots[0] != drop:
        raise ValueError("root the tree at the dropped vertex")
    return y


# ---------------------------------------------------------------------------- forests
@dataclass
class Forest:
    """A rooted spanning forest over the policy's vertices (``k`` values, plus ⊥ = ``k``).

    ``parent[v] == -1`` marks a root. ``shape`` is ``"path"`` when the non-root vertices form one
    chain (``chain`` lists them leaf first), which is what the ordered mechanism's consistency
    step needs.
    """

    parent: np.ndarray
    k: int
    name: str
    ell: int = 1
    shape: str = "generic"
    chain: np.ndarray | None = None
    group: int | None = None  # contiguous groups of coordinates queries decompose into (Hᶿ)
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def n(self):
        return self.parent.size

    @property
    def roots(self):
        return np.flatnonzero(self.parent < 0)

    @property
    def noise_mask(self):
        """Slots that get noise (non-roots)."""
        return self.parent >= 0

    def _perm(self):
        """Vertices in an order where every child precedes its parent."""
        if "perm" in self._cache:
            return self._cache["perm"]
        n = self.n
        # super-root n joins all roots
        par = np.where(self.parent >= 0, self.parent, n)
        g = sp.csr_matrix((np.ones(n), (par, np.arange(n))), shape=(n + 1, n + 1))
        order, _ = breadth_first_order(g, n, directed=True, return_predecessors=True)
        order = order[order != n][::-1]  # children first
        if order.size != n:
            raise ValueError("parent array does not describe a forest")
        self._cache["perm"] = order
        return order

    def forward(self, x):
        """``x_T``: subtree sums (``P_T⁻¹x``) in ``O(k)``; ``x`` has ``k`` entries (⊥ is 0)."""
        x = np.asarray(x, dtype=float)
        if x.shape[-1] == self.k and self.n == self.k + 1:
            x = np.concatenate([x, np.zeros(x.shape[:-1] + (1,))], axis=-1)
        if self.shape == "path" and self.chain is not None:
            out = np.empty_like(x)
            c = self.chain
            out[..., c] = np.cumsum(x[..., c], axis=-1)
            for r in self.roots:
                out[..., r] = x.sum(axis=-1)  # single tree: the root holds everything
            return out
        order = self._perm()
        pos = np.empty(self.n, dtype=np.int64)
        pos[order] = np.arange(self.n)
        ch = np.flatnonzero(self.parent >= 0)
        M = sp.csr_matrix((np.ones(ch.size), (pos[self.parent[ch]], pos[ch])),
                          shape=(self.n, self.n))
        A = (sp.identity(self.n, format="csr") - M).tocsr()
        s = spsolve_triangular(A, x[..., order].T, lower=True)
        out = np.empty_like(x)
        out[..., order] = s.T
        return out

    def backward(self, xt):
        """``P_T x_T``: recover ``x`` (``k`` values) from subtree sums (1-D input)."""
        xt = np.asarray(xt, dtype=float)
        ch = np.flatnonzero(self.parent >= 0)
        x = xt.copy()
        np.subtract.at(x, self.parent[ch], xt[ch])
        return x[: self.k]

    def workload(self, W, noise_only=False):
        """``W_T`` with ``W_T[:, v] = W[:, v] − W[:, parent(v)]`` (sparse, ``q × n``).

        With ``noise_only`` the root columns are zeroed: ``W_T`` then gives each query's noise.
        """
        W = sp.csr_matrix(W, dtype=float)
        if W.shape[1] == self.k and self.n == self.k + 1:
            W = sp.hstack([W, sp.csr_matrix((W.shape[0], 1))], format="csr")
        ch = np.flatnonzero(self.parent >= 0)
        Pm = sp.csr_matrix((np.ones(ch.size), (self.parent[ch], ch)), shape=(self.n, self.n))
        WT = (W - W @ Pm).tocsr()
        if noise_only:
            roots = self.roots
            if roots.size:
                d = np.ones(self.n)
                d[roots] = 0
                WT = (WT @ sp.diags(d)).tocsr()
        WT.eliminate_zeros()
        return WT

    def depth(self):
        """Depth of every vertex (roots 0)."""
        if "depth" in self._cache:
            return self._cache["depth"]
        order = self._perm()[::-1]  # parents first
        pos = np.empty(self.n, dtype=np.int64)
        pos[order] = np.arange(self.n)
        ch = np.flatnonzero(self.parent >= 0)
        M = sp.csr_matrix((np.ones(ch.size), (pos[ch], pos[self.parent[ch]])),
                          shape=(self.n, self.n))
        A = (sp.identity(self.n, format="csr") - M).tocsr()
        ones = np.where(self.parent[order] >= 0, 1.0, 0.0)
        d = spsolve_triangular(A, ones, lower=True)
        out = np.empty(self.n)
        out[order] = d
        self._cache["depth"] = np.rint(out).astype(np.int64)
        return self._cache["depth"]

    def distances(self, u, v):
        """Tree distance between vertex arrays ``u`` and ``v`` (binary lifting LCA)."""
        u = np.asarray(u, dtype=np.int64).copy()
        v = np.asarray(v, dtype=np.int64).copy()
        d = self.depth()
        par = np.where(self.parent >= 0, self.parent, np.arange(self.n))
        ups = [par]
        while (1 << len(ups)) <= max(int(d.max()), 1):
            ups.append(ups[-1][ups[-1]])
        du, dv = d[u], d[v]
        swap = du < dv
        u[swap], v[swap] = v[swap], u[swap]
        diff = np.abs(du - dv)
        a, b = u, v
        for j, up in enumerate(ups):
            m = (diff >> j) & 1 == 1
            a = np.where(m, up[a], a)
        for up in reversed(ups):
            m = up[a] != up[b]
            a = np.where(m, up[a], a)
            b = np.where(m, up[b], b)
        lca = np.where(a == b, a, par[a])
        dist = d[u] + d[v] - 2 * d[lca]
        return dist


# ---------------------------------------------------------------------------- tree builders
def line_tree(policy: Policy) -> Forest:
    """Bounded line: the path itself rooted at the last value; ``x_T`` are prefix sums."""
    k = policy.k
    parent = np.arange(1, k + 1, dtype=np.int64)
    parent[-1] = -1
    ell = 1 if policy.kind == "line" else max(1, min(int(policy.theta or 1), k - 1))
    return Forest(parent, k, "path", ell=ell,
                  shape="path", chain=np.arange(k, dtype=np.int64))


def htheta_tree(policy: Policy) -> Forest:
    """Hᶿₖ (Haney et al. §5.3.1): value ``v`` hangs on the next "red" value (multiples of θ), the
    red values form a path; rooted at the last value. Stretch ≤ 3 for Gᶿₖ."""
    k, t = policy.k, int(policy.theta)
    v = np.arange(k, dtype=np.int64)
    red = (v % t) == t - 1
    parent = np.where(red, v + t, (v // t) * t + t - 1)
    parent = np.minimum(parent, k - 1)
    parent[k - 1] = -1
    ell = _stretch_cheap(policy, Forest(parent, k, "H"), bound=3)
    return Forest(parent, k, f"H^{t}", ell=ell, group=t)


def star_tree(policy: Policy, center=None) -> Forest:
    """A star: from ⊥ when unbounded, else from ``center`` (default value 0) per component for
    partitions. Stretch 2 for any value–value edge."""
    k = policy.k
    if not policy.bounded:
        parent = np.full(k + 1, k, dtype=np.int64)
        parent[k] = -1
        ell = 1 if policy.n_value_edges() == 0 else 2
        return Forest(parent, k, "star(⊥)", ell=ell)
    if policy.kind == "partition":
        lab = policy.labels
        first = np.full(lab.max() + 1, k)
        np.minimum.at(first, lab, np.arange(k))
        parent = first[lab].astype(np.int64)
        parent[first] = -1
        big = np.bincount(lab).max()
        return Forest(parent, k, "stars(cells)", ell=2 if big > 2 else 1)
    c = 0 if center is None else int(center)
    parent = np.full(k, c, dtype=np.int64)
    parent[c] = -1
    return Forest(parent, k, f"star({c})", ell=2 if k > 2 else 1)


def source_path_tree(policy: Policy) -> Forest:
    """Unbounded 1-D ordered policy: the path, hung on ⊥ at the median source."""
    k = policy.k
    src = policy.bottom_neighbours()
    s0 = int(src[len(src) // 2])
    v = np.arange(k + 1, dtype=np.int64)
    parent = np.where(v < s0, v + 1, v - 1)
    parent[s0] = k
    parent[k] = -1
    reach = int(np.max(np.abs(src - s0))) + 1  # tree distance from the farthest source to ⊥
    t = int(policy.theta or 1) if policy.kind in ("line", "threshold") else None
    if t is not None:
        # On the path a value edge (a, b) has tree distance |a − b|, and the longest value edge
        # of Gᶿₖ spans min(θ, k − 1) — not θ when θ ≥ k (claiming θ there over-stated ℓ and
        # wasted budget). A ⊥-edge (s, ⊥) has distance |s − s0| + 1. This is the exact stretch.
        ell = max(min(t, k - 1), reach)
    else:
        ell = _stretch_cheap(policy, Forest(parent, k, "p"), bound=None)
    f = Forest(parent, k, f"path+⊥@{s0}", ell=ell)
    return f


def bfs_forest(policy: Policy, root=None) -> Forest:
    """Breadth-first spanning forest of any policy graph (explicit edges); ⊥ is the root of its
    component, other components are rooted at their smallest value (or ``root``)."""
    n = policy.n_vertices
    u, v = policy.edges()
    g = sp.csr_matrix((np.ones(len(u)), (u, v)), shape=(n, n))
    g = g + g.T
    ncomp, comp = connected_components(g, directed=False)
    parent = np.full(n, -1, dtype=np.int64)
    roots = []
    for c in range(ncomp):
        members = np.flatnonzero(comp == c)
        if policy.bottom is not None and comp[policy.bottom] == c:
            r = policy.bottom
        elif root is not None and comp[int(root)] == c:
            r = int(root)
        else:
            r = int(members[0])
        roots.append(r)
        _, pred = breadth_first_order(g, r, directed=False, return_predecessors=True)
        mm = members[members != r]
        parent[mm] = pred[mm]
    f = Forest(parent, policy.k, "bfs")
    f.ell = int(stretch(policy, f))
    return f


def stretch(policy: Policy, tree: Forest) -> int:
    """ℓ: the largest tree distance between the endpoints of a policy edge (exact)."""
    u, v = policy.edges()
    if len(u) == 0:
        return 1
    return int(max(1, tree.distances(u, v).max()))


def _stretch_cheap(policy, tree, bound):
    """Exact stretch when the graph is small enough to enumerate, else the proven ``bound``."""
    try:
        m = policy.n_value_edges() + policy.bottom_neighbours().size
    except Exception:  # pragma: no cover
        m = None
    if bound is None or (m is not None and m <= 2_000_000):
        return stretch(policy, tree)
    return bound


def candidate_trees(policy: Policy) -> list:
    """Spanning forests worth trying for a 1-D policy, each with its stretch ``ell``."""
    if len(policy.shape) != 1 or policy.kind == "product":
        return []
    kind, k = policy.kind, policy.k
    out = []
    if k == 1:
        return [star_tree(policy)]
    if policy.bounded:
        if kind == "line":
            out.append(line_tree(policy))
        elif kind == "threshold":
            if policy.theta >= k - 1:
                out.append(star_tree(policy))
            else:
                out.append(htheta_tree(policy))
                out.append(line_tree(policy))
        elif kind in ("full", "partition"):
            out.append(star_tree(policy))
        else:
            out.append(bfs_forest(policy))
            if policy.ordered:
                pt = line_tree(policy)
                u, v = policy.value_edges()
                if np.all(np.isin(np.arange(k - 1) * (k + 1) + np.arange(1, k), u * (k + 1) + v)):
                    pt.ell = stretch(policy, pt)
                    pt.name = "path"
                    out.append(pt)
    else:
        out.append(star_tree(policy))
        if policy.sources is not None:
            if kind in ("line", "threshold") or (kind == "graph" and policy.ordered):
                out.append(source_path_tree(policy))
            if kind == "graph":
                out.append(bfs_forest(policy))
    return out


def policy_sensitivity(W, policy: Policy) -> float:
    """Δ_W(G) (Haney et al. Def. 4.1) = the largest column L1 norm of ``W·P_G`` (Lemma 4.7).

    >>> import numpy as np
    >>> policy_sensitivity(np.tril(np.ones((6, 6))), Policy.line(6))   # CDF under G¹: 1
    1.0
    >>> policy_sensitivity(np.tril(np.ones((6, 6))), Policy.full(6))   # under bounded DP: k-1
    5.0
    """
    W = sp.csr_matrix(W, dtype=float)
    u, v = policy.edges()
    e = np.arange(len(u))
    keep = v < policy.k  # a ⊥-edge has a single +1 (the ⊥ row is not a value)
    P = sp.csr_matrix((np.r_[np.ones(len(u)), -np.ones(int(keep.sum()))],
                       (np.r_[u, v[keep]], np.r_[e, e[keep]])), shape=(policy.k, len(u)))
    if P.shape[1] == 0:
        return 0.0
    WP = (W @ P).tocsc()
    return float(np.asarray(abs(WP).sum(axis=0)).max())
