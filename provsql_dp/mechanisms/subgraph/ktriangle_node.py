"""k-triangle counting under NODE privacy with the recursive mechanism on a construction whose size
does not depend on k nor on the count (Chen & Zhou §6; the edge-private one is :mod:`.ktriangle`,
the k-star one :mod:`.kstar`). This construction is **ours**; Chen & Zhou gives none.

A *k-triangle* is k triangles sharing one edge, its base; the count is ``Σ_e C(t_e, k)`` with
``t_e`` the number of triangles on ``e``. A participant is a node with all its edges;
``f ∈ [0,1]^V`` is a fractional presence of the nodes. Enumerated, the K-relation has one tuple per
k-triangle (refused above 300 k tuples in the benchmarks); here every LP has one column per node,
per edge and per triangle (and one per node in G), whatever k.

**H.** For a triangle ``τ`` on nodes ``a, b, c`` let ``a_τ(f) = max(0, f_a + f_b + f_c − 2)``
(Chen & Zhou §5.2's relaxation of the conjunction); for an edge ``e = ab`` let
``x_e(f) = Σ_{τ ⊃ e} a_τ(f)`` and ``y_e(f) = min(f_a, f_b)``; let ``C_k`` be the piecewise-linear
interpolation of ``x ↦ C(x, k)`` (convex, nondecreasing, ``C_k(0) = 0``: the max of 0 and of its
pieces ``s_m x + c_m`` on ``[m, m+1]``, ``s_m = C(m, k−1) ≥ 0``, ``c_m = C(m, k) − m s_m ≤ 0``) and
``P_k(x, y) = y·C_k(x/y) = max(0, max_m s_m x + c_m y)`` its perspective (0 at ``y = 0``). Then

    Obj(f) = Σ_e P_k(x_e(f), y_e(f)),    H_i = min {Obj(f) : Σ f = i}.

(``a_τ ≤ y_e`` for τ ⊃ e, so ``x_e/y_e ≤ t_e``.) Without the perspective (``Σ_e C_k(x_e)``) the
base ends count three times in every ``a_τ`` and H falls ~3k times faster than the count below the
top (uniform ``f = 1 − δ``), against ``2k + 1`` here and ``k + 2`` for the enumerated relation;
on power (2-triangles) H one node below the top is 755 without, 792 with it, as enumerated.

1. *Exact at 0/1 points.* For the sub-graph induced by a node set S, ``a_τ = 1`` iff τ ⊆ S; an
   edge with both ends in S has ``y_e = 1`` and ``x_e = t_e(S)``, any other ``y_e = x_e = 0``:
   ``Obj(1_S)`` is the k-triangle count of S.
2. *Convex*: ``s_m x_e`` is convex (``s_m ≥ 0``, ``x_e`` a sum of maxes of affine maps) and
   ``c_m y_e`` is convex (``c_m ≤ 0``, ``y_e`` concave); a max of convex functions is convex.
   (In the LP, ``y_e ≤ f_a``, ``y_e ≤ f_b`` are rows and ``t_e ≥ s_m x_e + c_m y_e``: with
   ``c_m ≤ 0`` the optimum takes ``y_e = min(f_a, f_b)``.)
3. *Nondecreasing*: raising ``f_p`` raises ``x_e``; where it also raises ``y_e = f_p`` (at rate
   1, ``y_e > 0``), every ``τ ⊃ e`` with ``a_τ > 0`` rises at rate 1 too, and there are at least
   ``r = x_e/y_e`` of them (each ``a_τ ≤ y_e``). A piece m active at r has ``m ≤ r`` and
   ``|c_m| = m s_m − C(m, k) ≤ r s_m``, so its rate ``s_m·(≥ r) + c_m ≥ 0``; at ``y_e = 0`` the
   term is 0, its least value.
4. *Natural*: at ``f_p = 0`` every τ ∋ p has ``a_τ = 0`` and every edge at p has
   ``y_e = x_e = 0``: what remains is, term by term, Obj of the graph without p.

Then H is recursive (Def. 17) by :mod:`.kstar`'s two arguments (extend an optimum by
``f_p = 0``; restrict an optimum and lower its mass), and ``H_|P|`` is the count.

**G.** Removing node v from a sub-graph S removes the k-triangles with v at an end of the base,
``B_v = Σ_{e ∋ v} C(t_e, k)``, and those with v as an apex: for each triangle ``(a, b, v)`` of S,
``C(t_ab, k) − C(t_ab − 1, k) = C(t_ab − 1, k − 1) ≤ K := C(T − 1, k − 1)``, ``T = max_e t_e``;
so at most ``B_v + K·tri_v`` (``tri_v`` the triangles at v). With ``ψ(x) = C_{k−1}(max(0,
x − 1))`` (convex, nondecreasing, ``ψ(0) = 0``) and its perspective ``Q(x, y) = y·ψ(x/y)``:

    K_i = min {max_e Q(x_e(f), y_e(f)) : Σ f = i},
    S_i(κ) = min {max_v [k·Σ_{e ∋ v} P_k(x_e(f), y_e(f)) + κ·½Σ_{e ∋ v} x_e(f)] : Σ f = i},
    G_i = c · S_i(K_i),   c = 1

(``½Σ_{e∋v} x_e`` is ``tri_v`` at 0/1 points; the weight k on the base term is explained under
*bounding*). *G is recursive* (Def. 17): ``K`` is (a max of natural, convex, nondecreasing
functions — 2.–4. hold for Q as for P_k, any convex φ with ``φ(0) = 0`` has pieces with
``c_m ≤ 0`` and ``|c_m| ≤ r s_m`` at r); for every fixed ``κ ≥ 0`` so is ``S(κ)`` (at ``f_p = 0``
the load of p is 0 and every other node's load is its load in the graph without p); and
``S_i(κ)`` is nondecreasing in κ. For neighbours ``P₁ = P₂ − p``:
``S_i^{P₂}(K_i^{P₂}) ≤ S_i^{P₂}(K_i^{P₁}) ≤ S_i^{P₁}(K_i^{P₁})`` and
``S_i^{P₁}(K_i^{P₁}) ≤ S_i^{P₁}(K_{i+1}^{P₂}) ≤ S_{i+1}^{P₂}(K_{i+1}^{P₂})`` (K recursive, then
S recursive at a fixed κ); ``G_0 = 0``. **Privacy rests on H and G being recursive only**
(Lemmas 1, 4, 7 of Chen & Zhou).

Why not gate each apex term by its triangle, ``C_{k−1}(max(0, x_ab − 1 − M(1 − a_τ)))``: that term
is 0 at ``a_τ = 0`` only when ``M ≥ max_e t_e − 1``, a constant of the data, and with such an M
the sequence is not recursive (when removing p lowers M, the second inequality of Def. 17 can
fail, and with a smaller public M the removed node's own load is not 0, so the max is not
natural). Any convex function that is 0 on ``a_τ = 0`` and ``C(x − 1, k − 1)`` on ``a_τ = 1``
needs such a bound on x. Gating pairs of triangles (``max(0, a_τ + a_τ' − 1)``) is exact and
natural, but has ``Σ_e t_e(t_e − 1)`` columns — the size of the enumerated 2-triangle relation.

*Bounding* (Def. 18; accuracy only — Lemma 8 — never privacy). **Proved at the data:**
``G_|P| = max_v (k·B_v + K·tri_v)`` is at least what removing any node removes (above). The LP's
H falls faster than the count near the top (above); on ``K_m`` with uniform f its slope per unit
of mass tends to ``(2k+1)/(3k)`` of ``G_|P|``, which is why the base term has weight k (with
weight 1 it tends to ``(2k+1)/(k+2) > 1``). **Proved: the case j = |P| of 1-bounding**,
``H_|P| ≤ H_i + (|P| − i)·G_|P|`` for every i: Obj is convex and ``P_k`` nonincreasing in y, so
``Obj(1) − Obj(h) ≤ Σ_v (1 − h_v)·D_v`` with ``D_v = Σ_{τ∋v} Σ_{e⊂τ} C(t_e − 1, k − 1)``; the two
edges at v give ``Σ_{e∋v} t_e·C(t_e − 1, k − 1) = k·B_v`` and the opposite ones at most
``K·tri_v``: ``D_v ≤ k·B_v + K·tri_v ≤ G_|P|`` (h an optimum of ``H_i``). Below the top:

* **Not 1-bounding, with any constant c (counterexample).** The *hub gadget*: a node w and L
  disjoint edges ``a_i b_i``, each the base of the triangle ``(w, a_i, b_i)`` and of ``k − 1``
  triangles on private apexes (t = k on the bases, 1 elsewhere); N copies; ``i = |P| − N`` (every
  hub removed: ``H_i = 0``) and ``j = i + Nε``. Every hub at ε puts every base at ``x = k − 1 + ε``:
  ``H_j = NLε`` (what the LPs give wherever computed), while ``K_j ≤ ε`` and every load is at most
  ``max(Lε², ε(2k − 1 + ε))`` — the hub's own apex load is ``κ·Σ_{τ∋w} a_τ = κLε``, its triangles
  being only ε present. The ratio ``(H_j − H_i)/((|P| − i)·G_j)`` is at least
  ``min(1/ε, L/(2k − 1 + ε))``: 2 for k = 2, L = 8, ε = ½, N = 2 (the regression test), 4 for L =
  16, ε = ¼, N = 4, unbounded as ε → 0 with ``L ≥ 2k/ε``.
* **Proved: 4-bounding with c = 8.** ``H_j ≤ H_i + (|P| − i)·8·G_l`` for all ``i ≤ j``, with
  ``l = |P| − ⌊(|P| − j)/4⌋`` and G as built (c = 1). Proof (Chen & Zhou Theorem 4's truncation,
  as for :mod:`.ktriangle`, over two points since K and S are minimised apart): let g' reach
  ``K_l``, g reach ``S_l(K_l)`` (so ``κ = K_l = max_e Q(g')``), h reach ``H_i``,
  ``g̃ = g ∧ g'`` and ``f = max(0, 2g̃ − 1)``. (a) ``Σ(1 − f) ≤ 2Σ(1 − g) + 2Σ(1 − g') =
  4(|P| − l) ≤ |P| − j``, so ``H_j ≤ Obj(f)``. (b) ``a_τ(f) > 0`` needs its three nodes' f > 0,
  so ``a_τ(f) = 2a_τ(g̃) − 1``, ``a_τ(g̃) > ½`` and ``y_e(f) = 2y_e(g̃) − 1 > 0`` on its edges.
  (c) ``P_k`` is nonincreasing in y (``c_m ≤ 0``), so lowering f by ``d ≥ 0`` lowers each term at
  most at rate ``C_k'(r_e)``·(fall of ``x_e``), ``r_e = x_e/y_e``, ``C_k'`` the left slope
  ``C(m, k−1)`` on ``(m, m+1]``; Obj being convex, ``Obj(f) − Obj(h ∧ f) ≤ (|P| − i)·max_v D_v``
  with ``D_v = Σ_{τ∋v, a_τ(f)>0} Σ_{e⊂τ} C_k'(r_e(f))``, and ``Obj(h ∧ f) ≤ H_i``. (d) If
  ``r_e(f) > m ≥ k − 1``, the ``n_e`` triangles on e active at f number ``≥ m + 1``
  (``a_τ(f) ≤ y_e(f)``) and, with ``y = y_e(g̃) ∈ (½, 1]``,
  ``x_e(g̃)/y ≥ (r_e(f)(2y − 1) + n_e)/(2y) > m + ½``. Every term being nondecreasing in f and
  ``y·φ(x/y) ≥ φ(x)`` for ``y ≤ 1``: ``P_k(g)_e ≥ max(½C_k(m + ½), C_k(n_e/2))`` and
  ``Q(g')_e ≥ ½ψ(m + ½) ≥ ¼C(m, k−1)``. (e) The two edges of each active triangle at v add
  ``Σ_{e∋v} n_e·C(m_e, k−1) ≤ (8k − 4)·Σ_{e∋v} P_k(g)_e`` (the two cases ``n ≤ 2m + 1`` and beyond
  of :mod:`.ktriangle`'s proof, ``4k − 2`` and ``4k``, doubled for the ½), under 8 times v's base
  load ``k·Σ_{e∋v} P_k``; the edge opposite v adds at most ``4κ`` per triangle at v active at f,
  while v's apex load is ``κ·Σ_{τ∋v} a_τ(g) ≥ κ·n_v/2``: 8 times that at most. So
  ``D_v ≤ 8·load_v(g) ≤ 8·S_l(K_l) = 8·G_l``. The tests check ``D_v ≤ 8·load_v`` at random
  fractional g, g' and the 4-bounding of 8·G by the LPs; a hill-climb over (g, g') on K4–K8 and
  random 8-node graphs reaches ``D_v ≈ 3.9·load_v`` at most.
* **Conjectured: the shipped G (c = 1) is 2-bounding** (``l = |P| − ⌊(|P| − j)/2⌋``; implied by
  1-bounding, G being nondecreasing). Observed ratio ``(H_j − H_i)/((|P| − i)·G_l) ≤ 1``: 1 at
  j = |P| on the hub gadgets (the proved case), 0.79 on K4–K9 and 80 random graphs of 5–7 nodes
  (k = 2, 3, 4). **With no slack:** on the hub gadget, ``i = |P| − N``, ``j = |P| − 2``,
  ``l = |P| − 1`` give ``(N − 2)N/(N − 1)² → 1`` (0.98 at N = 8, 0.99 at N = 12, L = 10, k = 2;
  H is linear in the hubs' presence, their apex load quadratic), so c < 1 is not 2-bounding and
  any change that lowers G needs a new argument. And 1-bounding,
  so 2-bounding, held with ratio ≤ 0.83 on K4–K12, books, windmills of books, two cliques sharing
  an edge, cliques with missing edges and ~460 random graphs of 5–9 nodes (k = 2–5). Not proved.

What the release's accuracy (Theorem 1, Lemma 8) can use, Δ being computed from the shipped G
(``Δ = θe^{jβ}``, ``G_{|P|−j} ≤ Δ``): with ``8·G`` 4-bounding, ``X ≥ H_{|P|−4j}`` whenever
``Δ̂ ≥ 8Δ`` — probability ``≥ 1 − e^{−(μ − ln 8)ε₁/β}/(1 + e^{−ε₁})`` (Δ̂'s index
has discrete Laplace noise), vacuous at the default μ = 1 — and then
``H_|P| − X ≤ 4j·G_|P|`` by the j = |P| case. ``explain()``'s accuracy states exactly that
(``accuracy_bound(…, g=4, scale=8)``); if G itself is 2-bounding the condition is ``Δ̂ ≥ Δ`` and the
factor 2. ``privacy.error_estimate`` refuses k-triangles.

Size: columns ``|V| + 3|E| + #triangles`` (H) plus ``|V| + 1`` (G); rows ``#triangles + 3|E|``
plus ``Σ_e max(0, t_e − k + 1)`` pieces plus ``2|V|`` (G) — whatever k and the count.

*Solving* (``formulation="quotient"``, the default): the same LPs without the light edges'
(``t_e < k``) columns and rows and the nodes that cannot change them, on their quotient by an
equitable partition, S's κ a parameter of the partition (:mod:`._ktriangle_node_lp`, which says
why each step keeps the optimum). ``formulation="plain"`` solves them as written here, the
reference the tests compare with. netscience 2-triangles: first release 18 s → 0.8 s, same
released values (``benchmarks/issue15_measured.md``).

Examples
--------
>>> import numpy as np
>>> src, dst = np.array([0, 0, 0, 1, 1, 2]), np.array([1, 2, 3, 2, 3, 3])   # K4
>>> kt = NodeKTriangleCount(src, dst, k=2)
>>> kt.true_answer, kt.n_triangles, kt.n_participants, kt.g_top
(6.0, 4, 4, 9.0)
>>> kt.h(4), kt.h(0)
(6.0, 0.0)
>>> kt.release(epsilon=1.0, rng=np.random.default_rng(0)).mechanism
'recursive-ktriangle'
"""

from __future__ import annotations

import math

import numpy as np

from ..lp._highs import resolve_lp, solve_lp
from ._ktriangle_node_lp import NodeTriangleLPs
from .kstar import KStarCount, _csr, binomial_segments
from .ktriangle import edge_triangles, index_edges
from ..recursive.release import Release

__all__ = ["NodeKTriangleCount", "node_triangles", "G_FACTOR"]

_INF = np.inf

#: the constant c of G (not 1-bounding; 2-bounding conjectured, 8·G proved 4-bounding: module doc)
G_FACTOR = 1.0


def node_triangles(u: np.ndarray, v: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The triangles as rows of edge indices ``(e₁, e₂, e₃)`` and of node indices ``(a, b, c)``.

    >>> node_triangles(np.array([0, 0, 1, 2]), np.array([1, 2, 2, 3]), 4)[1].tolist()
    [[0, 1, 2]]
    """
    tri = edge_triangles(u, v, n)
    if len(tri) == 0:
        return tri, np.empty((0, 3), dtype=np.int64)
    a, b = u[tri[:, 0]], v[tri[:, 0]]
    c1, c2 = u[tri[:, 1]], v[tri[:, 1]]
    c = np.where((c1 == a) | (c1 == b), c2, c1)
    return tri, np.sort(np.stack([a, b, c], axis=1), axis=1)


class NodeKTriangleCount(KStarCount):
    """The private computations of the recursive mechanism for a k-triangle count under node
    privacy (curator side). Same interface as :class:`~.kstar.KStarCount` (``h``, ``g``,
    ``delta``, ``x``, ``release``, ``explain``); ``n_triangles`` is the number of triangles.

    Parameters
    ----------
    src, dst : array of int
        The undirected simple graph, one row per edge (no self-loops, no duplicates: checked).
    k : int
        k ≥ 2 triangles sharing an edge.
    n_nodes : int, optional
        The number of nodes, isolated ones included (default: the endpoints). Isolated
        participants never change the released value.
    time_limit : float, optional
        Seconds per LP; past it :class:`~provsql_dp.errors.SolverError` is raised.
    formulation : {"quotient", "plain"}
        How the LPs are solved (same H, G and X): ``"quotient"`` reduces them exactly and solves
        them on their quotient by an equitable partition (:mod:`._ktriangle_node_lp`);
        ``"plain"`` is the LPs as written below, the reference the tests compare with.
    """

    def __init__(self, src, dst, k: int, *, n_nodes: int | None = None,
                 time_limit: float | None = None, formulation: str = "quotient"):
        if formulation not in ("quotient", "plain"):
            raise ValueError(f"formulation must be 'quotient' or 'plain', got {formulation!r}")
        self.formulation = formulation
        u, v, n_ids = index_edges(src, dst, k)
        self.k, self.privacy, self.directed = int(k), "node", False
        self._what = "node k-triangle"
        self.time_limit = None if time_limit is None else float(time_limit)
        self.u, self.v = u, v
        self.m = len(u)
        self.n_nodes = n_ids
        total = self.n_nodes if n_nodes is None else int(n_nodes)
        if total < self.n_nodes:
            raise ValueError(f"n_nodes={total} is less than the {self.n_nodes} nodes with edges")
        self.tri, self.tri_nodes = node_triangles(u, v, self.n_nodes)
        self.n_triangles = len(self.tri)
        # the "centres" of the H pieces are the edges (x_e, t_e); deg = t_e, the largest x_e
        self.n = self.m
        self.deg = np.bincount(self.tri.reshape(-1), minlength=self.m).astype(np.int64)
        self.n_real, self.n_total = self.n_nodes, total
        self._g_k, self._g_factor = self.k, G_FACTOR
        self._finish()
        self.g_top = self._top_g()

    # ------------------------------------------------------------------ closed forms at f = 1
    def _top_g(self) -> float:
        """``c·max_v (k·B_v + K·tri_v)`` at ``f = 1`` (equal to the G LP at full mass)."""
        if self.n_nodes == 0 or self.m == 0:
            return 0.0
        table = np.array([math.comb(t, self.k) for t in range(int(self.deg.max()) + 1)],
                         dtype=np.float64)
        ck = table[self.deg]
        base = np.bincount(self.u, ck, self.n_nodes) + np.bincount(self.v, ck, self.n_nodes)
        tri_v = np.bincount(self.tri_nodes.reshape(-1), minlength=self.n_nodes)
        t_max = int(self.deg.max())
        kappa = float(math.comb(t_max - 1, self.k - 1)) if t_max >= 1 else 0.0
        return self._g_factor * float(np.max(self.k * base + kappa * tri_v))

    # ------------------------------------------------------------------ the LP models
    def _build(self) -> None:
        """Columns: f (nodes), x (edges), t (edges), a (triangles), y (edges). Rows:
        ``a_τ − f_a − f_b − f_c ≥ −2``, ``x_e − Σ_{τ ⊃ e} a_τ = 0``, ``y_e ≤ f_a``, ``y_e ≤ f_b``.
        (``formulation="quotient"``: the reduced LPs of :mod:`._ktriangle_node_lp` instead.)"""
        if self.formulation == "quotient":
            self._lps = NodeTriangleLPs(self)
            self.n_f = len(self._lps._nodes("h"))  # X's withdrawn mass is read over these
            return
        m, n_t, nv = self.m, self.n_triangles, self.n_nodes
        self.n_f = nv
        self.col_x, self.col_t, self.col_a = nv, nv + m, nv + 2 * m
        self.n_cols = nv + 2 * m + n_t
        t_idx = np.arange(n_t)
        rows = [t_idx, np.repeat(t_idx, 3), n_t + np.arange(m), n_t + self.tri.reshape(-1)]
        cols = [self.col_a + t_idx, self.tri_nodes.reshape(-1),
                self.col_x + np.arange(m), self.col_a + np.repeat(t_idx, 3)]
        vals = [np.ones(n_t), -np.ones(3 * n_t), np.ones(m), -np.ones(3 * n_t)]
        lo = [np.full(n_t, -2.0), np.zeros(m)]
        up = [np.full(n_t, _INF), np.zeros(m)]
        r = n_t + m
        # y_e ≤ f_a, y_e ≤ f_b: the base's presence min(f_a, f_b)
        self.col_y = self.n_cols
        self.n_cols += m
        rows += [r + np.arange(m), r + np.arange(m), r + m + np.arange(m), r + m + np.arange(m)]
        cols += [self.col_y + np.arange(m), self.u, self.col_y + np.arange(m), self.v]
        vals += [np.ones(m), -np.ones(m), np.ones(m), -np.ones(m)]
        lo.append(np.full(2 * m, -_INF))
        up.append(np.zeros(2 * m))
        r += 2 * m
        self._base = (rows, cols, vals, lo, up, r)

    def _model(self, kind: str, mass: float | None, penalty: float | None = None):
        """The H (``kind="h"``) and X (``"x"``, mass free, ``Δ̂·(n − Σ f)`` added) models:
        min ``Σ_e t_e`` with ``t_e ≥ slope·x_e + intercept·y_e`` per piece of C_k."""
        rows, cols, vals, lo, up, r = self._base
        rows, cols, vals, lo, up = list(rows), list(cols), list(vals), list(lo), list(up)
        nv, n_cols = self.n_nodes, self.n_cols
        pieces = self._edge_pieces(self.k, 0)
        if pieces is not None:
            edge, slope, inter = pieces
            rows, cols, vals, lo, up, r = self._piece_rows(
                (rows, cols, vals, lo, up, r), self.col_t + edge, edge, slope, inter)
        if mass is not None:
            r = self._mass_row((rows, cols, vals, lo, up), r, mass)
        cost = np.zeros(n_cols)
        cost[self.col_t:self.col_t + self.m] = 1.0
        offset = 0.0
        if penalty is not None:  # + Δ̂·(withdrawn mass) = Δ̂·(n_f − Σ f)
            cost[:nv] -= penalty
            offset = penalty * nv
        a = _csr(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), r, n_cols)
        col_lo = np.zeros(n_cols)
        col_up = np.full(n_cols, _INF)
        col_up[:nv] = 1.0
        return cost, col_lo, col_up, np.concatenate(lo), np.concatenate(up), a, offset

    def _edge_pieces(self, k: int, shift: int):
        """``(edge, slope, intercept)`` of ``C_k(max(0, x_e − shift))`` on ``[0, t_e]``."""
        dmax = int(self.deg.max()) if self.m else 0
        ms, slope, inter = binomial_segments(max(dmax - shift, 0), k)
        if len(ms) == 0:
            return None
        cnt = np.maximum(self.deg - shift - ms[0], 0)
        edge = np.repeat(np.arange(self.m), cnt)
        starts = np.concatenate([[0], np.cumsum(cnt)[:-1]])
        piece = np.arange(len(edge)) - np.repeat(starts, cnt)
        # slope·(x − shift) + inter = slope·x + (inter − shift·slope)
        return edge, slope[piece], inter[piece] - shift * slope[piece]

    def _piece_rows(self, model, target, edge, slope, inter):
        """Append ``target − slope·x_e − intercept·y_e ≥ 0`` for every piece (the perspective
        ``y·φ(x/y)`` of the piecewise-linear φ, ``y_e = min(f_a, f_b)``: every intercept is ≤ 0,
        so the LP takes y_e as large as its rows allow)."""
        rows, cols, vals, lo, up, r = model
        n_p = len(edge)
        rows = rows + [r + np.arange(n_p)] * 3
        cols = cols + [target, self.col_x + edge, self.col_y + edge]
        vals = vals + [np.ones(n_p), -slope, -inter]
        return rows, cols, vals, lo + [np.zeros(n_p)], up + [np.full(n_p, _INF)], r + n_p

    def _mass_row(self, parts, r: int, mass: float) -> int:
        """Append row ``r``, ``Σ_v f_v = mass``, to the (rows, cols, vals, lo, up) lists."""
        rows, cols, vals, lo, up = parts
        nv = self.n_nodes
        rows.append(np.full(nv, r))
        cols.append(np.arange(nv))
        vals.append(np.ones(nv))
        lo.append(np.array([mass]))
        up.append(np.array([mass]))
        return r + 1

    def _g_model(self, kind: str, mass: float, kappa: float):
        """``kind="k"``: min w, ``w ≥ C_{k−1}(max(0, x_e − 1))``. ``kind="g"``: min w with
        ``t_e ≥ C_k(x_e)``, ``s_v = ½Σ_{e∋v} x_e`` and ``w ≥ Σ_{e∋v} t_e + κ s_v`` (the κ
        coefficients are the last ``n_nodes`` entries of column... rows ``self._node_rows``)."""
        rows, cols, vals, lo, up, r = self._base
        rows, cols, vals, lo, up = list(rows), list(cols), list(vals), list(lo), list(up)
        nv, m = self.n_nodes, self.m
        n_cols = self.n_cols
        if kind == "k":
            w = n_cols
            n_cols += 1
            pieces = self._edge_pieces(self.k - 1, 1)
            if pieces is not None:
                edge, slope, inter = pieces
                rows, cols, vals, lo, up, r = self._piece_rows(
                    (rows, cols, vals, lo, up, r), np.full(len(edge), w), edge, slope, inter)
        else:
            col_s = n_cols
            w = n_cols + nv
            n_cols += nv + 1
            pieces = self._edge_pieces(self.k, 0)
            if pieces is not None:  # t_e ≥ the pieces of C_k's perspective
                edge, slope, inter = pieces
                rows, cols, vals, lo, up, r = self._piece_rows(
                    (rows, cols, vals, lo, up, r), self.col_t + edge, edge, slope, inter)
            ends = np.concatenate([self.u, self.v])
            e2 = np.tile(np.arange(m), 2)
            # s_v − ½ Σ_{e∋v} x_e = 0
            rows += [r + np.arange(nv), r + ends]
            cols += [col_s + np.arange(nv), self.col_x + e2]
            vals += [np.ones(nv), np.full(2 * m, -0.5)]
            lo.append(np.zeros(nv))
            up.append(np.zeros(nv))
            r += nv
            # w − k Σ_{e∋v} t_e − κ s_v ≥ 0
            self._node_rows = r + np.arange(nv)
            self._col_s = col_s
            rows += [r + np.arange(nv), r + ends, r + np.arange(nv)]
            cols += [np.full(nv, w), self.col_t + e2, col_s + np.arange(nv)]
            vals += [np.ones(nv), np.full(2 * m, -float(self.k)), np.full(nv, -kappa)]
            lo.append(np.zeros(nv))
            up.append(np.full(nv, _INF))
            r += nv
        r = self._mass_row((rows, cols, vals, lo, up), r, mass)
        a = _csr(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), r, n_cols)
        cost = np.zeros(n_cols)
        cost[w] = 1.0
        col_lo = np.zeros(n_cols)
        col_up = np.full(n_cols, _INF)
        col_up[:nv] = 1.0
        return cost, col_lo, col_up, np.concatenate(lo), np.concatenate(up), a

    def _solve(self, kind: str, mass: float | None, penalty: float | None = None):
        if self.formulation == "quotient":
            return self._lps.solve(kind, mass, penalty)
        return super()._solve(kind, mass, penalty)

    def _solve_g(self, kind: str, mass: float, kappa: float = 0.0) -> float:
        """One K or S LP; kept and re-solved warm (mass row, and κ for S, changed)."""
        if self.formulation == "quotient":
            return self._lps.solve_g(kind, mass, kappa)
        what = f"{self._what} {kind}"
        key = "g" + kind
        kept = self._kept.get(key)
        if kept is not None:
            r = kept.getNumRow() - 1
            kept.changeRowsBounds(1, np.array([r], dtype=np.int32), np.array([float(mass)]),
                                  np.array([float(mass)]))
            if kind == "g" and kappa != self._kappa:
                for row in self._node_rows.tolist():
                    kept.changeCoeff(int(row), int(self._col_s + row - self._node_rows[0]),
                                     -float(kappa))
                self._kappa = kappa
            obj, _, _ = resolve_lp(kept, solver="simplex", stats=self.stats, what=what,
                                   time_limit=self.time_limit)
            return float(obj)
        cost, clo, cup, rlo, rup, a = self._g_model(kind, mass, kappa)
        obj, _, _, h = solve_lp(len(cost), cost, clo, cup, rlo, rup, a.indptr, a.indices,
                                a.data, solver="simplex", stats=self.stats, what=what,
                                keep=True, time_limit=self.time_limit)
        self._kept[key] = h
        if kind == "g":
            self._kappa = kappa
        return float(obj)

    # ------------------------------------------------------------------ G
    def kappa_withdrawn(self, j: int) -> float:
        """``K_{|P|−j}`` (private): the smallest largest ``C_{k−1}(x_e − 1)`` at mass ``|P|−j``."""
        j = min(max(int(j), 0), self.n_real)
        if j == 0:
            t_max = int(self.deg.max()) if self.m else 0
            return float(math.comb(t_max - 1, self.k - 1)) if t_max >= 1 else 0.0
        if j == self.n_real:
            return 0.0
        return max(0.0, self._solve_g("k", float(self.n_real - j)))

    def g_withdrawn(self, j: int) -> float:
        """``G_{|P|−j} = c·S_{|P|−j}(K_{|P|−j})`` (private)."""
        j = min(max(int(j), 0), self.n_real)
        if j not in self._g_cache:
            if j == 0:
                val = self.g_top
            elif j == self.n_real or self.n_triangles == 0:
                val = 0.0
            else:
                kappa = self.kappa_withdrawn(j)
                val = self._g_factor * max(0.0, self._solve_g("g", float(self.n_real - j), kappa))
            self._g_cache[j] = val
        return self._g_cache[j]

    def h_withdrawn(self, j: int) -> float:
        """``H_{|P|−j}`` (private); 0 without triangles."""
        if self.n_triangles == 0:
            return 0.0
        return super().h_withdrawn(j)

    def _bounding(self) -> tuple[int, float]:
        """``8·G`` is proved 4-bounding; G is not 1-bounding (module doc, "Bounding")."""
        return 4, 8.0

    def release(self, epsilon: float = 0.5, rng=None, **params) -> Release:
        """Release the k-triangle count, (ε₁ + ε₂)-DP under node privacy (see the module doc)."""
        rel = super().release(epsilon, rng=rng, **params)
        return Release(value=rel.value, epsilon=rel.epsilon, delta_hat=rel.delta_hat,
                       params=rel.params, mechanism="recursive-ktriangle")
