"""The Δ-search LP J(W) by cutting planes in g (mechanisms/_j_cuts.py, Solver.j_cuts) against the
plain LP (Solver.j_value), PuLP/CBC on small instances, and the Δ search with the plain LPs only:
same value, certified bounds around it, a tangent cut below J everywhere, the same Δ."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from recursive_testkit import random_kr
from test_recursive_certify import pulp_j, random_triangles

from provsql_dp.mechanisms import recursive as rm
from provsql_dp.mechanisms._j_cuts import JCuts, cuts_at
from provsql_dp.mechanisms._lp import Solver
from provsql_dp.mechanisms._structure import Structure

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:pulp")


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


@settings(max_examples=40, deadline=None)
@given(seed=hs.integers(0, 2**32 - 1))
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


@settings(max_examples=40, deadline=None)
@given(seed=hs.integers(0, 2**32 - 1))
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
