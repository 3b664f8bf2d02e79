"""k-triangle counting under edge privacy with the recursive mechanism on a construction whose
size does not depend on k (Chen & Zhou §6; the k-star analogue is :mod:`.kstar`).

A *k-triangle* is k triangles sharing one edge, its base; the count is ``Σ_e C(t_e, k)`` with
``t_e`` the number of triangles on ``e``. Enumerated, the K-relation has one tuple per
k-triangle (2 M 2-triangles on ca-GrQc, and ``C(t_e, 3)`` grows faster still). Here H and G are
LPs with one column per edge and per triangle, whatever k. This construction is **ours**, in the
spirit of the k-star one; Chen & Zhou gives none.

The construction (edge privacy: a participant is an edge; ``f ∈ [0,1]^E`` a fractional presence).
For a triangle ``τ`` with edges ``e₁, e₂, e₃`` let ``a_τ(f) = max(0, f_{e₁} + f_{e₂} + f_{e₃} − 2)``,
for an edge ``e`` let ``x_e(f) = Σ_{τ ∋ e} a_τ(f)``, and ``Obj(f) = Σ_e C_k(x_e(f))`` with ``C_k``
the piecewise-linear interpolation of ``x ↦ C(x, k)`` (convex, nondecreasing, ``C_k(0) = 0``).

1. *Exact at 0/1 points.* ``a_τ = 1`` iff τ's three edges are present, so for a sub-graph S,
   ``x_e`` is the number of triangles of S on ``e`` when ``e ∈ S`` and 0 otherwise (every τ ∋ e
   then has ``a_τ = 0``): ``Obj(1_S) = Σ_{e ∈ S} C(t_e(S), k)``, the k-triangles of S.
2. *Convex and nondecreasing.* ``a_τ`` is a max of nondecreasing affine functions, ``x_e`` a sum
   of them, and a convex nondecreasing function (``C_k``) of a convex function is convex.
3. *Natural.* At ``f_p = 0`` every τ ∋ p has ``a_τ = max(0, f_q + f_r − 2) = 0`` and
   ``x_p = 0``: what is left is, term by term, ``Obj`` of the graph without ``p`` (whose triangles
   are exactly those not containing ``p``).

``H_i = min {Obj(f) : Σ f = i}`` is then a recursive sequence (Def. 17) by the two arguments of
:mod:`.kstar`: extending an optimum over ``P₁ = P₂ − p`` by ``f_p = 0`` gives
``H_i(P₂) ≤ H_i(P₁)`` (3.); restricting an optimum of ``H_{i+1}(P₂)`` to ``P₁`` (which by 3. and 2.
does not raise ``Obj``) and lowering it to mass ``i`` (2.) gives ``H_i(P₁) ≤ H_{i+1}(P₂)``; and
``H_{|P|}`` is the count (1.). ``G_i = 3k · min {max_e C_k(x_e(f)) : Σ f = i}`` is recursive by
the same arguments (the max of convex, nondecreasing, natural functions is all three).
**Privacy rests on these two proofs only** (Lemmas 1, 4, 7 need H and G recursive).

*Bounding* (Def. 18; accuracy only — Lemma 8 — never privacy). Write ``M(f) = max_e C_k(x_e(f))``,
so ``G_i = 3k·min {M(f) : Σ f = i}``. At 0/1 points adding edge ``p`` adds at most
``(2k + 1)·C(T, k)`` k-triangles (``C(t_p, k)`` on base p, ``C(t_q, k−1) + C(t_r, k−1)`` for each
new triangle ``(p, q, r)``; ``T = max_e t_e``, ``t·C(T−1, k−1) ≤ k·C(T, k)``), and at ``f = 1`` the
LP's H is steeper, up to ``3k·C(T, k)`` (each triangle through p feeds three x): ``G_|P|`` covers
both. **Proved: the case j = |P| of 1-bounding**, ``H_|P| ≤ H_i + (|P| − i)·G_|P|`` for every i: Obj
is convex, so ``Obj(1) − Obj(h) ≤ Σ_p (1 − h_p)·D_p(1)`` with ``D_p(1) = Σ_{τ∋p} Σ_{e∈τ} C(t_e − 1,
k − 1) ≤ k·C(t_p, k) + 2t_p·C(T − 1, k − 1) ≤ 3k·C(T, k) = G_|P|`` (h an optimum of ``H_i``).

* **Not 1-bounding, with any factor that depends on k only (counterexample).** The *book gadget*: an
  edge uv with T apexes ``c_i``, each side ``uc_i``, ``vc_i`` in ``k − 1`` further triangles on
  private nodes (t = T on uv, t = k on the 2T sides, 1 elsewhere); N copies; ``i = |P| − N`` (every
  uv removed: ``H_i = 0``) and ``j = i + Nε``, ``ε ≤ (k − 1)/T``. Every uv at ε puts every side at
  ``x = k − 1 + ε``, so ``M = ε`` and ``G_j ≤ 3kε``, while H pays slope 1 on 2T sides per copy:
  ``H_j = 2TNε`` (what the LPs give wherever computed), and
  ``(H_j − H_i)/((|P| − i)·G_j) = 2T/(3k)``: 4/3 for k = 2, T = 4, N = 4 (the regression test), 8/3
  for k = 2, T = 8, N = 8. A factor c needs ``c ≥ 2T`` — not a constant, and a factor of the data's
  T would not be recursive. What breaks is the regime where many x sit just above ``k − 1``: slope 1
  there, but only ε in the max.
* **Proved: 2-bounding with factor 10k.** With ``G⁽¹⁰ᵏ⁾_l = 10k·min {M(f) : Σ f = l}``:
  ``H_j ≤ H_i + (|P| − i)·G⁽¹⁰ᵏ⁾_l`` for all ``i ≤ j``, ``l = |P| − ⌊(|P| − j)/2⌋``. Proof (the
  truncation argument of Chen & Zhou Theorem 4): let g reach ``G_l`` (mass l), h reach ``H_i``, and
  ``f = max(0, 2g − 1)``. (a) ``Σ(1 − f) ≤ 2(|P| − l) ≤ |P| − j``, so ``H_j ≤ Obj(f)`` (Obj
  nondecreasing). (b) ``a_τ(f) > 0`` needs all three ``f_e > 0``, so ``a_τ(f) = 2a_τ(g) − 1`` and
  ``a_τ(g) > ½``. (c) Lowering f by ``d ≥ 0`` lowers ``a_τ`` at rate ``d(τ)`` if ``a_τ(f) > 0``
  (else not at all) and ``C_k(x_e)`` at most at its left slope ``C_k'(x) = C(m, k−1)`` on
  ``(m, m+1]``: Obj falls at most at rate ``Σ_p d_p D_p`` with
  ``D_p = Σ_{τ∋p, a_τ(f)>0} Σ_{e∈τ} C_k'(x_e(f))``; Obj being convex, ``Obj(f) − Obj(h ∧ f) ≤ Σ_p
  (f_p − h_p)⁺ D_p ≤ (|P| − i)·max_p D_p``, and ``Obj(h ∧ f) ≤ H_i``. (d) If ``x_e(f) > m ≥ k − 1``,
  the ``n_e`` triangles on e active at f number ``≥ m + 1`` (each ``a_τ(f) ≤ 1``) and
  ``x_e(g) ≥ (x_e(f) + n_e)/2 > m + ½``, so ``M(g) ≥ C_k(m + ½) = C(m, k−1)·(2m − k + 2)/(2k)``. For
  p with n triangles active at f: the base term ``n·C(m_p, k−1) ≤ 2k·C_k((m_p + n)/2) ≤ 2k·M(g)``
  (at ``n = m_p + 1`` the right side exceeds the left by ``k·C(m_p, k)``, as
  ``(m+1)·C(m, k−1) = k·C(m+1, k)``, and grows faster in n); the other two edges of each active
  triangle add ``≤ 2n·C(m*, k−1)`` (m* the largest m at f), and
  ``n·C(m*, k−1) ≤ 4k·max(C_k(n/2), C_k(m* + ½)) ≤ 4k·M(g)`` (``x_p(g) > n/2``; the ratios
  ``2k(2m+1)/(2m−k+2)`` for ``n ≤ 2m* + 1`` and ``2k(2m+2)/(2m−k+2)``, ``m = ⌈n/2⌉ − 1 ≥ m*``,
  beyond, are largest at ``m = k − 1``: ``4k − 2`` and ``4k``). So ``max_p D_p ≤ 10k·M(g)``, and
  ``H_j ≤ H_i + (|P| − i)·10k·M(g) = H_i + (|P| − i)·G⁽¹⁰ᵏ⁾_l``. The tests check ``D_p ≤ 10k·M(g)``
  at random fractional points and the 2-bounding of ``(10/3)·G`` by the LPs; a hill-climb over g on
  K5–K7 and the gadget reaches ``D_p ≈ 6.0k·M(g)`` at most (K6, k = 2).
* **Conjectured: the shipped G (factor 3k) is 2-bounding.** Observed ratio
  ``(H_j − H_i)/((|P| − i)·G_l) ≤ 1`` — tight (1) at j = |P| on K4–K7, k = 2, 3, 4 (the proved
  case); below the top at most 0.69 (two K7 sharing a node, k = 2) over the book gadgets, 80 random
  graphs of 5–7 nodes and a 4-minute random search (G(n, p) with 7–11 nodes, glued cliques, cliques
  less edges with pendant books) — not proved.

What the release's accuracy (Theorem 1, Lemma 8) can use, Δ being computed from the shipped G
(``Δ = θe^{jβ}``, ``G_{|P|−j} ≤ Δ``): with ``(10/3)·G`` 2-bounding, ``X ≥ H_{|P|−2j}`` whenever
``Δ̂ ≥ (10/3)·Δ`` — probability ``≥ 1 − e^{−(μ − ln(10/3))ε₁/β}/(1 + e^{−ε₁})`` (Δ̂'s index
has discrete Laplace noise), vacuous at the default μ = ½ —
and then ``H_|P| − X ≤ 2j·G_|P|`` by the j = |P| case. ``explain()``'s accuracy states exactly that
(``accuracy_bound(…, g=2, scale=10/3)``); if G itself is 2-bounding the condition is ``Δ̂ ≥ Δ``.
``privacy.error_estimate`` refuses k-triangles; ``privacy.intervals`` gives a one-sided interval.

*The LPs* (``formulation="segments"``, the default; what they compute is the H, G and X above,
unchanged). Three exact reductions of the direct epigraph LPs (``formulation="plain"``, kept as
the reference the tests and ``benchmarks/ktriangle_lp.py`` compare with):

* *Light edges and free edges.* ``x_e ≤ t_e`` (``a_τ ≤ 1``), so ``C_k(x_e) = 0`` when
  ``t_e ≤ k − 1``: only *heavy* edges (``t_e ≥ k``) carry cost, and only triangles with a heavy
  edge matter. The edges in none of those (``_free`` of them) never change ``Obj``; ``Obj`` being
  nondecreasing, mass goes to them first: ``H_i = H'_{max(0, i − free)}`` over the other edges,
  likewise ``G``, and ``X``'s LP keeps them at 1 (their withdrawal costs ``Δ̂ ≥ 0`` and gains
  nothing).
* *Segments.* ``C_k(x) = Σ_{m ≥ k−1} C(m, k−1)·clip(x − m, 0, 1)``; with columns
  ``0 ≤ y_{e,m} ≤ 1`` for ``m = k−1 … t_e − 1`` and one row ``Σ_m y_{e,m} ≥ x_e − (k − 1)`` per
  heavy edge, the least ``Σ_m C(m, k−1) y_{e,m}`` is ``C_k(x_e)`` (slopes increase with ``m``:
  the cheapest segments fill first). H minimises the sum of those; G minimises ``w`` with rows
  ``w ≥ Σ_m C(m, k−1) y_{e,m}``. Bounds replace the plain form's ``t_e`` rows per edge.
* *Quotient by an equitable partition* (:mod:`provsql_dp.mechanisms.lp._quotient`): an LP has an optimal solution
  constant on the classes of any equitable partition of its rows and columns, so it is solved
  over one value per class (colour refinement, verified exactly; the mass row in a class of its
  own, so the Δ search and the two integer H re-solve the kept quotient warm by moving its
  bounds, and X's penalty ``−Δ̂`` is constant on the classes of f columns). Collaboration graphs
  are unions of cliques, whose edges, triangles and segments merge: ca-HepTh's 2-triangle G LP
  goes from 59 k × 110 k to 32 k × 50 k, ca-GrQc's from 68 k × 191 k to 19 k × 54 k.

Measured (``benchmarks/issue15_measured.md``, one run, loaded machine): the first 2-triangle
release on ca-HepTh takes 4.0 s wall / 2.7 s CPU against 291 s / 81.5 s with the plain LPs, later
ones 0.09 s against 7.1 s, with identical released values; ca-GrQc's first takes 17 s CPU (854 s
wall before).

**Node privacy** is :mod:`.ktriangle_node` (H over node triangles with a perspective per edge,
G built on a per-node load and a global apex bound).

Examples
--------
>>> import numpy as np
>>> src, dst = np.array([0, 0, 0, 1, 1, 2]), np.array([1, 2, 3, 2, 3, 3])   # K4
>>> kt = KTriangleCount(src, dst, k=2)
>>> kt.true_answer, kt.n_triangles, kt.n_participants, kt.g_top
(6.0, 4, 6, 6.0)
>>> kt.h(6), kt.h(0)
(6.0, 0.0)
>>> kt.release(epsilon=1.0, rng=np.random.default_rng(0)).mechanism
'recursive-ktriangle'
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..lp._highs import resolve_lp, solve_lp
from ..lp._quotient import Quotient, equitable_quotient
from .kstar import KStarCount, _clone, _csr
from ..recursive.release import Release

__all__ = ["KTriangleCount", "edge_triangles"]

_INF = np.inf


def index_edges(src, dst, k) -> tuple[np.ndarray, np.ndarray, int]:
    """Check ``k`` and a simple undirected edge list; its edges as dense node indices ``(u, v)``
    with ``u < v``, and the number of nodes they touch (no LP built).

    >>> u, v, n = index_edges([7, 3], [3, 9], 2)
    >>> u.tolist(), v.tolist(), n
    ([0, 0], [1, 2], 3)
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError(f"k must be an integer >= 2, got {k!r}")
    src = np.asarray(src, dtype=np.int64).reshape(-1)
    dst = np.asarray(dst, dtype=np.int64).reshape(-1)
    if len(src) != len(dst):
        raise ValueError("src and dst must have the same length")
    if np.any(src == dst):
        raise ValueError("self-loops are not edges of a simple graph")
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    ids, inv = np.unique(np.concatenate([lo, hi]), return_inverse=True)
    u, v = inv[: len(lo)], inv[len(lo):]
    if len(np.unique(u * max(len(ids), 1) + v)) != len(u):
        raise ValueError("duplicate edges: pass each undirected edge once")
    return u, v, len(ids)


def edge_triangles(u: np.ndarray, v: np.ndarray, n: int) -> np.ndarray:
    """The triangles of a simple undirected graph as rows ``(e₁, e₂, e₃)`` of edge indices.

    Vectorised: edges are oriented from lower to higher (degree, id) rank, the wedges of every
    node's out-neighbours generated with numpy, and closed by a sorted-key lookup (O(m^1.5)
    wedges at most).

    >>> edge_triangles(np.array([0, 0, 1, 2]), np.array([1, 2, 2, 3]), 4)
    array([[0, 1, 2]])
    """
    u = np.asarray(u, dtype=np.int64)
    v = np.asarray(v, dtype=np.int64)
    m = len(u)
    if m == 0:
        return np.empty((0, 3), dtype=np.int64)
    deg = np.bincount(np.concatenate([u, v]), minlength=n)
    order = np.lexsort((np.arange(n), deg))
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    lo_first = pos[u] < pos[v]
    a, b = np.where(lo_first, u, v), np.where(lo_first, v, u)
    srt = np.lexsort((pos[b], a))
    a, b, eid = a[srt], b[srt], np.arange(m)[srt]
    keys = a * n + b
    kord = np.argsort(keys)
    skeys, seid = keys[kord], eid[kord]
    counts = np.bincount(a, minlength=n)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    # position i pairs with the later positions of its group: counts[a] − (i − start) − 1 of them
    later = counts[a] - (np.arange(m) - starts[a]) - 1
    n_w = int(later.sum())
    if n_w == 0:
        return np.empty((0, 3), dtype=np.int64)
    first = np.repeat(np.arange(m), later)
    offs = np.arange(n_w) - np.repeat(np.cumsum(later) - later, later)
    second = first + 1 + offs
    want = b[first] * n + b[second]  # pos[b[first]] < pos[b[second]]: the oriented closing edge
    at = np.searchsorted(skeys, want)
    at = np.minimum(at, m - 1)
    hit = skeys[at] == want
    return np.stack([eid[first[hit]], eid[second[hit]], seid[at[hit]]], axis=1)


class KTriangleCount(KStarCount):
    """The private computations of the recursive mechanism for a k-triangle count under edge
    privacy (curator side). Same interface as :class:`~.kstar.KStarCount` (``h``, ``g``,
    ``delta``, ``x``, ``release``, ``explain``); ``n_triangles`` is the number of triangles.

    Parameters
    ----------
    src, dst : array of int
        The undirected simple graph, one row per edge (checked as for k-stars).
    k : int
        k ≥ 2 triangles sharing an edge (a 1-triangle is a triangle: use the general path).
    privacy : {"edge"}
        Only edge privacy (see the module doc).
    time_limit : float, optional
        Seconds per LP.
    formulation : {"segments", "plain"}
        How the LPs are written (same H, G and X; see "The LPs" in the module doc). ``"plain"``
        is the direct epigraph form, kept as the reference the tests and benchmarks compare with.
    """

    def __init__(self, src, dst, k: int, privacy: str = "edge", *,
                 time_limit: float | None = None, formulation: str = "segments"):
        if privacy != "edge":
            raise ValueError("KTriangleCount is the construction for edge privacy only; "
                             "node-private k-triangles: ktriangle_node.NodeKTriangleCount")
        u, v, n_ids = index_edges(src, dst, k)
        self.k, self.privacy, self.directed = int(k), "edge", False
        self._what = "k-triangle"
        self.time_limit = None if time_limit is None else float(time_limit)
        self.u, self.v = u, v
        self.m = len(u)
        self.tri = edge_triangles(u, v, n_ids)
        self.n_triangles = len(self.tri)
        # the "centres" are the edges: x_e, t_e per edge; deg = the largest x_e, t_e
        self.n = self.m
        self.deg = np.bincount(self.tri.reshape(-1), minlength=self.m).astype(np.int64)
        self.n_real = self.n_total = self.m
        self._g_k, self._g_factor = self.k, 3.0 * self.k
        if formulation not in ("segments", "plain"):
            raise ValueError(f"formulation must be 'segments' or 'plain', got {formulation!r}")
        self.formulation = formulation
        self._finish()

    def _build(self) -> None:
        if self.formulation == "plain":
            self._build_plain()
            return
        k, t, tri = self.k, self.deg, self.tri
        heavy = t >= k  # C_k(x_e) = 0 for x_e ≤ t_e ≤ k − 1: light edges cost nothing
        rel = heavy[tri].any(axis=1) if len(tri) else np.zeros(0, dtype=bool)
        tri = tri[rel]
        bound = np.zeros(self.m, dtype=bool)
        bound[tri.reshape(-1)] = True
        #: f columns: the edges of a relevant triangle; the other ``_free`` edges cost nothing
        self._f_edges = np.flatnonzero(bound)
        self.n_f = len(self._f_edges)
        self._free = self.m - self.n_f
        f_of = np.full(self.m, -1, dtype=np.int64)
        f_of[self._f_edges] = np.arange(self.n_f)
        n_t = len(tri)
        h_edges = np.flatnonzero(heavy)
        n_h = len(h_edges)
        n_seg = t[h_edges] - (k - 1)  # segments [m, m+1], m = k−1 … t_e − 1, of each heavy edge
        seg_edge = np.repeat(np.arange(n_h), n_seg)
        seg_m = (np.arange(int(n_seg.sum())) - np.repeat(np.cumsum(n_seg) - n_seg, n_seg)
                 + (k - 1))
        self._seg_edge = seg_edge
        self._seg_slope = np.array([math.comb(int(m), k - 1) for m in range(int(t.max()) + 1)]
                                   if self.m else [], dtype=np.float64)[seg_m]
        self.col_a = self.n_f
        self.col_y = self.n_f + n_t
        self.n_cols = self.col_y + len(seg_edge)
        h_of = np.full(self.m, -1, dtype=np.int64)
        h_of[h_edges] = np.arange(n_h)
        t_idx = np.arange(n_t)
        # a_τ − Σ_{e∈τ} f_e ≥ −2
        rows = [t_idx, np.repeat(t_idx, 3)]
        cols = [self.col_a + t_idx, f_of[tri.reshape(-1)]]
        vals = [np.ones(n_t), -np.ones(3 * n_t)]
        # Σ_m y_{e,m} − Σ_{τ∋e} a_τ ≥ −(k − 1) for every heavy edge e (all its triangles are kept)
        on_h = h_of[tri.reshape(-1)]
        keep = on_h >= 0
        rows += [n_t + seg_edge, n_t + on_h[keep]]
        cols += [self.col_y + np.arange(len(seg_edge)), self.col_a + np.repeat(t_idx, 3)[keep]]
        vals += [np.ones(len(seg_edge)), -np.ones(int(keep.sum()))]
        lo = [np.full(n_t, -2.0), np.full(n_h, -(k - 1.0))]
        self._base = (rows, cols, vals, lo, n_t + n_h, n_h)
        self._quot: dict = {}

    def _model(self, kind: str, mass: float | None, penalty: float | None = None):
        if self.formulation == "plain":
            return super()._model(kind, mass, penalty)
        rows, cols, vals, lo, r, n_h = self._base
        rows, cols, vals, lo = list(rows), list(cols), list(vals), list(lo)
        n_cols = self.n_cols
        n_seg = n_cols - self.col_y
        cost = np.zeros(n_cols + (1 if kind == "g" else 0))
        if kind == "g":  # w − Σ_m slope_m y_{e,m} ≥ 0 for every heavy edge e
            w = n_cols
            n_cols += 1
            cost[w] = 1.0
            rows += [r + np.arange(n_h), r + self._seg_edge]
            cols += [np.full(n_h, w), self.col_y + np.arange(n_seg)]
            vals += [np.ones(n_h), -self._seg_slope]
            lo.append(np.zeros(n_h))
            r += n_h
        else:
            cost[self.col_y:self.col_y + n_seg] = self._seg_slope
        if mass is not None:
            rows.append(np.full(self.n_f, r))
            cols.append(np.arange(self.n_f))
            vals.append(np.ones(self.n_f))
            lo.append(np.array([mass]))
            r += 1
        offset = 0.0
        if penalty is not None:  # + Δ̂·(withdrawn mass) = Δ̂·(n_f − Σ f)
            cost[: self.n_f] -= penalty
            offset = penalty * self.n_f
        rlo = np.concatenate(lo)
        rup = np.full(r, _INF)
        if mass is not None:
            rup[-1] = mass
        a = _csr(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), r, n_cols)
        col_lo = np.zeros(n_cols)
        col_up = np.full(n_cols, _INF)
        col_up[: self.n_f] = 1.0
        col_up[self.col_a:self.col_y] = 1.0  # a_τ ≤ 1 at every optimum (Σ f − 2 ≤ 1)
        col_up[self.col_y:self.col_y + n_seg] = 1.0
        return cost, col_lo, col_up, rlo, rup, a, offset

    def _solve(self, kind: str, mass: float | None, penalty: float | None = None):
        if self.formulation == "plain":
            return super()._solve(kind, mass, penalty)
        if self.n_f == 0:  # no relevant triangle: Obj ≡ 0, every f column is free
            return 0.0, np.zeros(0)
        if mass is not None:  # the free edges carry mass at no cost first (Obj is nondecreasing)
            mass = min(float(mass) - self._free, float(self.n_f))
            if mass <= 0:
                return 0.0, np.zeros(self.n_cols)
        q, mrow, fcls = self._quotient("g" if kind == "g" else "h")
        cost = q.cost.copy()
        row_lo, row_up = q.row_lo.copy(), q.row_up.copy()
        offset = 0.0
        if kind == "x":  # the mass row is free; the f classes cost −Δ̂ per member
            row_lo[mrow], row_up[mrow] = -_INF, _INF
            cost[fcls] = -float(penalty) * q.size[fcls]
            offset = float(penalty) * self.n_f
        else:
            row_lo[mrow] = row_up[mrow] = mass
        what = f"{self._what} {kind}"
        kept = self._kept.get(kind)
        if kept is None and kind == "h" and "x" in self._kept:
            kept = self._kept["h"] = _clone(self._kept["x"])  # H's optimum lies next to X's
        if kept is None:
            obj, z, _, kept = solve_lp(len(cost), cost, q.col_lo, q.col_up, row_lo, row_up,
                                       q.a.indptr, q.a.indices, q.a.data, offset=offset,
                                       solver="simplex", stats=self.stats, what=what,
                                       keep=True, time_limit=self.time_limit)
            self._kept[kind] = kept
        else:
            idx = fcls.astype(np.int32)
            kept.changeColsCost(len(idx), idx, cost[fcls])
            kept.changeObjectiveOffset(offset)
            kept.changeRowsBounds(1, np.array([mrow], dtype=np.int32),
                                  np.array([row_lo[mrow]]), np.array([row_up[mrow]]))
            obj, z, _ = resolve_lp(kept, solver="simplex", stats=self.stats, what=what,
                                   time_limit=self.time_limit)
        return float(obj), z[q.col_class]

    def _quotient(self, key: str) -> tuple[Quotient, int, np.ndarray]:
        """The LP of ``key`` ("h", also used for X, or "g") reduced by its coarsest equitable
        partition (:mod:`provsql_dp.mechanisms.lp._quotient`; the mass row alone in its class, the f columns apart
        from the others), with the mass row's index and the classes of f columns."""
        if key not in self._quot:
            t0 = time.perf_counter()
            cost, clo, cup, rlo, rup, a, _ = self._model(key, 0.0)
            row_key = np.zeros(len(rlo), dtype=np.uint64)
            row_key[-1] = 1
            col_key = np.zeros(len(cost), dtype=np.uint64)
            col_key[: self.n_f] = 1
            q = equitable_quotient(a, cost, clo, cup, rlo, rup, col_key=col_key,
                                   row_key=row_key)
            if q is None:  # nothing merged, or the exact check failed: the LP itself
                q = Quotient(col_class=np.arange(len(cost)), row_class=np.arange(len(rlo)),
                             size=np.ones(len(cost), dtype=np.int64), a=a, cost=cost,
                             col_lo=clo, col_up=cup, row_lo=rlo, row_up=rup)
            fcls = np.unique(q.col_class[: self.n_f])
            self._quot[key] = (q, int(q.row_class[-1]), fcls)
            self.stats.build_seconds += time.perf_counter() - t0
        return self._quot[key]

    def _build_plain(self) -> None:
        """Columns: f (edges), x (edges), t (edges), a (triangles); one extra column w for G.
        Rows: ``a_τ − Σ_{e ∈ τ} f_e ≥ −2``, ``x_e − Σ_{τ ∋ e} a_τ = 0``, then the C_k pieces."""
        m, n_t = self.m, self.n_triangles
        self.n_f = m
        self.col_x, self.col_t, self.col_a = m, 2 * m, 3 * m
        self.n_cols = 3 * m + n_t
        tri = self.tri
        t_idx = np.arange(n_t)
        rows = [t_idx, np.repeat(t_idx, 3),
                n_t + np.arange(m), n_t + tri.reshape(-1)]
        cols = [self.col_a + t_idx, tri.reshape(-1),
                self.col_x + np.arange(m), self.col_a + np.repeat(t_idx, 3)]
        vals = [np.ones(n_t), -np.ones(3 * n_t), np.ones(m), -np.ones(3 * n_t)]
        lo = [np.full(n_t, -2.0), np.zeros(m)]
        up = [np.full(n_t, _INF), np.zeros(m)]
        self._base = (rows, cols, vals, lo, up, n_t + m)

    def _bounding(self) -> tuple[int, float]:
        """``(10/3)·G`` (factor 10k) is proved 2-bounding; G is not 1-bounding (module doc)."""
        return 2, 10.0 / 3.0

    def release(self, epsilon: float = 0.5, rng=None, **params) -> Release:
        """Release the k-triangle count, (ε₁ + ε₂)-DP under edge privacy (see the module doc)."""
        rel = super().release(epsilon, rng=rng, **params)
        return Release(value=rel.value, epsilon=rel.epsilon, delta_hat=rel.delta_hat,
                       params=rel.params, mechanism="recursive-ktriangle")
