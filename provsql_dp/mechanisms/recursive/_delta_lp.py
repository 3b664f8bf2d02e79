"""The Δ-search LPs of the recursive mechanism: ``J(W)`` (eq. 11 through eq. 19), as a mixin of
:class:`provsql_dp.mechanisms.recursive._lp.Solver`.

Private: computes functions of the private data; reached only through
:mod:`provsql_dp.mechanisms.recursive._lp` (whose docstring has the formulation).

Three ways to evaluate one probe ``J(τ_j/2) ≤ j`` of the Δ search, all deciding it exactly:

* :meth:`DeltaLPs.j_cuts`: cutting planes in ``g`` alone (:mod:`._j_cuts`), one warm model for
  the whole search — the default of :class:`~provsql_dp.mechanisms.recursive.efficient._Run`;
* :meth:`DeltaLPs.j_value`: the plain LP with one ``y`` per tuple, kept and re-solved warm;
* :meth:`DeltaLPs.j_bounds`: certified bounds from a first-order (PDLP) solve of the plain LP.

Examples
--------
>>> from provsql_dp.provenance.krelation import KRelation
>>> from provsql_dp.mechanisms.recursive._lp import Solver, Structure
>>> kr = KRelation.from_annotations([(1,), (2,)], [[{("p", 1), ("p", 2)}], [{("p", 2)}]])
>>> s = Solver(Structure(kr))
>>> round(s.j_value(1.0)[0], 6), round(s.j_cuts(1.0)[0], 6)
(0.5, 0.5)
"""

from __future__ import annotations

import time

import numpy as np

from ._certify import lagrangian_lower, primal_upper
from ._framework import _CMP_TOL
from ..lp._highs import INF as _INF
from ..lp._highs import resolve_lp, solve_lp
from ._j_cuts import JCuts
from ._j_diagonal import diagonal_bounds

__all__ = ["DeltaLPs", "monomial_rows"]


def monomial_rows(st, m_kept: np.ndarray, cand: np.ndarray | None, col_of_part, y_col):
    """Row-wise entries of ``y_t + Σ_{p∈m∩C} k(m,p) g_p ≥ 1`` for the kept monomials."""
    kept_m_idx = np.flatnonzero(m_kept)
    e_sel = m_kept[st.ent_mono]
    if cand is not None:
        e_sel &= cand[st.ent_part]
    per_row = np.bincount(st.ent_mono[e_sel], minlength=st.n_mono)[kept_m_idx] + 1
    start = np.concatenate([[0], np.cumsum(per_row)])
    nnz = int(start[-1])
    idx = np.empty(nnz, dtype=np.int64)
    val = np.ones(nnz)
    idx[start[:-1]] = y_col[st.mono_tuple[kept_m_idx]]
    body = np.ones(nnz, dtype=bool)
    body[start[:-1]] = False
    idx[body] = col_of_part[st.ent_part[e_sel]]  # entries are ordered by monomial
    val[body] = st.ent_coef[e_sel]
    return kept_m_idx, start, idx, val


def _holds(value: float, bound: float) -> bool:
    """``value ≤ bound`` with the Δ search's tolerance (``efficient._Run.delta``'s ``holds``)."""
    return value <= bound * (1 + _CMP_TOL) + _CMP_TOL


class DeltaLPs:
    """The J evaluations of :class:`~provsql_dp.mechanisms.recursive._lp.Solver` (needs ``lp``, ``stats``,
    ``time_limit``, ``j_solver`` and ``_jmodel``)."""

    def j_cuts(self, cap: float, first_order: bool = False, probe: int | None = None):
        """``(value, slope, lower, upper)`` of ``J(cap)`` by cutting planes (:class:`._j_cuts.JCuts`,
        one pool for every probe of this solver), or ``None`` when they did not converge. With
        ``first_order``: certified bounds only (``value`` is nan) from PDLP on the cold pool, or
        ``None`` when the pool is not cold (:meth:`._j_cuts.JCuts.first_order`). With ``probe``
        (the Δ search's ``j``: is ``J(cap) ≤ j``?), the diagonal certificates of
        :mod:`._j_diagonal` are tried first and returned when they settle it (``U ≤ j`` or
        ``L > j``, with the search's comparison tolerance): no cut matrix, no LP."""
        if probe is not None and first_order:
            def settles(lo: float, up: float) -> bool:
                return _holds(up, probe) or not _holds(lo, probe)

            slope, lower, upper = diagonal_bounds(
                self.lp.load_view(), cap, decided=lambda lo: settles(lo, float("inf")))
            if settles(lower, upper):
                return float("nan"), slope, lower, upper
        if self._jcuts is None:
            self._jcuts = JCuts(self.lp.load_view(), stats=self.stats, time_limit=self.time_limit)
        return self._jcuts.first_order(cap) if first_order else self._jcuts.solve(cap)

    def j_value(self, cap: float, floor: float | None = None) -> tuple[float, float]:
        """``J(W) = min { Σ g : load_p(g) ≤ W for every p }`` and a subgradient ``dJ/dW``.

        ``G_{|P|−j} ≤ 2W ⟺ J(W) ≤ j`` (for ``0 ≤ j ≤ |P_R|``; loads only fall as ``g`` grows), so
        the Δ search of eq. 11 needs J, never G itself. The model is exact and small without
        generation: a participant with ``deg_q(p) ≤ W`` can never exceed ``W``, so rows exist only
        for heavier participants and variables only for the tuples that touch them. It has no
        dense column (G's ``w``), which makes it an order of magnitude faster to solve.
        ``J`` is convex and nonincreasing in ``W``: ``J(W') ≥ J(W) + s (W' − W)``.

        **One model for the whole search.** The model built for a cap ``W₀`` is exact for every
        ``W ≥ W₀`` once its load rows' right-hand sides are set to ``W`` (the rows it has beyond
        those with ``deg_q > W`` can never bind: ``load_p ≤ deg_q(p) ≤ W``). So it is built once,
        for ``min(cap, floor)`` (``floor``: the lowest cap the caller expects to probe), solved
        by IPM with crossover, and every later probe with ``W ≥ W₀`` only changes right-hand
        sides and re-solves by dual simplex from the previous optimal basis (the basis stays dual
        feasible: the costs are unchanged). A probe below ``W₀`` rebuilds. Measured on ca-GrQc
        (node): warm re-solves take 0.1–0.6 s where a cold IPM takes 1–5 s (IPM slows down as
        the cap falls). Crossover on the first solve costs ~15 % when it turns out to be the only
        probe (typical for edge privacy), but skipping it and running IPM+crossover on the
        second probe instead was measured slower overall (3.6 s instead of 0.6 s on ca-GrQc). The returned slope is
        a subgradient of the model's value function, which equals J on ``[W₀, ∞)`` and is at
        most J below (fewer rows), so the tangent cut ``J(W') ≥ J(W) + s (W' − W)`` stays valid.
        """
        st = self.lp.load_view()
        if not (st.deg > cap).any():
            return 0.0, 0.0
        jm = self._jmodel
        if jm is not None and cap >= jm["cap"]:
            h, n_load = jm["highs"], jm["n_load"]
            idx = np.arange(jm["n_rows_m"], jm["n_rows_m"] + n_load, dtype=np.int32)
            h.changeRowsBounds(n_load, idx, np.full(n_load, -_INF), np.full(n_load, float(cap)))
            obj, _, dual = resolve_lp(
                h, solver="simplex", time_limit=self.time_limit, stats=self.stats, what="Δ LP"
            )
            return obj, float(np.minimum(dual[jm["n_rows_m"]:], 0.0).sum())
        build = float(cap) if floor is None else min(float(cap), float(floor))
        m = self._j_arrays(build, cap)
        obj, _, dual, h = solve_lp(
            m["n_col"], m["cost"], np.zeros(m["n_col"]), np.ones(m["n_col"]), m["row_lower"],
            m["row_upper"], m["start"], m["idx"], m["val"],
            solver=self.j_solver, time_limit=self.time_limit, stats=self.stats,
            what="Δ LP", crossover=True, keep=True,
        )
        n_rows_m = m["n_rows_m"]
        self._jmodel = {"cap": build, "highs": h, "n_rows_m": n_rows_m, "n_load": m["n_rows_w"]}
        slope = float(np.minimum(dual[n_rows_m:], 0.0).sum())
        return obj, slope

    def _j_arrays(self, build: float, cap: float) -> dict:
        """The row-wise arrays of the J model with load rows for ``deg_q > build``, rhs ``cap``."""
        st = self.lp.load_view()
        t0 = time.perf_counter()
        heavy = st.deg > build
        var_in = heavy[st.var_part]
        t_kept = np.bincount(st.var_tuple[var_in], minlength=st.n_tuples) > 0
        m_kept = t_kept[st.mono_tuple]
        used = np.zeros(st.n, dtype=bool)
        used[st.ent_part[m_kept[st.ent_mono]]] = True
        n_g = int(used.sum())
        col_of_part = np.cumsum(used) - 1
        y_col = n_g + np.cumsum(t_kept) - 1
        kept_m_idx, start_m, idx_m, val_m = monomial_rows(st, m_kept, None, col_of_part, y_col)
        nnz_m = len(idx_m)
        sel = np.flatnonzero(var_in)
        order = sel[np.argsort(st.var_part[sel], kind="stable")]
        heavy_parts = np.flatnonzero(heavy)
        cnt = np.bincount(st.var_part[order], minlength=st.n)[heavy_parts]
        start_w = np.concatenate([[0], np.cumsum(cnt)])
        n_rows_m = len(kept_m_idx)
        n_rows_w = len(heavy_parts)
        start = np.concatenate([start_m[:-1], nnz_m + start_w[:-1]])
        idx = np.concatenate([idx_m, y_col[st.var_tuple[order]]])
        val = np.concatenate([val_m, st.q[st.var_tuple[order]] * st.var_coef[order]])
        row_lower = np.concatenate([np.ones(n_rows_m), np.full(n_rows_w, -_INF)])
        row_upper = np.concatenate([np.full(n_rows_m, _INF), np.full(n_rows_w, float(cap))])
        n_col = n_g + int(t_kept.sum())
        cost = np.zeros(n_col)
        cost[:n_g] = st.mult[used]
        self.stats.build_seconds += time.perf_counter() - t0
        return {
            "n_col": n_col, "cost": cost, "row_lower": row_lower, "row_upper": row_upper,
            "start": start, "idx": idx, "val": val, "n_rows_m": n_rows_m, "n_rows_w": n_rows_w,
            "used": used, "n_g": n_g,
        }

    def j_bounds(self, cap: float, tol: float = 1e-7) -> tuple[float, float, float] | None:
        """Certified ``(L, U, s)`` with ``L ≤ J(cap) ≤ U`` and the cut ``J(W') ≥ L + s (W' − cap)``
        for every ``W'``, from one first-order (PDLP) solve; ``None`` if it produced no iterate.

        The model is built for ``cap`` alone (rows for ``deg_q > cap`` only) and solved to the
        relative tolerance ``tol`` with its load rows tightened by a relative ``tol``, so that the approximate primal is feasible for
        ``cap`` after clipping; both bounds are then certified exactly by :mod:`._certify`
        (recomputed loads for U, the Lagrangian dual function of the untightened model for L).
        PDLP runs without HiGHS's presolve: on Q21 at SF 1 (the fallback when the cut rounds
        ran out of time) presolve took the process to 6.4 GB; the bounds are certified from
        whatever iterate PDLP returns either way.
        Where the rows for ``deg_q ≤ W'`` are missing the model is a relaxation, so the cut stays
        below J for ``W' < cap`` as well.
        """
        st = self.lp.load_view()
        if not (st.deg > cap).any():
            return 0.0, 0.0, 0.0
        m = self._j_arrays(float(cap), float(cap))
        n_rows_m, n_g = m["n_rows_m"], m["n_g"]
        tight = m["row_upper"].copy()
        tight[n_rows_m:] = float(cap) * (1 - tol)
        out = solve_lp(
            m["n_col"], m["cost"], np.zeros(m["n_col"]), np.ones(m["n_col"]), m["row_lower"],
            tight, m["start"], m["idx"], m["val"], solver="pdlp", time_limit=self.time_limit,
            stats=self.stats, what="Δ LP", approximate=True, tolerance=tol, presolve=False,
        )
        if out is None:
            return None
        t0 = time.perf_counter()
        _, x, dual = out
        g = np.zeros(st.n)
        g[m["used"]] = x[:n_g]
        upper, _ = primal_upper(st, g, float(cap))
        lower, slope = lagrangian_lower(
            m["cost"], m["row_lower"], m["row_upper"], m["start"], m["idx"], m["val"], dual,
            load_rows=np.arange(n_rows_m, n_rows_m + m["n_rows_w"]),
        )
        self.stats.build_seconds += time.perf_counter() - t0
        return max(lower, 0.0), upper, slope
