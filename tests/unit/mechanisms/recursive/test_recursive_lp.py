"""H and G of the efficient recursive mechanism against independent formulations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from recursive_testkit import brute_h_g, make_kr, pulp_g, pulp_h, random_kr

from provsql_dp.errors import SolverError
from provsql_dp.mechanisms.recursive import _lp
from provsql_dp.mechanisms.recursive import general
from provsql_dp.mechanisms.recursive import efficient as rm
from provsql_dp.mechanisms.recursive._framework import delta_search, resolve_params
from provsql_dp.provenance.krelation import KRelation


def close(a, b, tol=1e-6):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


@pytest.mark.parametrize("seed", range(12))
def test_h_and_g_match_pulp_cbc(seed):
    rng = np.random.default_rng(seed)
    kr = random_kr(rng, n=int(rng.integers(3, 8)), n_tuples=int(rng.integers(2, 10)))
    n = kr.n_participants
    points = list(range(n + 1)) + [n - 0.5, n / 3]
    for i in points:
        assert close(rm.H(kr, i), pulp_h(kr, i)), (seed, i)
        assert close(rm.G(kr, i), pulp_g(kr, i)), (seed, i)


@pytest.mark.parametrize("solver", ["simplex", "ipm"])
def test_both_highs_algorithms_agree(solver):
    kr = random_kr(np.random.default_rng(99), n=7, n_tuples=9)
    for i in range(kr.n_participants + 1):
        assert close(rm.H(kr, i, solver=solver), pulp_h(kr, i))
        assert close(rm.G(kr, i, solver=solver), pulp_g(kr, i))


@pytest.mark.parametrize("seed", range(6))
def test_h_and_g_match_vertex_enumeration(seed):
    rng = np.random.default_rng(100 + seed)
    kr = random_kr(rng, n=3, n_tuples=int(rng.integers(1, 4)), max_monos=2, max_size=2)
    conj = random_kr(rng, n=3, n_tuples=int(rng.integers(1, 4)), max_monos=1, max_size=3)
    for i in [0, 0.5, 1, 1.5, 2, 3]:
        assert close(rm.H(kr, i), brute_h_g(kr, i, "H")), (seed, i)
        # on conjunctions the implemented G is eq. 19 exactly
        assert close(rm.G(conj, i), brute_h_g(conj, i, "G")), (seed, i)


def test_eq_19_as_printed_is_not_recursive_with_disjunctions():
    """R(t1) = a ∨ b, R(t2) = a ∨ c: eq. 19 as printed gives G_1(R) = 2/3 > G_1(R − a) = 1/2,
    breaking Def. 17; the implemented variant is recursive and never larger."""
    kr = make_kr([[[0], [1]], [[0], [2]]], [0.5, 0.5])
    without_a = make_kr([[[1]], [[2]]], [0.5, 0.5])
    assert close(pulp_g(kr, 1, printed=True), 2 / 3)
    assert close(rm.G(without_a, 1), 0.5)
    assert rm.G(kr, 1) <= rm.G(without_a, 1) + 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_implemented_g_is_at_most_eq_19(seed):
    kr = random_kr(np.random.default_rng(400 + seed), n=6, n_tuples=8)
    for i in range(kr.n_participants + 1):
        assert rm.G(kr, i) <= pulp_g(kr, i, printed=True) + 1e-6


@pytest.mark.parametrize("seed", range(8))
def test_relaxation_against_the_general_mechanism(seed):
    """Eq. 16 relaxes eq. 13: H_LP ≤ H_general, equal at 0 and |P| (correctness of φ)."""
    rng = np.random.default_rng(200 + seed)
    kr = random_kr(rng, n=6, n_tuples=7)
    h_gen, g_gen = general.krelation_sequences(kr)
    n = kr.n_participants
    for i in range(n + 1):
        assert rm.H(kr, i) <= h_gen[i] + 1e-7
    assert close(rm.H(kr, 0), h_gen[0]) and close(rm.H(kr, n), h_gen[n])
    # G_|P| = 2 US̃ ≥ 2 GS̃ = 2 G_general_|P|
    assert rm.G(kr, n) >= 2 * g_gen[n] - 1e-9


def test_triangle_example_of_the_paper():
    # Fig. 2(a), node privacy: abc, bcd, cde
    kr = make_kr([[[0, 1, 2]], [[1, 2, 3]], [[2, 3, 4]]])
    assert rm.H(kr, 5) == 3.0 and rm.H(kr, 0) == 0.0
    assert close(rm.H(kr, 4), 0.0)  # withdraw c
    assert rm.G(kr, 5) == 6.0  # c is in all three triangles


@pytest.mark.parametrize("seed", range(10))
def test_delta_from_j_predicate_equals_eq_11(seed):
    """The J-LP search finds the same j as eq. 11 evaluated on exact G values."""
    rng = np.random.default_rng(300 + seed)
    kr = random_kr(rng, n=8, n_tuples=12, integer_weights=True)
    for eps in (0.5, 2.0):
        p = resolve_params(eps, "node")
        e = rm.explain(kr, eps)
        n = kr.n_participants
        j, delta = delta_search(lambda j: rm.G(kr, n - j), rm.G(kr, n), n, p["theta"], p["beta"])
        assert e.delta_j == j and close(e.delta, delta)


def test_absent_participants_cost_nothing():
    ann = [[[0, 1]], [[1, 2]], [[0, 2], [3]]]
    kr = make_kr(ann, [1.0, 2.0, 1.5], n_participants=4)
    kr_more = make_kr(ann, [1.0, 2.0, 1.5], n_participants=7)  # 3 participants in no tuple
    n0 = 3
    for i in np.linspace(0, 7, 15):
        assert close(rm.H(kr_more, i), rm.H(kr, max(0.0, i - n0)))
        assert close(rm.G(kr_more, i), rm.G(kr, max(0.0, i - n0)))
    a, b = rm.explain(kr, 1.0), rm.explain(kr_more, 1.0)
    assert a.delta == b.delta and close(a.x, b.x)


def test_true_tuples_are_constant():
    kr = KRelation.from_annotations(
        rows=[(1,), (2,)], annotations=[[set()], [{("p", 1)}]], weights=[5.0, 1.0]
    )
    assert rm.H(kr, 0) == 5.0 and rm.H(kr, 1) == 6.0
    assert rm.G(kr, 1) == 2.0


def test_zero_weights_are_dropped_and_negative_rejected():
    kr = make_kr([[[0]], [[1]]], [0.0, 2.0])
    assert rm.H(kr, 2) == 2.0 and rm.G(kr, 2) == 4.0
    neg = make_kr([[[0]], [[1]]], [-1.0, 2.0])
    with pytest.raises(ValueError, match="release_signed"):
        rm.H(neg, 1)
    with pytest.raises(ValueError):
        rm.release(neg, 1.0)


def test_index_out_of_range():
    kr = make_kr([[[0, 1]]])
    for bad in (-0.1, 2.5, float("nan"), "x"):
        with pytest.raises(ValueError):
            rm.H(kr, bad)


def test_infeasible_lp_raises_solver_error():
    inf = _lp._INF
    with pytest.raises(SolverError):
        _lp.solve_lp(
            1, np.array([1.0]), np.array([0.0]), np.array([1.0]),
            np.array([2.0]), np.array([inf]), np.array([0]), np.array([0]), np.array([1.0]),
        )


def test_time_limit_raises_solver_error():
    kr = random_kr(np.random.default_rng(5), n=30, n_tuples=200, max_monos=3, max_size=4)
    st = _lp.Structure(kr)
    solver = _lp.Solver(st, time_limit=0.0)
    with pytest.raises(SolverError):
        solver.h(st.n / 2)


def test_greedy_upper_bound_is_valid():
    rng = np.random.default_rng(7)
    kr = random_kr(rng, n=8, n_tuples=14)
    st = _lp.Structure(kr)
    m = st.greedy_max_loads(st.n)
    for k in range(st.n + 1):
        assert rm.G(kr, st.n_total - k) <= 2 * m[k] + 1e-7
    assert math.isclose(m[0], st.deg.max())
