"""k-star counting with the recursive mechanism on a degree construction whose size does not
depend on the number of k-stars (Chen & Zhou §6.1, footnote 2).

Why. The K-relation of a k-star count has one tuple per star, Σ_v C(d_v, k) of them: 2.5 M
3-stars on ca-GrQc, so the LPs of eq. 16/19 cannot be built. Footnote 2 of Chen & Zhou announces "a
clever construction of K-relation, such that the size of K-relation is asymptotically independent
of k" but does not give it. This module builds **our own** construction (not the paper's, which is
unpublished): H and G are LPs over *degrees*, with O(|V| + |E|) variables and Σ_v d_v rows,
whatever k. They are not the H and G of the enumerated K-relation; they are other sequences that
satisfy what the mechanism needs, proved below and checked by brute force in the tests.

The construction. Let ``C_k`` be the piecewise-linear interpolation of ``x ↦ C(x, k)`` at the
integers (convex, nondecreasing, ``C_k(0) = 0`` for k ≥ 1) and ``f ∈ [0,1]^P`` a fractional
presence of the participants.

* *Edge privacy* (a participant is an edge): ``x_v(f) = Σ_{e ∋ v} f_e`` and
  ``Obj(f) = Σ_v C_k(x_v(f))``.
* *Node privacy* (a participant is a node with its edges): each edge is relaxed as in Chen & Zhou
  §5.2, ``a_uv(f) = max(0, f_u + f_v − 1)``, ``x_v(f) = Σ_{u ∈ N(v)} a_uv(f)`` and again
  ``Obj(f) = Σ_v C_k(x_v(f))``.

For a 0/1 vector ``f`` (a sub-graph) ``Obj(f)`` is its number of k-stars. ``Obj`` is convex,
nondecreasing in ``f``, and *natural*: a participant at ``f_p = 0`` changes no ``x_v``, so the graph
with ``p`` at 0 has the objective of the graph without ``p``. Then

    H_i = min { Obj(f) : Σ f = i },    H_|P| = number of k-stars,

is a recursive sequence (Def. 17): for neighbours ``P₁ = P₂ − p``, extending an optimum of
``P₁`` by ``f_p = 0`` gives ``H_i(P₂) ≤ H_i(P₁)``; restricting an optimum of ``H_{i+1}(P₂)`` to
``P₁`` and lowering it to mass ``i`` gives ``H_i(P₁) ≤ H_{i+1}(P₂)`` (monotonicity).

``G_i = min { M(f) : Σ f = i }`` with ``M`` convex, nondecreasing and natural is a recursive
sequence by the same two arguments. We take

* edge privacy: ``M(f) = 2 max_v C_{k−1}(x_v(f))``. It is **1-bounding** (Def. 18 with g = 1):
  for ``i ≤ j`` let ``f`` attain ``G_j`` and ``f*`` attain ``H_i``; raise ``min(f, f*)`` towards
  ``f`` (total mass ``≤ |P| − i``). Along edge ``e = uv`` at a point ``z ≤ f`` with ``z_e < f_e``,
  the right derivative of ``Obj`` is ``C(⌊x_u(z)⌋, k−1) + C(⌊x_v(z)⌋, k−1) ≤ M(f)`` because
  ``x(z) < x(f)``. Hence ``H_j ≤ H_i + (|P| − i) G_j``;
* node privacy: ``M(f) = 2k max_v C_k(x_v(f))``: at a 0/1 point the slope of ``Obj`` along node
  ``w`` is ``d_w C(d_w − 1, k−1) + Σ_{u ∈ N(w)} C(d_u − 1, k−1) ≤ 2k C(D, k)`` (D the largest
  degree); the bounding inequality at fractional points is checked by brute force in the tests,
  not proved. **Privacy never depends on bounding** (only Lemma 8's accuracy does): Lemmas 1, 4
  and 7 need H and G recursive, which both are.

*Directed arcs* (``directed=True``, for SQL over a table that stores each direction it counts,
:mod:`provsql_dp.privacy.kstar_route`): every row ``(s, d)`` is an arc that counts at its centre
``s`` only, ``x_s(f) = Σ_{arcs at s} f_e`` (edge privacy: a participant is a row) or
``Σ_{arcs at s} a_sd(f)`` (node privacy; a self-loop ``(s, s)`` gets ``a = max(0, 2f_s − 1)``,
exact at 0/1 points, convex, nondecreasing and natural like the others). At a 0/1 point
``Obj`` is ``Σ_s C(out-degree of s, k)``, the number of k-sets of arcs with a common centre — the
SQL self-join's count when no two arcs of a centre share a leaf (the caller checks a declared
key). Every argument above is unchanged (Obj and M are still convex, nondecreasing and natural),
so H and G are recursive; with edge privacy a row has one centre, so ``M = max_v C_{k−1}(x_v)``
is 1-bounding (the factor 2 above counted the two ends of an undirected edge). Under node privacy
``2k max_v C_k(x_v)`` bounds when the table is symmetric (it is then the undirected case); for
other tables bounding is not claimed — again, only accuracy depends on it.

The mechanism is then Chen & Zhou §4.1 unchanged: ``Δ = min{e^{jβ}θ : G_{|P|−j} ≤ e^{jβ}θ}``
(binary search, one LP per probe), ``Δ̂`` released by :func:`~provsql_dp.mechanisms.recursive.release.
release_delta_hat` (ε₁-DP), ``X = min_i H_i + (|P| − i)Δ̂`` from the real-interval LP and two
integer H (H is convex), and ``X̂`` by :func:`~provsql_dp.mechanisms.recursive.release.release_x` (exact
discrete Laplace on a public grid, ε₂-DP): (ε₁ + ε₂)-DP in total, for the privacy model chosen.

Cost on the paper's graphs: at most 48 k columns and 105 k rows whatever k (gemat12, node
privacy). Measured (benchmarks/subgraph_measured.md, machine shared by several jobs): the first
release of 2- or 3-stars on ca-GrQc / ca-HepTh takes 1–7 s under edge privacy and 0.5–2 minutes
under node privacy, most of it the first, cold, G LP — later LPs re-solve the kept model warm in
0.1–2.5 s.

Examples
--------
>>> import numpy as np
>>> src, dst = np.array([0, 0, 0, 1]), np.array([1, 2, 3, 2])   # a triangle with a pendant
>>> ks = KStarCount(src, dst, k=2, privacy="edge")
>>> ks.true_answer, ks.n_participants, ks.g_top
(5.0, 4, 6.0)
>>> ks.h(4), ks.h(0)
(5.0, 0.0)
>>> rel = ks.release(epsilon=1.0, rng=np.random.default_rng(0))
>>> rel.mechanism, rel.params["privacy"]
('recursive-kstar', 'edge')
"""

from __future__ import annotations

import math
from types import MappingProxyType

import highspy
import numpy as np
import scipy.sparse as sp

from ..recursive._framework import accuracy_bound, delta_search, resolve_params
from ..lp._highs import LPStats, resolve_lp, solve_lp
from ..noise.sources import resolve_rng
from ..recursive.release import Release, release_delta_hat, release_x

__all__ = ["KStarCount", "binomial_segments"]

_INF = np.inf


def binomial_segments(max_degree: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The affine pieces of ``C_k`` on ``[m, m+1]``, ``m = 0 … max_degree − 1``.

    Returns ``(m, slope, intercept)``: on ``[m, m+1]``, ``C_k(x) = slope·x + intercept`` with
    ``slope = C(m, k−1)``. Pieces with zero slope and intercept (m < k−1) are dropped. Exact
    integers as float64 (the binomials of the paper's graphs are far below 2^53).

    >>> binomial_segments(4, 2)
    (array([1, 2, 3]), array([1., 2., 3.]), array([-1., -3., -6.]))
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    ms = np.arange(max(k - 1, 0), max(max_degree, 0), dtype=np.int64)
    slope = np.array([math.comb(int(m), k - 1) for m in ms], dtype=np.float64)
    inter = np.array([math.comb(int(m), k) - int(m) * math.comb(int(m), k - 1) for m in ms],
                     dtype=np.float64)
    return ms, slope, inter


def _clone(h):
    """A copy of a HiGHS model with its basis (for a warm start of a related LP)."""
    c = highspy.Highs()
    c.silent()
    c.setOptionValue("threads", 1)
    c.passModel(h.getModel())
    c.setBasis(h.getBasis())
    return c


def _csr(rows, cols, vals, n_rows, n_cols):
    a = sp.csr_matrix((np.asarray(vals, dtype=np.float64), (np.asarray(rows), np.asarray(cols))),
                      shape=(n_rows, n_cols))
    a.sum_duplicates()
    return a


class KStarCount:
    """The private computations of the recursive mechanism for a k-star count (curator side).

    Parameters
    ----------
    src, dst : array of int
        The undirected simple graph, one row per edge (any orientation, no self-loops, no
        duplicates: checked).
    k : int
        Stars with ``k ≥ 2`` leaves (a 1-star is an edge: count edges with the Laplace mechanism).
    privacy : {"edge", "node"}
        The participants: edges, or nodes with all their edges.
    n_nodes : int, optional
        Node privacy: the number of nodes, isolated ones included (default: the endpoints).
        Isolated participants never change the released value (as in
        :mod:`provsql_dp.mechanisms.recursive.efficient`).
    directed : bool
        Each row is an arc counted at its ``src`` only (see the module doc); self-loops are
        allowed, a repeated ``(src, dst)`` is not. Default: undirected edges.
    time_limit : float, optional
        Seconds per LP; past it :class:`~provsql_dp.errors.SolverError` is raised.
    """

    def __init__(self, src, dst, k: int, privacy: str = "edge", *, n_nodes: int | None = None,
                 directed: bool = False, time_limit: float | None = None):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
            raise ValueError(f"k must be an integer >= 2, got {k!r}")
        if privacy not in ("edge", "node"):
            raise ValueError(f"privacy must be 'node' or 'edge', got {privacy!r}")
        src = np.asarray(src, dtype=np.int64).reshape(-1)
        dst = np.asarray(dst, dtype=np.int64).reshape(-1)
        if len(src) != len(dst):
            raise ValueError("src and dst must have the same length")
        directed = bool(directed)
        if not directed and np.any(src == dst):
            raise ValueError("self-loops are not edges of a simple graph")
        lo, hi = (src, dst) if directed else (np.minimum(src, dst), np.maximum(src, dst))
        ids, inv = np.unique(np.concatenate([lo, hi]), return_inverse=True)
        u, v = inv[: len(lo)], inv[len(lo):]
        key = u * max(len(ids), 1) + v
        if len(np.unique(key)) != len(key):
            raise ValueError("duplicate arcs: pass each (src, dst) once" if directed
                             else "duplicate edges: pass each undirected edge once")
        self.k, self.privacy, self.directed = int(k), privacy, directed
        self._what = "k-star"
        self.time_limit = None if time_limit is None else float(time_limit)
        self.u, self.v = u, v
        self.n = len(ids)  # non-isolated nodes
        self.m = len(u)
        #: the centre end(s) of every arc: both ends of an undirected edge, the src of an arc
        self._centres = u if directed else np.concatenate([u, v])
        self._arc_of = np.arange(self.m) if directed else np.tile(np.arange(self.m), 2)
        #: how many centres one edge-privacy participant touches (the G factor, see module doc)
        self._reach = 1 if directed else 2
        self.deg = np.bincount(self._centres, minlength=self.n).astype(np.int64)
        if privacy == "edge":
            self.n_real, self.n_total = self.m, self.m
        else:
            total = self.n if n_nodes is None else int(n_nodes)
            if total < self.n:
                raise ValueError(f"n_nodes={total} is less than the {self.n} nodes with edges")
            self.n_real, self.n_total = self.n, total
        #: G_i = g_factor · min max_v C_{g_k}(x_v) (see the module doc)
        self._g_k, self._g_factor = ((self.k - 1, float(self._reach)) if privacy == "edge"
                                     else (self.k, 2.0 * self.k))
        self._finish()

    def _finish(self) -> None:
        """The top values, the caches and the LP model, once ``deg`` (the largest ``x`` of every
        centre), ``n`` (centres), ``_g_k`` and ``_g_factor`` are set."""
        self.true_answer = float(sum(math.comb(int(d), self.k) for d in self.deg.tolist()))
        dmax = int(self.deg.max()) if self.n else 0
        self.g_top = self._g_factor * float(math.comb(dmax, self._g_k)) if self.n else 0.0
        self.stats = LPStats()
        self._h_cache: dict[int, float] = {}
        self._g_cache: dict[int, float] = {}
        self._delta_cache: dict[tuple[float, float], tuple[int, float]] = {}
        self._x_cache: dict[float, tuple[float, int]] = {}
        self._kept: dict = {}
        self._build()

    # ------------------------------------------------------------------ the LP model
    def _build(self) -> None:
        """Columns: presence f (participants), x (nodes), t (nodes), then [a (edges) for node
        privacy]; one extra column w for G. Rows: x definitions, [a rows], C_k pieces."""
        n, m = self.n, self.m
        n_f = m if self.privacy == "edge" else n
        self.n_f = n_f
        col_x = n_f
        col_t = col_x + n
        col_a = col_t + n
        n_cols = col_a + (m if self.privacy == "node" else 0)
        self.col_x, self.col_t, self.col_a, self.n_cols = col_x, col_t, col_a, n_cols
        rows, cols, vals, lo, up = [], [], [], [], []
        r = 0
        ends, e_idx = self._centres, self._arc_of
        if self.privacy == "edge":
            # x_v − Σ_{e∋v} f_e = 0
            rows += [np.arange(n), ends]
            cols += [col_x + np.arange(n), e_idx]
            vals += [np.ones(n), -np.ones(len(ends))]
        else:
            # a_e − f_u − f_v ≥ −1
            rows += [np.arange(m)] * 3
            cols += [col_a + np.arange(m), self.u, self.v]
            vals += [np.ones(m), -np.ones(m), -np.ones(m)]
            lo.append(np.full(m, -1.0))
            up.append(np.full(m, _INF))
            r = m
            rows += [r + np.arange(n), r + ends]
            cols += [col_x + np.arange(n), col_a + e_idx]
            vals += [np.ones(n), -np.ones(len(ends))]
        lo.append(np.zeros(n))
        up.append(np.zeros(n))
        r += n
        self._base = (rows, cols, vals, lo, up, r)

    def _pieces(self, k: int, scale: float, target_col: int | None):
        """Rows ``target − scale·slope·x_v ≥ scale·intercept`` for every node and piece of C_k
        on ``[0, d_v]`` (``target`` is ``t_v`` when ``target_col`` is None, else the column w)."""
        dmax = int(self.deg.max()) if self.n else 0
        ms, slope, inter = binomial_segments(dmax, k)
        if len(ms) == 0:
            return None
        # node v gets the pieces m < d_v
        node_of = np.repeat(np.arange(self.n), np.maximum(self.deg - ms[0], 0)) if len(ms) else []
        starts = np.concatenate([[0], np.cumsum(np.maximum(self.deg - ms[0], 0))[:-1]])
        piece = np.arange(len(node_of)) - np.repeat(starts, np.maximum(self.deg - ms[0], 0))
        n_rows = len(node_of)
        tcol = (self.col_t + node_of) if target_col is None else np.full(n_rows, target_col)
        return node_of, piece, slope * scale, inter * scale, tcol, n_rows

    def _model(self, kind: str, mass: float | None, penalty: float | None = None):
        rows, cols, vals, lo, up, r0 = self._base
        rows, cols, vals, lo, up = list(rows), list(cols), list(vals), list(lo), list(up)
        n_cols = self.n_cols
        cost = np.zeros(n_cols + (1 if kind == "g" else 0))
        if kind == "g":
            w = n_cols
            n_cols += 1
            cost[w] = 1.0
            pieces = self._pieces(self._g_k, 1.0, w)
        else:
            cost[self.col_t:self.col_t + self.n] = 1.0
            pieces = self._pieces(self.k, 1.0, None)
        r = r0
        if pieces is not None:
            node_of, piece, slope, inter, tcol, n_rows = pieces
            rows += [r + np.arange(n_rows), r + np.arange(n_rows)]
            cols += [tcol, self.col_x + node_of]
            vals += [np.ones(n_rows), -slope[piece]]
            lo.append(inter[piece])
            up.append(np.full(n_rows, _INF))
            r += n_rows
        if mass is not None:
            rows.append(np.full(self.n_f, r))
            cols.append(np.arange(self.n_f))
            vals.append(np.ones(self.n_f))
            lo.append(np.array([mass]))
            up.append(np.array([mass]))
            r += 1
        offset = 0.0
        if penalty is not None:  # + Δ̂·(withdrawn mass) = Δ̂·(n_f − Σ f)
            cost[: self.n_f] -= penalty
            offset = penalty * self.n_f
        a = _csr(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), r, n_cols)
        col_lo = np.zeros(n_cols)
        col_up = np.full(n_cols, _INF)
        col_up[: self.n_f] = 1.0
        return cost, col_lo, col_up, np.concatenate(lo), np.concatenate(up), a, offset

    def _solve(self, kind: str, mass: float | None, penalty: float | None = None):
        """One LP. The H and G models are kept after their first solve and re-solved by dual
        simplex from the last basis when only the mass row ``Σ f = i`` changes (the Δ search
        and the two integer H); the X model is kept too and re-solved from its basis when only
        Δ̂ (the cost of f) changes. The first H model is the X model's copy with the mass row
        added, warm-started from X's basis (its optimum lies next to X's: 6 s instead of over
        10 minutes for 2-triangles on ca-HepTh). The optimum is the same as a cold solve's."""
        what = f"{self._what} {kind}"
        idx = np.arange(self.n_f, dtype=np.int32)
        if kind == "x" and "x" in self._kept:
            kept = self._kept["x"]
            kept.changeColsCost(self.n_f, idx, np.full(self.n_f, -float(penalty)))
            kept.changeObjectiveOffset(float(penalty) * self.n_f)
            obj, col, _ = resolve_lp(kept, solver="simplex", stats=self.stats, what=what,
                                     time_limit=self.time_limit)
            return float(obj), col
        if kind == "h" and "h" not in self._kept and "x" in self._kept:
            kept = _clone(self._kept["x"])
            kept.changeColsCost(self.n_f, idx, np.zeros(self.n_f))
            kept.changeObjectiveOffset(0.0)
            kept.addRow(float(mass), float(mass), self.n_f, idx, np.ones(self.n_f))
            self._kept["h"] = kept
            obj, col, _ = resolve_lp(kept, solver="simplex", stats=self.stats, what=what,
                                     time_limit=self.time_limit)
            return float(obj), col
        kept = self._kept.get(kind) if mass is not None else None
        if kept is not None:
            r = kept.getNumRow() - 1
            kept.changeRowsBounds(1, np.array([r], dtype=np.int32), np.array([float(mass)]),
                                  np.array([float(mass)]))
            obj, col, _ = resolve_lp(kept, solver="simplex", stats=self.stats, what=what,
                                     time_limit=self.time_limit)
            return float(obj), col
        cost, clo, cup, rlo, rup, a, offset = self._model(kind, mass, penalty)
        obj, col, _, h = solve_lp(len(cost), cost, clo, cup, rlo, rup, a.indptr, a.indices,
                                  a.data, offset=offset, solver="simplex", stats=self.stats,
                                  what=what, keep=True, time_limit=self.time_limit)
        self._kept[kind] = h
        return float(obj), col

    def _withdrawn(self, i: float) -> int:
        i = int(i)
        if not 0 <= i <= self.n_total:
            raise ValueError(f"i must lie in [0, |P|] = [0, {self.n_total}], got {i}")
        i_real = max(0, i - (self.n_total - self.n_real))
        return self.n_real - i_real

    # ------------------------------------------------------------------ H and G
    def h_withdrawn(self, j: int) -> float:
        """``H_{|P|−j}``: the min of Obj when mass ``j`` is withdrawn (private)."""
        j = min(max(int(j), 0), self.n_real)
        if j not in self._h_cache:
            if j == 0:
                val = self.true_answer
            elif j == self.n_real:
                val = 0.0
            else:
                val = max(0.0, self._solve("h", float(self.n_real - j))[0])
            self._h_cache[j] = val
        return self._h_cache[j]

    def g_withdrawn(self, j: int) -> float:
        """``G_{|P|−j}`` (private)."""
        j = min(max(int(j), 0), self.n_real)
        if j not in self._g_cache:
            if j == 0:
                val = self.g_top
            elif j == self.n_real:
                val = 0.0
            else:
                w = max(0.0, self._solve("g", float(self.n_real - j))[0])
                val = self._g_factor * w
            self._g_cache[j] = val
        return self._g_cache[j]

    def h(self, i: int) -> float:
        """``H_i`` over all ``|P|`` participants (private)."""
        return self.h_withdrawn(self._withdrawn(i))

    def g(self, i: int) -> float:
        """``G_i`` over all ``|P|`` participants (private)."""
        return self.g_withdrawn(self._withdrawn(i))

    @property
    def n_participants(self) -> int:
        return self.n_total

    # ------------------------------------------------------------------ the mechanism
    def delta(self, theta: float, beta: float) -> tuple[int, float]:
        """Δ of eq. 11 (binary search, one G LP per probe). Private. Deterministic, so kept for
        the next release with the same θ, β (as are X per Δ̂ and every H, G entry)."""
        key = (float(theta), float(beta))
        if key not in self._delta_cache:
            self._delta_cache[key] = delta_search(self.g_withdrawn, self.g_top, self.n_real,
                                                  theta, beta)
        return self._delta_cache[key]

    def x(self, delta_hat: float) -> tuple[float, int]:
        """``X = min_j H_{|P|−j} + jΔ̂`` (eq. 12) and its withdrawn ``j``. Private."""
        if self.n_real == 0:
            return 0.0, 0
        key = float(delta_hat)
        if key not in self._x_cache:
            self._x_cache[key] = self._x(key)
        return self._x_cache[key]

    def _x(self, delta_hat: float) -> tuple[float, int]:
        top = self.true_answer
        value, col = self._solve("x", None, penalty=float(delta_hat))
        j_real = self.n_f - float(col[: self.n_f].sum())
        best = (top, 0)
        for j in sorted({math.floor(j_real), math.ceil(j_real)}):
            j = min(max(int(j), 0), self.n_real)
            cand = self.h_withdrawn(j) + j * delta_hat
            if cand < best[0]:
                best = (cand, j)
        return best

    def release(self, epsilon: float = 0.5, rng=None, **params) -> Release:
        """Release the k-star count, (ε₁ + ε₂)-DP for this privacy model (see module doc).

        ``params``: ``theta``, ``beta``, ``mu``, ``eps1``, ``eps2`` as for
        :func:`provsql_dp.mechanisms.recursive.efficient.release` (paper defaults). Charges nothing.
        """
        p = resolve_params(epsilon, self.privacy, **params)
        j, _ = self.delta(p["theta"], p["beta"])
        gen = resolve_rng(rng)
        delta_hat = release_delta_hat(j, p, gen)
        x, _ = self.x(delta_hat)
        value = release_x(x, delta_hat, p["eps2"], gen)
        return Release(value=float(value), epsilon=float(p["eps1"] + p["eps2"]),
                       delta_hat=float(delta_hat), params=p, mechanism="recursive-kstar")

    def explain(self, epsilon: float = 0.5, *, delta_hat: float | None = None,
                c: float = math.log(20), **params) -> MappingProxyType:
        """Curator-only diagnostics (no noise; not private): Δ, X at ``Δ̂ = e^μΔ`` by default,
        the truncation bias and Theorem 1's ``(bound, prob)`` with the construction's bounding
        (:meth:`_bounding`: g = 1 for edge privacy, 2 used for node k-stars; the k-triangle
        constructions have only a scaled G proved bounding, so ``prob ≤ 0`` — nothing proved —
        unless μ exceeds the log of the scale)."""
        p = resolve_params(epsilon, self.privacy, **params)
        j, delta = self.delta(p["theta"], p["beta"])
        dh = math.exp(p["mu"]) * delta if delta_hat is None else float(delta_hat)
        x, jx = self.x(dh)
        g, scale = self._bounding()
        return MappingProxyType({
            "true_answer": self.true_answer, "delta": delta, "delta_j": j, "delta_hat": dh,
            "x": x, "x_withdrawn": jx, "truncation_bias": self.true_answer - x,
            "g_top": self.g_top, "n_lps": self.stats.n_lps,
            "accuracy": accuracy_bound(self.g_top, theta=p["theta"], beta=p["beta"], mu=p["mu"],
                                       eps1=p["eps1"], eps2=p["eps2"], c=c, g=g, scale=scale),
        })

    def _bounding(self) -> tuple[int, float]:
        """``(g, s)``: ``s·G`` is g-bounding (Def. 18), which :meth:`explain`'s accuracy uses."""
        return (1 if self.privacy == "edge" else 2), 1.0
