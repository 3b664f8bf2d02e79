"""R2T's truncation LP ``Q(I, τ)``: the plain model, an exact reduction per τ, and cheap bounds.

The LP (Dong et al., SIGMOD 2022, §6, with projection) over a K-relation: one ``v_m ≥ 0`` per
monomial, one ``u_t ∈ [0, ψ(t)]`` per output tuple,

    Q(I, τ) = max Σ_t u_t   s.t.   u_t ≤ Σ_{m ∈ D_t} v_m,   Σ_{m ∋ i} v_m ≤ τ for every participant i.

Three facts make it cheap without changing its value (each proven where it is used, each checked
against the plain model and PuLP in ``tests/unit/mechanisms/r2t/test_r2t_lp.py``):

1. **Capping.** ``v_m ≤ cap_m = ψ(t(m))`` loses nothing (lowering a larger ``v_m`` to ``ψ(t)``
   keeps ``u_t ≤ Σ v``). Let ``load_i = Σ_{m ∋ i} cap_m``; a participant with ``load_i ≤ τ`` is
   *light*: its row holds for every capped ``v`` and is dropped.
2. **Free monomials.** A monomial whose participants are all light is in no remaining row, so
   ``v_m = cap_m`` is optimal, and its tuple is saturated (``u_t = ψ(t)``) — that tuple leaves
   the LP (its other monomials go to 0, which only relaxes rows). What remains: the tuples all of
   whose monomials touch a *heavy* participant (``load_i > τ``), with the heavy rows only.
3. **Bounds.** ``LB(τ) = Σ_t min(ψ(t), Σ_{m ∈ D_t} cap_m·min(1, τ/maxload_m))`` is feasible
   (row ``i`` gets at most ``Σ cap_m·τ/load_i = τ``); ``UB(τ) = free(τ) + min(rest(τ), H(τ)·τ)``
   with ``H(τ)`` the number of heavy participants (every remaining monomial touches one). For
   ``τ ≥ max load`` both equal ``Σψ``. ``Q`` is also nondecreasing and concave in ``τ`` with
   ``Q(0) ≥ 0``, so ``Q(τ)/τ`` is nonincreasing (used by the race in :mod:`.race`).
4. **Merging.** Single-monomial tuples whose monomials have the same set of heavy participants
   enter the rows identically: one column with the sum of their caps as upper bound has the same
   optimum (split a merged value in proportion to the caps, or sum a solution's values).
5. **Dual bound.** Any ``y ≥ 0`` on the rows bounds ``Q`` from above by weak duality
   (:meth:`R2TModel.dual_bound`); the race tries it before an LP.
6. **Blocks.** Rows and columns of the reduced LP that share no entry, directly or through
   others, form independent LPs (connected components of its bipartite graph): the optimum is
   the sum of the blocks' optima (the objective is separable and every constraint lies in one
   block). Large components are solved one by one (:func:`_blocks`).
7. **Certified intervals.** With a public tolerance, :meth:`R2TModel.value_interval` returns a
   feasible value ``f`` and a dual bound ``U`` with ``f ≤ Q ≤ U`` and ``U − f ≤ gap``, summed over
   the blocks (:mod:`._certified` proves both certificates; :mod:`._smooth` finds
   them for millions of columns), for
   :func:`~provsql_dp.mechanisms.r2t.race.release`'s ``lp_gap``.

Example
-------
>>> from provsql_dp.provenance.krelation import KRelation
>>> kr = KRelation.from_annotations(rows=[(k,) for k in range(6)],
...     annotations=[[{("p", k % 3), ("p", 3)}] for k in range(6)])
>>> m = R2TModel(kr)
>>> m.value(2.0), m.value(8.0), m.plain_value(2.0), [round(b, 6) for b in m.bounds(2.0)]
(2.0, 6.0, 2.0, [2.0, 2.0])
"""

from __future__ import annotations

import math
import time

import numpy as np

from ...provenance.krelation import KRelation
from ..lp._highs import INF, LPStats, solve_lp
from ._certified import solve as certified_solve
from ._columns import solve_by_columns
from ._reduce import _blocks, class_keys
from ._smooth import solve as smooth_solve

__all__ = ["R2TModel"]

#: relative margin by which bounds computed through long floating-point sums are widened
_SLACK = 1e-9


class R2TModel:
    """The arrays of one K-relation's truncation LPs, prepared once and reduced per τ.

    Everything here is numpy over the K-relation's arrays (no Python object per tuple). Each
    :meth:`value` builds and solves the reduced LP of one τ; :meth:`plain_value` the unreduced
    one (the reference the tests hold the reduction to).
    """

    #: reduced LPs with more monomial columns than this are solved by column generation
    #: (:mod:`._columns`); None (the default): never — measured slower than HiGHS on the
    #: whole reduced LP on ca-GrQc, and not faster on ca-HepPh (see the module)
    colgen_above: int | None = None
    #: HiGHS's algorithm for the reduced LPs: its interior point method (then crossover to an
    #: optimal basis). The dual simplex stalls on these degenerate packing LPs: on ca-GrQc edge
    #: privacy at τ = 32 (1,991 rows, 30,020 columns) it ran 289 k iterations into a 100 s time
    #: limit, the primal simplex took 10.7 s, the interior point method 1.2 s
    solver: str = "ipm"
    #: connected components of the reduced LP with at least this many rows are solved as LPs of
    #: their own (fact 6), the smaller ones together in one LP
    min_block_rows: int = 200
    #: with a public gap (:meth:`value_interval`), blocks with at most this many rows and at
    #: least :attr:`certified_min_columns` columns go to the certified interior point method;
    #: its dense (rows × rows) factorisation costs more than HiGHS beyond ~1500 rows (ca-HepPh
    #: edge, 2,057 rows: 3.9 s against HiGHS's exact 1.5 s; ca-GrQc node, 309 rows × 40 k
    #: columns: 0.4 s against 2.7 s; ca-AstroPh node τ = 1024, 1,119 rows × 428 k columns:
    #: 28 s to γ = 0.0625 against ~57 s exact, loaded machine)
    certified_max_rows: int = 1500
    certified_min_columns: int = 2000
    #: certified blocks with at least this many columns go to Newton's method on the smoothed
    #: dual (:mod:`._smooth`) instead: ca-HepPh node τ = 4096 (409 × 2.57 M), γ = 1/16 in
    #: ~14 s CPU where the interior point method stalled at a gap of 1.8τ
    smooth_min_columns: int = 1_000_000

    def __init__(self, kr: KRelation, *, stats: LPStats | None = None):
        t0 = time.perf_counter()
        w = np.asarray(kr.weights, dtype=np.float64)
        if np.any(w < 0) or not np.all(np.isfinite(w)):
            raise ValueError("R2T needs nonnegative finite tuple weights (clamp a SUM to lower = 0)")
        self.stats = stats if stats is not None else LPStats()
        self.w = w
        self.n_tuples = len(w)
        self.tuple_ptr = np.asarray(kr.tuple_ptr, dtype=np.int64)
        self.n_mono_of = np.diff(self.tuple_ptr)
        n_m = int(self.tuple_ptr[-1])
        #: every tuple has one monomial (graph patterns): tuple and monomial indices coincide
        self.all_single = n_m == self.n_tuples
        self.t_of_m = (np.arange(n_m, dtype=np.int64) if self.all_single
                       else np.repeat(np.arange(self.n_tuples), self.n_mono_of))
        self.cap = w if self.all_single else w[self.t_of_m]
        mono_ptr = np.asarray(kr.mono_ptr, dtype=np.int64)
        sizes = np.diff(mono_ptr)
        self.pid = np.asarray(kr.mono_part, dtype=np.int64)  # dense participant indices
        #: the common size of every monomial (graph patterns), else 0
        k = int(sizes[0]) if n_m and 0 < sizes[0] <= 8 and len(self.pid) == n_m * sizes[0] \
            and int(mono_ptr[0]) == 0 else 0
        self._uniform_k = k if k and bool(np.all(sizes == k)) else 0
        self._sizes = sizes
        self._mono_of_entry = None  # built on first use (only LPs need it)
        self.n_participants = len(kr.participant_list)
        k = self._uniform_k
        if k and n_m and bool(np.all(self.cap == self.cap[0])):  # one weight: an integer count
            self.load = np.bincount(self.pid, minlength=self.n_participants) * float(self.cap[0])
        else:
            per_entry = np.repeat(self.cap, k) if k else self.cap[self.mono_of_entry]
            self.load = np.bincount(self.pid, weights=per_entry, minlength=self.n_participants)
        nonempty = sizes > 0
        #: participants ranked by load (ties by index); a monomial's largest rank names its maxload
        self._by_load = np.argsort(self.load, kind="stable")
        self._max_rank = None
        if k:  # a (monomials × k) view: no reduceat
            rank = np.empty(self.n_participants, dtype=np.int64)
            rank[self._by_load] = np.arange(self.n_participants)
            self._max_rank = rank[self.pid].reshape(n_m, k).max(axis=1)
            self.maxload = self.load[self._by_load][self._max_rank]
        else:
            self.maxload = np.zeros(n_m)
            if self.pid.size:
                self.maxload[nonempty] = np.maximum.reduceat(
                    self.load[self.pid], mono_ptr[:-1][nonempty])
        self.total = self.snap(float(w.sum()))
        self.max_load = float(self.load.max()) if self.n_participants else 0.0
        self._starts = mono_ptr[:-1][nonempty]
        self._nonempty = nonempty
        self._sorted = None  # (maxload sorted, prefix sums) for bounds(), built on first use
        self.stats.build_seconds += time.perf_counter() - t0

    @property
    def mono_of_entry(self) -> np.ndarray:
        """The monomial of every entry of ``pid`` (built once, on first use)."""
        if self._mono_of_entry is None:
            self._mono_of_entry = np.repeat(np.arange(len(self._sizes), dtype=np.int64),
                                            self._sizes)
        return self._mono_of_entry

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns) of the plain LP."""
        multi = int(np.count_nonzero(self.n_mono_of > 1))
        return self.n_participants + multi, len(self.t_of_m) + multi

    # -- bounds ---------------------------------------------------------------------------
    def _split(self, tau: float):
        free_m = self.maxload <= tau
        if self.all_single:
            return free_m, free_m
        done_t = np.bincount(self.t_of_m, weights=free_m, minlength=self.n_tuples) > 0
        return free_m, done_t

    def _per_tuple(self, per_m: np.ndarray, keep_m: np.ndarray | None = None) -> np.ndarray:
        """Sums of a per-monomial quantity per tuple (over ``keep_m`` only, if given)."""
        if keep_m is not None:
            per_m = np.where(keep_m, per_m, 0.0)
        if self.all_single:
            return per_m
        return np.bincount(self.t_of_m, weights=per_m, minlength=self.n_tuples)

    def bounds(self, tau: float) -> tuple[float, float]:
        """``(LB, UB)`` with ``LB ≤ Q(I, τ) ≤ UB`` (fact 3 of the module docstring), cheaply."""
        tau = _check_tau(tau)
        if tau >= self.max_load:
            return self.total, self.total
        if self.all_single:  # every tuple one monomial: prefix sums over the sorted maxloads
            return self._single_bounds(tau)
        _, done_t = self._split(tau)
        free = float(self.w[done_t].sum())
        rest = float(self.w[~done_t].sum())
        heavy = int(np.count_nonzero(self.load > tau))
        ub = free + min(rest, heavy * tau)
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.where(self.maxload > tau, tau / self.maxload, 1.0)
        per_t = self._per_tuple(self.cap * frac)
        lb = float(np.minimum(self.w, per_t).sum())
        return self.snap(min(lb, ub)), self.snap(ub)

    def _single_bounds(self, tau: float) -> tuple[float, float]:
        """:meth:`bounds` when every tuple has one monomial (``min(ψ, cap·frac) = cap·frac``):
        the monomials sorted once by ``maxload``, then two prefix sums per threshold."""
        if self._sorted is None:
            loads = self.load[self._by_load]
            if self._max_rank is not None:  # per participant rank: the caps it is the max of
                c = np.bincount(self._max_rank, weights=self.cap, minlength=len(loads))
                ml = loads
            else:
                order = np.argsort(self.maxload, kind="stable")
                ml, c = self.maxload[order], self.cap[order]
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(ml > 0, c / ml, 0.0)
            self._sorted = (ml, np.concatenate([[0.0], np.cumsum(c)]),
                            np.concatenate([[0.0], np.cumsum(ratio[::-1])])[::-1], loads)
        ml, cap_sum, ratio_tail, loads = self._sorted
        k = int(np.searchsorted(ml, tau, side="right"))  # maxload ≤ τ: free monomials
        free = float(cap_sum[k])
        rest = float(cap_sum[-1] - cap_sum[k])
        heavy = len(loads) - int(np.searchsorted(loads, tau, side="right"))
        ub = (free + min(rest, heavy * tau)) * (1 + _SLACK)  # prefix sums round: keep a margin
        lb = (free + tau * float(ratio_tail[k])) * (1 - _SLACK)
        return self.snap(min(lb, ub)), self.snap(ub)

    def dual_bound(self, tau: float) -> float:
        """An upper bound on ``Q(I, τ)`` from a dual solution (fact 5): weak duality with
        ``y_i = 1/h`` on the heavy participants, the best ``h`` among the heavy counts.

        For any ``y ≥ 0``, ``Q(I, τ) ≤ τ·Σ_i y_i + Σ_t min(ψ(t), Σ_{m ∈ D_t} cap_m·(1 − Σ_{i ∈ m}
        y_i)⁺)`` (add ``y_i·(τ − load_i(v)) ≥ 0`` to the objective of a feasible point and bound
        each tuple's part). It costs a few passes over the monomials, no LP.
        """
        tau = _check_tau(tau)
        if tau >= self.max_load:
            return self.total
        _, done_t = self._split(tau)
        free = float(self.w[done_t].sum())
        heavy = self.load > tau
        n_heavy = int(np.count_nonzero(heavy))
        keep_m = ~done_t[self.t_of_m]
        h_m = self._heavy_count(heavy)
        best = float(self.w[~done_t].sum())  # y = 0
        if self.all_single:  # Σ_t min(ψ, cap·(1 − h/η)⁺) = Σ_k C_k·(1 − k/η)⁺, C_k per count k
            c_k = np.bincount(h_m[keep_m], weights=self.cap[keep_m])
            ks = np.arange(len(c_k))
            for h in ks[1:][c_k[1:] > 0]:
                best = min(best, tau * n_heavy / h + float(
                    (c_k * np.maximum(0.0, 1.0 - ks / h)).sum()))
            return (free + best) * (1 + _SLACK)
        for h in np.unique(h_m[keep_m & (h_m > 0)])[:8]:
            per_t = self._per_tuple(self.cap * np.maximum(0.0, 1.0 - h_m / h), keep_m)
            best = min(best, tau * n_heavy / h + float(np.minimum(self.w, per_t)[~done_t].sum()))
        return free + best

    def _heavy_count(self, heavy: np.ndarray) -> np.ndarray:
        """The number of ``heavy`` participants in every monomial."""
        n_m, k = len(self.t_of_m), self._uniform_k
        if k:  # every monomial has k participants (graph patterns): a (monomials × k) view
            return heavy[self.pid].reshape(n_m, k).sum(axis=1, dtype=np.int64)
        h_m = np.zeros(n_m, dtype=np.int64)
        h_m[self._nonempty] = np.add.reduceat(heavy[self.pid].astype(np.int32), self._starts)
        return h_m

    # -- the LPs --------------------------------------------------------------------------
    def value(self, tau: float, *, time_limit: float | None = None) -> float:
        """``Q(I, τ)`` through the reduced LP (facts 1–2); raises
        :class:`~provsql_dp.errors.SolverError` unless HiGHS solves it optimally."""
        tau = _check_tau(tau)
        if tau >= self.max_load:
            return self.total
        t0 = time.perf_counter()
        _, done_t = self._split(tau)
        free = float(self.w[done_t].sum())
        keep_m = ~done_t[self.t_of_m]
        if not keep_m.any():
            return self.snap(free)
        rows = self.load > tau
        self.stats.build_seconds += time.perf_counter() - t0
        if self.colgen_above is not None and np.count_nonzero(keep_m) > self.colgen_above:
            return self.snap(free + max(0.0, solve_by_columns(self, keep_m, rows, tau, time_limit)))
        t0 = time.perf_counter()
        model = self._merged_model(keep_m, rows, tau)
        parts = _blocks(model, self.min_block_rows)
        self.stats.build_seconds += time.perf_counter() - t0
        # the time limit holds for the threshold, all blocks together
        deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
        total = free
        for part in parts:
            left = None if deadline is None else max(deadline - time.perf_counter(), 1e-3)
            total += self._solve(part, left, solver=self.solver)
        return self.snap(total)

    def value_interval(self, tau: float, *, gap: float,
                       time_limit: float | None = None) -> tuple[float, float]:
        """``(f, U)`` with ``Q(I, τ) − gap ≤ f ≤ Q(I, τ) ≤ U`` (fact 7): the reduced LP's blocks
        with at most :attr:`certified_max_rows` rows and at least :attr:`certified_min_columns`
        columns go to the certified interior point method (:mod:`._certified`), the others
        (and any certified block that misses its share of ``gap``) to HiGHS exactly. ``f`` is
        rounded *down* to 40 bits, so it stays ≤ ``Q``."""
        tau = _check_tau(tau)
        gap = float(gap)
        if not gap >= 0:
            raise ValueError(f"gap must be nonnegative, got {gap!r}")
        if tau >= self.max_load:
            return self.total, self.total
        t0 = time.perf_counter()
        _, done_t = self._split(tau)
        free = float(self.w[done_t].sum())
        keep_m = ~done_t[self.t_of_m]
        if not keep_m.any():
            return self.snap(free), self.snap(free)
        rows = self.load > tau
        parts = _blocks(self._merged_model(keep_m, rows, tau), self.min_block_rows)
        self.stats.build_seconds += time.perf_counter() - t0
        deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
        certified = [len(p[4]) <= self.certified_max_rows and p[0] >= self.certified_min_columns
                     for p in parts]
        # the rounding of f to 40 bits may cost up to 2^-40 relative: keep it out of the share
        share = gap / max(1, sum(certified)) * (1 - 1e-6)
        lo = hi = free
        for part, cert in zip(parts, certified):
            left = None if deadline is None else max(deadline - time.perf_counter(), 1e-3)
            if cert:
                t0 = time.perf_counter()
                try:
                    if part[0] >= self.smooth_min_columns:
                        b_lo, b_hi = smooth_solve(part, abs_gap=share, time_limit=left)
                    else:
                        b_lo, b_hi = certified_solve(part, rel_gap=0.0, abs_gap=share,
                                                     time_limit=left)
                except Exception:  # noqa: BLE001 - an accelerator only: any failure of it
                    b_lo, b_hi = 0.0, math.inf  # gets the exact solve below, never a failed release
                self.stats.n_lps += 1
                self.stats.lp_seconds += time.perf_counter() - t0
                if b_hi - b_lo + 2.0 ** -39 * abs(b_hi) <= share:
                    lo, hi = lo + b_lo, hi + b_hi
                    continue
                left = None if deadline is None else max(deadline - time.perf_counter(), 1e-3)
            q = self._solve(part, left, solver=self.solver)
            lo, hi = lo + q, hi + q
        return _snap_down(lo), self.snap(hi) * (1 + _SLACK)

    def plain_value(self, tau: float, *, time_limit: float | None = None) -> float:
        """``Q(I, τ)`` through the unreduced LP: every monomial, every participant's row."""
        tau = _check_tau(tau)
        if len(self.t_of_m) == 0:
            return 0.0
        model = self._model(np.ones(len(self.t_of_m), dtype=bool),
                            np.ones(self.n_participants, dtype=bool), tau, capped=False)
        return self.snap(self._solve(model, time_limit))

    def _model(self, keep_m: np.ndarray, rows: np.ndarray, tau: float, *, capped: bool,
               row_upper: np.ndarray | None = None, cap_override: np.ndarray | None = None):
        """Row-wise arrays of the LP on the monomials ``keep_m`` (whole tuples) and the
        participant rows ``rows``: ``v`` per kept monomial, ``u`` per kept multi-monomial tuple."""
        ms = np.flatnonzero(keep_m)  # sorted, so tuple-contiguous
        n_v = len(ms)
        col_of_m = np.full(len(keep_m), -1, dtype=np.int64)
        col_of_m[ms] = np.arange(n_v)
        t_ms = self.t_of_m[ms]
        single = self.n_mono_of[t_ms] == 1
        multi_t = np.unique(t_ms[~single])
        n_u = len(multi_t)
        cost = np.zeros(n_v + n_u)
        cost[:n_v][single] = -1.0
        cost[n_v:] = -1.0
        upper = np.empty(n_v + n_u)
        upper[:n_v] = self.cap[ms] if capped else np.where(single, self.cap[ms], INF)
        if cap_override is not None:  # merged single-monomial columns (see _merged_model)
            upper[:n_v] = np.where(single & (cap_override[ms] > 0), cap_override[ms], upper[:n_v])
        upper[n_v:] = self.w[multi_t]
        # participant rows: the kept entries, grouped by participant (a stable counting sort)
        order = _group_by(np.flatnonzero(keep_m[self.mono_of_entry] & rows[self.pid]), self.pid,
                          self.n_participants)
        p_rank = np.cumsum(rows) - 1
        row_of_entry = p_rank[self.pid[order]]
        n_p = int(rows.sum())
        p_start = np.zeros(n_p + 1, dtype=np.int64)
        np.cumsum(np.bincount(row_of_entry, minlength=n_p), out=p_start[1:])
        p_index = col_of_m[self.mono_of_entry[order]]
        # linking rows u_t − Σ_{m ∈ D_t} v_m ≤ 0 of the multi-monomial tuples
        m_multi = np.flatnonzero(~single)  # column ids of their v, tuple-contiguous
        cnt = np.bincount(np.searchsorted(multi_t, t_ms[m_multi]), minlength=n_u)
        l_start = p_start[-1] + np.concatenate([[0], np.cumsum(cnt + 1)])
        l_index = np.empty(int(cnt.sum()) + n_u, dtype=np.int64)
        l_value = np.full(len(l_index), -1.0)
        first = l_start[:-1] - p_start[-1]
        l_index[first] = n_v + np.arange(n_u)
        l_value[first] = 1.0
        rest = np.ones(len(l_index), dtype=bool)
        rest[first] = False
        l_index[rest] = m_multi
        return (n_v + n_u, cost, np.zeros(n_v + n_u), upper,
                np.full(n_p + n_u, -INF),
                np.concatenate([np.full(n_p, tau) if row_upper is None else row_upper,
                                np.zeros(n_u)]),
                np.concatenate([p_start[:-1], l_start[:-1]]),
                np.concatenate([p_index, l_index]),
                np.concatenate([np.ones(len(p_index)), l_value]))

    def _merged_model(self, keep_m: np.ndarray, rows: np.ndarray, tau: float):
        """The reduced LP with fact 4 (merging) applied: the single-monomial tuples among
        ``keep_m`` with the same set of heavy participants (``rows``) become one column whose
        upper bound is the sum of their caps. Monomials of multi-monomial tuples stay as they are."""
        single = keep_m & (self.n_mono_of[self.t_of_m] == 1)
        ms = np.flatnonzero(single)
        if len(ms) < 2:
            return self._model(keep_m, rows, tau, capped=True)
        key = class_keys(self, ms, rows)
        if key is None:  # keys would not fit in 63 bits: no merging
            return self._model(keep_m, rows, tau, capped=True)
        uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
        if len(uniq) == len(ms):
            return self._model(keep_m, rows, tau, capped=True)
        rep = ms[first]  # one representative monomial per class, its cap the class's sum
        merged_cap = np.bincount(inv, weights=self.cap[ms], minlength=len(uniq))
        keep2 = keep_m & ~single
        keep2[rep] = True
        cap_over = np.zeros(len(keep_m))
        cap_over[rep] = merged_cap
        return self._model(keep2, rows, tau, capped=True, cap_override=cap_over)

    def _solve(self, model, time_limit, solver: str = "simplex") -> float:
        obj, _, _ = solve_lp(*model, time_limit=time_limit, stats=self.stats,
                             what="R2T truncation LP", solver=solver)
        return max(0.0, -float(obj))

    @staticmethod
    def snap(q: float) -> float:
        """``q`` rounded to 40 significant bits: LP optima such as ``20`` come back as
        ``19.999999999999996`` from one algorithm and ``20.000000000000004`` from another, and the
        release floors to a dyadic grid, so without this the same LP could land in two grid cells.

        >>> R2TModel.snap(19.999999999999996), R2TModel.snap(20.000000000000004), R2TModel.snap(0.0)
        (20.0, 20.0, 0.0)
        """
        if q == 0 or not math.isfinite(q):
            return q
        e = math.frexp(q)[1]
        return math.ldexp(round(math.ldexp(q, 40 - e)), e - 40)

    def solve_full(self, model, time_limit):
        """``(objective of the max problem, column values, row duals)`` of one model."""
        obj, x, dual = solve_lp(*model, time_limit=time_limit, stats=self.stats,
                                what="R2T truncation LP")
        return -float(obj), x, dual


def _snap_down(q: float) -> float:
    """``q`` rounded *down* to 40 significant bits (an approximate value must stay ≤ ``Q``).

    >>> _snap_down(1.0 + 2.0 ** -45) == 1.0, _snap_down(-0.0), _snap_down(3.0)
    (True, 0.0, 3.0)
    """
    if q == 0 or not math.isfinite(q):
        return abs(q) if q == 0 else q
    e = math.frexp(q)[1]
    return math.ldexp(math.floor(math.ldexp(q, 40 - e)), e - 40)


def _group_by(sel: np.ndarray, key: np.ndarray, n_keys: int) -> np.ndarray:
    """``sel`` stably sorted by ``key[sel]`` (small nonnegative ints): a counting sort, O(n).

    >>> _group_by(np.array([0, 1, 2, 3]), np.array([2, 0, 2, 1]), 3).tolist()
    [1, 3, 0, 2]
    """
    k = key[sel]
    order = np.argsort(k, kind="stable") if len(k) < 1 << 16 else _stable_by_key(k, n_keys)
    return sel[order]


def _stable_by_key(k: np.ndarray, n_keys: int) -> np.ndarray:
    """The stable order of ``k`` by value, through scipy's COO→CSR conversion (linear time)."""
    import scipy.sparse as sp

    m = sp.csr_matrix((np.ones(len(k), dtype=np.int8), (k, np.arange(len(k)))),
                      shape=(n_keys, len(k)))
    return m.indices.astype(np.int64, copy=False)


def _check_tau(tau) -> float:
    tau = float(tau)
    if not tau >= 0:
        raise ValueError(f"τ must be nonnegative, got {tau!r}")
    return tau
