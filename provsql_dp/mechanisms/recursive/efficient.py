"""The efficient recursive mechanism (Chen & Zhou, SIGMOD'13, Chen & Zhou §4–5) on HiGHS.

For a nonnegative linear query ``q(R) = Σ_t q(t)`` over a sensitive K-relation ``R`` on
participants ``P`` (DNF annotations), the mechanism

1. computes ``Δ = min{e^{jβ}θ : G_{|P|−j} ≤ e^{jβ}θ}`` (eq. 11) by binary search on ``j``, each
   step one LP for ``G`` (eq. 19);
2. releases ``Δ̂ = e^{μ+Y} Δ`` with ``Y = βK₁``, ``K₁ ~ DLap(1/ε₁)`` (ε₁-DP, Lemma 4): the index
   ``j`` of ``Δ = e^{jβ}θ`` is released with exact discrete Laplace noise and ``Δ̂ = θe^{μ+βĵ}``
   is computed from the released ``ĵ`` only (:func:`~provsql_dp.mechanisms.recursive.release.release_delta_hat`);
3. computes ``X = min_i H_i + (|P| − i) Δ̂`` (eq. 12) from the real-interval LP of eq. 20 and two
   integer evaluations of ``H`` (eq. 16; H is convex, Lemma 10);
4. releases ``X̂ = X + noise`` of scale ``Δ̂/ε₂`` (ε₂-DP given Δ̂, Lemma 7), exact discrete Laplace
   on the public grid of ``plan_laplace(Δ̂, ε₂)`` (:mod:`provsql_dp.mechanisms.noise.safe_noise`; the
   grid is :attr:`Release.grid`), so the low bits of ``X̂`` carry nothing about ``X``.

The whole release is (ε₁ + ε₂)-differentially private (Theorem 1). ``X`` is at most the true
answer ``q(supp R) = H_|P|``: it **under-estimates it by a data-dependent truncation bias**
(Lemma 8) that is never published; :meth:`Release.noise_bound` bounds only ``|X̂ − X|``.

Participants that occur in no tuple cost nothing: ``H_i(P) = H_{max(0, i−n₀)}(P_R)``, where ``n₀``
is their number and ``P_R`` the participants that occur, and the released value does not depend on
them; the LPs are built over ``P_R`` only. The LPs are solved on restricted models whose optimality
for the full LP is certified by duality (see :mod:`provsql_dp.mechanisms.recursive._lp`), built on the
quotient by twin classes of participants (exact by LP symmetry and convexity, see
:mod:`provsql_dp.mechanisms.recursive._symmetry`), and re-solved warm where only a right-hand side changes.
None of this changes H, G, Δ or X beyond LP tolerance, so the released distribution is the same.

This module charges no budget: the caller (the connection) charges the ledger before calling
:func:`release`. An LP that fails raises :class:`~provsql_dp.errors.SolverError` and nothing is
released. Noise on ``X`` is drawn only after every LP has succeeded; ``Y`` must be drawn before the
LPs for ``X`` because they depend on ``Δ̂``.

Examples
--------
>>> import numpy as np
>>> from provsql_dp.provenance.krelation import KRelation
>>> from provsql_dp.mechanisms.recursive import efficient as rm
>>> kr = KRelation.from_annotations(
...     rows=[("abc",), ("bcd",), ("cde",)],
...     annotations=[[{("v", "a"), ("v", "b"), ("v", "c")}],
...                  [{("v", "b"), ("v", "c"), ("v", "d")}],
...                  [{("v", "c"), ("v", "d"), ("v", "e")}]])
>>> rm.H(kr, 5), rm.H(kr, 4), rm.G(kr, 5)
(3.0, 0.0, 6.0)
>>> rel = rm.release(kr, epsilon=1.0, privacy="node", rng=np.random.default_rng(1))
>>> rel.mechanism, rel.epsilon, sorted(rel.params)
('recursive', 1.0, ['beta', 'eps1', 'eps2', 'mu', 'privacy', 'theta'])
>>> rel.noise_bound(0.95) > 0
True

References
----------
S. Chen and S. Zhou. Recursive mechanism: towards node differential privacy and unrestricted
joins. SIGMOD 2013.
"""

from __future__ import annotations

import math
import time
import weakref
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from provsql_dp.mechanisms.recursive._framework import (_CMP_TOL, accuracy_bound,
                                                       resolve_params, threshold)
from provsql_dp.mechanisms.lp._blas import one_blas_thread
from provsql_dp.mechanisms.recursive._lp import LPStats, Solver, Structure
from provsql_dp.mechanisms.recursive._structure import ls_tilde
from provsql_dp.mechanisms.noise.sources import resolve_rng
from provsql_dp.mechanisms.recursive.release import (Release, capped_delta_hat,
                                                     release_delta_hat, release_x)
from provsql_dp.provenance.krelation import KRelation

__all__ = ["H", "G", "release", "release_signed", "explain", "Explanation", "LPStats"]

_STRUCTURES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

#: the Δ search never probes more than this many steps below the last feasible j
_MAX_STEP = 16
#: relative tolerances of the first-order Δ solves tried before an exact one (Solver.j_bounds)
_FIRST_ORDER_TOLS = (1e-2, 1e-4, 1e-6)
#: the Δ model is built for caps down to this many steps below the probe (see Solver.j_value)
_SPECULATE = 12


def _structure(kr: KRelation, weights: np.ndarray | None = None) -> Structure:
    if not isinstance(kr, KRelation):
        raise TypeError(f"expected a KRelation, got {type(kr).__name__}")
    if weights is not None:
        return Structure(kr, weights)
    st = _STRUCTURES.get(kr)
    if st is None:
        st = Structure(kr)
        _STRUCTURES[kr] = st
    return st


def _withdrawn(st: Structure, i: float) -> float:
    """Map a sequence index ``i`` over all of ``P`` to the mass withdrawn from ``P_R``."""
    try:
        i = float(i)
    except (TypeError, ValueError):
        raise ValueError(f"i must be a real number in [0, |P|], got {i!r}") from None
    if not (0 <= i <= st.n_total) or math.isnan(i):
        raise ValueError(f"i must lie in [0, |P|] = [0, {st.n_total}], got {i}")
    i_r = max(0.0, i - st.n_absent)
    return max(0.0, st.n - i_r)


def H(kr: KRelation, i: float, *, solver: str = "ipm", symmetry: bool = True) -> float:
    """``H_i`` of eq. 16: ``min { Σ_t q(t) φ_{R(t)}(f) : f ∈ [0,1]^P, Σ f = i }``.

    Parameters
    ----------
    kr : KRelation
        The sensitive K-relation; its weights are ``q(t)`` (nonnegative).
    i : float
        A real index in ``[0, |P|]``, ``|P| = kr.n_participants``.

    Returns
    -------
    float
        ``H_i`` (private: a function of the data). ``H_0 = 0`` unless some tuple is annotated
        ``True`` (then every ``H_i`` includes its weight) and ``H_|P| = q(supp R)``.

    Examples
    --------
    >>> from provsql_dp.provenance.krelation import KRelation
    >>> kr = KRelation.from_annotations([(1,), (2,)], [[{("p", 1), ("p", 2)}], [{("p", 2)}]])
    >>> H(kr, 2), H(kr, 1), H(kr, 0)
    (2.0, 0.0, 0.0)
    """
    st = _structure(kr)
    return Solver(st, solver=solver, symmetry=symmetry).h(_withdrawn(st, i))


def G(kr: KRelation, i: float, *, solver: str = "ipm", symmetry: bool = True) -> float:
    """``G_i`` of eq. 19: ``2 min_{f, Σ f = i} max_p Σ_{t : p ∈ R(t)} q(t) φ_{R(t)}(f)``.

    In DNF the φ-sensitivity ``S_{R(t),p}`` is 1 when ``p`` occurs in ``R(t)`` and 0 otherwise,
    so ``G_|P| = 2 US̃_q`` (twice the universal empirical sensitivity). Private.

    For a tuple whose annotation has monomials without ``p``, the load of ``p`` uses φ of the
    monomials that contain ``p`` only: eq. 19 as printed is not a recursive sequence there
    (see :meth:`provsql_dp.mechanisms.recursive._lp.Structure.load_view` for the counterexample and the
    proof sketch of the fix). On conjunctive annotations (subgraph counting) this is eq. 19.

    Examples
    --------
    >>> from provsql_dp.provenance.krelation import KRelation
    >>> kr = KRelation.from_annotations([(1,), (2,)], [[{("p", 1), ("p", 2)}], [{("p", 2)}]])
    >>> G(kr, 2), G(kr, 1)
    (4.0, 0.0)
    """
    st = _structure(kr)
    return Solver(st, solver=solver, symmetry=symmetry).g(_withdrawn(st, i))


# ---------------------------------------------------------------------- the mechanism
class _Run:
    """One execution of the mechanism's private computations over a structure."""

    def __init__(
        self, st: Structure, params, *, solver="ipm", time_limit=None, stats=None, symmetry=True,
        first_order=None, cuts=None,
    ):
        self.st = st
        self.p = params
        self.solver = Solver(
            st, solver=solver, time_limit=time_limit, symmetry=symmetry, first_order=first_order,
            cuts=cuts,
        )
        if stats is not None:
            self.solver.stats = stats
        self.g_values: dict[float, float] = {}
        self.h_values: dict[float, float] = {}
        self.delta_probes: list[tuple[int, float, float, bool]] = []

    def g_withdrawn(self, j: int) -> float:
        v = self.solver.g(min(j, self.st.n))
        self.g_values[j] = v
        return v

    @one_blas_thread
    def delta(self) -> tuple[int, float]:
        """Δ of eq. 11: the smallest ``j`` with ``G_{|P|−j} ≤ τ_j = e^{jβ}θ``.

        ``G_{|P|−j} ≤ τ_j ⟺ J(τ_j/2) ≤ j`` (see :meth:`Solver.j_value`), so each probe is one J
        LP. Probes start near the top (small LPs); every probe's tangent ``J(W) ≥ J₀ + s(W − W₀)``
        (J is convex) rules out the ``j`` it proves infeasible; the next probe is halfway between
        the smallest ``j`` not ruled out (Newton's method from below) and the last feasible ``j``
        — typically 2–4 LPs instead of a full binary search, all but the first re-solving one kept
        model by warm-started dual simplex (see :meth:`Solver.j_value`). Which ``j`` are probed
        never changes the result: it is the same ``j`` as eq. 11 evaluated exactly.

        On large models (:attr:`Solver.first_order`) each probe is first decided from certified
        bounds ``L ≤ J ≤ U`` of one first-order solve (:meth:`Solver.j_bounds`): ``U ≤ j`` proves
        the probe feasible and ``L > j`` infeasible, exactly as the exact value would; only an
        interval that straddles ``j`` falls back to the exact solve. The cut uses ``L`` and its
        slope, a lower bound of J everywhere, so excluded ``j`` are excluded by the exact J too.
        """
        st = self.st
        theta, beta = self.p["theta"], self.p["beta"]
        g_top = st.g_closed(0)
        self.g_values[0] = g_top

        def tau(j: int) -> float:
            return threshold(j, theta, beta)  # +inf past e^709: never raises

        def holds(value: float, bound: float) -> bool:
            return value <= bound * (1 + _CMP_TOL) + _CMP_TOL

        if holds(g_top, tau(0)):
            return 0, tau(0)
        hi = max(1, math.ceil(math.log(g_top / theta) / beta))
        while hi > 1 and tau(hi - 1) >= g_top:
            hi -= 1
        while tau(hi) < g_top:
            hi += 1
        hi = min(hi, st.n)  # G_{|P|-hi} <= G_|P| <= tau(hi), or G_{|P|-n} = 0
        # free upper bounds from greedy whole withdrawals: G_{|P|-j} <= 2 min_{k<=j} M[k]
        best = np.minimum.accumulate(st.load_view().greedy_max_loads(hi))
        for j in range(1, hi):
            if holds(2 * best[j], tau(j)):
                hi = j
                break
        lo = 0
        cuts: list[tuple[float, float, float]] = []

        def excluded(j: int) -> bool:
            w = tau(j) / 2
            return any(j < j0 + s * (w - w0) - 1e-6 * max(1.0, j0) for w0, j0, s in cuts)

        probe = hi - 1
        while hi - lo > 1:
            if cuts:
                probe = next((j for j in range(lo + 1, hi) if not excluded(j)), hi)
                if probe >= hi:
                    break
                # halfway between the tangent bound and the last feasible j: warm starts
                # are cheap over short distances, and a feasible probe's own tangent usually
                # rules out everything below it
                probe = (probe + hi) // 2
                # LPs grow quickly as j falls: never jump far below the last feasible probe
                probe = max(probe, hi - _MAX_STEP)
            w = tau(probe) / 2
            bounds = None
            if self.solver.cuts:  # cutting planes (Solver.j_cuts), else the plain LPs
                res = self.solver.j_cuts(w, True, probe) if self.solver.first_order else None
                if res is None or (not holds(res[3], probe) and holds(res[2], probe)):
                    res = self.solver.j_cuts(w)  # no certified decision: the exact cut rounds
                if res is not None:  # value = J to LP tolerance (nan: bounds); lower, upper certified
                    value, slope, j_val, upper = res
                    ok = holds(upper, probe) or (holds(value, probe) and holds(j_val, probe))
                    bounds = res
            for tol in _FIRST_ORDER_TOLS if self.solver.first_order and bounds is None else ():
                bounds = self.solver.j_bounds(w, tol)
                if bounds is not None:
                    j_val, upper, slope = bounds  # certified: j_val <= J(w) <= upper
                    if holds(upper, probe):  # the cut below still uses the lower bound
                        ok = True
                        break
                    if not holds(j_val, probe):
                        ok = False
                        break
                    bounds = None  # the interval straddles the threshold: tighter, then exact
            if bounds is None:  # exact; after first-order bounds, on the model for w alone
                floor = tau(max(lo + 1, min(probe, hi - _SPECULATE))) / 2
                floor = w if self.solver.first_order else floor
                j_val, slope = self.solver.j_value(w, floor)
                ok = holds(j_val, probe)
            self.delta_probes.append((probe, tau(probe), j_val, ok))
            cuts.append((w, j_val, slope))
            if ok:
                hi = probe
            else:
                lo = probe
        return hi, tau(hi)

    def h_withdrawn(self, j: int) -> float:
        v = self.solver.h(j)
        self.h_values[j] = v
        return v

    @one_blas_thread
    def x(self, delta_hat: float) -> tuple[float, int]:
        """X of eq. 12 for this Δ̂; returns (X, withdrawn j at the argmin)."""
        st = self.st
        if st.n == 0:
            return st.const_true, 0
        value, j_real = self.solver.x_real(delta_hat)
        r = round(j_real)
        if abs(j_real - r) <= 1e-7:
            h = value - j_real * delta_hat
            self.h_values[r] = h
            return h + r * delta_hat, int(r)
        js = sorted({min(max(j, 0), st.n) for j in (math.floor(j_real), math.ceil(j_real))})
        hs = {j: h for j, h in self.solver.h_pair(js, delta_hat).items() if h is not None}
        self.h_values.update(hs)  # a j proved not to attain the minimum has no exact H
        return min((h + j * delta_hat, j) for j, h in hs.items())


def release(
    kr: KRelation,
    epsilon: float = 0.5,
    privacy: str | None = "node",
    rng: np.random.Generator | None = None,
    *,
    theta: float = 1.0,
    beta: float | None = None,
    mu: float | None = None,
    eps1: float | None = None,
    eps2: float | None = None,
    solver: str = "ipm",
    time_limit: float | None = None,
    stats: LPStats | None = None,
    weights: np.ndarray | None = None,
    symmetry: bool = True,
) -> Release:
    """Release ``Σ_t q(t)`` over ``supp R`` with the recursive mechanism, ε-DP.

    Parameters
    ----------
    kr : KRelation
        The sensitive K-relation; ``kr.weights`` are ``q(t)`` and must be nonnegative (see
        :func:`release_signed` for signed sums).
    epsilon : float
        Total budget ``ε = ε₁ + ε₂``. Nothing is charged here: the caller charges its ledger.
    privacy : {"node", "edge"}
        Only selects the default ``μ`` (1 for node-style, 0.5 for edge-style privacy).
    rng : numpy.random.Generator, optional
        For tests only. By default noise comes from OS entropy.
    theta, beta, mu, eps1, eps2 : float, optional
        The mechanism's parameters; defaults θ = 1, β = min(ε/5, 1), μ by ``privacy``, ε₁ = ε₂ = ε/2.
    solver : {"simplex", "ipm"}
        HiGHS algorithm for the LPs (default "ipm": measured several times faster than simplex
        on the triangle-counting models; crossover gives the duals the generation needs).
    time_limit : float, optional
        Seconds per LP; an LP hitting it raises :class:`~provsql_dp.errors.SolverError`.
    stats : LPStats, optional
        Curator diagnostics, filled with LP counts and timings. Never show them to an analyst.
    weights : array, optional
        Use these ``q(t)`` instead of ``kr.weights``.
    symmetry : bool
        Build the LPs on the twin-class quotient (default; exact, see
        :mod:`provsql_dp.mechanisms.recursive._symmetry`). ``False`` solves the unreduced LPs: the
        released distribution is the same either way.

    Returns
    -------
    Release
        ``value`` = X̂, ``delta_hat`` = Δ̂, ``epsilon``, ``params``. ``X`` under-estimates the true
        answer by a data-dependent truncation bias (Lemma 8), which is not published.

    Raises
    ------
    ValueError
        Negative or non-finite weights, or invalid parameters.
    SolverError
        An LP failed; nothing is released.

    Examples
    --------
    >>> import numpy as np
    >>> from provsql_dp.provenance.krelation import KRelation
    >>> kr = KRelation.from_annotations([(1,), (2,)], [[{("p", 1), ("p", 2)}], [{("p", 2)}]])
    >>> rel = release(kr, epsilon=1.0, rng=np.random.default_rng(0))
    >>> rel.params["mu"], rel.params["eps2"]
    (1.0, 0.5)
    """
    params = resolve_params(epsilon, privacy, theta=theta, beta=beta, mu=mu, eps1=eps1, eps2=eps2)
    st = _structure(kr, weights)
    run = _Run(st, params, solver=solver, time_limit=time_limit, stats=stats, symmetry=symmetry)
    j, _ = run.delta()
    gen = resolve_rng(rng)
    delta_hat = release_delta_hat(j, params, gen)
    x, _ = run.x(delta_hat)
    value = release_x(x, delta_hat, params["eps2"], gen)
    return Release(
        value=float(value),
        epsilon=float(params["eps1"] + params["eps2"]),
        delta_hat=float(delta_hat),
        params=params,
        mechanism="recursive",
    )


def release_signed(
    kr: KRelation,
    epsilon: float = 0.5,
    privacy: str | None = "node",
    rng: np.random.Generator | None = None,
    **kwargs: Any,
) -> Release:
    """Release a signed ``SUM``: ``q(t) = max(0, q(t)) − max(0, −q(t))`` (Chen & Zhou §3.2).

    Each nonnegative part is released with :func:`release` at **half the budget** (ε/2 each; all
    other parameters are derived from ε/2, e.g. the default β is ε/10), and the result is their
    difference. The returned Release has ``mechanism = "recursive-signed"``, ``epsilon`` = ε, the
    two part releases in ``parts`` (positive first), ``delta_hat`` the larger part's Δ̂, and a
    ``noise_bound`` combining both parts by a union bound.

    Examples
    --------
    >>> import numpy as np
    >>> from provsql_dp.provenance.krelation import KRelation
    >>> kr = KRelation.from_annotations([(1,), (2,)], [[{("p", 1)}], [{("p", 2)}]],
    ...                                 weights=[3.0, -1.0])
    >>> rel = release_signed(kr, epsilon=1.0, rng=np.random.default_rng(0))
    >>> rel.mechanism, [p.epsilon for p in rel.parts]
    ('recursive-signed', [0.5, 0.5])
    """
    if "weights" in kwargs:
        raise TypeError("release_signed takes its weights from kr")
    w = np.asarray(kr.weights, dtype=np.float64)
    if not np.all(np.isfinite(w)):
        raise ValueError("weights must be finite")
    half = float(epsilon) / 2
    for key in ("eps1", "eps2"):
        if kwargs.get(key) is not None:
            raise ValueError(
                "release_signed splits epsilon itself; pass eps1/eps2 to release() per part"
            )
    gen = resolve_rng(rng)
    # both parts' LPs could fail; compute the positive part fully first, then the negative
    pos = release(kr, half, privacy, gen, weights=np.maximum(w, 0.0), **kwargs)
    neg = release(kr, half, privacy, gen, weights=np.maximum(-w, 0.0), **kwargs)
    params = dict(pos.params)
    params["split"] = "half the budget to each of the positive and negative parts"
    return Release(
        value=pos.value - neg.value,
        epsilon=pos.epsilon + neg.epsilon,
        delta_hat=max(pos.delta_hat, neg.delta_hat),
        params=MappingProxyType(params),
        mechanism="recursive-signed",
        parts=(pos, neg),
    )


# ---------------------------------------------------------------------- curator only
@dataclass(frozen=True)
class Explanation:
    """Private diagnostics of the recursive mechanism for the **curator only**.

    Every field except the parameters is a function of the private data: never show it to an
    analyst, never attach it to a :class:`Release`. Indices of ``h_values``/``g_values`` are
    sequence indices ``i`` over all of ``P``.
    """

    true_answer: float
    n_participants: int
    n_occurring: int
    n_tuples: int
    delta: float
    delta_j: int
    delta_hat: float
    x: float
    x_index: int
    truncation_bias: float
    h_values: dict[int, float]
    g_values: dict[int, float]
    ls_tilde: float
    us_tilde: float
    accuracy: tuple[float, float]
    params: MappingProxyType
    n_lps: int
    lp_seconds: float
    build_seconds: float
    total_seconds: float
    generation_rounds: int
    max_lp_rows: int
    max_lp_cols: int
    notes: dict = field(default_factory=dict)


def explain(
    kr: KRelation,
    epsilon: float = 0.5,
    privacy: str | None = "node",
    *,
    delta_hat: float | None = None,
    c: float = math.log(20),
    theta: float = 1.0,
    beta: float | None = None,
    mu: float | None = None,
    eps1: float | None = None,
    eps2: float | None = None,
    solver: str = "ipm",
    weights: np.ndarray | None = None,
    symmetry: bool = True,
) -> Explanation:
    """Run the mechanism's private computations without noise and report them (curator only).

    ``delta_hat`` defaults to ``e^μ Δ``, the median of the released Δ̂. ``c`` sets the
    probability of Theorem 1's bound in :attr:`Explanation.accuracy` (``e^{−c}``; default 5 %).
    No noise is drawn and no budget is spent: the result is **not** differentially private.

    Examples
    --------
    >>> from provsql_dp.provenance.krelation import KRelation
    >>> kr = KRelation.from_annotations([(1,), (2,)], [[{("p", 1), ("p", 2)}], [{("p", 2)}]])
    >>> e = explain(kr, epsilon=1.0)
    >>> e.true_answer, e.us_tilde, e.ls_tilde, e.x <= e.true_answer
    (2.0, 2.0, 2.0, True)
    """
    t0 = time.perf_counter()
    params = resolve_params(epsilon, privacy, theta=theta, beta=beta, mu=mu, eps1=eps1, eps2=eps2)
    st = _structure(kr, weights)
    run = _Run(st, params, solver=solver, symmetry=symmetry)
    j_delta, delta = run.delta()
    if delta_hat is None:
        delta_hat = capped_delta_hat(math.exp(params["mu"]) * delta, params["eps2"])  # as released
    x, j_x = run.x(float(delta_hat))
    stats = run.solver.stats
    n_total = st.n_total
    true = st.const_true + st.total
    g_top = st.g_closed(0)
    return Explanation(
        true_answer=true,
        n_participants=n_total,
        n_occurring=st.n,
        n_tuples=st.n_tuples,
        delta=delta,
        delta_j=j_delta,
        delta_hat=float(delta_hat),
        x=x,
        x_index=int(n_total - j_x),
        truncation_bias=true - x,
        h_values={int(n_total - j): v for j, v in sorted(run.h_values.items())},
        g_values={int(n_total - j): v for j, v in sorted(run.g_values.items())},
        ls_tilde=ls_tilde(st),
        us_tilde=g_top / 2,
        accuracy=accuracy_bound(
            g_top, theta=params["theta"], beta=params["beta"], mu=params["mu"],
            eps1=params["eps1"], eps2=params["eps2"], c=c,
        ),
        params=params,
        n_lps=stats.n_lps,
        lp_seconds=stats.lp_seconds,
        build_seconds=stats.build_seconds,
        total_seconds=time.perf_counter() - t0,
        generation_rounds=stats.generation_rounds,
        max_lp_rows=stats.max_rows,
        max_lp_cols=stats.max_cols,
    )
