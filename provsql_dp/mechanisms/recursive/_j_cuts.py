"""The Δ-search LP ``J(W)`` solved by cutting planes in the space of ``g`` alone (Kelley's method).

Private: computes functions of the private data; reached only through
:mod:`provsql_dp.mechanisms.recursive._lp`.

``J(W) = min { Σ_p mult_p g_p : 0 ≤ g ≤ 1, load_p(g) ≤ W for every p }`` (see
:meth:`provsql_dp.mechanisms.recursive._lp.Solver.j_value`), where
``load_p(g) = Σ_{t ∋ p} q_t c_{t,p} max_m max(0, 1 − Σ_{p' ∈ m} k_{m,p'} g_{p'})`` is **convex and
piecewise linear** in ``g``. The plain LP linearises it with one variable ``y_t`` and one row per
tuple (1.3 M rows on ca-HepPh under node privacy); here the tuples are never variables:

* **Cuts.** For any point ``ĝ`` and participant ``p``, choosing for each tuple the monomial
  ``m*(t)`` of largest ``φ`` at ``ĝ`` and keeping the tuples ``S`` with ``φ_t(ĝ) > 0``,
  ``Σ_{t ∈ S, t ∋ p} q_t c_{t,p} (1 − Σ_{p' ∈ m*(t)} k g_{p'}) ≤ load_p(g)`` holds for **every**
  ``g`` (``max(0, x) ≥ x``, and the max over monomials is at least one of them), with equality at
  ``ĝ``. So ``cut ≤ W`` is implied by ``load_p ≤ W``: the LP over the cuts found so far
  (one row per cut, columns ``g`` only: a few hundred rows × the participants) is a
  **relaxation** of J, its optimum a lower bound, for every ``W`` at once (a cut's right-hand
  side is ``W`` minus a constant).
* **Separation.** At the relaxation's minimiser ``g*`` the exact loads are recomputed in numpy;
  every participant with ``load_p(g*) > W`` gets the cut at ``g*``, which ``g*`` violates (the
  cut equals the load there). When no load exceeds ``W`` (to the LP's feasibility tolerance,
  ``1e-7`` relative), ``g*`` is feasible for J and optimal for the relaxation: the value is J.
  Loads are piecewise linear with finitely many pieces, so the method ends; a round limit, a
  row limit (the plain LP's tuples) and the LP time limit guard it, and the caller then falls
  back to the plain LP.
* **One pool for the whole Δ search.** Cuts are valid for every ``W``, so probes only move the
  right-hand sides and re-solve by dual simplex from the last basis.

Every result comes with certified bounds: ``L`` (the Lagrangian dual function of the cut model
at the simplex duals, :func:`._certify.lagrangian_lower`, affine in ``W``: the tangent cut of the
Δ search) and ``U`` (:func:`._certify.primal_upper`: ``g*`` repaired until its exactly
recomputed loads are ``≤ W``). Measured (one run, loaded machine): ca-GrQc node, a Δ probe
4.7–17 s by the plain LP (IPM) → 0.03–0.05 s in 2–4 rounds; ca-HepPh node, 1.3 M-row probes by
PDLP 10–90 s each → 188–322 cut rows × 7,650 columns in 3 rounds.

Examples
--------
>>> import numpy as np
>>> from provsql_dp.provenance.krelation import KRelation
>>> from provsql_dp.mechanisms.recursive._structure import Structure
>>> kr = KRelation.from_annotations(
...     rows=[(1,), (2,), (3,)],
...     annotations=[[{("v", "a"), ("v", "b")}], [{("v", "a"), ("v", "c")}], [{("v", "a"), ("v", "d")}]])
>>> value, slope, lower, upper = JCuts(Structure(kr).load_view()).solve(1.0)
>>> round(value, 6), lower <= value <= upper  # g_a = 2/3: each edge keeps φ = 1/3, load_a = 1
(0.666667, True)
"""

from __future__ import annotations

import time

import highspy
import numpy as np
import scipy.sparse as sp

from ..lp._highs import INF, LPStats
from ..lp._highs import _run as run_highs
from ._certify import lagrangian_lower, primal_upper
from ._kelley import DONE, MORE, rounds, tight_monomials, warm_pool

__all__ = ["JCuts", "cuts_at"]

#: relative load excess above which a participant gets a new cut (HiGHS's feasibility tolerance)
_FEAS_TOL = 1e-7
#: cuts of at most this many cells (participants cut × columns) are summed in a dense array on
#: one-monomial structures (bincounts: ca-HepPh node, no COO → CSR conversion and its sorts)
_DENSE_CELLS = 8_000_000
#: ... in at most this many blocks of _DENSE_CELLS (one pass over the incidences each)
_DENSE_BLOCKS = 8
#: cutting-plane rounds per probe before giving up (the caller then solves the plain LP)
MAX_ROUNDS = 60


def cuts_at(view, g: np.ndarray, parts: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """The cuts at ``g`` of the participants ``parts``: ``(A, Q)`` with ``cut_r(g') = Q_r − A_r g'``.

    Row ``r`` is ``Σ_{t ∈ S, t ∋ p} q_t c_{t,p} (1 − Σ_{p' ∈ m*(t)} k g'_{p'})`` for ``p = parts[r]``.
    """
    v = view
    m_star, s_min = tight_monomials(v, g)  # the monomial of largest φ of each tuple
    row_of = np.full(v.n, -1, dtype=np.int64)
    row_of[parts] = np.arange(len(parts))
    inc = np.flatnonzero((s_min < 1.0)[v.var_tuple] & (row_of[v.var_part] >= 0))
    w_inc = v.q[v.var_tuple[inc]] * v.var_coef[inc]
    r_inc = row_of[v.var_part[inc]]
    q_row = np.bincount(r_inc, weights=w_inc, minlength=len(parts))
    per = max(1, _DENSE_CELLS // max(v.n, 1))  # cut rows per dense block
    blocks = -(-len(parts) // per)
    if blocks <= _DENSE_BLOCKS and v.n_mono == v.n_tuples:  # one monomial per tuple
        return _dense_cuts(v, inc, w_inc, r_inc, len(parts), per), q_row
    mono = m_star[v.var_tuple[inc]]
    lo = v.mono_ptr[mono]
    ln = v.mono_ptr[mono + 1] - lo
    rep = np.repeat(np.arange(len(inc)), ln)
    ent = np.repeat(lo - (np.cumsum(ln) - ln), ln) + np.arange(int(ln.sum()))
    a = sp.csr_matrix(
        (w_inc[rep] * v.ent_coef[ent], (r_inc[rep], v.ent_part[ent])), shape=(len(parts), v.n)
    )
    a.sum_duplicates()
    return a, q_row


def _dense_cuts(v, inc, w_inc, r_inc, n_rows: int, per: int) -> sp.csr_matrix:
    """The rows of :func:`cuts_at` when every tuple is one monomial (its monomial of largest φ
    is its only one, tuple ``t``'s entries are ``mono_ptr[t] … mono_ptr[t+1] − 1``), summed by
    bincounts into dense blocks of ``per`` rows × the participants: no COO → CSR conversion and
    its sorts. Entry ``j`` of every incidence's tuple is one bincount pass (tuples with fewer
    than ``j + 1`` entries — the twin quotient's merged monomials — skip it)."""
    t = v.var_tuple[inc]
    first = v.mono_ptr[t]
    size = v.mono_ptr[t + 1] - first
    k_max = int(size.max()) if len(size) else 0
    out = []
    for lo in range(0, max(n_rows, 1), per):
        hi = min(lo + per, n_rows)
        sel = np.flatnonzero((r_inc >= lo) & (r_inc < hi)) if hi - lo < n_rows else slice(None)
        r, w, e0, sz = r_inc[sel] - lo, w_inc[sel], first[sel], size[sel]
        acc = np.zeros((hi - lo) * v.n)
        for j in range(k_max):
            if not (sz > j).all():
                has = np.flatnonzero(sz > j)
                r, w, e0, sz = r[has], w[has], e0[has], sz[has]
            acc += np.bincount(r * v.n + v.ent_part[e0 + j], weights=w * v.ent_coef[e0 + j],
                               minlength=len(acc))
        out.append(sp.csr_matrix(acc.reshape(hi - lo, v.n)))
    return out[0] if len(out) == 1 else sp.vstack(out, format="csr")


class JCuts:
    """One cut pool and one warm HiGHS model for every probe of a Δ search over ``view``."""

    def __init__(self, view, *, stats: LPStats | None = None, time_limit: float | None = None):
        self.v = view
        self.stats = stats if stats is not None else LPStats()
        self.time_limit = time_limit
        self.h = highspy.Highs()
        self.h.silent()
        self.h.setOptionValue("threads", 1)
        n = view.n
        self.h.addVars(n, np.zeros(n), np.ones(n))
        self.h.changeColsCost(n, np.arange(n, dtype=np.int32), np.asarray(view.mult, dtype=np.float64))
        self.q_rows = np.zeros(0)  # cut r: A_r g >= q_rows[r] - W
        self._rows = []  # the cut rows as HiGHS holds them (see _model_arrays)
        self._small = float(self.h.getOptionValue("small_matrix_value")[1])
        self.cap = None
        self.rounds = 0

    def _add(self, a: sp.csr_matrix, q_row: np.ndarray, cap: float) -> None:
        self.h.addRows(
            a.shape[0], q_row - cap, np.full(a.shape[0], INF), a.nnz,
            a.indptr[:-1].astype(np.int32), a.indices.astype(np.int32), a.data.astype(np.float64),
        )
        self.q_rows = np.concatenate([self.q_rows, q_row])
        kept = a.copy()  # what HiGHS keeps: it drops entries of magnitude <= small_matrix_value
        kept.data = kept.data.astype(np.float64)
        kept.data[np.abs(kept.data) <= self._small] = 0.0
        kept.eliminate_zeros()
        self._rows.append(kept)

    def _model_arrays(self):
        """The cut rows, row-wise, as HiGHS holds them: the added blocks stacked (reading the
        model back from HiGHS and converting it cost seconds per certificate on 6 M-tuple joins;
        ``_model_arrays_highs`` does that, and tests pin the two equal)."""
        if not self._rows:
            return sp.csr_matrix((0, self.v.n))
        a = sp.vstack(self._rows, format="csr")
        self._rows = [a]
        return a

    def _model_arrays_highs(self):
        lp = self.h.getLp()
        a = lp.a_matrix_  # column-wise; converted for the certificate
        n_row = self.h.getNumRow()
        return sp.csc_matrix(
            (np.asarray(a.value_), np.asarray(a.index_), np.asarray(a.start_)), shape=(n_row, self.v.n)
        ).tocsr()

    def first_order(self, cap: float):
        """Certified ``(nan, slope, lower, upper)`` from one PDLP solve of the **cold** pool (the
        cuts at ``g = 0``), or ``None`` when the pool is not cold or PDLP gave no iterate.

        Used for the first probe of a large search: a simplex start on a thousand dense cut rows
        can take seconds (ca-GrQc edge: 1,240 × 12,878, 1.6 s CPU) where PDLP takes 0.2 s; the
        bounds are certified as in :meth:`solve`, the caller decides the probe only when they do.
        """
        v, cap = self.v, float(cap)
        if len(self.q_rows) or not (v.deg > cap).any():
            return None
        t0 = time.perf_counter()
        self._add(*cuts_at(v, np.zeros(v.n), np.flatnonzero(v.deg > cap)), cap)
        self.stats.build_seconds += time.perf_counter() - t0
        self.h.setOptionValue("solver", "pdlp")
        # no presolve: on TPC-H Q21 at SF 1 (8,868 cut rows × 1.51 M columns) HiGHS's presolve
        # before PDLP took most of the solve (72–77 s wall → 29 s; the Δ search 22–25 → 17 s
        # CPU); the bounds are certified from whatever iterate PDLP returns either way
        self.h.setOptionValue("presolve", "off")
        out = run_highs(self.h, time.perf_counter(), stats=self.stats, what="Δ cuts LP",
                        time_limit=self.time_limit, approximate=True)
        self.h.clearSolver()  # the next solve starts the simplex afresh
        self.h.setOptionValue("presolve", "choose")
        if out is None:
            return None
        t0 = time.perf_counter()
        _, g, dual = out
        lower, slope = self._lower(dual, cap)
        upper, _ = primal_upper(v, np.clip(g, 0.0, 1.0), cap)
        self.stats.build_seconds += time.perf_counter() - t0
        return float("nan"), slope, lower, upper

    def _lower(self, dual: np.ndarray, cap: float) -> tuple[float, float]:
        """Certified lower bound of J(cap) from any row multipliers, and its slope in W."""
        a = self._model_arrays()
        row_lower = self.q_rows - cap
        lower, slope = lagrangian_lower(
            np.asarray(self.v.mult, dtype=np.float64), row_lower, np.full(len(row_lower), INF),
            a.indptr, a.indices, a.data, dual, load_rows=np.arange(len(row_lower)),
        )
        # rows are A g >= Q - W: the Lagrangian falls by Σπ per unit of W
        return max(lower, 0.0), -slope

    def solve(self, cap: float, max_rounds: int = MAX_ROUNDS):
        """``(value, slope, lower, upper)`` for ``J(cap)``, or ``None`` when the rounds ran out.

        ``value`` is J to the LP's tolerance (the relaxation's optimum, attained by a point whose
        exact loads are within ``1e-7`` relative of ``cap``); ``lower ≤ J(cap) ≤ upper`` are
        certified, and ``J(W') ≥ lower + slope (W' − cap)`` for every ``W'``.
        """
        v, cap = self.v, float(cap)
        heavy = v.deg > cap
        if not heavy.any():
            return 0.0, 0.0, 0.0, 0.0
        t0 = time.perf_counter()
        n_row = len(self.q_rows)
        if n_row:
            self.h.changeRowsBounds(
                n_row, np.arange(n_row, dtype=np.int32), self.q_rows - cap, np.full(n_row, INF)
            )
        else:  # cuts at g = 0 for the heavy participants: their whole degrees
            self._add(*cuts_at(v, np.zeros(v.n), np.flatnonzero(heavy)), cap)
        self.stats.build_seconds += time.perf_counter() - t0
        found = []

        def look(point) -> str:  # certify a point within every load, else cut the overloaded
            obj, g, dual = point
            self.rounds += 1
            g = np.clip(g, 0.0, 1.0)
            over = np.flatnonzero(v.loads(g) > cap * (1 + _FEAS_TOL) + _FEAS_TOL)
            if len(over):
                self._add(*cuts_at(v, g, over), cap)
                return MORE
            lower, slope = self._lower(dual, cap)
            upper, _ = primal_upper(v, g, cap)
            found.append((float(obj), slope, lower, upper))
            return DONE

        end = rounds(warm_pool(self.h, "Δ cuts LP", self.time_limit, self.stats), look, max_rounds,
                     stats=self.stats,  # past the plain LP's size: the caller solves that
                     too_big=lambda: len(self.q_rows) > max(1000, v.n_tuples))
        return found[0] if end == DONE else None
