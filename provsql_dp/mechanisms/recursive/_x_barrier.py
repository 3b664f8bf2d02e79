"""The integer H next to the eq.-20 argmin by a smoothed Newton path and a trust-region LP.

Private: computes functions of the private data; reached only through
:mod:`provsql_dp.mechanisms.recursive._lp` (:meth:`Solver.h_pair`).

``H(j) = const + min {F(g) : Σ_p mult_p g_p = j, 0 ≤ g ≤ 1}`` with ``F(g) = Σ_t q_t (1 − a_t g)⁺``
over the kept tuples of the eq.-20 cut model (:class:`._x_cuts.Eq20Cuts`: columns ``C``, every
kept tuple one monomial). On ca-HepPh node next to the eq.-20 argmin ``g = 1/3`` a million
tuples sit on their kink, and Kelley's cuts at a fixed ``Σ g = j`` close the gap slowly. Here:

1. **Newton on a smoothed problem** (time only): ``(·)⁺`` replaced by ``μ log(1 + e^{·/μ})``,
   the box by a log barrier of weight ``μ``, the row kept exactly; ``μ`` falls from 0.1 to 1e-5.
   Each step is one 185 × 185 system. It ends next to an optimum.
2. **A trust-region LP, exact in its box**: around the point ``ḡ``, with ``r = δ / max ‖a_t‖₁``,
   a tuple with ``|1 − a_t ḡ| > δ`` keeps its linear piece on the box ``|g − ḡ| ≤ r``; so
   ``min F`` over the box and the row is an LP with one row per *near* tuple only
   (``|1 − a_t ḡ| ≤ δ``: 14.6 k of 1.24 M at ``j = 79``). Its minimiser ``x`` gives the upper
   bound ``F(x)`` (exact objective) and the next centre. The same LP without the box (re-solved
   warm) is a relaxation of ``H(j)`` everywhere (each piece underestimates its tuple's term);
   its row duals are the ``π`` of step 3 (the box LP's may rest on the box).
3. **Certified lower bound** (weak duality of the plain LP over **all** participants): for any
   ``π ∈ [0, q]`` (one monomial per tuple) and any ``μ``,
   ``H(j) ≥ const_true + Σ_t π_t − Σ_p (load_p(π) − μ mult_p)⁺ − μ j`` with
   ``load_p(π) = Σ_{t ∋ p} coef π_t``; ``μ`` is maximised exactly (a sorted scan). ``π`` is
   ``q`` on tuples below their kink, 0 above, the LP's row duals on near ones (after step 1:
   the smoothed slopes); tuples whose monomial avoids ``C`` get ``q``. Nothing in this bound
   depends on how ``π`` was found.

The result is exact when ``upper − lower ≤ 1e-9`` relative (the same test as the cut rounds);
:meth:`Solver.h_pair` also rules a ``j`` out by ``lower``. ca-HepPh node, Δ̂ = 19,930: H(79)
exact in 6 trust-region LPs after 32 Newton steps (≈ 27 s CPU, loaded machine), where Kelley's
rounds did not converge in 40.

**A degenerate optimum** (ca-HepPh node, ``j = 80``: one author of the 185-clique moves from
``g = 1/3`` to 2/3 and a million triangles stay on their kink) gets no trust region (its near
band is most tuples): the path ends once more than a quarter of the tuples lie within ``μ`` of
their kink at ``μ ≤ 1e-3`` (the rest of the path, and a second one over wider columns, only
refined the seeds); the kinks' balanced dual (:mod:`._eq20_balance`), then the Kelley rounds
over ``C`` decide ``j``, seeded by the path and
by the best one-column move of the eq.-20 minimiser (:meth:`AnchoredBarrier.single_move`, often
``H(j)``'s minimiser there). **Privacy**: none of this decides a value. Where the path ends, the
order of the solvers, the seeds and the Hessian's summation order only change the time; every
``H(j)`` the mechanism uses is still certified — ``lower`` by weak duality of the plain LP over
all participants (any ``π``), ``upper`` the exact objective at a point of the row and box (the
one-column move is one, its row checked as the trust region's) — to the same ``1e-9`` relative.
The running time still depends on the data through Δ̂ and the LPs, as before (README, "Running
time"; ``release_seconds`` pads a release to a fixed time).

Examples
--------
>>> from provsql_dp.provenance.krelation import KRelation
>>> from provsql_dp.mechanisms.recursive._structure import Structure
>>> from provsql_dp.mechanisms.recursive._x_cuts import Eq20Cuts
>>> kr = KRelation.from_annotations(
...     rows=[(1,), (2,), (3,)],
...     annotations=[[{("v", "a"), ("v", "b")}], [{("v", "a"), ("v", "c")}], [{("v", "b"), ("v", "c")}]])
>>> st = Structure(kr)
>>> model = Eq20Cuts(st, st.deg > 0.5, 0.5)
>>> _ = model.solve()
>>> lower, upper, exact = AnchoredBarrier.of(model).bounds(1.0)
>>> exact, round(upper, 9)  # withdraw one participant: one edge is left
(True, 1.0)
"""

from __future__ import annotations

import time

import highspy
import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from ..._deadline import check as _check_deadline
from ...errors import SolverError
from ..lp._highs import INF, resolve_lp
from . import _eq20_balance
from ._kelley import DONE, MORE, STOP, restricted, rounds
from ._row_merge import merge_rows, split
from ._x_cuts import _GAP, Eq20Cuts

__all__ = ["AnchoredBarrier", "applicable", "pair_pass"]

#: smoothing weights of the Newton path (each until the Newton decrement is small)
MUS = (1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5)
#: Newton steps in all (time only: the trust region starts wherever Newton stopped)
MAX_NEWTON = 150
#: the near band ``|1 − a ḡ| ≤ δ`` of the trust-region LP, and its iterations
DELTA, MAX_TRUST = 1e-4, 12
#: the trust-region LP is skipped when more tuples than this fraction (or cap) are near
NEAR_FRACTION, MIN_NEAR_CAP = 0.05, 5000
#: a Newton step's Hessian is summed over its live rows alone below this fraction of the rows
FEW_LIVE = 0.1
#: the Newton path ends after a weight ≤ DEGENERATE_MU once more than DEGENERATE_FRACTION of the
#: tuples lie within ``μ`` of their kink (:meth:`AnchoredBarrier._degenerate`); BALANCE: such a j
DEGENERATE_MU, DEGENERATE_FRACTION, BALANCE = 1e-3, 0.25, True  # is tried by _eq20_balance first
#: the Kelley rounds of a j are seeded by the best one-column move (:meth:`AnchoredBarrier.single_move`)
SINGLE_MOVE = True
#: a Newton path with a target asks it from this smoothing weight down (:meth:`AnchoredBarrier.newton`)
RULE_MU = 1e-2


def applicable(model) -> bool:
    """Every tuple one monomial (node/edge triangles): ``F`` is a sum of ``(1 − a_t g)⁺``."""
    return model.st.n_mono == model.st.n_tuples and model.nc > 0 and hasattr(model, "g_star")


class AnchoredBarrier:
    """``H(j)`` bounds next to the eq.-20 argmin over the columns ``cand`` of the LP structure
    ``st`` (every other ``g`` is 0 in the points; the lower bound covers all participants);
    ``g_start`` (over all participants) is the eq.-20 minimiser the Newton path starts from."""

    def __init__(self, st, cand: np.ndarray, g_start: np.ndarray, stats, merged=None):
        self.st, self.stats = st, stats
        t0 = time.perf_counter()
        self.cols, col, _, t_kept, self.const, e = restricted(st, cand)
        nc = len(self.cols)
        kept = np.flatnonzero(t_kept)
        if merged is None:
            row = np.full(st.n_tuples, -1, dtype=np.int64)
            row[kept] = np.arange(len(kept))
            a = sp.csr_matrix(
                (st.ent_coef[e], (row[st.mono_tuple[st.ent_mono[e]]], col[st.ent_part[e]])),
                shape=(len(kept), nc),
            )
            # equal rows are one term of summed weight (_row_merge): the same F, fewer rows
            merged = merge_rows(a, st.q[kept])
        # (A, q, each kept tuple's row): given by the cut model over the same columns (of)
        self.A, self.q, self._merged = merged
        self._count = np.bincount(self._merged, minlength=len(self.q))  # tuples per row
        self.At = self.A.T.tocsr()
        self.kept = kept
        self.mult = st.mult[self.cols]
        self.norm = float(np.abs(self.A).sum(axis=1).max()) if len(kept) else 1.0
        self.nc = nc
        self.g_star = np.asarray(g_start, dtype=float)[self.cols]
        self.newton_steps = self.trust_lps = 0
        self.paths = {}  # j → the Newton path's points (see newton)
        self.best_mu = {}  # j → the μ of the best lower bound (see lower)
        self.degenerate = set()  # j whose Newton path ended at a degenerate optimum (newton)
        self.stats.build_seconds += time.perf_counter() - t0

    @classmethod
    def of(cls, model, cand: np.ndarray | None = None) -> "AnchoredBarrier":
        """For a solved :class:`._x_cuts.Eq20Cuts` (its columns, or the wider ``cand``)."""
        g = np.zeros(model.st.n)
        g[model.cols] = getattr(model, "g_star", 0.0)
        one = getattr(model, "_one", None)  # its merged rows over the same columns: reused
        merged = None if cand is not None or one is None else (one["A"], one["q"], one["inverse"])
        return cls(model.st, model.cand if cand is None else cand, g, model.stats, merged)

    # ------------------------------------------------------------------ values and bounds
    def objective(self, g: np.ndarray) -> float:
        """``H``'s objective at a feasible ``g`` over ``C`` (constants included): an upper bound."""
        return float(self.q @ np.maximum(0.0, 1.0 - self.A @ g)) + self.const

    def lower(self, j: float, pi_kept: np.ndarray) -> float:
        """The certified lower bound of ``H(j)`` from ``π`` on the rows of :attr:`A` (merged
        equal tuples, each split over its tuples by weight: :func:`._row_merge.split`)."""
        st = self.st
        pi = st.q.copy()  # a tuple whose monomial avoids C: π = q
        pi[self.kept] = split(pi_kept, self.q, self._merged, st.q[self.kept])
        load = np.bincount(st.ent_part, weights=pi[st.mono_tuple[st.ent_mono]] * st.ent_coef,
                           minlength=st.n)
        mult = st.mult
        ratio = load / mult
        order = np.argsort(-ratio, kind="stable")
        k = min(int(np.searchsorted(np.cumsum(mult[order]), j)), st.n - 1)
        best, arg = -np.inf, 0.0
        for mu in (float(ratio[order[k]]), 0.0):
            v = -float(np.maximum(load - mu * mult, 0.0).sum()) - mu * j
            if v > best:
                best, arg = v, mu
        value = st.const_true + float(pi.sum()) + best
        if value >= self.best_mu.get(j, (-np.inf, 0.0))[0]:
            self.best_mu[j] = (value, arg)
        return value

    def hessian(self, d: np.ndarray, live: np.ndarray | None = None) -> np.ndarray:
        """``Aᵀ diag(d) A`` (dense): from the pairs of :class:`_Pairs`, built once per model,
        or by :func:`_gram` over the rows ``live`` (``d`` is 0 elsewhere) when they would not
        fit (rows with many columns) or when at most :data:`FEW_LIVE` of the rows are live
        (late on a path away from a degenerate optimum: a sparse product over the few rows near
        their kink instead of a bincount over every row's pairs)."""
        pairs = self.__dict__.get("_pairs")
        if pairs is None:
            pairs = self._pairs = _Pairs.of(self.A)
        if pairs is False or (live is not None and live.sum() <= FEW_LIVE * len(d)):
            live = d != 0.0
            return _gram(self.A[live], d[live])
        return pairs.gram(d)

    # ------------------------------------------------------------------ step 1: Newton
    def _start(self, j: float) -> np.ndarray:
        js = float(self.mult @ self.g_star)
        g = self.g_star * (j / js) if js > 0 else np.full(self.nc, j / float(self.mult.sum()))
        lo, hi = -1.0, 1.0  # shift so that Σ mult clip(g + α) = j (bisection)
        eps = 1e-3
        for _ in range(100):
            a = 0.5 * (lo + hi)
            if self.mult @ np.clip(g + a, eps, 1 - eps) > j:
                hi = a
            else:
                lo = a
        return np.clip(g + 0.5 * (lo + hi), eps, 1 - eps)

    def _smoothed(self, g, mu, a=None):
        """The smoothed objective at ``g``; ``a = (1 − A g)/μ`` when the caller has it."""
        a = (1.0 - self.A @ g) / mu if a is None else a
        return float(self.q @ np.logaddexp(0.0, a)) * mu - mu * float(np.log(g).sum() + np.log1p(-g).sum())

    def newton(self, j: float, stop=None) -> tuple[np.ndarray, np.ndarray]:
        """``(g, π)``: a point of the row with ``0 < g < 1`` next to an optimum, and the
        smoothed slopes ``π_t = q_t σ((1 − a_t g)/μ)`` (a dual guess for :meth:`lower`).
        ``stop(lower)`` (a target that rules ``j`` out) is asked at the end of every smoothing
        weight from :data:`RULE_MU` down, with the certified lower bound of that ``π``."""
        g = self._start(j)
        nc, mult = self.nc, self.mult
        kkt = np.zeros((nc + 1, nc + 1))
        kkt[:nc, nc] = kkt[nc, :nc] = mult
        pi = self.q.copy()
        self.path = []  # the last point of each smoothing weight (cuts for Kelley, see h_pair)
        for mu in MUS:
            if self.newton_steps > 0:
                self.path.append(g.copy())
            known = None  # (a, value) at g from the accepted trial of the last step (same μ)
            for _ in range(30):
                if self.newton_steps >= MAX_NEWTON:
                    return g, pi
                _check_deadline("the barrier's Newton steps")  # a release's budget (_deadline)
                self.newton_steps += 1
                a = (1.0 - self.A @ g) / mu if known is None else known[0]
                sig = expit(a)
                pi = self.q * sig
                grad = -(self.At @ pi) - mu * (1.0 / g - 1.0 / (1.0 - g))
                live = np.abs(a) < 36.0  # σ(1 − σ) < 1e-15 elsewhere: nothing to the Hessian
                kkt[:nc, :nc] = self.hessian(np.where(live, pi * (1.0 - sig) / mu, 0.0), live)
                kkt[np.arange(nc), np.arange(nc)] += mu * (1.0 / g**2 + 1.0 / (1.0 - g) ** 2)
                rhs = np.concatenate([-grad, [j - mult @ g]])
                try:
                    step = np.linalg.solve(kkt, rhs)[:nc]
                except np.linalg.LinAlgError:
                    return g, pi
                if not np.all(np.isfinite(step)):
                    return g, pi
                dec = -float(grad @ step)
                t = _eq20_balance.box_step(g, step)
                # a is (1 − A g)/μ at this g; the value at g is the last accepted trial's
                f0 = self._smoothed(g, mu, a) if known is None else known[1]
                known = None
                while t > 1e-12:
                    trial = g + t * step
                    a_t = (1.0 - self.A @ trial) / mu
                    f_t = self._smoothed(trial, mu, a_t)
                    if f_t <= f0 - 0.25 * t * max(dec, 0.0):
                        known = (trial, a_t, f_t)
                        break
                    t *= 0.5
                g = np.clip(g + t * step, 1e-15, 1 - 1e-15)
                # the next step reads a and the value at g from the trial when the clip kept it
                known = known[1:] if known is not None and np.array_equal(g, known[0]) else None
                if dec < 1e-6 or dec < 1e-9 * abs(f0):
                    break
            if mu <= DEGENERATE_MU and self._degenerate(g, mu):
                self.path.append(g.copy())
                self.degenerate.add(j)  # no trust region at j (see bounds)
                break
            if stop is not None and mu <= RULE_MU and stop(self.lower(j, pi)):
                break  # j is ruled out by a certified bound: the rest of the path is moot
        return g, pi

    def _degenerate(self, g: np.ndarray, mu: float) -> bool:
        """More than :data:`DEGENERATE_FRACTION` of the tuples within ``μ`` of their kink at the
        end of a smoothing weight: the optimum is degenerate (ca-HepPh node next to ``g = 1/3``
        on the clique: a million tuples), the trust region will be skipped and the Kelley rounds
        decide ``j``; the rest of the path would only refine their seeds (time only)."""
        near = np.abs(1.0 - self.A @ g) <= mu
        return int(self._count[near].sum()) > DEGENERATE_FRACTION * len(self._merged)

    def single_move(self, j: float) -> np.ndarray | None:
        """The best point of the row ``Σ mult g = j`` that moves one column of the eq.-20
        minimiser (``g_c += (j − j*)/mult_c`` within ``[0, 1]`` up to rounding; exact changes of ``F`` by one
        pass over the entries), or ``None``. Next to a degenerate argmin this is often ``H(j)``'s
        minimiser (ca-HepPh node, ``j = 80``: one author of the clique from 1/3 to 2/3): a seed
        of the Kelley rounds and an upper bound (its exact objective), nothing more."""
        gs, mult = self.g_star, self.mult
        delta = (j - float(mult @ gs)) / mult
        ok = (gs + delta >= -1e-12) & (gs + delta <= 1.0 + 1e-12)  # rounding of g*: clipped
        if not ok.any():
            return None
        coo = self.__dict__.get("_coo")
        if coo is None:
            coo = self._coo = self.A.tocoo()
        s = (self.A @ gs)[coo.row]
        step = delta[coo.col] * coo.data
        change = np.bincount(coo.col, weights=self.q[coo.row] * (
            np.maximum(0.0, 1.0 - s - step) - np.maximum(0.0, 1.0 - s)), minlength=self.nc)
        c = int(np.argmin(np.where(ok, change, np.inf)))
        g = gs.copy()
        g[c] = min(max(g[c] + delta[c], 0.0), 1.0)
        return g

    def start(self, j: float, stop=None):
        """``(g, lower, upper)`` after the Newton path at ``j`` (cached per ``j``); ``stop(lower)``
        may end the path early (see :meth:`newton`)."""
        cache = self.__dict__.setdefault("_started", {})
        if j not in cache:
            t0 = time.perf_counter()
            g, pi = self.newton(float(j), stop)
            cache[j] = (g, self.lower(j, pi), self.objective(g))
            self.paths[j] = self.path
            self.stats.build_seconds += time.perf_counter() - t0
        return cache[j]

    # ------------------------------------------------------------------ step 2: trust region
    def _trust_lp(self, j: float, g: np.ndarray, time_limit):
        """``(x, π)``: the exact minimiser of F over the box around ``g`` and the row, and the
        dual guess (q below the band, 0 above, the LP's row duals inside)."""
        nc = self.nc
        r = DELTA / self.norm
        s = self.A @ g
        near = np.abs(1.0 - s) <= DELTA
        lin = (s < 1.0) & ~near
        cost_g = -(self.At @ np.where(lin, self.q, 0.0))
        nr = np.flatnonzero(near)
        if len(nr) > max(MIN_NEAR_CAP, NEAR_FRACTION * len(self.q)):
            return None  # a degenerate optimum (ca-HepPh node, j = 80: 1 M tuples on the kink)
        h = highspy.Highs()
        h.silent()
        h.setOptionValue("threads", 1)
        nv = nc + len(nr)
        h.addVars(nv, np.concatenate([np.maximum(g - r, 0.0), np.zeros(len(nr))]),
                  np.concatenate([np.minimum(g + r, 1.0), np.full(len(nr), INF)]))
        h.changeColsCost(nv, np.arange(nv, dtype=np.int32), np.concatenate([cost_g, self.q[nr]]))
        b = sp.hstack([self.A[nr], sp.identity(len(nr), format="csr")], format="csr")
        h.addRows(len(nr), np.ones(len(nr)), np.full(len(nr), INF), b.nnz,
                  b.indptr[:-1].astype(np.int32), b.indices.astype(np.int32), b.data.astype(np.float64))
        # the row: the box may miss it by rounding only; widen the box to hold it
        h.addRow(float(j), float(j), nc, np.arange(nc, dtype=np.int32), self.mult)
        _, x, dual = resolve_lp(h, solver="simplex", time_limit=time_limit, stats=self.stats,
                                what="H trust-region LP")
        self.trust_lps += 1
        x = np.clip(np.asarray(x)[:nc], 0.0, 1.0)
        # the same LP without the box (warm: bounds only) is a relaxation of H(j) everywhere —
        # the pieces underestimate F — whose duals certify; the box LP's may sit on the box
        h.changeColsBounds(nc, np.arange(nc, dtype=np.int32), np.zeros(nc), np.ones(nc))
        try:
            _, _, dual = resolve_lp(h, solver="simplex", time_limit=time_limit,
                                    stats=self.stats, what="H relaxation LP")
        except SolverError:
            pass  # the box LP's duals still give a valid (weaker) bound
        pi = np.where(lin, self.q, 0.0)
        pi[nr] = np.asarray(dual)[: len(nr)]
        inner = (x > 0.0) & (x < 1.0)  # put the row's rounding residual on the inner columns
        if inner.any():
            x[inner] += (j - float(self.mult @ x)) / float(self.mult[inner].sum())
            x = np.clip(x, 0.0, 1.0)
        return x, pi

    def bounds(self, j: float, stop=None, time_limit=None):
        """``(lower, upper, exact)``: certified ``lower ≤ H(j) ≤ upper`` over all participants;
        ``exact`` when they agree to 1e-9 relative. ``stop(lower)`` may end the work early (a
        target for ruling ``j`` out). ``(−inf, inf, False)`` when ``j`` is outside ``C``'s mass."""
        if not (0.0 < j < float(self.mult.sum()) - 1e-9):
            return -np.inf, np.inf, False
        g, lower, upper = self.start(j)
        now = [g, lower, upper]  # the centre, the certified bounds
        done = lambda: now[2] - now[1] <= _GAP * max(1.0, abs(now[2]))  # noqa: E731

        def verdict() -> str:
            return DONE if done() else STOP if stop is not None and stop(now[1]) else MORE

        def look(out) -> str:  # the box LP's minimiser: a point of H(j) and a dual guess
            if out is None:
                return STOP  # too many tuples on their kink for a trust region
            x, pi = out
            if abs(float(self.mult @ x) - j) > 1e-7 * max(1.0, j):
                return STOP  # the row is not held to rounding: not a point of H(j)
            value = self.objective(x)
            now[1] = max(now[1], self.lower(j, pi))
            if value > now[2]:
                return STOP  # cannot happen for an exact LP (ḡ is in the box): stop, not loop
            now[0], now[2] = x, value
            return verdict()

        # degenerate (the path ended early): no trust region (its near band holds most tuples)
        if verdict() == MORE and float(j) not in self.degenerate:
            rounds(lambda: self._trust_lp(j, now[0], time_limit), look, MAX_TRUST)
        elif verdict() == MORE and BALANCE:  # balanced dual first (_eq20_balance), then the rounds
            now[1], now[2] = _eq20_balance.anchored(self, j, now[0], DEGENERATE_MU, *now[1:])
        return now[1], now[2], done()


#: pair_pass widens the columns to the degrees above this fraction of the bound's price of mass
WIDEN = 0.9


def pair_pass(solver, xc, js, dh, res, best, out) -> set:
    """One pass of :meth:`._lp.Solver.h_pair` (its ``res``, ``best``, ``out``) by
    :class:`.AnchoredBarrier`, one ``j`` after the other, the likelier argmin first (smaller
    ``H + Δ̂ j`` at the best one-column move, :meth:`AnchoredBarrier.single_move`; with
    :data:`SINGLE_MOVE` off, every Newton path first and their upper bounds): the Newton path
    (ended early once its certified lower bound rules ``j`` out against an exact value found
    before), then the trust-region LPs until ``j`` is exact or its lower bound rules it out (then, when columns
    outside ``C`` may help, the same over wider columns); a ``j`` still open gets the Kelley
    rounds at once, its pool seeded with the cuts at the Newton path's points and at the best
    one-column move of the eq.-20 minimiser to ``j`` (:meth:`AnchoredBarrier.single_move`),
    stopping only when exact or ruled out. A ``j`` whose path ended at a degenerate optimum
    (:meth:`AnchoredBarrier.newton`) has no trust region and gets the rounds over ``C``
    first, the wider columns only when those fail for columns. Returns the ``j`` whose rounds
    had a target (``h_pair``'s ``ruling``)."""
    bar = getattr(xc, "barrier", None) or AnchoredBarrier.of(xc)  # _eq20_balance's, when it decided
    todo = [j for j in js if not res[j][2]]

    def guess(j) -> float:  # H + Δ̂ j at the best one-column move (inf when none is on the row)
        g = bar.single_move(float(j))
        on_row = g is not None and abs(float(bar.mult @ g) - j) <= 1e-7 * max(1.0, j)
        return bar.objective(g) + j * dh if on_row else np.inf

    if SINGLE_MOVE:  # the likelier argmin by the one-column moves first; a later path has a target
        order = sorted(todo, key=guess)
    else:  # every path first, then by their upper bounds
        for j in todo:
            _, lo, up = bar.start(float(j))
            res[j][0], res[j][1] = max(res[j][0], lo), min(res[j][1], up)
        order = sorted(todo, key=lambda k: res[k][1] + k * dh)
    ruling = set()
    for j in order:
        if res[j][2] or out(j):
            continue
        b = best(j)
        stop = None if b is None else (
            lambda lo, j=j, b=b: lo + j * dh >= b - _GAP * max(1.0, abs(b)))
        _, lo, up = bar.start(float(j), stop)  # cached when run above
        res[j][0], res[j][1] = max(res[j][0], lo), min(res[j][1], up)
        if out(j):
            ruling.add(j)
            continue
        lo, up, ex = bar.bounds(float(j), stop=stop, time_limit=solver.time_limit)
        r = res[j]
        r[:] = [max(r[0], lo), min(r[1], up), ex, r[3]]
        # the price of mass at the bound's dual is below Δ̂ (a j right of the argmin):
        # participants outside C with a degree above it may help; widen C to them
        mu = bar.best_mu.get(float(j), (0.0, dh))[1]
        wider = xc.cand | (solver.lp.deg > WIDEN * mu)
        wide = None

        def widen():  # the Newton path and trust region over the wider columns
            w = AnchoredBarrier.of(xc, wider)
            lo, up, ex = w.bounds(float(j), stop=stop, time_limit=solver.time_limit)
            r[:] = [max(r[0], lo), min(r[1], up), ex, r[3]]
            return w

        def kelley():  # the rounds over C, seeded by the path and the best one-column move
            for g_pt in bar.paths.get(float(j), []):
                xc.add_cut(g_pt)
            moved = bar.single_move(float(j)) if SINGLE_MOVE else None  # a seed, and an
            # upper bound when on the row
            if moved is not None:
                xc.add_cut(moved)
                if abs(float(bar.mult @ moved) - j) <= 1e-7 * max(1.0, j):
                    r[1] = min(r[1], bar.objective(moved))
            lo, up, ex = xc.anchored_bounds(j, stop=stop)
            r[:] = [max(r[0], lo), min(r[1], up), ex, xc.failure]

        can_widen = wider.sum() > xc.cand.sum()
        if float(j) in bar.degenerate:  # no trust region at j: the rounds over C first (no wider)
            if not (r[2] or out(j)):
                kelley()
            if not (r[2] or out(j)) and xc.failure == "columns" and can_widen:
                wide = widen()
        else:
            if not (r[2] or out(j)) and can_widen:
                wide = widen()
            if not (r[2] or out(j)):
                kelley()
        if not (r[2] or out(j)) and xc.failure == "columns" and wide is not None:
            # Kelley over the wider columns, seeded by the wide Newton path (a new pool)
            xw = Eq20Cuts(solver.lp, wider, dh, stats=solver.stats, time_limit=solver.time_limit)
            for g_pt in wide.paths.get(float(j), []):
                xw.add_cut(g_pt)
            lo, up, ex = xw.anchored_bounds(j, stop=stop)
            r[:] = [max(r[0], lo), min(r[1], up), ex, r[3] if ex else xw.failure]
        if b is not None:
            ruling.add(j)
    return ruling


#: the pairs of :class:`_Pairs` are not built past this many (memory: 16 bytes each)
MAX_PAIRS = 40_000_000


class _Pairs:
    """The column pairs of every row of a CSR matrix ``A``: ``Aᵀ diag(d) A`` as one weighted
    ``bincount`` over them per Newton step, instead of a sparse product (with a row slice and a
    transpose copy) per step. Each row with ``k`` entries gives its ``k(k + 1)/2`` pairs
    ``a ≤ b`` (upper triangle), weight ``A_ra A_rb``; the lower triangle is the transpose.
    The same products as :func:`_gram`, summed in another order (equal to rounding).

    >>> a = sp.csr_matrix(np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 3.0], [2.0, 0.0, 0.0]]))
    >>> d = np.array([1.0, 0.5, 2.0])
    >>> np.allclose(_Pairs.of(a).gram(d), (a.T @ sp.diags(d) @ a).toarray())
    True
    """

    def __init__(self, rows, flat, w, nc):
        self.rows, self.flat, self.w, self.nc = rows, flat, w, nc

    @classmethod
    def of(cls, a: sp.csr_matrix):
        """The pairs of ``a`` (duplicates summed), or ``False`` past :data:`MAX_PAIRS`."""
        a = a.tocsr()
        a.sum_duplicates()
        nc = a.shape[1]
        k = np.diff(a.indptr)
        if int((k * (k + 1) // 2).sum()) > MAX_PAIRS:
            return False
        itype = np.int32 if nc * nc < 2**31 else np.int64
        rows, flat, w = [], [], []
        for kk in np.unique(k[k > 0]).tolist():
            r = np.flatnonzero(k == kk)
            pos = a.indptr[r][:, None] + np.arange(kk)
            c, v = a.indices[pos].astype(itype), a.data[pos]
            for i in range(kk):
                for j in range(i, kk):
                    flat.append(np.minimum(c[:, i], c[:, j]) * nc + np.maximum(c[:, i], c[:, j]))
                    w.append(v[:, i] * v[:, j])
                    rows.append(r.astype(itype if len(k) < 2**31 else np.int64))
        cat = (lambda x, t: np.concatenate(x) if x else np.zeros(0, dtype=t))  # noqa: E731
        return cls(cat(rows, itype), cat(flat, itype), cat(w, np.float64), nc)

    def gram(self, d: np.ndarray) -> np.ndarray:
        """``Aᵀ diag(d) A`` as a dense ``nc × nc`` array."""
        nc = self.nc
        u = np.bincount(self.flat, weights=self.w * d[self.rows], minlength=nc * nc).reshape(nc, nc)
        return u + u.T - np.diag(np.diag(u))


def _gram(rows: sp.csr_matrix, d: np.ndarray) -> np.ndarray:
    """``rowsᵀ diag(d) rows`` as a dense array, bit for bit ``(rows.T @ rows.multiply(d[:, None]))
    .toarray()``: the same products ``a·d`` in the same places, scaled in place of CSR data instead
    of through a COO copy and its conversion back (seconds per Newton step on ca-HepPh)."""
    scaled = rows.copy()
    scaled.data = rows.data * np.repeat(d, np.diff(rows.indptr))
    return (rows.T @ scaled).toarray()
