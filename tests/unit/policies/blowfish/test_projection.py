"""Projection of attribute compositions (papers/001 Def. 3.2, Thm 3): every neighbour under the
policy is a neighbour (or the same table) under the projected policy on the cells, the cell
workload answers exactly what the original workload does, and a marginal is answered by the
projected 1-D graph's own strategies."""

import numpy as np
from conftest import breadth
from hypothesis import strategies as st

from provsql_dp import blowfish as bf
from provsql_dp.policies.blowfish.workload import Ranges


def _factor(kind, k, theta):
    if kind == "full":
        return bf.Policy.full(k)
    if kind == "line":
        return bf.Policy.line(k)
    return bf.Policy.threshold(k, theta)


@st.composite
def _cases(draw):
    k1, k2 = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    kinds = st.sampled_from(["full", "line", "threshold"])
    f1 = _factor(draw(kinds), k1, draw(st.integers(1, 4)))
    f2 = _factor(draw(kinds), k2, draw(st.integers(1, 4)))
    bounded = draw(st.booleans())
    pol = bf.Policy.compose(f1, f2, bounded=bounded)
    n = draw(st.integers(1, 4))
    rects = []
    for _ in range(n):
        a, b = sorted(draw(st.integers(0, k1 - 1)) for _ in range(2))
        c, d = sorted(draw(st.integers(0, k2 - 1)) for _ in range(2))
        rects.append((a, b, c, d))
    r = np.array(rects)
    w = bf.Rects((k1, k2), r[:, 0], r[:, 1], r[:, 2], r[:, 3])
    x = np.array(draw(st.lists(st.integers(0, 5), min_size=k1 * k2, max_size=k1 * k2)))
    return pol, w, x


def _cell(pr, v):
    i, j = divmod(int(v), pr.original.shape[1])
    ci = np.searchsorted(pr.bins[0], i, side="right") - 1
    cj = np.searchsorted(pr.bins[1], j, side="right") - 1
    return int(ci * (pr.bins[1].size - 1) + cj)


@breadth(30, 150, _cases())
def test_projected_composition_is_exact_and_keeps_every_neighbour(case):
    pol, w, x = case
    pr = bf.project(w, pol)
    assert np.array_equal(pr.workload.answer(pr.aggregate(x)), w.answer(x))
    cu, cv = pr.policy.edges()
    cell_edges = {(int(a), int(b)) for a, b in zip(cu, cv)} | {(int(b), int(a)) for a, b in zip(cu, cv)}
    u, v = pol.edges()
    bottom, cell_bottom = pol.bottom, pr.policy.bottom
    for a, b in zip(u.tolist(), v.tolist()):
        if bottom is not None and bottom in (a, b):
            other = b if a == bottom else a
            assert (_cell(pr, other), cell_bottom) in cell_edges
            continue
        ca, cb = _cell(pr, a), _cell(pr, b)
        assert ca == cb or (ca, cb) in cell_edges, (pol, a, b, ca, cb)


def test_a_marginal_under_a_composition_costs_what_the_attribute_policy_costs():
    """(THRESHOLD 3, FULL) on (age, state): the age histogram is answered on the projected 1-D
    threshold graph, with the error of THRESHOLD 3 on age alone (not by summing 2-D cells)."""
    ages, states = 100, 50
    pol = bf.Policy.compose(bf.Policy.threshold(ages, 3), bf.Policy.full(states))
    ages_hist = bf.Rects((ages, states), np.arange(ages), np.arange(ages),
                         np.zeros(ages, np.int64), np.full(ages, states - 1))
    pr = bf.project(ages_hist, pol)
    assert isinstance(pr.workload, Ranges) and pr.n_cells == ages
    x = np.random.default_rng(0).integers(0, 4, ages * states)
    marginal = pr.answer(pr.aggregate(x), 1.0, rng=np.random.default_rng(1))
    alone = bf.answer(bf.Histogram(ages), x.reshape(ages, states).sum(axis=1),
                      bf.Policy.threshold(ages, 3), 1.0, rng=np.random.default_rng(1))
    assert np.isclose(marginal.expected_mse, alone.expected_mse)
    # and the state marginal under the same policy: plain DP on 50 states
    states_hist = bf.Rects((ages, states), np.zeros(states, np.int64),
                           np.full(states, ages - 1), np.arange(states), np.arange(states))
    pr = bf.project(states_hist, pol)
    m = pr.answer(pr.aggregate(x), 1.0, rng=np.random.default_rng(2))
    dp = bf.answer(bf.Histogram(states), x.reshape(ages, states).sum(axis=0),
                   bf.Policy.full(states), 1.0, rng=np.random.default_rng(2))
    assert np.isclose(m.expected_mse, dp.expected_mse)
