"""The eq.-20 LP (and the integer H next to its argmin) of a large model, solved through its dual.

Private: computes functions of the private data; reached only through :mod:`._lp`.

With the candidate columns ``C = {p : deg_q(p) > Δ̂}`` (exact, see :mod:`._lp`) the eq.-20 LP is

    min Σ_c d_c g_c + Σ_t q_t y_t   s.t.   y_t + Σ_{c ∈ t∩C} k_{t,c} g_c ≥ 1,  0 ≤ g ≤ 1,  y ≥ 0

with ``d_c = Δ̂ · mult_c``, one row per kept tuple (one monomial each). Two exact steps make it
small enough for an interior point method:

* **merging**: tuples whose restricted rows ``(c, k_{t,c})_{c ∈ t∩C}`` are equal have the same
  optimal ``y`` (``y_t = max(0, 1 − Σ k g)``), so they become one row ``S`` with the summed weight
  ``Q_S`` — the value of the LP is unchanged;
* **the dual**: ``max Σ_S π_S − Σ_c u_c`` s.t. ``Σ_S k_{S,c} π_S − u_c ≤ d_c``, ``0 ≤ π_S ≤ Q_S``,
  ``u ≥ 0``. Each ``y_S`` appears in one row only, so it becomes the *bound* ``π_S ≤ Q_S`` and the
  dual has one row per candidate column (a few hundred on ca-HepPh, node privacy, where the primal
  has 1.2 M rows): the interior point method factors a |C|×|C| matrix. By strong duality the
  optimal values are equal; the primal ``g`` is (minus) the row duals of the dual.

The integer ``H(j)`` next to the argmin adds the primal row ``Σ mult·g = j``: one free dual column
``λ`` (entries ``mult_c``, cost ``j``); a
second ``j`` only changes that column's cost (each re-solved by IPM with crossover).

The restricted-row duals of the primal, needed by the reduced-cost certificate of :mod:`._lp`,
are the ``π_S`` spread over the merged tuples in proportion to their weights (``π_t = π_S q_t /
Q_S``), a feasible dual of the unmerged LP with the same value.

Examples
--------
>>> from provsql_dp.provenance.krelation import KRelation
>>> from provsql_dp.mechanisms.recursive._structure import Structure
>>> kr = KRelation.from_annotations([(1,), (2,)], [[{("p", 1), ("p", 2)}], [{("p", 2), ("p", 3)}]])
>>> st = Structure(kr)
>>> value, g, _ = DualEq20(st, st.deg > 0.5, 0.5).solve()  # withdrawing p2 kills both tuples
>>> round(value, 9), g.round(9).tolist()
(0.5, [0.0, 1.0, 0.0])
"""

from __future__ import annotations

import numpy as np

from ..lp._highs import INF, resolve_lp, solve_lp

__all__ = ["DualEq20", "applicable"]

#: kept tuples from which eq. 20 is solved in dual form (tests lower it)
DUAL_MIN = 50_000


def applicable(st) -> bool:
    """One monomial per tuple with integral coefficients (conjunctive annotations)."""
    return st.n_mono == st.n_tuples and bool(np.all(st.ent_coef == np.rint(st.ent_coef)))


class DualEq20:
    """The merged eq.-20 model of ``st`` restricted to ``cand``, in dual form."""

    def __init__(self, st, cand: np.ndarray, delta_hat: float):
        self.st, self.cand, self.delta_hat = st, cand, float(delta_hat)
        n_c = int(cand.sum())
        col_of_part = np.cumsum(cand) - 1
        e = cand[st.ent_part]
        cnt = np.bincount(st.ent_mono[e], minlength=st.n_tuples)
        self.t_kept = cnt > 0  # a monomial without candidates has φ = 1: a constant
        kept = np.flatnonzero(self.t_kept)
        self.const = st.const_true + float(st.q[~self.t_kept].sum())
        width = int(cnt.max()) if len(cnt) else 0
        cmax = int(st.ent_coef.max()) if len(st.ent_coef) else 1
        ee = np.flatnonzero(e)
        tt = st.ent_mono[ee]
        start = np.concatenate([[0], np.cumsum(cnt)])
        pad = np.full((st.n_tuples, max(width, 1)), -1, dtype=np.int64)
        pad[tt, np.arange(len(ee)) - start[tt]] = (
            col_of_part[st.ent_part[ee]] * (cmax + 1) + np.rint(st.ent_coef[ee]).astype(np.int64)
        )
        rows = np.sort(pad[kept], axis=1)
        base = n_c * (cmax + 1) + 1
        if float(base) ** rows.shape[1] < 2**62:
            code = np.zeros(len(rows), dtype=np.int64)
            for c in range(rows.shape[1]):
                code = code * base + (rows[:, c] + 1)
            _, first, inv = np.unique(code, return_index=True, return_inverse=True)
        else:
            _, first, inv = np.unique(rows, axis=0, return_index=True, return_inverse=True)
        inv = inv.ravel()
        n_s = len(first)
        self.group_of_kept = inv
        self.Q = np.bincount(inv, weights=st.q[kept], minlength=n_s)
        rep = rows[first]
        s_idx, pos = np.nonzero(rep >= 0)
        v = rep[s_idx, pos]
        c_idx, k_val = v // (cmax + 1), (v % (cmax + 1)).astype(np.float64)
        # the dual in row-wise form: row c holds Σ_S k_{S,c} π_S − u_c
        order = np.argsort(c_idx, kind="stable")
        c_sorted = c_idx[order]
        row_ptr = np.concatenate([[0], np.cumsum(np.bincount(c_sorted, minlength=n_c) + 1)])
        nnz = int(row_ptr[-1])
        idx = np.empty(nnz, dtype=np.int64)
        val = np.empty(nnz)
        last = row_ptr[1:] - 1  # the u_c entry ends each row
        body = np.ones(nnz, dtype=bool)
        body[last] = False
        idx[body] = s_idx[order]
        val[body] = k_val[order]
        idx[last] = n_s + np.arange(n_c)
        val[last] = -1.0
        self.n_c, self.n_s = n_c, n_s
        self.mult_c = st.mult[cand]
        self.model = dict(
            n_col=n_s + n_c, cost=np.concatenate([-np.ones(n_s), np.ones(n_c)]),
            col_lower=np.zeros(n_s + n_c), col_upper=np.concatenate([self.Q, np.full(n_c, INF)]),
            row_lower=np.full(n_c, -INF), row_upper=self.delta_hat * self.mult_c,
            a_start=row_ptr, a_index=idx, a_value=val,
        )
        self.kept_m_idx = kept  # one monomial per tuple: monomial index = tuple index
        self.mono_has_c = self.t_kept.copy()
        self.highs = None
        self.has_lambda = False

    def _primal(self, obj: float, x: np.ndarray, row_dual: np.ndarray):
        g = np.zeros(self.st.n)
        g[self.cand] = np.clip(-row_dual[: self.n_c], 0.0, 1.0) + 0.0  # no -0.0
        pi_s = x[: self.n_s]
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(self.Q > 0, pi_s / self.Q, 0.0)
        dual_m = share[self.group_of_kept] * self.st.q[self.kept_m_idx]
        return self.const - obj, g, dual_m

    def solve(self, *, time_limit=None, stats=None):
        """``(value, g, dual_m)`` of eq. 20: the LP value, the optimal ``g`` over all columns of
        ``st``, and the spread duals of the kept monomial rows."""
        m = self.model
        obj, x, dual, h = solve_lp(
            m["n_col"], m["cost"], m["col_lower"], m["col_upper"], m["row_lower"], m["row_upper"],
            m["a_start"], m["a_index"], m["a_value"], solver="ipm", time_limit=time_limit,
            stats=stats, what="eq. 20 LP (dual)", keep=True,
        )
        self.highs = h
        return self._primal(obj, x, dual)

    def anchored(self, j: float, *, time_limit=None, stats=None):
        """``(H(j) + Δ̂ j, g, dual_m, λ)`` with the row ``Σ mult·g = j`` added to the primal."""
        h = self.highs
        if not self.has_lambda:
            h.addCol(-float(j), -INF, INF, self.n_c, np.arange(self.n_c, dtype=np.int32),
                     self.mult_c.astype(np.float64))
            self.has_lambda = True
        else:
            h.changeColCost(h.getNumCol() - 1, -float(j))
        # cold IPM with crossover: measured faster and sturdier than simplex from the eq.-20
        # basis on ca-HepPh (node), whose dual has a million bounded columns
        obj, x, dual = resolve_lp(h, solver="ipm", time_limit=time_limit, stats=stats,
                                  what="H LP (dual)")
        value, g, dual_m = self._primal(obj, x, dual)
        return value, g, dual_m, float(x[-1])
