"""The Δ-search LP J(W) by cutting planes in g (mechanisms/recursive/_j_cuts.py, Solver.j_cuts) against the
plain LP (Solver.j_value), PuLP/CBC on small instances, and the Δ search with the plain LPs only:
same value, certified bounds around it, a tangent cut below J everywhere, the same Δ."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import breadth
from hypothesis import given, settings
from hypothesis import strategies as hs
from recursive_testkit import random_kr
from test_recursive_certify import pulp_j, random_triangles

from provsql_dp.mechanisms.recursive import efficient as rm
from provsql_dp.mechanisms.recursive._j_cuts import JCuts, cuts_at
from provsql_dp.mechanisms.recursive._lp import Solver
from provsql_dp.mechanisms.recursive._structure import Structure


def _close(a, b, tol=1e-6):
    return abs(a - b) <= tol * max(1.0, abs(b))


@pytest.mark.parametrize("seed", range(6))
def test_cuts_equal_pulp_and_the_plain_lp_on_triangles(seed):
    rng = np.random.default_rng(900 + seed)
    kr = random_triangles(rng)
    st = Structure(kr)
    plain, cut = Solver(st), Solver(st)
    top = float(st.deg.max())
    caps = [frac * top for frac in (0.9, 0.6, 0.35, 0.15, 0.5, 1.2)]  # down, then up: one pool
    for cap in caps:
        value, slope, lower, upper = cut.j_cuts(cap)
        ref = pulp_j(kr, cap)
        assert _close(value, ref) and _close(plain.j_value(cap)[0], ref)
        assert lower <= ref + 1e-7 and ref <= upper + 1e-7
        for w2 in (0.1 * top, 0.3 * top, 0.7 * top, 1.1 * top):
            assert lower + slope * (w2 - cap) <= pulp_j(kr, w2) + 1e-6


@breadth(8, 40, seed=hs.integers(0, 2**32 - 1))
def test_cuts_equal_the_plain_lp_on_general_dnf(seed):
    """Disjunctions, shared participants, weights: the load view and the quotient included."""
    rng = np.random.default_rng(seed)
    kr = random_kr(rng, n=int(rng.integers(3, 10)), n_tuples=int(rng.integers(2, 20)),
                   max_monos=3, max_size=3)
    st = Structure(kr)
    plain, cut = Solver(st, first_order=False), Solver(st)
    top = float(st.load_view().deg.max()) if st.n else 0.0
    for frac in rng.uniform(0.05, 1.1, size=4):
        cap = float(frac) * top
        res = cut.j_cuts(cap)
        assert res is not None
        value, _, lower, upper = res
        ref = plain.j_value(cap)[0]
        assert _close(value, ref, 1e-6), (value, ref)
        assert lower <= ref + 1e-7 <= upper + 2e-7


@settings(max_examples=40, deadline=None)
@given(seed=hs.integers(0, 2**32 - 1))
def test_a_cut_is_below_every_load_and_tight_at_its_point(seed):
    rng = np.random.default_rng(seed)
    kr = random_kr(rng, n=8, n_tuples=14, max_monos=3, max_size=3)
    v = Structure(kr).load_view()
    g0 = rng.choice([0.0, 0.25, 0.5, 1.0], size=v.n) * (rng.random(v.n) < 0.6)
    parts = np.arange(v.n)
    a, q = cuts_at(v, g0, parts)
    assert np.allclose(q - a @ g0, v.loads(g0))
    for _ in range(5):
        g = rng.random(v.n) * (rng.random(v.n) < 0.7)
        assert np.all(q - a @ g <= v.loads(g) + 1e-9)


@breadth(8, 40, seed=hs.integers(0, 2**32 - 1))
def test_delta_search_by_cuts_finds_the_plain_j(seed):
    rng = np.random.default_rng(seed)
    kr = random_triangles(rng, n=int(rng.integers(6, 16)), p=float(rng.uniform(0.3, 0.8)))
    eps = float(rng.choice([0.2, 0.5, 2.0]))
    params = rm.resolve_params(eps, "node", theta=1.0, beta=None, mu=None, eps1=None, eps2=None)
    st = Structure(kr)
    plain = rm._Run(st, params, first_order=False, cuts=False).delta()
    assert rm._Run(st, params, cuts=True).delta() == plain


def test_rounds_running_out_fall_back_to_the_plain_lp():
    rng = np.random.default_rng(3)
    kr = random_triangles(rng, n=16, p=0.6)
    st = Structure(kr)
    cap = 0.3 * float(st.deg.max())
    assert JCuts(st.load_view()).solve(cap, max_rounds=0) is None
    params = rm.resolve_params(0.5, "node", theta=1.0, beta=None, mu=None, eps1=None, eps2=None)
    plain = rm._Run(st, params, first_order=False, cuts=False).delta()
    run = rm._Run(st, params)
    run.solver.j_cuts = lambda cap: None  # as if every probe ran out of rounds
    assert run.delta() == plain


# ---------------------------------------------------------------------- eq. 20 (mechanisms/recursive/_x_cuts.py)
def _pulp_x(kr, delta_hat: float) -> float:
    """eq. 20 for conjunctive annotations with PuLP/CBC: min Σ q y + Δ̂ Σ g."""
    import pulp
    from pulp_cbc import cbc_solver

    parts = sorted({p for t in range(kr.n_tuples) for m in kr.annotation(t) for p in m})
    prob = pulp.LpProblem("X", pulp.LpMinimize)
    g = {p: prob.add_variable(f"g{k}", 0, 1) for k, p in enumerate(parts)}
    y = [prob.add_variable(f"y{t}", 0, 1) for t in range(kr.n_tuples)]
    prob += pulp.lpSum(float(kr.weights[t]) * y[t] for t in range(kr.n_tuples)) + delta_hat * pulp.lpSum(g.values())
    for t in range(kr.n_tuples):
        (m,) = kr.annotation(t)
        prob += y[t] + pulp.lpSum(g[p] for p in m) >= 1
    prob.solve(cbc_solver())
    return float(pulp.value(prob.objective))


@pytest.mark.parametrize("seed", range(5))
def test_eq20_by_cuts_equals_pulp_and_the_plain_lp(seed):
    rng = np.random.default_rng(950 + seed)
    kr = random_triangles(rng, n=12, p=0.5)
    st = Structure(kr)
    top = float(st.deg.max())
    for frac in (0.1, 0.3, 0.6, 0.95):
        dh = frac * top
        cut, plain = Solver(st).x_real(dh), Solver(st, cuts=False).x_real(dh)
        assert _close(cut[0], plain[0]) and _close(cut[0], _pulp_x(kr, dh))


@breadth(8, 40, seed=hs.integers(0, 2**32 - 1))
def test_x_and_integer_h_by_cuts_equal_the_plain_path(seed):
    """X of eq. 12 (eq. 20 and the integer H next to its argmin) on general DNF and triangles."""
    rng = np.random.default_rng(seed)
    if rng.random() < 0.5:
        kr = random_kr(rng, n=int(rng.integers(3, 10)), n_tuples=int(rng.integers(2, 20)),
                       max_monos=3, max_size=3)
    else:
        kr = random_triangles(rng, n=int(rng.integers(6, 14)), p=float(rng.uniform(0.3, 0.8)))
    st = Structure(kr)
    params = rm.resolve_params(0.5, "node", theta=1.0, beta=None, mu=None, eps1=None, eps2=None)
    top = float(st.deg.max()) if st.n else 1.0
    for dh in rng.uniform(0.05, 1.2, size=3) * top:
        cut = rm._Run(st, params, cuts=True)
        plain = rm._Run(st, params, cuts=False)
        x_c, j_c = cut.x(float(dh))
        x_p, _ = plain.x(float(dh))
        assert _close(x_c, x_p), (x_c, x_p)
        for j, h in cut.h_values.items():  # every integer H the cut path evaluated
            assert _close(h, Solver(st, cuts=False).h(j)), (j, h)


def test_anchored_h_outside_the_candidates_falls_back():
    """A j beyond the candidates' mass cannot be anchored: the general path answers."""
    rng = np.random.default_rng(5)
    kr = random_triangles(rng, n=12, p=0.6)
    st = Structure(kr)
    s = Solver(st)
    dh = 0.9 * float(st.deg.max())
    s.x_real(dh)
    assert s._xcuts is not None
    j = int(st.n - 1)
    assert s._xcuts.anchored(j) is None
    assert _close(s.h_anchored(j, dh), Solver(st, cuts=False).h(j))


def test_eq20_rounds_running_out_fall_back_to_the_plain_lp(monkeypatch):
    from provsql_dp.mechanisms.recursive import _x_cuts

    rng = np.random.default_rng(8)
    kr = random_triangles(rng, n=14, p=0.6)
    st = Structure(kr)
    dh = 0.3 * float(st.deg.max())
    assert _x_cuts.Eq20Cuts(st, st.deg > dh, dh).solve(max_rounds=0) is None
    plain = Solver(st, cuts=False).x_real(dh)
    monkeypatch.setattr(_x_cuts.Eq20Cuts, "solve", lambda self, max_rounds=0: None)
    s = Solver(st)
    s.balance = False  # the certificate (_eq20_balance) would answer before the rounds
    assert _close(s.x_real(dh)[0], plain[0]) and s._xcuts is None


@settings(max_examples=40, deadline=None)
@given(seed=hs.integers(0, 2**32 - 1))
def test_anchored_h_certified_by_reduced_costs_equals_the_plain_h(seed):
    """The reduced-cost certificate of the candidate restriction (cuts extended to every column,
    constants on a monomial avoiding C): whenever it certifies, H equals the plain LP's."""
    from provsql_dp.mechanisms.recursive import _x_cuts

    rng = np.random.default_rng(seed)
    if rng.random() < 0.5:
        kr = random_kr(rng, n=int(rng.integers(3, 10)), n_tuples=int(rng.integers(2, 20)),
                       max_monos=3, max_size=3)
    else:
        kr = random_triangles(rng, n=int(rng.integers(6, 14)), p=float(rng.uniform(0.3, 0.8)))
    st = Structure(kr)
    if st.n == 0:
        return
    dh = float(rng.uniform(0.05, 1.0)) * float(st.deg.max())
    old = _x_cuts.Eq20Cuts.degree_test
    _x_cuts.Eq20Cuts.degree_test = False
    try:
        s = Solver(st)
        _, j_real = s.x_real(dh)
        if s._xcuts is None:
            return
        for j in {int(np.floor(j_real)), int(np.ceil(j_real))}:
            value = s._xcuts.anchored(j)
            if value is not None:
                assert _close(value, Solver(st, cuts=False).h(j)), (j, value)
    finally:
        _x_cuts.Eq20Cuts.degree_test = old
