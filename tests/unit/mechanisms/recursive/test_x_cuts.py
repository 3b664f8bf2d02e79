"""X of eq. 12 from the eq.-20 cut pool (mechanisms/recursive/_x_cuts.py: Eq20Cuts.anchored_bounds, and
Solver.h_pair): the certified bounds hold around the plain LP's H, a j ruled out by its lower
bound never attains the minimum, and X equals the plain LPs' X (and PuLP's H) whatever the
Kelley rounds do — converge, run out, or stop early."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import breadth
from hypothesis import strategies as hs
from recursive_testkit import random_kr
from test_recursive_certify import random_triangles

from provsql_dp.mechanisms.recursive import _x_cuts
from provsql_dp.mechanisms.recursive import efficient as rm
from provsql_dp.mechanisms.recursive._lp import Solver
from provsql_dp.mechanisms.recursive._structure import Structure

_PARAMS = rm.resolve_params(0.5, "node", theta=1.0, beta=None, mu=None, eps1=None, eps2=None)


def _close(a, b, tol=1e-6):
    return abs(a - b) <= tol * max(1.0, abs(b))


def _instance(rng):
    if rng.random() < 0.5:
        return random_kr(rng, n=int(rng.integers(3, 10)), n_tuples=int(rng.integers(2, 20)),
                         max_monos=3, max_size=3)
    return random_triangles(rng, n=int(rng.integers(6, 14)), p=float(rng.uniform(0.3, 0.8)))


def _plain_h(st, j):
    return Solver(st, cuts=False).h(j)


@breadth(8, 40, seed=hs.integers(0, 2**32 - 1), rounds=hs.sampled_from([0, 1, 2, 3, 20]),
         degree_test=hs.booleans())
def test_anchored_bounds_hold_around_the_plain_h(seed, rounds, degree_test):
    """lower ≤ H(j) ≤ upper after any number of rounds; exact only when upper is H(j)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_x_cuts.Eq20Cuts, "degree_test", degree_test)
        _check_bounds(seed, rounds)


def _check_bounds(seed, rounds):
    rng = np.random.default_rng(seed)
    st = Structure(_instance(rng))
    if st.n == 0:
        return
    dh = float(rng.uniform(0.05, 1.0)) * float(st.deg.max())
    s = Solver(st)
    _, j_real = s.x_real(dh)
    if s._xcuts is None:
        return
    for j in sorted({math.floor(j_real), math.ceil(j_real), max(0, math.floor(j_real) - 1)}):
        lower, upper, exact = s._xcuts.anchored_bounds(j, max_rounds=rounds)
        ref = _plain_h(st, j)
        assert lower <= ref + 1e-6 * max(1.0, ref), (j, lower, ref)
        assert ref <= upper + 1e-6 * max(1.0, ref), (j, upper, ref)
        if exact:
            assert _close(upper, ref), (j, upper, ref)


@breadth(8, 40, seed=hs.integers(0, 2**32 - 1), rounds=hs.sampled_from([1, 2, 4, 20]))
def test_x_from_the_pair_equals_the_plain_x(seed, rounds):
    """Few anchored rounds force early stops, rulings-out and fallbacks: X is unchanged."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_x_cuts, "ANCHORED_ROUNDS", rounds)
        _check_pair(seed)


def _check_pair(seed):
    rng = np.random.default_rng(seed)
    st = Structure(_instance(rng))
    top = float(st.deg.max()) if st.n else 1.0
    for dh in rng.uniform(0.05, 1.2, size=3) * top:
        cut = rm._Run(st, _PARAMS, cuts=True)
        x_c, j_c = cut.x(float(dh))
        x_p, _ = rm._Run(st, _PARAMS, cuts=False).x(float(dh))
        assert _close(x_c, x_p), (x_c, x_p)
        assert _close(cut.h_values[j_c] + j_c * dh, x_c)
        for j, h in cut.h_values.items():  # every H the cut path reports is exact
            assert _close(h, _plain_h(st, j)), (j, h)


def test_a_ruled_out_j_never_attains_the_minimum(monkeypatch):
    """h_pair's None entries: H(j) + Δ̂ j is at least the minimum over the pair (plain LPs)."""
    monkeypatch.setattr(_x_cuts, "ANCHORED_ROUNDS", 1)
    seen = 0
    for seed in range(60):
        rng = np.random.default_rng(7000 + seed)
        st = Structure(random_triangles(rng, n=int(rng.integers(8, 14)), p=0.7))
        if st.n == 0:
            continue
        dh = float(rng.uniform(0.1, 0.6)) * float(st.deg.max())
        s = Solver(st)
        _, j_real = s.x_real(dh)
        js = sorted({math.floor(j_real), math.ceil(j_real)})
        if s._xcuts is None or len(js) < 2:
            continue
        hs_ = s.h_pair(js, dh)
        plain = {j: _plain_h(st, j) for j in js}
        best = min(plain[j] + j * dh for j in js)
        assert _close(min(h + j * dh for j, h in hs_.items() if h is not None), best)
        for j, h in hs_.items():
            if h is None:
                seen += 1
                assert plain[j] + j * dh >= best - 1e-6 * max(1.0, best)
            else:
                assert _close(h, plain[j])
    assert seen > 0  # the instances do exercise the ruling-out


def test_pair_with_a_j_beyond_the_candidates_uses_the_general_h():
    rng = np.random.default_rng(5)
    st = Structure(random_triangles(rng, n=12, p=0.6))
    s = Solver(st)
    dh = 0.9 * float(st.deg.max())
    s.x_real(dh)
    j = int(st.n - 1)
    lower, upper, exact = s._xcuts.anchored_bounds(j)
    assert not exact and s._xcuts.failure == "columns"
    assert _close(s.h_pair([j], dh)[j], _plain_h(st, j))


def test_rule_out_stops_at_the_target_or_when_the_progress_stalls():
    from provsql_dp.mechanisms.recursive._lp import _RULE_OUT_PATIENCE, _RULE_OUT_WINDOW, _RuleOut

    reach = _RuleOut(10.0)
    assert [reach(v) for v in (1.0, 5.0, 10.0)] == [False, False, True]
    stall = _RuleOut(100.0)  # +1 per round, 90 short: hopeless within the patience
    seen = [stall(float(k)) for k in range(_RULE_OUT_WINDOW + 1)]
    assert seen[-1] and not any(seen[:-1])  # after one window of rounds
    steady = _RuleOut(float(_RULE_OUT_WINDOW + _RULE_OUT_PATIENCE))  # reachable in time
    assert not any(steady(float(k)) for k in range(_RULE_OUT_WINDOW + 2))


@breadth(6, 30, seed=hs.integers(0, 2**32 - 1), split=hs.sampled_from([1, 2, 3]),
         violated=hs.booleans(), prune=hs.booleans(), rounds=hs.sampled_from([1, 3, 30]))
def test_finer_groups_violated_cuts_and_pruning_give_the_plain_x(seed, split, violated, prune,
                                                                 rounds):
    """Eq20Cuts.split / violated_only / prune (off by default) change the cut model, never X."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_x_cuts.Eq20Cuts, "split", split)
        mp.setattr(_x_cuts.Eq20Cuts, "violated_only", violated)
        mp.setattr(_x_cuts.Eq20Cuts, "prune", prune)
        mp.setattr(_x_cuts, "ANCHORED_ROUNDS", rounds)
        rng = np.random.default_rng(seed)
        st = Structure(_instance(rng))
        top = float(st.deg.max()) if st.n else 1.0
        for dh in rng.uniform(0.05, 1.2, size=2) * top:
            x_c, _ = rm._Run(st, _PARAMS, cuts=True).x(float(dh))
            x_p, _ = rm._Run(st, _PARAMS, cuts=False).x(float(dh))
            assert _close(x_c, x_p), (x_c, x_p)


def test_both_j_falling_back_solve_the_plain_eq20_once(monkeypatch):
    monkeypatch.setattr(_x_cuts, "ANCHORED_ROUNDS", 0)  # no round: both j fall back
    rng = np.random.default_rng(11)
    st = Structure(random_triangles(rng, n=14, p=0.6))
    s = Solver(st)
    s.barrier = False  # the Newton + trust-region path (_x_barrier) would answer both
    s.balance = False  # the certificate's argmin here is an integer: no pair (_eq20_balance)
    dh = 0.4 * float(st.deg.max())
    _, j_real = s.x_real(dh)
    js = sorted({math.floor(j_real), math.ceil(j_real)})
    assert s._xcuts is not None and len(js) == 2
    calls = []
    orig = Solver._h_like
    monkeypatch.setattr(Solver, "_h_like", lambda self, **k: calls.append(k) or orig(self, **k))
    hs_ = s.h_pair(js, dh)
    assert sum(1 for k in calls if k.get("j") is None) == 1
    for j in js:
        assert _close(hs_[j], _plain_h(st, j))
