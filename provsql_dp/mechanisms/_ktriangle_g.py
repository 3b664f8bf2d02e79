"""The G LP of the k-triangle construction solved by row generation over the edges.

Private: computes functions of the private data; reached only through
:mod:`provsql_dp.mechanisms.ktriangle`.

``G_i / 3k = W(i) = min { max_e C_k(x_e(f)) : Σ f = i, 0 ≤ f ≤ 1 }`` with
``x_e(f) = Σ_{τ ∋ e} max(0, f_{e₁} + f_{e₂} + f_{e₃} − 2)`` (module doc of
:mod:`.ktriangle`). Written as an LP (the "segments" form): a column ``a_τ`` per triangle with
``a_τ ≥ Σ_{e ∈ τ} f_e − 2``, ``0 ≤ a_τ ≤ 1``, and for every *heavy* edge (``t_e ≥ k``; a light
edge has ``C_k(x_e) = 0`` because ``x_e ≤ t_e ≤ k − 1``) segment columns ``0 ≤ y_{e,m} ≤ 1``,
``m = k−1 … t_e − 1``, with

    Σ_m y_{e,m} − Σ_{τ ∋ e} a_τ ≥ −(k − 1),     w − Σ_m C(m, k−1)·y_{e,m} ≥ 0.

For fixed ``f`` the least ``Σ_m C(m, k−1) y_{e,m}`` subject to the first row is ``C_k(x_e(f))``
(the slopes increase with ``m``, so the cheapest segments fill first), hence the LP's optimum is
``W(i)``.

**Row generation.** Near the top of G (the Δ search withdraws a few dozen edges out of tens of
thousands) only the edges whose ``C_k(t_e)`` exceeds the optimum can bind, and those are a few
hundred (the edges of the largest cliques). The model here holds the rows of a set ``S`` of heavy
edges only, with the triangles on them: every row is a row of the full LP, so it is a
**relaxation** and its optimum ``w*`` is at most ``W(i)``. At its minimiser ``f*`` every
``x_e(f*)`` is recomputed exactly in numpy; the heavy edges outside ``S`` with
``C_k(x_e(f*)) > w*`` join ``S`` (their triangles, segments and two rows are added, the model
re-solved by dual simplex from its basis; at most ``max(256, |S|)`` per round, the most loaded
first, so that a first relaxation far below the optimum does not pull in every heavy edge). When
none is left, ``(f*, w*)`` is feasible for the
full LP — the edges of ``S`` by the LP, the others by the check — so ``w* = W(i)`` (to the LP's
tolerance, as the full LP). Every round adds an edge, so this ends, at worst with the full LP.
Rows stay valid for every mass, so the Δ search's probes share one model and only move the mass
row (row 0).

Examples
--------
>>> import numpy as np
>>> tri = np.array([[0, 1, 2], [0, 3, 4]])   # two triangles on edge 0 (a 2-triangle, k = 2)
>>> g = KTriangleG(tri, 5, np.array([0]), np.array([2]), k=2)
>>> round(g.solve(5.0), 9), round(g.solve(4.0), 9)   # C_2(2) = 1; one edge out: x_0 ≤ 1
(1.0, 0.0)
"""

from __future__ import annotations

import math
import time

import highspy
import numpy as np
import scipy.sparse as sp

from ._highs import INF, LPStats, resolve_lp

__all__ = ["KTriangleG", "c_k"]

_FEAS_TOL = 1e-9
_MIN_ADD = 256  # edges added per round at least (then as many as are in already: doubling)


def c_k(x: np.ndarray, k: int, top: int) -> np.ndarray:
    """``C_k`` (the piecewise-linear interpolation of ``C(·, k)``) at ``0 ≤ x ≤ top``.

    >>> c_k(np.array([0.0, 1.5, 2.0, 3.25]), 2, 4)
    array([0.  , 0.5 , 1.  , 3.75])
    """
    comb = np.array([math.comb(m, k) for m in range(top + 2)], dtype=np.float64)
    x = np.clip(np.asarray(x, dtype=np.float64), 0.0, float(top))
    lo = np.floor(x).astype(np.int64)
    return comb[lo] + (x - lo) * (comb[lo + 1] - comb[lo])


class KTriangleG:
    """One warm HiGHS model of the G LP over a growing set of edge rows, for every probe.

    Parameters
    ----------
    tri : (n_t, 3) int array
        The triangles as f-column indices (``0 … n_f − 1``).
    n_f : int
        The f columns (the mass row sums them all).
    heavy : int array
        The f-columns of the heavy edges (``t_e ≥ k``).
    t_heavy : int array
        Their triangle counts ``t_e`` (every triangle on a heavy edge is in ``tri``).
    """

    def __init__(self, tri, n_f: int, heavy, t_heavy, *, k: int,
                 stats: LPStats | None = None, time_limit: float | None = None):
        self.tri = np.asarray(tri, dtype=np.int64).reshape(-1, 3)
        self.n_f, self.k = int(n_f), int(k)
        self.heavy = np.asarray(heavy, dtype=np.int64)
        self.t_heavy = np.asarray(t_heavy, dtype=np.int64)
        self.top = int(self.t_heavy.max()) if len(self.t_heavy) else 0
        self.stats = stats if stats is not None else LPStats()
        self.time_limit = time_limit
        n_t, n_h = len(self.tri), len(self.heavy)
        # heavy edge → its triangles (CSR), from the f-columns of every triangle
        h_of = np.full(self.n_f, -1, dtype=np.int64)
        h_of[self.heavy] = np.arange(n_h)
        on = h_of[self.tri.reshape(-1)]
        keep = on >= 0
        self.tri_of = sp.csr_matrix(
            (np.ones(int(keep.sum())), (on[keep], np.repeat(np.arange(n_t), 3)[keep])),
            shape=(n_h, n_t))
        self.slopes = np.array([math.comb(m, self.k - 1) for m in range(self.top + 1)],
                               dtype=np.float64)
        self.comb_k = np.array([math.comb(m, self.k) for m in range(self.top + 1)],
                               dtype=np.float64)
        self.in_s = np.zeros(n_h, dtype=bool)
        #: the pieces (heavy edge, m) whose rows are in the model
        self.has = np.zeros((n_h, self.top + 1), dtype=bool)
        self.a_col = np.full(n_t, -1, dtype=np.int64)
        #: the model's f columns: the edges of the triangles in it; the others carry mass freely
        self.f_col = np.full(self.n_f, -1, dtype=np.int64)
        self.n_col = 1  # w, then f and a columns as triangles join
        self.h = highspy.Highs()
        self.h.silent()
        self.h.setOptionValue("threads", 1)
        self.h.addVars(1, np.zeros(1), np.array([INF]))
        self.h.changeColsCost(1, np.array([0], dtype=np.int32), np.array([1.0]))
        self.h.addRow(0.0, 0.0, 0, np.zeros(0, dtype=np.int32), np.zeros(0))  # row 0: Σ f
        self.rounds = 0
        self.mass = None

    @property
    def n_rows_edges(self) -> int:
        """How many heavy edges have their rows in the model."""
        return int(self.in_s.sum())

    def _add_cols(self, n: int, mass_row: bool = False) -> int:
        """``n`` new columns in ``[0, 1]`` at cost 0 (with a 1 in the mass row: f columns)."""
        first = self.n_col
        nnz = n if mass_row else 0
        self.h.addCols(n, np.zeros(n), np.zeros(n), np.ones(n), nnz,
                       np.arange(n, dtype=np.int32) if mass_row else np.zeros(n, dtype=np.int32),
                       np.zeros(nnz, dtype=np.int32), np.ones(nnz))
        self.n_col += n
        return first

    def _add_rows(self, lower, rows, cols, vals) -> None:
        a = sp.csr_matrix((vals, (rows, cols)), shape=(len(lower), self.n_col))
        a.sum_duplicates()
        self.h.addRows(len(lower), np.asarray(lower, dtype=np.float64), np.full(len(lower), INF),
                       a.nnz, a.indptr[:-1].astype(np.int32), a.indices.astype(np.int32),
                       a.data.astype(np.float64))

    def _add_triangles(self, edges: np.ndarray) -> None:
        """The triangles on heavy edges ``edges`` (their ``a_τ`` columns, rows and f columns)."""
        new_t = np.unique(self.tri_of[edges].indices)
        new_t = new_t[self.a_col[new_t] < 0]
        if not len(new_t):
            return
        new_f = np.unique(self.tri[new_t])
        new_f = new_f[self.f_col[new_f] < 0]
        self.f_col[new_f] = self._add_cols(len(new_f), mass_row=True) + np.arange(len(new_f))
        self.a_col[new_t] = self._add_cols(len(new_t)) + np.arange(len(new_t))
        r = np.arange(len(new_t))  # a_τ − Σ_{e∈τ} f_e ≥ −2
        self._add_rows(np.full(len(new_t), -2.0),
                       np.concatenate([r, np.repeat(r, 3)]),
                       np.concatenate([self.a_col[new_t],
                                       self.f_col[self.tri[new_t].reshape(-1)]]),
                       np.concatenate([np.ones(len(new_t)), -np.ones(3 * len(new_t))]))

    def add(self, edges: np.ndarray, pieces: np.ndarray) -> None:
        """Rows ``w − C(m, k−1)·Σ_{τ∋e} a_τ ≥ C(m, k) − m·C(m, k−1)`` (the piece of ``C_k`` on
        ``[m, m+1]``, a lower bound of ``C_k`` everywhere: ``C_k`` is convex) for the heavy
        edges ``edges`` (indices into ``heavy``) and their pieces ``m``."""
        edges = np.asarray(edges, dtype=np.int64)
        pieces = np.asarray(pieces, dtype=np.int64)
        if not len(edges):
            return
        self._add_triangles(np.unique(edges))
        self.in_s[edges] = True
        self.has[edges, pieces] = True
        sub = self.tri_of[edges]
        n_e = len(edges)
        rows = np.repeat(np.arange(n_e), np.diff(sub.indptr))
        slope = self.slopes[pieces]
        self._add_rows(
            self.comb_k[pieces] - pieces * slope,
            np.concatenate([np.arange(n_e), rows]),
            np.concatenate([np.zeros(n_e, dtype=np.int64), self.a_col[sub.indices]]),
            np.concatenate([np.ones(n_e), -np.repeat(slope, np.diff(sub.indptr))]))

    def x(self, f: np.ndarray) -> np.ndarray:
        """``x_e(f)`` of every heavy edge, recomputed exactly from ``f``."""
        a = np.maximum(0.0, np.clip(f, 0.0, 1.0)[self.tri].sum(axis=1) - 2.0)
        return self.tri_of @ a

    def _point(self, col: np.ndarray) -> np.ndarray:
        """The relaxation's minimiser as a full f: the model's columns, and the mass the model
        does not hold spread over the other edges (zero cost in the relaxation)."""
        inside = self.f_col >= 0
        n_out = self.n_f - int(inside.sum())
        f = np.full(self.n_f, min(1.0, self.mass / n_out) if n_out else 0.0)
        f[inside] = col[self.f_col[inside]]
        return f

    def _set_mass(self) -> None:
        n_out = self.n_f - int((self.f_col >= 0).sum())
        inner = max(0.0, self.mass - n_out)
        self.h.changeRowsBounds(1, np.array([0], dtype=np.int32), np.array([inner]),
                                np.array([inner]))

    def solve(self, mass: float) -> float:
        """``W(mass)``: the optimum of the full G LP (without the factor 3k)."""
        if not len(self.heavy):
            return 0.0
        self.mass = float(mass)
        if not self.in_s.any():  # start from the edges with the most triangles, at f = 1
            top = np.flatnonzero(self.t_heavy == self.top)
            self.add(top, self.t_heavy[top] - 1)
        while True:
            self._set_mass()
            obj, col, _ = resolve_lp(self.h, solver="simplex", stats=self.stats,
                                     what="k-triangle g (rows)", time_limit=self.time_limit)
            t0 = time.perf_counter()
            self.rounds += 1
            w = float(obj)
            x = self.x(self._point(col))
            loads = c_k(x, self.k, self.top)
            m = np.clip(np.floor(x).astype(np.int64), self.k - 1, self.t_heavy - 1)
            over = loads > w * (1 + _FEAS_TOL) + _FEAS_TOL
            over = np.flatnonzero(over & ~self.has[np.arange(len(m)), m])
            if not len(over):
                self.stats.build_seconds += time.perf_counter() - t0
                return w
            # the most loaded first: the rows that bind are those of the hottest edges, and a
            # relaxation far below the optimum would otherwise pull in every heavy edge
            n_add = max(_MIN_ADD, self.n_rows_edges)
            if len(over) > n_add:
                over = over[np.argpartition(-loads[over], n_add - 1)[:n_add]]
            self.add(over, m[over])
            self.stats.build_seconds += time.perf_counter() - t0
