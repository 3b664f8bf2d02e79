"""The linear programs of the efficient recursive mechanism, built from arrays and solved by HiGHS.

This module is private: it computes functions of the private data (H, G, X) and must only be
reached through :mod:`provsql_dp.mechanisms.recursive.efficient`.

Formulation
-----------
Write ``f = 1 - g``: ``g_p`` is how much of participant ``p`` has *withdrawn*. For a DNF annotation
the relaxation of Chen & Zhou §5.2 is

    φ_t(f) = max_m max(0, Σ_{p∈m} f_p − |m| + 1) = max_m max(0, 1 − Σ_{p∈m} g_p),

so with ``j = |P_R| − i`` (the mass withdrawn from the participants that occur):

* ``H_i = min Σ_t q_t y_t`` s.t. ``y_t + Σ_{p∈m} g_p ≥ 1`` for every monomial ``m`` of ``t``,
  ``Σ g = j``, ``0 ≤ g ≤ 1``, ``y ≥ 0``   (eq. 16);
* ``G_i = 2 min w`` s.t. the same monomial rows, ``w − Σ_{t∋p} q_t y_{t,p} ≥ 0`` for every ``p``,
  ``Σ g = j``   (eq. 19; in DNF the φ-sensitivity ``S_{k,p}`` is 1 when ``p`` occurs in ``k``;
  ``y_{t,p}`` relaxes the monomials of ``t`` containing ``p``, see :meth:`Structure.load_view`);
* the real-interval LP of eq. 20: ``min Σ_t q_t y_t + Δ̂ Σ g`` without the ``Σ g`` row.

Structure exploited
-------------------
The mechanism only needs these LPs near ``i = |P|`` (small ``j``): ``Δ`` looks at the last
``O(ln G_|P| / β)`` entries of G, and ``X`` is attained near the top. There the optimal ``g`` is
supported on a few high-impact participants, so every LP is solved by **row and column
generation** on a restricted model, which is *certified optimal for the full LP* by LP duality:

* columns ``g_p`` only for a candidate set ``C``; a tuple with a monomial that avoids ``C`` has
  ``φ_t = 1`` and becomes a constant. The restricted dual extends to a feasible dual of the full LP
  (a constant tuple's dual weight ``q_t`` is put on one monomial avoiding ``C``) exactly when every
  ``p ∉ C`` has a nonnegative reduced cost; otherwise the violators join ``C`` and we re-solve;
* for G, rows ``w ≥ load(p)`` only for a set ``R``; the restricted primal solution is feasible for
  the full LP exactly when every ``p ∉ R`` has ``load(p) ≤ w``; otherwise the violators join ``R``.

When the restricted model stops being small the full model is solved directly. A participant's
reduced cost never exceeds its weighted degree ``deg_q(p) = Σ_{t∋p} q_t``, so for eq. 20 the set
``C = {p : deg_q(p) > Δ̂}`` is exact from the start.

Symmetry and warm starts
------------------------
* Every LP is built on the **twin-class quotient** of the structure (:func:`reduced`): twins
  (participants exchanged by an exactly verified automorphism of the K-relation) get one column
  with multiplicity ``|C|``, tuples with the same class-labelled annotation one row with the summed
  weight, and each class one load row. By LP symmetry and convexity this changes no optimal value
  (proof in :mod:`provsql_dp.mechanisms.recursive._symmetry`). On ca-GrQc (node) it cuts 48,260 triangles to
  13,292 rows and 3,855 participants to 2,623 columns.
* The Δ search keeps **one** J model and re-solves it for each probe by dual simplex from the last
  basis, changing only right-hand sides (:meth:`Solver.j_value`).
* The integer H next to the eq.-20 argmin is the kept eq.-20 model plus one row ``Σ g = j``,
  re-solved by dual simplex (:meth:`Solver.h_anchored`).

Cold solves use IPM (with crossover where a basis or exact duals are needed): measured faster than
simplex on the triangle models, whose ``g`` columns are dense (a hub is in hundreds of triangles).

Cutting planes first
--------------------
By default (:data:`CUTS`) the Δ probes (:mod:`._j_cuts`), eq. 20 and the integer H next to its
argmin (:mod:`._x_cuts`) are solved in the space of ``g`` alone: ``load_p`` and ``Σ q φ`` are
convex piecewise linear in ``g``, so Kelley cuts (one active monomial per tuple, aggregated per
participant or per group of tuples) give a relaxation of a few thousand dense rows over the
participants instead of one ``y`` per tuple; rounds stop when the exactly recomputed loads or
objective of the minimiser meet the relaxation (LP tolerance), one pool serves every probe of
the Δ search (cuts hold for every ``W``). When the rounds or rows run out, the plain LPs below
are used. ca-HepPh node: the Δ search 20 s instead of ~250 s, eq. 20 22 s instead of 70–300 s.
X needs only the smaller of ``H(j) + Δ̂ j`` at the floor and ceiling of the argmin
(:meth:`Solver.h_pair`): a ``j`` whose certified lower bound already exceeds the other's exact
value is ruled out without converging. Before the Kelley rounds, :mod:`._x_barrier` (Newton on a
smoothed problem, then trust-region LPs over the tuples near their kink, certified by weak
duality) answers each ``j`` or seeds the rounds (:data:`BARRIER`); eq. 20 itself is first tried
by :mod:`._eq20_balance` (a smoothed Newton path and a balanced dual, :data:`BALANCE`).

First-order Δ decisions
-----------------------
On large models (more than ``_FIRST_ORDER_MIN`` load incidences after the quotient) each Δ probe
is first decided by :meth:`Solver.j_bounds`: one PDLP solve at a loose tolerance, turned into
certified bounds ``L ≤ J ≤ U`` by :mod:`._certify` (a repaired feasible primal for U, the
Lagrangian dual function of arbitrary multipliers for L). The decision ``J ≤ j`` is then the
exact one whenever ``j`` is outside ``[L, U]``; otherwise tighter tolerances and finally the exact
solve are used, so Δ is unchanged. **An approximation is never used as Δ itself** — a bound that
merely errs on the large side would not be a function of bounded log-sensitivity, so the release
of Δ̂ would lose its ε₁-DP guarantee. Measured (one run, loaded machine): ca-GrQc edge, the one Δ
LP 31 s by IPM → 1.0 s (PDLP at 1e-2, J ∈ [26.7, 31.3] against j = 44); ca-HepPh edge (3.36 M
triangles) two probes of 130 k and 448 k rows in 3.6 s and 13.8 s where IPM had not finished in
8 minutes.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..lp._highs import INF as _INF
from . import _eq20_dual
from ._delta_lp import DeltaLPs, monomial_rows
from ..lp._highs import LPStats, resolve_lp, solve_lp
from ._structure import Structure, reduced
from . import _eq20_balance, _x_barrier
from ._x_cuts import _GAP, Eq20Cuts

__all__ = ["Solver", "Structure", "LPStats", "solve_lp"]

#: default of Solver(cuts=...): cutting planes first (``_j_cuts``, ``_x_cuts``); False: plain LPs
CUTS = True
#: the integer H next to the eq.-20 argmin by Newton + trust region first (``_x_barrier``)
BARRIER = True
#: eq. 20 by a smoothed Newton path and a balanced dual first (``_eq20_balance``)
BALANCE = True

#: load incidences above which the Δ search starts each probe with a first-order solve
_FIRST_ORDER_MIN = 100_000

#: above this fraction of occurring participants in the restricted model, solve the full model
_FULL_FRACTION = 0.5


def _initial_size(j: float) -> int:
    return int(2 * math.ceil(j) + 16)


class _RuleOut:
    """``stop`` of :meth:`Eq20Cuts.anchored_bounds` in :meth:`Solver.h_pair`: end the rounds once
    the lower bound of ``H(j)`` reaches ``target`` (``j`` is ruled out), or once the last
    :data:`_RULE_OUT_WINDOW` rounds' progress, kept up for :data:`_RULE_OUT_PATIENCE` times
    as many rounds, would not get there (time only: the caller then solves ``H(j)`` exactly)."""

    def __init__(self, target: float):
        self.target, self.seen = target, []

    def __call__(self, lower: float) -> bool:
        need = self.target - _GAP * max(1.0, abs(self.target)) - lower
        self.seen.append(lower)
        if need <= 0:
            return True
        if len(self.seen) <= _RULE_OUT_WINDOW:
            return False
        rate = (lower - self.seen[-1 - _RULE_OUT_WINDOW]) / _RULE_OUT_WINDOW
        return need > _RULE_OUT_PATIENCE * rate


#: rounds over which h_pair measures the progress of a lower bound, and how many times as many
#: rounds it waits for it (ca-HepPh node: 40–200 per round near the end, 500–800 short)
_RULE_OUT_WINDOW, _RULE_OUT_PATIENCE = 4, 12


class Solver(DeltaLPs):
    """Solves H, G and the eq.-20 LP for one :class:`Structure`, reusing candidate sets.

    ``st`` is the structure over the occurring participants (closed forms, withdrawn mass); the
    LPs are built on :func:`reduced` ``(st)`` (``symmetry=False`` builds them on ``st`` itself).
    """

    def __init__(
        self,
        st: Structure,
        *,
        solver: str = "simplex",
        time_limit: float | None = None,
        generation: bool = True,
        j_solver: str = "ipm",
        symmetry: bool = True,
        first_order: bool | None = None,
        cuts: bool | None = None,
    ):
        self.st = st
        self.stats = LPStats(solver=solver)
        t0 = time.perf_counter()
        self.lp = reduced(st, symmetry)
        self.stats.build_seconds += time.perf_counter() - t0
        if first_order is None:  # by size: warm-started simplex wins on small models
            first_order = len(self.lp.load_view().var_part) > _FIRST_ORDER_MIN
        #: decide Δ probes by certified first-order bounds first (see j_bounds)
        self.first_order = bool(first_order)
        self.solver = solver
        self.j_solver = j_solver
        self.time_limit = time_limit
        self.generation = generation
        self._cand = np.zeros(self.lp.n, dtype=bool)  # columns that were useful before
        self._rows = np.zeros(self.lp.n, dtype=bool)
        self._jmodel = None  # the kept Δ-search model (see j_value)
        self._jcuts = None  # the cutting-plane Δ-search model (see j_cuts)
        #: solve the Δ probes, eq. 20 and the H next to its argmin by cutting planes first
        self.cuts = CUTS if cuts is None else bool(cuts)
        self._xcuts = None  # the eq.-20 cut model (see x_real, h_anchored)
        self.barrier = BARRIER  # h_pair tries _x_barrier before the Kelley rounds
        self.balance = BALANCE  # x_real tries _eq20_balance before the Kelley rounds
        self._xmodel = None  # the kept eq.-20 model (see h_anchored)

    # ------------------------------------------------------------------ H and eq. 20
    def h(self, j: float) -> float:
        """H at withdrawn mass ``j`` over the occurring participants (eq. 16)."""
        closed = self.st.h_closed(j)
        if closed is not None:
            return closed
        value, _ = self._h_like(j=j, delta_hat=None)
        return value

    def x_real(self, delta_hat: float) -> tuple[float, float]:
        """Solve eq. 20: ``min_j H(j) + j Δ̂`` over real ``j``; return (value, argmin j)."""
        st = self.st
        if st.n == 0:
            return st.const_true, 0.0
        if self.cuts and self.generation:  # cutting planes (exact; plain LP if they run out)
            lp = self.lp
            cand = lp.deg > delta_hat  # exact, as in _h_like
            if not cand.any():
                return lp.const_true + lp.total, 0.0
            model = Eq20Cuts(lp, cand, delta_hat, stats=self.stats, time_limit=self.time_limit)
            out = _eq20_balance.certify(model, _x_barrier.AnchoredBarrier.of(model)) if (
                self.balance and _eq20_balance.applicable(model)) else None
            out = model.solve() if out is None else out  # the rounds when not certified
            if out is not None:
                self._xcuts = model
                return out[0], float((lp.mult * out[1]).sum())
        value, g = self._h_like(j=None, delta_hat=delta_hat)
        return value, float((self.lp.mult * g).sum())

    def _h_like(self, j: float | None, delta_hat: float | None):
        lp = self.lp
        if delta_hat is not None:
            cand = lp.deg > delta_hat  # exact: other columns have nonnegative reduced cost
            if not cand.any():
                return lp.const_true + lp.total, np.zeros(lp.n)
        else:
            cand = lp.top(_initial_size(j)) | self._cand
        if not self.generation:
            cand = np.ones(lp.n, dtype=bool)
        while True:
            if cand.sum() > _FULL_FRACTION * lp.n:
                cand = np.ones(lp.n, dtype=bool)
            value, g, add = self._solve_h(cand, j, delta_hat)
            if add is None or not add.any():
                break
            self.stats.generation_rounds += 1
            cand = cand | add
        self._cand |= g > 0
        return value, g

    def _solve_h(self, cand: np.ndarray, j: float | None, delta_hat: float | None):
        st = self.lp
        if j is None and delta_hat is not None and _eq20_dual.applicable(st):
            t0 = time.perf_counter()
            model = _eq20_dual.DualEq20(st, cand, delta_hat)
            self.stats.build_seconds += time.perf_counter() - t0
            if len(model.kept_m_idx) >= _eq20_dual.DUAL_MIN:
                return self._solve_h_dual(model, cand)
        t0 = time.perf_counter()
        ent_c = cand[st.ent_part]
        mono_has_c = np.bincount(st.ent_mono, weights=ent_c, minlength=st.n_mono) > 0
        free_count = np.bincount(st.mono_tuple, weights=~mono_has_c, minlength=st.n_tuples)
        t_kept = free_count == 0
        m_kept = t_kept[st.mono_tuple]
        n_c = int(cand.sum())
        col_of_part = np.cumsum(cand) - 1
        y_col = n_c + np.cumsum(t_kept) - 1
        kept_m_idx, start, idx, val = monomial_rows(st, m_kept, cand, col_of_part, y_col)
        n_rows_m = len(kept_m_idx)
        nnz_m = len(idx)
        n_y = int(t_kept.sum())
        n_col = n_c + n_y
        mult_c = st.mult[cand]
        cost = np.zeros(n_col)
        cost[n_c:] = st.q[t_kept]
        if delta_hat is not None:
            cost[:n_c] = delta_hat * mult_c
        col_lower = np.zeros(n_col)
        col_upper = np.full(n_col, _INF)
        col_upper[:n_c] = 1.0
        row_lower = np.ones(n_rows_m)
        row_upper = np.full(n_rows_m, _INF)
        if j is not None:
            start = np.concatenate([start, [nnz_m + n_c]])
            idx = np.concatenate([idx, np.arange(n_c)])
            val = np.concatenate([val, mult_c])
            row_lower = np.append(row_lower, j)
            row_upper = np.append(row_upper, j)
        offset = st.const_true + float(st.q[~t_kept].sum())
        self.stats.build_seconds += time.perf_counter() - t0
        keep = j is None and delta_hat is not None
        out = solve_lp(
            n_col, cost, col_lower, col_upper, row_lower, row_upper, start, idx, val,
            offset=offset, solver=self.solver, time_limit=self.time_limit, stats=self.stats,
            what="H LP" if j is not None else "eq. 20 LP", keep=keep,
        )
        obj, x, dual = out[:3]
        if keep:  # kept for the integer H evaluations next to the argmin (see h_anchored)
            self._xmodel = {
                "highs": out[3], "cand": cand.copy(), "delta_hat": float(delta_hat),
                "mono_has_c": mono_has_c, "kept_m_idx": kept_m_idx, "has_row": False,
            }
        g = np.zeros(st.n)
        g[cand] = x[:n_c]
        if n_c == st.n:
            return obj, g, None
        lam = float(dual[n_rows_m]) if j is not None else 0.0
        add = self._h_violators(cand, mono_has_c, kept_m_idx, dual[:n_rows_m], lam, delta_hat)
        return obj, g, add

    def _solve_h_dual(self, model, cand):
        """eq. 20 through its merged dual (:mod:`._eq20_dual`), kept for :meth:`h_anchored`."""
        value, g, dual_m = model.solve(time_limit=self.time_limit, stats=self.stats)
        self._xmodel = {"dual": model, "cand": cand.copy(), "delta_hat": model.delta_hat}
        if int(cand.sum()) == self.lp.n:
            return value, g, None
        add = self._h_violators(cand, model.mono_has_c, model.kept_m_idx, dual_m, 0.0, model.delta_hat)
        return value, g, add

    def _h_anchored_dual(self, xm, j: int, delta_hat: float) -> float:
        model, cand = xm["dual"], xm["cand"]
        if j > float(self.lp.mult[cand].sum()) - 1e-9:  # the restricted row cannot hold
            return self.h(j)
        value, _, dual_m, lam = model.anchored(j, time_limit=self.time_limit, stats=self.stats)
        if int(cand.sum()) < self.lp.n:
            add = self._h_violators(cand, model.mono_has_c, model.kept_m_idx, dual_m, lam, delta_hat)
            if add.any():
                return self.h(j)
        return value - delta_hat * j

    def h_anchored(self, j: int, delta_hat: float) -> float:
        """H at integer withdrawn mass ``j`` next to the eq.-20 argmin, from the kept eq.-20 model.

        With the row ``Σ g = j`` added, the eq.-20 objective is ``Σ q y + Δ̂ Σ g = H(j) + Δ̂ j``
        (the constant ``Δ̂ j`` does not move the minimiser), so the kept model plus one row is
        the H LP at ``j`` over the same columns; it is re-solved by dual simplex from the eq.-20
        basis (adding a row keeps the basis dual feasible), and the next ``j`` only changes the
        row's bounds. The restricted columns are certified by the same reduced-cost test as
        :meth:`h`; if it fails the general path (:meth:`h`, column generation) is used.
        """
        closed = self.st.h_closed(j)
        if closed is not None:
            return closed
        xc = self._xcuts
        if xc is not None and xc.delta_hat == float(delta_hat):
            value = xc.anchored(j)
            if value is not None:
                return value
            return self._h_anchored_plain(j, delta_hat, xc.failure)
        return self._h_anchored_plain(j, delta_hat)

    def h_pair(self, js, delta_hat: float) -> dict:
        """``{j: H(j)}`` at the integers ``js`` next to the eq.-20 argmin, or ``None`` for a ``j``
        proved not to attain ``min_j H(j) + Δ̂ j``; the minimum over ``js`` is exact either way.

        With the eq.-20 cut pool (:mod:`._x_cuts`) each ``j`` gets Kelley rounds; a ``j`` whose
        certified lower bound ``L_j`` (over all participants) has ``L_j + Δ̂ j`` at least another
        ``j``'s exact ``H + Δ̂ j`` (to ``1e-9`` relative) cannot lower the minimum, so its rounds
        end there. ``js`` are taken in order (each with up to ``ANCHORED_ROUNDS``), then once
        more to rule out a ``j`` against an exact value found after it; a ``j`` neither exact nor
        ruled out goes to :meth:`h_anchored`'s plain paths. ca-HepPh node, Δ̂ = 19,930: j = 79
        does not converge in 30 rounds, but its cuts let j = 80 converge in 19 more (alone it
        does not in 20), and j = 79's lower bound then rules it out: 99 s CPU where the plain
        path took ~210 s.
        """
        xc = self._xcuts
        if not (xc is not None and xc.delta_hat == float(delta_hat)):
            return {j: self.h_anchored(j, delta_hat) for j in js}
        dh, res = float(delta_hat), {}
        closed = {j: self.st.h_closed(j) for j in js}
        for j in js:  # [lower, upper, exact, failure]
            c = closed[j]
            res[j] = [c, c, True, None] if c is not None else [-_INF, _INF, False, None]

        def best(j):  # the smallest exact H + Δ̂ j among the others, or None
            vals = [r[1] + k * dh for k, r in res.items() if k != j and r[2]]
            return min(vals) if vals else None

        def out(j):
            b = best(j)
            return b is not None and res[j][0] + j * dh >= b - _GAP * max(1.0, abs(b))

        ruling = set()  # j whose rounds had a target: not tried again
        if self.barrier and _x_barrier.applicable(xc):  # Newton + trust region (_x_barrier)
            ruling = _x_barrier.pair_pass(self, xc, js, dh, res, best, out)
        for second in (False, True):  # the second pass only rules a j out against a later exact one
            for j in js:
                b = best(j)
                if res[j][2] or out(j) or j in ruling or (second and b is None):
                    continue
                if b is not None:
                    ruling.add(j)
                lo, up, ex = xc.anchored_bounds(j, stop=None if b is None else _RuleOut(b - j * dh))
                r = res[j]
                r[:] = [max(r[0], lo), min(r[1], up), ex, xc.failure]
        h = {j: r[1] for j, r in res.items() if r[2]}
        for j in js:  # neither exact nor ruled out: the plain paths (after the columns' ones)
            if j not in h and not out(j):
                h[j] = self._h_anchored_plain(j, dh, res[j][3] or "rounds")
        return {j: h.get(j) for j in js}

    def _h_anchored_plain(self, j: int, delta_hat: float, failure: str | None = None) -> float:
        """:meth:`h_anchored` without the cut pool: ``failure`` is why the pool did not answer
        ("columns": the general column generation; "rounds": the plain eq.-20 model)."""
        if failure == "columns":  # columns outside C help (or may): as _h_violators
            return self.h(j)
        xm = self._xmodel
        if failure == "rounds":  # not certified: the plain eq.-20 model, kept for the anchored H
            self._xcuts = None
            if xm is None or xm["delta_hat"] != float(delta_hat):  # once for both j of a pair
                self._h_like(j=None, delta_hat=delta_hat)
                xm = self._xmodel
        if xm is None or xm["delta_hat"] != float(delta_hat) or not self.generation:
            return self.h(j)
        if "dual" in xm:
            return self._h_anchored_dual(xm, j, delta_hat)
        h, cand = xm["highs"], xm["cand"]
        n_c = int(cand.sum())
        if not xm["has_row"]:
            h.addRow(float(j), float(j), n_c, np.arange(n_c, dtype=np.int32), self.lp.mult[cand])
            xm["has_row"] = True
        else:
            r = h.getNumRow() - 1
            h.changeRowsBounds(1, np.array([r], dtype=np.int32), np.array([float(j)]), np.array([float(j)]))
        obj, _, dual = resolve_lp(
            h, solver="simplex", time_limit=self.time_limit, stats=self.stats, what="H LP"
        )
        if n_c < self.lp.n:
            n_rows_m = len(xm["kept_m_idx"])
            add = self._h_violators(
                cand, xm["mono_has_c"], xm["kept_m_idx"], dual[:n_rows_m], float(dual[-1]), delta_hat
            )
            if add.any():
                return self.h(j)
        return obj - delta_hat * j

    def _h_violators(self, cand, mono_has_c, kept_m_idx, dual_m, lam, delta_hat):
        """Missing columns ``g_p`` with a negative reduced cost in the extended restricted dual."""
        st = self.lp
        # reduced cost of every missing column g_p, with the restricted dual extended:
        # kept monomials carry their duals, each constant tuple puts q_t on one monomial
        # that avoids C (charging every participant of that monomial)
        t0 = time.perf_counter()
        pi = np.zeros(st.n_mono)
        pi[kept_m_idx] = dual_m
        charge = np.bincount(st.ent_part, weights=pi[st.ent_mono] * st.ent_coef, minlength=st.n)
        free_m = np.flatnonzero(~mono_has_c)
        if len(free_m):
            _, first = np.unique(st.mono_tuple[free_m], return_index=True)
            assigned = free_m[first]
            w_m = np.zeros(st.n_mono)
            w_m[assigned] = st.q[st.mono_tuple[assigned]]
            charge += np.bincount(st.ent_part, weights=w_m[st.ent_mono] * st.ent_coef, minlength=st.n)
        c_g = delta_hat if delta_hat is not None else 0.0
        reduced_cost = (c_g - lam) * st.mult - charge
        scale = max(1.0, abs(lam), abs(c_g)) * st.mult
        add = (~cand) & (reduced_cost < -1e-7 * scale)
        self.stats.build_seconds += time.perf_counter() - t0
        return add

    # ------------------------------------------------------------------ G
    def g(self, j: float) -> float:
        """G at withdrawn mass ``j`` over the occurring participants (eq. 19)."""
        closed = self.st.g_closed(j)
        if closed is not None:
            return closed
        st = self.lp.load_view()
        k = _initial_size(j)
        cand = st.top(k) | self._cand
        rows = st.top(k) | self._rows
        if not self.generation:
            cand = np.ones(st.n, dtype=bool)
            rows = np.ones(st.n, dtype=bool)
        while True:
            if cand.sum() > _FULL_FRACTION * st.n:
                cand = np.ones(st.n, dtype=bool)
            if rows.sum() > _FULL_FRACTION * st.n:
                rows = np.ones(st.n, dtype=bool)
            w, g, add_c, add_r = self._solve_g(cand, rows, j)
            if not (add_c.any() or add_r.any()):
                break
            self.stats.generation_rounds += 1
            cand |= add_c
            rows |= add_r
        self._cand |= g > 0
        self._rows |= rows & (st.loads(g) >= w * (1 - 1e-9) - 1e-12)
        return 2.0 * w

    def _solve_g(self, cand: np.ndarray, rows: np.ndarray, j: float):
        st = self.lp.load_view()
        t0 = time.perf_counter()
        n_c = int(cand.sum())
        col_of_part = np.cumsum(cand) - 1
        var_in = rows[st.var_part]
        t_kept = np.bincount(st.var_tuple[var_in], minlength=st.n_tuples) > 0
        m_kept = t_kept[st.mono_tuple]
        n_y = int(t_kept.sum())
        y_col = n_c + np.cumsum(t_kept) - 1
        w_col = n_c + n_y
        n_col = w_col + 1
        kept_m_idx, start_m, idx_m, val_m = monomial_rows(st, m_kept, cand, col_of_part, y_col)
        nnz_m = len(idx_m)
        # w rows: w - Σ_{t∋p} q_t y_t >= 0 for p in rows (pairs sorted by participant)
        sel = np.flatnonzero(var_in)
        order = sel[np.argsort(st.var_part[sel], kind="stable")]
        row_parts = np.flatnonzero(rows)
        cnt = np.bincount(st.var_part[order], minlength=st.n)[row_parts] + 1
        start_w = np.concatenate([[0], np.cumsum(cnt)])
        nnz_w = int(start_w[-1])
        idx_w = np.empty(nnz_w, dtype=np.int64)
        val_w = np.empty(nnz_w)
        idx_w[start_w[:-1]] = w_col
        val_w[start_w[:-1]] = 1.0
        body = np.ones(nnz_w, dtype=bool)
        body[start_w[:-1]] = False
        idx_w[body] = y_col[st.var_tuple[order]]
        val_w[body] = -st.q[st.var_tuple[order]] * st.var_coef[order]
        n_rows_m = len(kept_m_idx)
        n_rows_w = len(row_parts)
        start = np.concatenate(
            [start_m[:-1], nnz_m + start_w[:-1], [nnz_m + nnz_w], [nnz_m + nnz_w + n_c]]
        )
        idx = np.concatenate([idx_m, idx_w, np.arange(n_c)])
        val = np.concatenate([val_m, val_w, st.mult[cand]])
        row_lower = np.concatenate([np.ones(n_rows_m), np.zeros(n_rows_w), [j]])
        row_upper = np.concatenate([np.full(n_rows_m + n_rows_w, _INF), [j]])
        cost = np.zeros(n_col)
        cost[w_col] = 1.0
        col_lower = np.zeros(n_col)
        col_upper = np.full(n_col, _INF)
        col_upper[:n_c] = 1.0
        self.stats.build_seconds += time.perf_counter() - t0
        obj, x, dual = solve_lp(
            n_col, cost, col_lower, col_upper, row_lower, row_upper, start, idx, val,
            solver=self.solver, time_limit=self.time_limit, stats=self.stats, what="G LP",
        )
        t0 = time.perf_counter()
        w = float(x[w_col])
        g = np.zeros(st.n)
        g[cand] = x[:n_c]
        add_c = np.zeros(st.n, dtype=bool)
        add_r = np.zeros(st.n, dtype=bool)
        if n_c < st.n:
            pi = np.zeros(st.n_mono)
            pi[kept_m_idx] = dual[:n_rows_m]
            lam = float(dual[-1])
            charge = np.bincount(st.ent_part, weights=pi[st.ent_mono] * st.ent_coef, minlength=st.n)
            reduced_cost = -lam * st.mult - charge
            add_c = (~cand) & (reduced_cost < -1e-7 * max(1.0, abs(lam)) * st.mult)
        if n_rows_w < st.n:
            loads = st.loads(g)
            add_r = (~rows) & (loads > w + 1e-7 * max(1.0, w))
        self.stats.build_seconds += time.perf_counter() - t0
        return w, g, add_c, add_r
