"""Property tests: every invariant papers/003 proves for H, G, Δ and X, on random K-relations."""

from __future__ import annotations

import math

import numpy as np
from conftest import breadth
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from recursive_testkit import make_kr, neighbour

from provsql_dp.mechanisms.recursive import efficient as rm
from provsql_dp.mechanisms.recursive._framework import resolve_params
from provsql_dp.mechanisms.recursive._lp import Solver, Structure

TOL = 1e-6
SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def krelations(draw, max_participants=6, max_tuples=7):
    n = draw(st.integers(1, max_participants))
    monomial = st.lists(st.integers(0, n - 1), min_size=1, max_size=3, unique=True)
    annotation = st.lists(monomial, min_size=1, max_size=3)
    anns = draw(st.lists(annotation, min_size=1, max_size=max_tuples))
    weights = draw(
        st.lists(
            st.sampled_from([0.5, 1.0, 1.0, 2.0, 3.5]), min_size=len(anns), max_size=len(anns)
        )
    )
    return make_kr(anns, weights, n_participants=n)


def le(a, b):
    return a <= b + TOL * max(1.0, abs(a), abs(b))


def h_seq(kr):
    return [rm.H(kr, i) for i in range(kr.n_participants + 1)]


def g_seq(kr):
    return [rm.G(kr, i) for i in range(kr.n_participants + 1)]


@SETTINGS
@given(krelations())
def test_h_endpoints(kr):
    n = kr.n_participants
    assert abs(rm.H(kr, 0)) <= TOL
    assert math.isclose(rm.H(kr, n), float(kr.weights.sum()), rel_tol=1e-9)
    assert abs(rm.G(kr, 0)) <= TOL


@breadth(5, 25, krelations(), st.data())
def test_recursive_monotonicity_between_neighbours(kr, data):
    """Def. 17: H_i(R) ≤ H_i(R') ≤ H_{i+1}(R) for 0 ≤ i ≤ |P'|, and the same for G."""
    p = data.draw(st.sampled_from(list(kr.participant_list)))
    kr2 = neighbour(kr, p)
    h, h2 = h_seq(kr), h_seq(kr2)
    g, g2 = g_seq(kr), g_seq(kr2)
    for i in range(kr2.n_participants + 1):
        assert le(h[i], h2[i]) and le(h2[i], h[i + 1]), (i, h, h2)
        assert le(g[i], g2[i]) and le(g2[i], g[i + 1]), (i, g, g2)


@breadth(5, 25, krelations())
def test_g_is_a_2_bounding_sequence(kr):
    """Def. 18 with g = 2: H_j ≤ H_i + (|P|−i) G_k, k = |P| − ⌊(|P|−j)/2⌋."""
    n = kr.n_participants
    h, g = h_seq(kr), g_seq(kr)
    for i in range(n + 1):
        for j in range(i, n + 1):
            k = n - (n - j) // 2
            assert le(h[j], h[i] + (n - i) * g[k]), (i, j, k)


@SETTINGS
@given(krelations())
def test_h_is_convex(kr):
    """Lemma 10: H_{i+1} − H_i ≤ H_{i+2} − H_{i+1}."""
    h = h_seq(kr)
    for i in range(len(h) - 2):
        assert le(h[i + 1] - h[i], h[i + 2] - h[i + 1])


@breadth(5, 25, krelations(), st.data())
def test_log_delta_changes_by_at_most_beta(kr, data):
    """Lemma 1: |ln Δ(R) − ln Δ(R')| ≤ β for neighbours."""
    p = data.draw(st.sampled_from(list(kr.participant_list)))
    eps = data.draw(st.sampled_from([0.5, 1.0, 3.0]))
    beta = resolve_params(eps, "node")["beta"]
    d1 = rm.explain(kr, eps).delta
    d2 = rm.explain(neighbour(kr, p), eps).delta
    assert abs(math.log(d1) - math.log(d2)) <= beta + 1e-9


@breadth(5, 25, krelations(), st.data())
def test_x_changes_by_at_most_delta_hat(kr, data):
    """Lemma 7: for a fixed Δ̂, |X(R) − X(R')| ≤ Δ̂; and X ≤ H_|P| (Lemma 8)."""
    p = data.draw(st.sampled_from(list(kr.participant_list)))
    delta_hat = data.draw(st.sampled_from([0.3, 1.0, 2.5, 7.0]))
    e1 = rm.explain(kr, 1.0, delta_hat=delta_hat)
    e2 = rm.explain(neighbour(kr, p), 1.0, delta_hat=delta_hat)
    assert abs(e1.x - e2.x) <= delta_hat * (1 + 1e-7) + TOL
    assert le(e1.x, e1.true_answer)
    assert le(e2.x, e2.true_answer)


@breadth(5, 25, krelations(), st.sampled_from([0.3, 1.0, 2.5, 7.0]))
def test_x_is_the_minimum_of_eq_12(kr, delta_hat):
    """X from the real-interval LP and two H evaluations equals eq. 12 over every integer i."""
    n = kr.n_participants
    h = h_seq(kr)
    expected = min(h[i] + (n - i) * delta_hat for i in range(n + 1))
    x = rm.explain(kr, 1.0, delta_hat=delta_hat).x
    assert math.isclose(x, expected, rel_tol=1e-6, abs_tol=1e-6)


@breadth(5, 25, krelations(max_participants=8, max_tuples=10))
def test_restricted_models_equal_the_full_lp(kr):
    """Row/column generation is certified by duality: same values as the full model."""
    s = Structure(kr)
    gen, full = Solver(s), Solver(s, generation=False)
    for j in np.linspace(0, s.n, 7):
        assert math.isclose(gen.h(j), full.h(j), rel_tol=1e-6, abs_tol=1e-6)
        assert math.isclose(gen.g(j), full.g(j), rel_tol=1e-6, abs_tol=1e-6)
    for dh in (0.5, 2.0):
        assert math.isclose(gen.x_real(dh)[0], full.x_real(dh)[0], rel_tol=1e-6, abs_tol=1e-6)
