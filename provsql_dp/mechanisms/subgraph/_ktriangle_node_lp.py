"""The LPs of the node-private k-triangle construction (:mod:`.ktriangle_node`), reduced exactly
and solved on their quotient by an equitable partition (``formulation="quotient"``, the default).

Private: computes functions of the private data; reached only through
:class:`~.ktriangle_node.NodeKTriangleCount`.

The K, S, H and X LPs of :mod:`.ktriangle_node` (``formulation="plain"`` writes them as they are
defined there, one column per node, edge and triangle) are the same optimisation problems after
three reductions, each exact:

* *Light edges.* An edge with ``t_e ≤ k − 1`` has ``x_e/y_e ≤ t_e`` so ``P_k(x_e, y_e) = 0`` and
  ``Q(x_e, y_e) = y_e·ψ(x_e/y_e) = 0`` (``ψ = C_{k−1}(max(0, x − 1))`` vanishes on ``[0, k−1]``
  too): its ``y, t`` columns and rows carry nothing. The one other use of ``x`` is the apex
  load ``½Σ_{e∋v} x_e``: S writes ``x_e`` there as its column for a heavy edge and as
  ``Σ_{τ⊃e} a_τ`` (fewer than k terms) for a light one (the same linear function of the a's;
  ``Σ_{τ∋v} a_τ`` is too, but its rows are far denser at hubs and interior point took twice as
  long). Only the *heavy* edges (``t_e ≥ k``) keep ``x, y, t`` columns.
* *Free nodes.* In H, K and X only triangles with a heavy edge matter (no other ``a_τ`` enters a
  row that costs anything), and a node in none of them (in S: in no triangle) never changes the
  objective. The objective being nondecreasing in f (:mod:`.ktriangle_node`, 3., and the same for
  Q and for every node's load), mass goes to such nodes first: with ``F`` of them,
  ``min {Obj : Σ f = i} = min {Obj' : Σ f' = max(0, i − F)}`` over the other nodes (given an
  optimum, lower the others to that mass — no rise — and fill ``F`` to make up ``i``). X keeps
  them at 1 (withdrawing one costs ``Δ̂ ≥ 0`` and gains nothing).
* *Quotient by an equitable partition* (:mod:`provsql_dp.mechanisms.lp._quotient`, colour refinement checked exactly):
  an LP ``min c·x : lo ≤ A x ≤ up, l ≤ x ≤ u`` has an optimum constant on the classes of every
  equitable partition (its feasible set is convex and the class-averaging map keeps it feasible
  and keeps ``c·x``: Grohe et al. 2014), so it is solved over one value per class. This needs
  nothing but an LP: the perspective terms are LP rows ``t_e ≥ s_m x_e + c_m y_e``, ``y_e ≤ f_a``,
  ``y_e ≤ f_b`` (their minimum over the auxiliary columns is ``P_k``), and the min-max of K and S
  is the epigraph ``min w`` with one row ``w ≥ load`` per edge or node — every function value is
  a min over a polyhedron, so the argument holds for the whole LP. S's κ changes between solves:
  its entries ``−κ`` at (node row v, column ``s_v``) are the *marker* of :mod:`provsql_dp.mechanisms.lp._quotient`
  (the partition is equitable for the rest and for the marker separately, hence for every κ),
  and a re-solve sets each (node-row class, s class) entry of the quotient to ``−κ·count``.
  Collaboration graphs are unions of cliques, whose nodes, edges and triangles merge.

*Solving.* Like :mod:`.ktriangle`'s, every LP is kept after its first solve and re-solved warm by
dual simplex from its last basis (mass row, X's f costs, S's κ changed in place), priced by
Devex: HiGHS recomputes dual steepest-edge weights from scratch after a change to a kept model,
one solve per row (15 s of a two-pivot re-solve on ca-GrQc). A large S or X LP (above
``IPM_ROWS`` rows on its quotient) is solved cold by interior point with crossover (a basis for
the warm re-solves): S's dual simplex is degenerate (the min-max ties many nodes' loads). The optimum is
the LP's either way; only the time differs.

Segments (:mod:`.ktriangle`'s third reduction) do not carry over: the perspective's segment
``clip(x_e − m y_e, 0, y_e)`` needs a row ``z_{e,m} ≤ y_e`` per segment (``y_e`` is a column, not a
bound), as many rows as the pieces it would replace.

Examples
--------
>>> import numpy as np
>>> from provsql_dp.mechanisms.subgraph.ktriangle_node import NodeKTriangleCount
>>> src, dst = np.array([0, 0, 0, 1, 1, 2]), np.array([1, 2, 3, 2, 3, 3])   # K4
>>> q = NodeKTriangleCount(src, dst, k=2)
>>> p = NodeKTriangleCount(src, dst, k=2, formulation="plain")
>>> [round(q.h(i), 9) for i in range(5)] == [round(p.h(i), 9) for i in range(5)]
True
>>> q._lps.model("g")[5].shape, q._lps.quotient("g")[0].a.shape   # K4's S LP: one class per kind
((37, 31), (7, 7))
"""

from __future__ import annotations

import time

import numpy as np

from ..lp._highs import resolve_lp, solve_lp
from ..lp._quotient import Quotient, equitable_quotient
from .kstar import _clone, _csr

__all__ = ["NodeTriangleLPs"]

_INF = np.inf

#: S and X LPs (on their quotient) with more rows are solved cold by interior point
IPM_ROWS = 20_000


class NodeTriangleLPs:
    """The reduced K (``"k"``), S (``"g"``) and H / X (``"h"``) LPs of one
    :class:`~.ktriangle_node.NodeKTriangleCount` (``owner``), built, reduced by their equitable
    partitions and kept for warm re-solves (mass row, X's f costs, S's κ)."""

    def __init__(self, owner):
        self.owner = owner
        k, deg, tri = owner.k, owner.deg, owner.tri
        self.heavy = np.flatnonzero(deg >= k)  # t_e ≥ k: the edges that cost anything
        self.h_of = np.full(owner.m, -1, dtype=np.int64)
        self.h_of[self.heavy] = np.arange(len(self.heavy))
        has_heavy = (deg[tri] >= k).any(axis=1) if len(tri) else np.zeros(0, dtype=bool)
        #: the triangles each LP keeps: those with a heavy edge (H, X, K), all of them (S)
        self._tris = {"h": has_heavy, "k": has_heavy, "g": np.ones(len(tri), dtype=bool)}
        self._quot: dict = {}
        self._kept: dict = {}
        self._kappa: float | None = None

    # ------------------------------------------------------------------ the reduced models
    def _nodes(self, kind: str) -> np.ndarray:
        """The f nodes of ``kind``'s LP: the nodes of its triangles (the others are free)."""
        return np.unique(self.owner.tri_nodes[self._tris[kind]].reshape(-1))

    def model(self, kind: str):
        """``(cost, col_lo, col_up, row_lo, row_up, a, marker, n_f)`` of ``kind``'s reduced LP,
        the mass row last (bounds 0: set at solve time). Columns: f (the kind's nodes), a (its
        triangles), x, y (heavy edges), then t (heavy edges) for H; w for K; t, s (nodes), w for
        S. ``marker`` (S only) is −1 at (node row v, ``s_v``): the coefficient κ multiplies."""
        o = self.owner
        keep = self._tris[kind]
        tri, tri_nodes = o.tri[keep], o.tri_nodes[keep]
        nodes = self._nodes(kind)
        n_f, n_t, n_h = len(nodes), len(tri), len(self.heavy)
        f_of = np.full(o.n_nodes, -1, dtype=np.int64)
        f_of[nodes] = np.arange(n_f)
        col_a, col_x, col_y = n_f, n_f + n_t, n_f + n_t + n_h
        n_cols = col_y + n_h
        t_idx, h_idx = np.arange(n_t), np.arange(n_h)
        # a_τ − f_a − f_b − f_c ≥ −2
        rows = [t_idx, np.repeat(t_idx, 3)]
        cols = [col_a + t_idx, f_of[tri_nodes.reshape(-1)]]
        vals = [np.ones(n_t), -np.ones(3 * n_t)]
        lo, up = [np.full(n_t, -2.0)], [np.full(n_t, _INF)]
        # x_e − Σ_{τ⊃e} a_τ = 0 for every heavy edge
        on_h = self.h_of[tri.reshape(-1)]
        hit = on_h >= 0
        rows += [n_t + h_idx, n_t + on_h[hit]]
        cols += [col_x + h_idx, col_a + np.repeat(t_idx, 3)[hit]]
        vals += [np.ones(n_h), -np.ones(int(hit.sum()))]
        lo.append(np.zeros(n_h))
        up.append(np.zeros(n_h))
        r = n_t + n_h
        # y_e − f_a ≤ 0, y_e − f_b ≤ 0
        for end in (o.u, o.v):
            rows += [r + h_idx, r + h_idx]
            cols += [col_y + h_idx, f_of[end[self.heavy]]]
            vals += [np.ones(n_h), -np.ones(n_h)]
            lo.append(np.full(n_h, -_INF))
            up.append(np.zeros(n_h))
            r += n_h
        cost_at, marker = [], None
        if kind in ("h", "g"):  # t_e ≥ slope·x_e + intercept·y_e per piece of C_k
            col_t = n_cols
            n_cols += n_h
            pieces = o._edge_pieces(o.k, 0)
            if kind == "h":
                cost_at = list(range(col_t, col_t + n_h))
        if kind == "k":  # w ≥ the pieces of ψ's perspective
            w = n_cols
            n_cols += 1
            pieces = o._edge_pieces(o.k - 1, 1)
        if pieces is not None:
            edge, slope, inter = pieces
            he = self.h_of[edge]  # every edge with a piece is heavy
            n_p = len(edge)
            target = np.full(n_p, w) if kind == "k" else col_t + he
            rows += [r + np.arange(n_p)] * 3
            cols += [target, col_x + he, col_y + he]
            vals += [np.ones(n_p), -slope, -inter]
            lo.append(np.zeros(n_p))
            up.append(np.full(n_p, _INF))
            r += n_p
        if kind == "k":
            cost_at = [w]
        if kind == "g":
            col_s, w = n_cols, n_cols + n_f
            n_cols += n_f + 1
            cost_at = [w]
            f_idx = np.arange(n_f)
            # s_v − ½Σ_{e∋v} x_e = 0, x_e a column for heavy edges and Σ_{τ⊃e} a_τ for light ones
            te = tri.reshape(-1)
            lt = ~hit  # (triangle, light edge) pairs
            hv = self.heavy
            rows += [r + f_idx, r + f_of[o.u[hv]], r + f_of[o.v[hv]],
                     r + f_of[o.u[te[lt]]], r + f_of[o.v[te[lt]]]]
            cols += [col_s + f_idx, col_x + h_idx, col_x + h_idx,
                     col_a + np.repeat(t_idx, 3)[lt], col_a + np.repeat(t_idx, 3)[lt]]
            vals += [np.ones(n_f), np.full(n_h, -0.5), np.full(n_h, -0.5),
                     np.full(int(lt.sum()), -0.5), np.full(int(lt.sum()), -0.5)]
            lo.append(np.zeros(n_f))
            up.append(np.zeros(n_f))
            r += n_f
            # w − k Σ_{e∋v, heavy} t_e − κ s_v ≥ 0 (κ s_v in the marker)
            ends = np.concatenate([f_of[o.u[self.heavy]], f_of[o.v[self.heavy]]])
            rows += [r + f_idx, r + ends]
            cols += [np.full(n_f, w), col_t + np.tile(h_idx, 2)]
            vals += [np.ones(n_f), np.full(2 * n_h, -float(o.k))]
            lo.append(np.zeros(n_f))
            up.append(np.full(n_f, _INF))
            marker = (r + f_idx, col_s + f_idx)
            r += n_f
        # Σ f = mass (last row)
        rows.append(np.full(n_f, r))
        cols.append(np.arange(n_f))
        vals.append(np.ones(n_f))
        lo.append(np.zeros(1))
        up.append(np.zeros(1))
        r += 1
        a = _csr(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), r, n_cols)
        if marker is not None:
            marker = _csr(marker[0], marker[1], -np.ones(n_f), r, n_cols)
        cost = np.zeros(n_cols)
        cost[cost_at] = 1.0
        col_up = np.full(n_cols, _INF)
        col_up[:n_f] = 1.0
        return (cost, np.zeros(n_cols), col_up, np.concatenate(lo), np.concatenate(up), a,
                marker, n_f)

    def quotient(self, kind: str) -> tuple[Quotient, int, np.ndarray, int]:
        """``kind``'s reduced LP on its quotient (the mass row alone in its class, the f
        columns apart from the others): ``(quotient, mass row, f classes, n_f)``."""
        if kind not in self._quot and len(self._nodes(kind)) == 0:  # Obj ≡ 0: no LP
            self._quot[kind] = (None, -1, np.zeros(0, dtype=np.int64), 0)
        if kind not in self._quot:
            t0 = time.perf_counter()
            cost, clo, cup, rlo, rup, a, marker, n_f = self.model(kind)
            row_key = np.zeros(len(rlo), dtype=np.uint64)
            row_key[-1] = 1
            col_key = np.zeros(len(cost), dtype=np.uint64)
            col_key[:n_f] = 1
            q = equitable_quotient(a, cost, clo, cup, rlo, rup, col_key=col_key,
                                   row_key=row_key, marker=marker)
            if q is None:  # nothing merged, or the exact check failed: the LP itself
                q = Quotient(col_class=np.arange(len(cost)), row_class=np.arange(len(rlo)),
                             size=np.ones(len(cost), dtype=np.int64), a=a, cost=cost,
                             col_lo=clo, col_up=cup, row_lo=rlo, row_up=rup, marker=marker)
            fcls = np.unique(q.col_class[:n_f])
            self._quot[kind] = (q, int(q.row_class[-1]), fcls, n_f)
            self.owner.stats.build_seconds += time.perf_counter() - t0
        return self._quot[kind]

    # ------------------------------------------------------------------ solving
    def _mass(self, kind: str, mass: float) -> tuple[float, int]:
        """The mass left for ``kind``'s f nodes once its free nodes are full, and ``n_f``."""
        n_f = self.quotient(kind)[3]
        return min(float(mass) - (self.owner.n_nodes - n_f), float(n_f)), n_f

    def solve(self, kind: str, mass: float | None, penalty: float | None = None):
        """H (``"h"``) at a mass, or X (``"x"``, mass free, f costing ``−Δ̂``): ``(objective,
        column values)`` with the kind's f nodes' presences first (what ``KStarCount._x`` reads
        with ``owner.n_f``)."""
        q, mrow, fcls, n_f = self.quotient("h")
        if n_f == 0:  # no triangle with a heavy edge: Obj ≡ 0
            return 0.0, np.zeros(0)
        if mass is not None:
            mass, _ = self._mass("h", mass)
            if mass <= 0:
                return 0.0, np.zeros(len(q.col_class))
        cost, row_lo, row_up = q.cost.copy(), q.row_lo.copy(), q.row_up.copy()
        offset = 0.0
        if kind == "x":  # the mass row is free; the f classes cost −Δ̂ per member
            row_lo[mrow], row_up[mrow] = -_INF, _INF
            cost[fcls] = -float(penalty) * q.size[fcls]
            offset = float(penalty) * n_f
        else:
            row_lo[mrow] = row_up[mrow] = mass
        kept = self._kept.get(kind)
        if kept is None and kind == "h" and "x" in self._kept:
            kept = self._kept["h"] = _clone(self._kept["x"])  # H's optimum lies next to X's
        obj, z = self._run(kind, kept, q, cost, row_lo, row_up, offset, fcls, mrow)
        return obj, z[q.col_class]

    def solve_g(self, kind: str, mass: float, kappa: float = 0.0) -> float:
        """One K (``"k"``) or S (``"g"``, κ) LP value at ``mass``."""
        q, mrow, fcls, n_f = self.quotient(kind)
        mass, _ = self._mass(kind, mass)
        if n_f == 0 or mass <= 0:
            return 0.0
        row_lo, row_up = q.row_lo.copy(), q.row_up.copy()
        row_lo[mrow] = row_up[mrow] = mass
        kept = self._kept.get(kind)
        if kind == "g":
            mk = q.marker.tocoo()
            base = np.asarray(q.a[mk.row, mk.col]).reshape(-1)
            if kept is None:
                a = (q.a + float(kappa) * q.marker).tocsr()
                q = Quotient(**{**q.__dict__, "a": a})
            elif kappa != self._kappa:
                for r, c, b, m in zip(mk.row.tolist(), mk.col.tolist(), base.tolist(),
                                      mk.data.tolist()):
                    kept.changeCoeff(int(r), int(c), b + float(kappa) * m)
            self._kappa = kappa
        return self._run(kind, kept, q, q.cost, row_lo, row_up, 0.0, fcls, mrow)[0]

    def _run(self, kind, kept, q, cost, row_lo, row_up, offset, fcls, mrow):
        o = self.owner
        what = f"{o._what} {kind}"
        if kept is None:
            # a large S or X LP: interior point (with crossover, for the basis of later warm
            # re-solves) is faster cold than dual simplex (ca-HepTh 2-triangles' S: 108 s vs 250 s)
            big = kind in ("g", "x") and q.a.shape[0] > IPM_ROWS
            obj, z, _, kept = solve_lp(len(cost), cost, q.col_lo, q.col_up, row_lo, row_up,
                                       q.a.indptr, q.a.indices, q.a.data, offset=offset,
                                       solver="ipm" if big else "simplex", stats=o.stats,
                                       what=what, keep=True, time_limit=o.time_limit)
            # warm re-solves price by Devex: dual steepest-edge weights are recomputed from
            # scratch after every change to a kept model, one solve per row (15 s on ca-GrQc)
            kept.setOptionValue("simplex_dual_edge_weight_strategy", 1)
            self._kept[kind] = kept
            return float(obj), z
        idx = fcls.astype(np.int32)
        kept.changeColsCost(len(idx), idx, np.asarray(cost, dtype=np.float64)[fcls])
        kept.changeObjectiveOffset(offset)
        kept.changeRowsBounds(1, np.array([mrow], dtype=np.int32), np.array([row_lo[mrow]]),
                              np.array([row_up[mrow]]))
        obj, z, _ = resolve_lp(kept, solver="simplex", stats=o.stats, what=what,
                               time_limit=o.time_limit)
        return float(obj), z

