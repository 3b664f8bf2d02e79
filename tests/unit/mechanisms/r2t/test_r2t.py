"""R2T: the truncation LP against PuLP, its sensitivity under removing one participant (brute
force over neighbours), its limits, and the release's public grid, ε and one-sided guarantee."""

from __future__ import annotations

import math

import numpy as np
import pulp
import pytest
from conftest import breadth
from hypothesis import given, settings, strategies as st

from provsql_dp.errors import SolverError
from provsql_dp.mechanisms.r2t import race as r2t
from provsql_dp.mechanisms.r2t import truncation as r2t_lp
from provsql_dp.mechanisms.noise.safe_noise import on_grid

from pulp_cbc import cbc_solver
from recursive_testkit import make_kr, neighbour, random_kr


def pulp_truncation(kr, tau):
    """The paper's LP with projection, written out plainly: u per tuple, v per monomial."""
    index = kr.participant_index
    prob = pulp.LpProblem("R2T", pulp.LpMaximize)
    u = [prob.add_variable(f"u{t}", 0, float(kr.weights[t])) for t in range(kr.n_tuples)]
    loads = {}
    for t in range(kr.n_tuples):
        vs = []
        for k, m in enumerate(sorted(kr.annotation(t), key=sorted)):
            v = prob.add_variable(f"v{t}_{k}", 0)
            vs.append(v)
            for p in m:
                loads.setdefault(index[p], []).append(v)
        prob += u[t] <= pulp.lpSum(vs)
    for vs in loads.values():
        prob += pulp.lpSum(vs) <= tau
    prob += pulp.lpSum(u)
    prob.solve(cbc_solver())
    return float(pulp.value(prob.objective) or 0.0)


seeds = st.integers(0, 2**32 - 1)


@breadth(8, 40, seeds, st.sampled_from([0.5, 1.0, 2.0, 4.0]))
def test_lp_matches_pulp(seed, tau):
    kr = random_kr(np.random.default_rng(seed), n=5, n_tuples=7, max_monos=3)
    assert r2t.truncation_value(kr, tau) == pytest.approx(pulp_truncation(kr, tau), abs=1e-6)


@breadth(12, 60, seeds, st.sampled_from([0.5, 1.0, 2.0, 8.0]))
def test_sensitivity_at_most_tau_under_removal(seed, tau):
    kr = random_kr(np.random.default_rng(seed), n=6, n_tuples=9, max_monos=3)
    q = r2t.truncation_value(kr, tau)
    for p in kr.participant_list:
        q2 = r2t.truncation_value(neighbour(kr, p), tau)
        assert q2 <= q + 1e-7          # removing a participant never raises Q(·, τ)
        assert q - q2 <= tau + 1e-7    # and lowers it by at most τ


@breadth(8, 40, seeds)
def test_truncation_between_zero_and_answer_and_monotone(seed):
    kr = random_kr(np.random.default_rng(seed), n=6, n_tuples=9)
    vals = [r2t.truncation_value(kr, t) for t in (0.0, 1.0, 2.0, 4.0, 1e6)]
    assert vals[0] == 0.0
    assert all(a <= b + 1e-9 for a, b in zip(vals, vals[1:]))
    assert vals[-1] == pytest.approx(kr.true_answer())


def test_multi_monomial_tuple_is_not_double_counted():
    # t0 = p0 ∨ p1, both alive: Q(I, τ) counts t0 once (weight 3) — and removing p0 keeps it
    kr = make_kr([[[0], [1]]], weights=[3.0])
    assert r2t.truncation_value(kr, 10.0) == pytest.approx(3.0)
    assert r2t.truncation_value(kr, 1.0) == pytest.approx(2.0)


def test_release_is_on_grid_and_charges_epsilon():
    kr = random_kr(np.random.default_rng(1), n=6, n_tuples=9, integer_weights=True)
    plans, shifts, taus, eps_each = r2t.plan(0.8, 16, 0.1)
    assert eps_each * len(taus) == pytest.approx(0.8)
    assert all(float(p.epsilon_spent) <= eps_each for p in plans)
    rel = r2t.release(kr, 0.8, max_contribution=16, rng=np.random.default_rng(2))
    assert rel.epsilon == 0.8 and rel.mechanism == "r2t"
    assert rel.value == 0.0 or any(on_grid(rel.value, p.grid) for p in plans)


def test_upper_side_guarantee_holds_empirically():
    kr = random_kr(np.random.default_rng(3), n=8, n_tuples=30, max_monos=1, integer_weights=True)
    truth = kr.true_answer()
    rng = np.random.default_rng(4)
    vals = np.array([r2t.release(kr, 1.0, max_contribution=64, beta=0.1, rng=rng).value
                     for _ in range(300)])
    assert np.mean(vals > truth) <= 0.1 + 0.05


def test_accuracy_on_a_large_answer():
    # 400 disjoint participants each with one unit tuple: DS = 1, error ≈ L·ln(L/β)·τ/ε
    kr = make_kr([[[k]] for k in range(400)])
    vals = [r2t.release(kr, 1.0, max_contribution=8, rng=np.random.default_rng(s)).value
            for s in range(10)]
    assert 300 < np.median(vals) <= 400


def test_bad_parameters_are_refused():
    kr = make_kr([[[0]]])
    with pytest.raises(ValueError, match="max_contribution"):
        r2t.release(kr, 1.0, max_contribution=0)
    with pytest.raises(ValueError, match="beta"):
        r2t.release(kr, 1.0, beta=1.5)
    with pytest.raises(ValueError, match="nonnegative"):
        r2t.release(make_kr([[[0]]], weights=[-1.0]), 1.0)


def test_time_limit_failure_raises_solver_error(monkeypatch):
    kr = random_kr(np.random.default_rng(5), n=8, n_tuples=40)

    def boom(*a, **k):
        raise SolverError("the R2T truncation LP did not solve to optimality; nothing was released")

    stats = r2t.LPStats()
    r2t.release(kr, 10.0, max_contribution=16, rng=np.random.default_rng(0), stats=stats)
    assert stats.n_lps > 0  # this release needs an LP: its failure must surface
    monkeypatch.setattr(r2t_lp, "solve_lp", boom)
    with pytest.raises(SolverError):
        r2t.release(kr, 10.0, max_contribution=16, time_limit=1e-9,
                    rng=np.random.default_rng(0))


def test_thresholds_are_a_public_ladder_chosen_by_the_bound():
    assert math.isclose(r2t.DEFAULT_BETA, 0.1)
    # the old ladder on request: the powers of two up to GS
    assert r2t.thresholds(2**20, count=20) == tuple(2.0 ** j for j in range(1, 21))
    for gs in (3, 8, 100, 1000, 2**20, 10**6, 2.0**64):
        for beta in (0.01, 0.1, 0.3):
            taus = r2t.thresholds(gs, beta)
            n = len(taus)
            assert taus[-1] == gs and all(a < b for a, b in zip(taus, taus[1:]))
            assert all(math.isclose(b / a, taus[0]) for a, b in zip(taus, taus[1:]))
            costs = [r2t.threshold_cost(gs, k, beta) for k in range(1, max(2, math.ceil(math.log2(gs))) + 1)]
            assert r2t.threshold_cost(gs, n, beta) == min(costs)  # the minimiser of the bound
    assert len(r2t.thresholds(2**20)) == 8  # 8 thresholds, base ≈ 5.66, not 20 powers of two
    with pytest.raises(ValueError, match="number of thresholds"):
        r2t.thresholds(16, count=0)


@settings(max_examples=25, deadline=None)
@given(st.floats(1.5, 2.0**40), st.floats(0.01, 0.5), st.integers(1, 30), st.floats(0.05, 5))
def test_the_stated_factor_covers_every_largest_contribution(gs, beta, count, eps):
    rel = r2t.fallback(eps, max_contribution=gs, beta=beta, count=count)
    taus = rel.params["thresholds"]
    c = rel.error_factor(0.9)
    base = gs ** (1 / count)
    for ds in (taus[0] / 3, taus[0], taus[0] * 1.0001, taus[-1] / base * 1.01, gs):
        assert rel.error_bound(0.9, ds) <= c * max(taus[0], base * ds) * (1 + 1e-9)


def test_error_bound_holds_against_the_true_answer():
    # 60 participants; participant k owns k % 4 + 1 unit tuples: DS = 4, Q(I) = 150
    ann = [[[k]] for k in range(60) for _ in range(k % 4 + 1)]
    kr = make_kr(ann)
    truth = kr.true_answer()
    gs, eps = 1000, 2.0
    bound = r2t.fallback(eps, max_contribution=gs, lp_gap=0).error_bound(0.9, largest=4)
    rng = np.random.default_rng(11)
    vals = [r2t.release(kr, eps, max_contribution=gs, lp_gap=0, rng=rng).value for _ in range(200)]
    assert np.mean([v >= truth - bound for v in vals]) >= 0.9 - 0.04
    assert bound < r2t.fallback(eps, max_contribution=gs, lp_gap=0).error_bound(0.9)


@settings(max_examples=60, deadline=None)
@given(st.floats(1e-3, 1e6), st.floats(0.01, 20), st.integers(1, 64), st.floats(1e-4, 0.9))
def test_shift_is_the_exact_discrete_laplace_tail(sens, eps, big_l, beta):
    # P(K > k) = q^(k+1)/(1 + q) ≤ β/L for the shift's k, and k is the least such k ≥ 0
    p = r2t.plan_laplace(sens, eps)
    k = r2t._shift_units(p, big_l, beta)
    lam = float(p.noise_units)
    q = math.exp(-1.0 / lam)

    def tail(j):  # P(K ≥ j + 1) in logs, to stay finite for large λ
        return math.exp((j + 1) * math.log(q) - math.log1p(q))

    assert tail(k) <= beta / big_l * (1 + 1e-6)
    x = lam * math.log(big_l / (beta * (1.0 + q)))
    assert k <= max(0.0, x) * (1 + 1e-8) + 2  # the least such k, up to the rounding margin
