"""eq. 20 and the integer H next to its argmin, by cutting planes in ``g`` (multi-cut Kelley).

Private: computes functions of the private data; reached only through
:mod:`provsql_dp.mechanisms.recursive._lp`.

eq. 20 is ``min_g Δ̂ Σ_p mult_p g_p + F(g)`` with ``F(g) = Σ_t q_t φ_t(g)``, convex and piecewise
linear; only the candidates ``C = {p : deg_q(p) > Δ̂}`` can be nonzero (exact, see
:mod:`._lp`), and a tuple with a monomial avoiding ``C`` is a constant. The plain LP has one
``y`` per kept tuple (1.05 M after merging on ca-HepPh node). Here:

* each kept tuple belongs to one **group** (its smallest candidate column); one epigraph
  variable ``z_k ≥ Σ_{t ∈ k} q_t φ_t(g)`` per group;
* at a point ``ĝ``, with ``m*(t)`` the monomial of largest φ and ``S`` the tuples with
  ``φ_t(ĝ) > 0``, ``z_k ≥ Σ_{t ∈ S ∩ k} q_t (1 − Σ_{p ∈ m*(t)} k g_p)`` is valid for every ``g``
  and tight at ``ĝ``. The LP over the cuts (|C| + groups columns) is a relaxation: its optimum is
  a lower bound; the exact objective at its minimiser an upper bound; the rounds stop when they
  agree to ``1e-9`` relative (the LP's own tolerance is 1e-7), or fall back to the plain LP after
  :data:`MAX_ROUNDS` or once the cut rows outnumber the plain LP's tuples.
* **Integer H next to the argmin** (:meth:`Eq20Cuts.anchored`): the same pool plus the row
  ``Σ mult g = j`` (cuts do not depend on ``j``), re-solved by dual simplex. The restriction to
  ``C`` is certified as in :meth:`._lp.Solver.h_anchored`: with ``−μ`` a subgradient of ``H_C``
  at ``j`` (``μ = Δ̂ − λ``, ``λ`` the row's dual), ``H_C(j) + μ j = min_{j'} H_C(j') + μ j'``, which is
  the unrestricted eq. 20 at ``Δ̂ = μ`` whenever every ``p`` with ``deg_q(p) > μ`` is in ``C``;
  then ``H(j) ≥ H_C(j) ≥ H(j)``. Otherwise the caller uses the general path.
* **Bounds when the rounds run out** (:meth:`Eq20Cuts.anchored_bounds`): the relaxation's optimum
  plus ``Σ_{p ∉ C} min(0, rc_p)`` (the cut model's Lagrangian extended to every column) is a lower
  bound of ``H(j)``, the exact objective of the last point an upper bound; the caller
  (:meth:`._lp.Solver.h_pair`) rules out the floor or the ceiling of the argmin by them.

Measured (one run, loaded machine): ca-HepPh node, Δ̂ = 19,930 (185 candidates): 22 rounds,
22 s, 4,022 cut rows, where the merged dual LP (185 × 1.05 M) took 69.5 s and the two integer H
solves next to the argmin 179 s + 61 s; ca-GrQc node, Δ̂ = 60: 23 rounds, 0.5 s (plain 0.7 s).

Examples
--------
>>> import numpy as np
>>> from provsql_dp.provenance.krelation import KRelation
>>> from provsql_dp.mechanisms.recursive._structure import Structure
>>> kr = KRelation.from_annotations(
...     rows=[(1,), (2,), (3,)],
...     annotations=[[{("v", "a"), ("v", "b")}], [{("v", "a"), ("v", "c")}], [{("v", "a"), ("v", "d")}]])
>>> st = Structure(kr)
>>> model = Eq20Cuts(st, st.deg > 0.5, 0.5)
>>> value, g = model.solve()  # withdraw a (cost 0.5) instead of keeping 3 edges
>>> round(value, 9), round(float(g.sum()), 9), round(model.anchored(0), 9)
(0.5, 1.0, 3.0)
"""

from __future__ import annotations

import time

import highspy
import numpy as np
import scipy.sparse as sp

from ..lp._highs import INF, LPStats
from ._kelley import DONE, MORE, STOP, restricted, rounds, tight_monomials, warm_pool
from ._row_merge import merge_rows

__all__ = ["Eq20Cuts", "MAX_ROUNDS", "ANCHORED_ROUNDS"]

#: cutting-plane rounds per solve before the caller falls back to the plain LP
MAX_ROUNDS = 200
#: rounds of one anchored H before the plain path (Kelley's tail is slow at a fixed Σ g = j;
#: ca-HepPh node: j = 80 converges after j = 79's 30 rounds, in 19 of its own)
ANCHORED_ROUNDS = 30
_GAP = 1e-9
#: a round's cut rows are summed in a dense groups × columns array up to this many cells (a
#: bincount: ca-HepPh node, 185 × 185, instead of a COO → CSR conversion and its sorts)
_DENSE_CUTS = 4_000_000


class Eq20Cuts:
    """The eq.-20 cut model for one ``(structure, C, Δ̂)``; ``st`` is the LP structure (quotient)."""

    #: certify the anchored restriction by degrees first (tests turn it off to reach _charges)
    degree_test = True
    #: groups per smallest column (by the largest column modulo ``split``): more z, finer cuts
    split = 1
    #: add only the cuts a round's point violates (``z_k`` below its group's exact part)
    violated_only = False
    #: delete the zero-dual cut rows when the anchored ``j`` changes (see :meth:`_prune`); off:
    #: on ca-HepPh node it dropped the floor's cuts that let the ceiling converge (30 rounds
    #: without convergence instead of 19 with)
    prune = False

    def __init__(self, st, cand: np.ndarray, delta_hat: float, *, stats: LPStats | None = None,
                 time_limit: float | None = None):
        self.st, self.cand, self.delta_hat = st, cand.copy(), float(delta_hat)
        self.stats = stats if stats is not None else LPStats()
        self.time_limit = time_limit
        t0 = time.perf_counter()
        self.cols, col, ent_c, self.t_kept, self.const, e = restricted(st, cand)
        nc = len(self.cols)
        t_e = st.mono_tuple[st.ent_mono[e]]
        grp = np.full(st.n_tuples, nc, dtype=np.int64)
        np.minimum.at(grp, t_e, col[st.ent_part[e]])
        if self.split > 1:  # ... and its largest column modulo split
            top = np.full(st.n_tuples, -1, dtype=np.int64)
            np.maximum.at(top, t_e, col[st.ent_part[e]])
            grp = np.where(grp < nc, grp * self.split + top % self.split, nc * self.split)
        self.ng = nc * self.split
        self.grp, self.col, self.ent_c, self.nc = grp, col, ent_c, nc
        self.h = highspy.Highs()
        self.h.silent()
        self.h.setOptionValue("threads", 1)
        n_var = nc + self.ng  # g_C, then one z per group of tuples
        self.h.addVars(n_var, np.zeros(n_var), np.concatenate([np.ones(nc), np.full(self.ng, INF)]))
        cost = np.concatenate([self.delta_hat * st.mult[self.cols], np.ones(self.ng)])
        self.h.changeColsCost(n_var, np.arange(n_var, dtype=np.int32), cost)
        self.row = None  # index of the row Σ mult g = j (anchored)
        self._dual = None  # row duals of the last solve (see _prune)
        self.points = []  # (point, its rows, their groups) per round, for _charges
        self.failure = None  # why the last anchored() returned None: "rounds" or "columns"
        self.max_rows = max(1000, int(self.t_kept.sum()))
        self.rounds = 0
        self._one = None  # the kept tuples' arrays of the one-monomial layout (see _one_monomial)
        if st.n_mono == st.n_tuples and self.ng * nc <= _DENSE_CUTS:
            self._one = self._one_monomial(e, t_e)
        self.stats.build_seconds += time.perf_counter() - t0

    def _one_monomial(self, e: np.ndarray, t_e: np.ndarray) -> dict:
        """Every tuple one monomial (subgraph counts): a round reads only the kept tuples, by
        arrays built once — their rows over ``C`` (a CSR matrix: ``s = A g``), weights and
        groups, and each entry's cell ``(group, column)`` of the dense cut block with its weight
        ``q_t k`` — instead of gathers over every tuple and entry of the structure per round."""
        st, nc = self.st, self.nc
        kept = np.flatnonzero(self.t_kept)
        pos = np.full(st.n_tuples, -1, dtype=np.int64)
        pos[kept] = np.arange(len(kept))
        r_e, c_e = pos[t_e], self.col[st.ent_part[e]]
        a = sp.csr_matrix((st.ent_coef[e], (r_e, c_e)), shape=(len(kept), nc))
        # equal rows are one term of summed weight (_row_merge; equal rows have one group:
        # their smallest column, and their largest); the cut block's entries are the rows'
        a, q, inverse = merge_rows(a, st.q[kept])
        grp = np.empty(len(q), dtype=np.int64)
        grp[inverse] = self.grp[kept]
        coo = a.tocoo()
        return {"A": a, "q": q, "inverse": inverse, "grp": grp, "row": coo.row,
                "cell": grp[coo.row] * nc + coo.col, "w": q[coo.row] * coo.data}

    def _objective_and_cut(self, gc: np.ndarray):
        """``F(g)`` exactly (kept tuples) and the cut at ``g`` (rows ``z_k + A_k g ≥ Q_k``)."""
        st = self.st
        if self._one is not None:
            return self._objective_and_cut_one(gc)
        g = np.zeros(st.n)
        g[self.cols] = gc
        m_star, s_min = tight_monomials(st, g)
        phi = np.maximum(0.0, 1.0 - s_min)
        f_val = float(np.dot(st.q[self.t_kept], phi[self.t_kept]))
        act = np.flatnonzero(self.t_kept & (s_min < 1.0))
        q_grp = np.bincount(self.grp[act], weights=st.q[act], minlength=self.ng + 1)[: self.ng]
        self._f_grp = np.bincount(self.grp[act], weights=st.q[act] * phi[act],
                                  minlength=self.ng + 1)[: self.ng]
        m_act = np.zeros(st.n_mono, dtype=bool)
        m_act[m_star[act]] = True
        ea = np.flatnonzero(m_act[st.ent_mono] & self.ent_c)
        t_of = st.mono_tuple[st.ent_mono[ea]]
        rows, cols, vals = self.grp[t_of], self.col[st.ent_part[ea]], st.q[t_of] * st.ent_coef[ea]
        if self.ng * self.nc <= _DENSE_CUTS:  # one bincount into a dense ng × nc array
            dense = np.bincount(rows * self.nc + cols, weights=vals, minlength=self.ng * self.nc)
            return f_val, q_grp, sp.csr_matrix(dense.reshape(self.ng, self.nc))
        a = sp.csr_matrix((vals, (rows, cols)), shape=(self.ng, self.nc))
        a.sum_duplicates()
        return f_val, q_grp, a

    def _objective_and_cut_one(self, gc: np.ndarray):
        """:meth:`_objective_and_cut` on the one-monomial arrays (:meth:`_one_monomial`): the
        same sums over the kept tuples and the active entries."""
        o, ng = self._one, self.ng
        s_min = o["A"] @ gc
        phi = np.maximum(0.0, 1.0 - s_min)
        f_val = float(np.dot(o["q"], phi))
        act = np.flatnonzero(s_min < 1.0)
        q_grp = np.bincount(o["grp"][act], weights=o["q"][act], minlength=ng + 1)[:ng]
        self._f_grp = np.bincount(o["grp"][act], weights=o["q"][act] * phi[act],
                                  minlength=ng + 1)[:ng]
        dense = np.bincount(o["cell"], weights=o["w"] * (s_min < 1.0)[o["row"]],
                            minlength=ng * self.nc)
        return f_val, q_grp, sp.csr_matrix(dense.reshape(ng, self.nc))

    def _add(self, q_grp, a, g_pt, z=None) -> None:
        """The cut rows at ``g_pt`` of the groups it concerns (with the LP's ``z``: only those
        whose ``z_k`` is below their exact part of the objective, the cuts ``g_pt`` violates)."""
        keep = q_grp > 0
        if z is not None and self.violated_only:
            keep &= self._f_grp > z + 1e-12 * np.maximum(1.0, self._f_grp)
        keep = np.flatnonzero(keep)
        self.points.append((g_pt, self.h.getNumRow() + np.arange(len(keep)), keep))
        b = sp.hstack([a, sp.identity(self.ng, format="csr")], format="csr")[keep]
        self.h.addRows(
            len(keep), q_grp[keep], np.full(len(keep), INF), b.nnz,
            b.indptr[:-1].astype(np.int32), b.indices.astype(np.int32), b.data.astype(np.float64),
        )

    def add_cut(self, gc: np.ndarray) -> None:
        """The cuts at a point ``gc`` over ``C`` (valid for every ``g`` and ``j``)."""
        t0 = time.perf_counter()
        if self.rounds == 0 and self.h.getNumRow() == 0:
            self._add(*self._objective_and_cut(np.zeros(self.nc))[1:], np.zeros(self.nc))
        self._add(*self._objective_and_cut(gc)[1:], gc)
        self.stats.build_seconds += time.perf_counter() - t0

    def _loop(self, max_rounds: int, stop=None):
        """Kelley rounds: ``(done, lower, upper, g_C, row duals)`` of the last solved round.

        ``done`` when the relaxation's optimum ``lower`` and the exact objective ``upper`` at its
        minimiser agree (1e-9 relative); otherwise the rounds, rows or an LP ran out, or
        ``stop(lower, duals)`` asked to end. ``lower`` (``-inf`` before any solve) never falls: a
        pool only grows, so the last optimum bounds the model from below whatever comes after.
        """
        st = self.st
        if self.rounds == 0:
            t0 = time.perf_counter()
            self._add(*self._objective_and_cut(np.zeros(self.nc))[1:], np.zeros(self.nc))
            self.stats.build_seconds += time.perf_counter() - t0
        last = [-np.inf, np.inf, None, None]  # lower, upper, g_C, duals of the last round

        def look(point) -> str:  # the exact objective at the relaxation's minimiser; cut it
            lower, x, dual = point
            self._dual = dual
            self.rounds += 1
            gc = np.clip(x[: self.nc], 0.0, 1.0)
            f_val, q_grp, a = self._objective_and_cut(gc)
            upper = self.delta_hat * float(np.dot(st.mult[self.cols], gc)) + f_val
            last[:] = [lower, upper, gc, dual]
            if upper - lower <= _GAP * max(1.0, abs(upper)):
                return DONE
            self._add(q_grp, a, gc, x[self.nc:])
            return STOP if stop is not None and stop(lower, dual) else MORE

        end = rounds(warm_pool(self.h, "eq. 20 cuts LP", self.time_limit, self.stats), look,
                     max_rounds, stats=self.stats,  # past the plain LP's size: give up
                     too_big=lambda: self.h.getNumRow() > self.max_rows)
        return (end == DONE, *last)

    def solve(self, max_rounds: int = MAX_ROUNDS):
        """``(value, g)``: eq. 20's optimum (``const`` included) and a minimiser over all
        participants, or ``None`` when the rounds ran out."""
        done, _, upper, gc, _ = self._loop(max_rounds)
        if not done:
            return None
        self.g_star = gc  # the minimiser over C (the barrier path's start, _x_barrier)
        g = np.zeros(self.st.n)
        g[self.cols] = gc
        return upper + self.const, g

    def anchored(self, j: float, max_rounds: int | None = None):
        """``H(j)`` over all participants from the pool plus ``Σ mult g = j``, or ``None`` when
        the rounds ran out or the restriction to ``C`` is not certified (see the module)."""
        lower, upper, exact = self.anchored_bounds(j, max_rounds)
        return upper if exact else None

    def anchored_bounds(self, j: float, max_rounds: int | None = None, stop=None):
        """``(lower, upper, exact)``: certified ``lower ≤ H(j) ≤ upper`` over **all** participants
        after Kelley rounds on the pool plus ``Σ mult g = j``; ``exact`` when the rounds converged
        and the restriction to ``C`` is certified (then ``upper`` is ``H(j)`` to the LP tolerance).

        ``upper`` is the exact objective at a feasible point (``g = 0`` outside ``C``); ``lower``
        is the relaxation's optimum plus ``Σ_{p ∉ C} min(0, rc_p)``, the Lagrangian of the cut
        model extended to every column at the LP's duals (nothing to add when the degree test
        holds). ``stop(lower)`` (an H value, given only while the degree test holds) may end the
        rounds early. :attr:`failure` says why a result is not exact: "rounds" or "columns".
        """
        st, nc = self.st, self.nc
        mult_c = st.mult[self.cols]
        self.failure = "columns"  # the restriction to C cannot be (or is not) certified
        if j > float(mult_c.sum()) - 1e-9:
            return -np.inf, np.inf, False
        if self.row is None:
            self.row = self.h.getNumRow()
            self.h.addRow(float(j), float(j), nc, np.arange(nc, dtype=np.int32), mult_c)
        else:
            if self.prune:
                self._prune()
            self.h.changeRowsBounds(1, np.array([self.row], dtype=np.int32), np.array([float(j)]),
                                    np.array([float(j)]))
        shift = self.const - self.delta_hat * float(j)  # LP objective → H(j)
        outside = ~self.cand

        def loose(dual) -> bool:  # every column outside C has a nonnegative reduced cost
            # the objective is H_C(j) + Δ̂ j, so the row's dual λ is H_C'(j) + Δ̂ and μ = −H_C'(j)
            mu = self.delta_hat - float(dual[self.row])
            return nc == st.n or (self.degree_test and not (
                st.deg[outside] > mu + 1e-7 * max(1.0, abs(mu))).any())

        inner = None if stop is None else (lambda lo, dual: loose(dual) and stop(lo + shift))
        rounds = ANCHORED_ROUNDS if max_rounds is None else max_rounds
        done, lower, upper, _, dual = self._loop(rounds, inner)
        if dual is None:
            self.failure = "rounds"
            return -np.inf, np.inf, False
        exact = done
        if not loose(dual):
            # the reduced costs of the missing columns in the cut LP extended to them (each
            # cut recomputed in the full space at its own point, each constant tuple charged
            # to one monomial avoiding C), as _lp.Solver._h_violators
            mu = self.delta_hat - float(dual[self.row])
            rc = (mu * st.mult - self._charges(dual))[outside]
            lower += float(np.minimum(rc, 0.0).sum())
            tol = 1e-7 * max(1.0, abs(mu), self.delta_hat) * st.mult[outside]
            exact = exact and not (rc < -tol).any()
        if not done:
            self.failure = "rounds"
        return lower + shift, upper + shift, exact

    def _prune(self) -> None:
        """Delete the cut rows of zero dual at the last solve (slack, or degenerate):
        the model stays a relaxation (fewer valid cuts), the bounds stay certified, and the next
        ``j`` re-solves a smaller LP (rounds re-add whatever it needs)."""
        if self._dual is None:
            return
        drop = np.zeros(self.h.getNumRow(), dtype=bool)  # rows added since have no dual: kept
        drop[: len(self._dual)] = np.abs(self._dual) <= 1e-12
        drop[self.row] = False
        if not drop.any():
            return
        keep = ~drop
        new = np.cumsum(keep) - 1
        self.h.deleteRows(int(drop.sum()), np.flatnonzero(drop).astype(np.int32))
        self.points = [(g, new[r[keep[r]]], k[keep[r]]) for g, r, k in self.points]
        self.row = int(new[self.row])
        self._dual = None

    def _charges(self, dual: np.ndarray) -> np.ndarray:
        """``Σ_r π_r a_{r,p}`` for every participant (cuts extended to all columns) plus the
        constant tuples' weights on one monomial avoiding C each."""
        st = self.st
        charge = np.zeros(st.n)
        dual = np.asarray(dual)
        for g_pt, rows, groups in self.points:
            pi = np.zeros(self.ng + 1)
            solved = rows < len(dual)  # cuts added after the last solve have no multiplier
            pi[groups[solved]] = np.maximum(dual[rows[solved]], 0.0)
            if not pi.any():
                continue
            g = np.zeros(st.n)
            g[self.cols] = g_pt
            m_star, s_min = tight_monomials(st, g)
            w_t = np.where(self.t_kept & (s_min < 1.0), st.q * pi[self.grp], 0.0)
            w_m = np.zeros(st.n_mono)
            w_m[m_star] = w_t
            charge += np.bincount(st.ent_part, weights=w_m[st.ent_mono] * st.ent_coef, minlength=st.n)
        free_m = np.flatnonzero(np.bincount(st.ent_mono, weights=self.ent_c, minlength=st.n_mono) == 0)
        if len(free_m):
            _, first = np.unique(st.mono_tuple[free_m], return_index=True)
            w_m = np.zeros(st.n_mono)
            w_m[free_m[first]] = st.q[st.mono_tuple[free_m[first]]]
            charge += np.bincount(st.ent_part, weights=w_m[st.ent_mono] * st.ent_coef, minlength=st.n)
        return charge
