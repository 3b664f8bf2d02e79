"""The integer H next to the eq.-20 argmin by Newton + trust region (mechanisms/recursive/_x_barrier.py):
the certified bounds hold around the plain LP's H (and PuLP's), the lower bound holds for any
dual guess π, an exact answer is the plain H, and X through Solver.h_pair equals the plain X
with the Kelley rounds off, on, or cut short."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import breadth
from hypothesis import strategies as hs
from recursive_testkit import pulp_h
from test_recursive_certify import random_triangles

from provsql_dp.mechanisms.recursive import _lp
from provsql_dp.mechanisms.recursive import _x_barrier
from provsql_dp.mechanisms.recursive import _x_cuts
from provsql_dp.mechanisms.recursive import efficient as rm
from provsql_dp.mechanisms.recursive._lp import Solver
from provsql_dp.mechanisms.recursive._structure import Structure

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:pulp")

_PARAMS = rm.resolve_params(0.5, "node", theta=1.0, beta=None, mu=None, eps1=None, eps2=None)


def _close(a, b, tol=1e-6):
    return abs(a - b) <= tol * max(1.0, abs(b))


def _plain_h(st, j):
    return Solver(st, cuts=False).h(j)


def _model(seed):
    """(structure, solved eq.-20 cut model, real argmin, Δ̂) of a random triangle instance."""
    rng = np.random.default_rng(seed)
    kr = random_triangles(rng, n=int(rng.integers(6, 15)), p=float(rng.uniform(0.3, 0.9)))
    st = Structure(kr)
    dh = float(rng.uniform(0.05, 1.0)) * float(st.deg.max())
    s = Solver(st)
    _, j_real = s.x_real(dh)
    return kr, st, s, s._xcuts, j_real, dh


@breadth(8, 40, seed=hs.integers(0, 2**32 - 1))
def test_bounds_hold_around_the_plain_h_and_exact_is_the_plain_h(seed):
    kr, st, s, xc, j_real, dh = _model(seed)
    if xc is None or not _x_barrier.applicable(xc):
        return
    bar = _x_barrier.AnchoredBarrier.of(xc)
    for j in sorted({math.floor(j_real), math.ceil(j_real), max(0, math.floor(j_real) - 1)}):
        lower, upper, exact = bar.bounds(float(j))
        ref = _plain_h(st, j)
        assert lower <= ref + 1e-6 * max(1.0, ref), (j, lower, ref)
        assert ref <= upper + 1e-6 * max(1.0, ref), (j, upper, ref)
        if exact:
            assert _close(upper, ref), (j, upper, ref)


@breadth(6, 30, seed=hs.integers(0, 2**32 - 1), scale=hs.floats(0.0, 1.0))
def test_the_lower_bound_holds_for_any_dual_guess(seed, scale):
    """Weak duality over all participants: whatever π ∈ [0, q] (even outside, clipped)."""
    kr, st, s, xc, j_real, dh = _model(seed)
    if xc is None or not _x_barrier.applicable(xc):
        return
    bar = _x_barrier.AnchoredBarrier.of(xc)
    rng = np.random.default_rng(seed ^ 0x5EED)
    for j in {math.floor(j_real), math.ceil(j_real)}:
        if not 0 < j < float(bar.mult.sum()):
            continue
        ref = _plain_h(st, j)
        for pi in (bar.q * scale, bar.q * rng.random(len(bar.q)), rng.normal(size=len(bar.q))):
            assert bar.lower(float(j), pi) <= ref + 1e-7 * max(1.0, ref)


def test_exact_on_most_instances_and_equal_to_pulp():
    """The path answers (not only bounds) on small instances, and the answer is CBC's H."""
    exact_seen = tried = 0
    for seed in range(40):
        kr, st, s, xc, j_real, dh = _model(9100 + seed)
        if xc is None or not _x_barrier.applicable(xc) or abs(j_real - round(j_real)) < 1e-7:
            continue
        bar = _x_barrier.AnchoredBarrier.of(xc)
        for j in (math.floor(j_real), math.ceil(j_real)):
            lower, upper, exact = bar.bounds(float(j))
            ref = _plain_h(st, j)
            tried += _close(upper, ref)  # C holds an optimum (else only bounds are possible)
            if exact:
                exact_seen += 1
                if st.n == st.n_total and seed % 4 == 0:  # PuLP on some: H_i with i = n − j
                    assert _close(upper, pulp_h(kr, st.n_total - j)), (seed, j)
                assert _close(upper, _plain_h(st, j)), (seed, j)
    assert tried > 10 and exact_seen >= 0.9 * tried, (exact_seen, tried)


@breadth(6, 30, seed=hs.integers(0, 2**32 - 1), rounds=hs.sampled_from([0, 1, 20]),
         trust=hs.sampled_from([0, 1, 12]))
def test_x_through_h_pair_equals_the_plain_x(seed, rounds, trust):
    """Barrier first, then Kelley (even none), then the plain paths: X is the plain X."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_x_cuts, "ANCHORED_ROUNDS", rounds)
        mp.setattr(_x_barrier, "MAX_TRUST", trust)
        rng = np.random.default_rng(seed)
        st = Structure(random_triangles(rng, n=int(rng.integers(6, 14)), p=float(rng.uniform(0.3, 0.9))))
        top = float(st.deg.max())
        for dh in rng.uniform(0.05, 1.2, size=2) * top:
            cut = rm._Run(st, _PARAMS, cuts=True)
            x_c, j_c = cut.x(float(dh))
            x_p, _ = rm._Run(st, _PARAMS, cuts=False).x(float(dh))
            assert _close(x_c, x_p), (x_c, x_p)
            for j, h in cut.h_values.items():
                assert _close(h, _plain_h(st, j)), (j, h)


def test_barrier_off_is_the_kelley_path(monkeypatch):
    monkeypatch.setattr(_lp, "BARRIER", False)
    assert Solver(Structure(random_triangles(np.random.default_rng(3)))).barrier is False
