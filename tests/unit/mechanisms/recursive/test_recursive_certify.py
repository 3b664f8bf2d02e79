"""Certified first-order bounds of the Δ search (mechanisms/recursive/_certify.py, Solver.j_bounds) against
the exact LP and PuLP: the bounds must bracket J, the cut must stay below J everywhere, and the Δ
search must find the same j with or without them."""

from __future__ import annotations

import numpy as np
import pulp
import pytest
from conftest import breadth
from hypothesis import given, settings
from hypothesis import strategies as hs
from pulp_cbc import cbc_solver
from recursive_testkit import make_kr, random_kr

from provsql_dp.mechanisms.recursive import efficient as rm
from provsql_dp.mechanisms.recursive._certify import lagrangian_lower, primal_upper
from provsql_dp.mechanisms.recursive._lp import Solver
from provsql_dp.mechanisms.recursive._structure import Structure


def pulp_j(kr, cap: float) -> float:
    """J(W) = min Σ g s.t. every load ≤ W, for conjunctive annotations, with PuLP/CBC."""
    parts = sorted({p for t in range(kr.n_tuples) for m in kr.annotation(t) for p in m})
    prob = pulp.LpProblem("J", pulp.LpMinimize)
    g = {p: prob.add_variable(f"g{k}", 0, 1) for k, p in enumerate(parts)}
    y = [prob.add_variable(f"y{t}", 0, 1) for t in range(kr.n_tuples)]
    prob += pulp.lpSum(g.values())
    load = {p: [] for p in parts}
    for t in range(kr.n_tuples):
        (m,) = kr.annotation(t)
        prob += y[t] + pulp.lpSum(g[p] for p in m) >= 1
        for p in m:
            load[p].append(float(kr.weights[t]) * y[t])
    for p in parts:
        prob += pulp.lpSum(load[p]) <= cap
    prob.solve(cbc_solver())
    assert pulp.LpStatus[prob.status] == "Optimal"
    return float(pulp.value(prob.objective))


def random_triangles(rng, n=14, p=0.45):
    """The node-privacy triangle K-relation of a G(n, p) graph (conjunctive, 3 participants)."""
    adj = np.triu(rng.random((n, n)) < p, 1)
    adj = adj | adj.T
    tris = [[[a, b, c]] for a in range(n) for b in range(a + 1, n) for c in range(b + 1, n)
            if adj[a, b] and adj[a, c] and adj[b, c]]
    return make_kr(tris or [[[0, 1, 2]]], n_participants=n)


@pytest.mark.parametrize("seed", range(8))
def test_bounds_bracket_exact_and_pulp_j(seed):
    rng = np.random.default_rng(700 + seed)
    kr = random_triangles(rng)
    st = Structure(kr)
    exact = Solver(st, first_order=False)
    fo = Solver(st, first_order=True)
    top = float(st.deg.max())
    for frac in (0.2, 0.5, 0.8):
        cap = frac * top
        j_exact, _ = exact.j_value(cap)
        j_pulp = pulp_j(kr, cap)
        assert abs(j_exact - j_pulp) <= 1e-6 * max(1.0, j_pulp)
        for tol in (1e-4, 1e-7):
            lower, upper, slope = fo.j_bounds(cap, tol)
            assert lower <= j_pulp + 1e-7 and j_pulp <= upper + 1e-7
            # the cut is below J at every other cap too
            for f2 in (0.1, 0.3, 0.6, 0.9, 1.2):
                w2 = f2 * top
                assert lower + slope * (w2 - cap) <= pulp_j(kr, w2) + 1e-6


@pytest.mark.parametrize("seed", range(6))
def test_bounds_on_disjunctive_and_weighted_relations(seed):
    """Against the exact HiGHS J (the quotient and load view included) on general DNF."""
    rng = np.random.default_rng(800 + seed)
    kr = random_kr(rng, n=9, n_tuples=16, max_monos=3, max_size=3)
    st = Structure(kr)
    exact = Solver(st, first_order=False)
    fo = Solver(st, first_order=True)
    top = float(st.load_view().deg.max())
    for frac in (0.15, 0.4, 0.7, 0.95):
        j_exact, _ = exact.j_value(frac * top)
        lower, upper, _ = fo.j_bounds(frac * top, 1e-4)
        assert lower <= j_exact + 1e-7 <= upper + 2e-7


@breadth(8, 40, seed=hs.integers(0, 2**32 - 1), tol=hs.sampled_from([1e-7, 1e-4, 1e-2]))
def test_first_order_delta_search_finds_the_same_j(seed, tol):
    """Whatever the bounds' quality, the Δ search decides every probe as the exact J would."""
    rng = np.random.default_rng(seed)
    kr = random_triangles(rng, n=int(rng.integers(6, 16)), p=float(rng.uniform(0.3, 0.8)))
    eps = float(rng.choice([0.2, 0.5, 2.0]))
    params = rm.resolve_params(eps, "node", theta=1.0, beta=None, mu=None, eps1=None, eps2=None)
    st = Structure(kr)
    j0, d0 = rm._Run(st, params, first_order=False, cuts=False).delta()
    old = rm._FIRST_ORDER_TOLS
    rm._FIRST_ORDER_TOLS = (tol,)
    try:
        j1, d1 = rm._Run(st, params, first_order=True, cuts=False).delta()
    finally:
        rm._FIRST_ORDER_TOLS = old
    assert (j0, d0) == (j1, d1)


@breadth(12, 60, seed=hs.integers(0, 2**32 - 1))
def test_lagrangian_bound_of_any_multipliers_is_below_the_optimum(seed):
    """Weak duality on random boxed LPs, with multipliers of any sign (clipped inside)."""
    rng = np.random.default_rng(seed)
    n_row, n_col = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    a = np.where(rng.random((n_row, n_col)) < 0.6, rng.uniform(-2, 2, (n_row, n_col)), 0.0)
    cost = rng.uniform(-1, 2, n_col)
    x0 = rng.random(n_col)  # a feasible point, so the LP is feasible
    act = a @ x0
    lo = np.where(rng.random(n_row) < 0.5, act - rng.random(n_row), -np.inf)
    up = np.where(rng.random(n_row) < 0.5, act + rng.random(n_row), np.inf)
    prob = pulp.LpProblem("r", pulp.LpMinimize)
    x = [prob.add_variable(f"x{c}", 0, 1) for c in range(n_col)]
    prob += pulp.lpSum(cost[c] * x[c] for c in range(n_col))
    for r in range(n_row):
        expr = pulp.lpSum(a[r, c] * x[c] for c in range(n_col))
        if np.isfinite(lo[r]):
            prob += expr >= lo[r]
        if np.isfinite(up[r]):
            prob += expr <= up[r]
    prob.solve(cbc_solver())
    opt = float(pulp.value(prob.objective) or 0.0)
    start = np.arange(n_row) * n_col
    lower, _ = lagrangian_lower(cost, lo, up, start, np.tile(np.arange(n_col), n_row), a.ravel(),
                                rng.normal(0, 2, n_row), load_rows=np.array([], dtype=int))
    assert lower <= opt + 1e-7


@settings(max_examples=40, deadline=None)
@given(seed=hs.integers(0, 2**32 - 1))
def test_repaired_primal_is_feasible(seed):
    rng = np.random.default_rng(seed)
    kr = random_kr(rng, n=8, n_tuples=14, max_monos=3)
    view = Structure(kr).load_view()
    cap = float(rng.uniform(0, 1.2)) * float(view.deg.max())
    upper, g = primal_upper(view, rng.uniform(-0.3, 1.3, view.n), cap)
    assert np.all((g >= 0) & (g <= 1))
    assert np.all(view.loads(g) <= cap)
    assert upper == pytest.approx(float(g.sum()))



def test_rounded_primal_certifies_an_integral_optimum_exactly():
    """A hub in three tuples: J(0) = 1 (withdraw the hub). A first-order iterate near that
    vertex is certified at exactly 1.0 by rounding, where scaling alone gives 1 + O(1e-6)."""
    kr = make_kr([[[0, 1]], [[0, 2]], [[0, 3]]])
    view = Structure(kr).load_view()
    upper, g = primal_upper(view, np.array([1 - 1e-5, 1e-6, 0.0, 2e-6]), 0.0)
    assert upper == 1.0 and g.tolist() == [1.0, 0.0, 0.0, 0.0]
    assert pulp_j(kr, 0.0) == pytest.approx(1.0)


@breadth(8, 40, seed=hs.integers(0, 2**32 - 1))
def test_rounded_primal_is_feasible_and_above_j(seed):
    rng = np.random.default_rng(seed)
    kr = random_kr(rng, n=7, n_tuples=12, max_monos=1)
    view = Structure(kr).load_view()
    cap = float(rng.uniform(0.1, 1.0)) * float(view.deg.max())
    near_grid = rng.choice([0.0, 1 / 3, 0.5, 1.0], view.n) + rng.normal(0, 1e-4, view.n)
    upper, g = primal_upper(view, near_grid, cap)
    assert np.all((g >= 0) & (g <= 1)) and np.all(view.loads(g) <= cap)
    assert upper == pytest.approx(float(g.sum())) and upper >= pulp_j(kr, cap) - 1e-7
