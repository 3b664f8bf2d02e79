"""The k-triangle construction (mechanisms/ktriangle.py): triangle listing against networkx, exact
top values against the enumerated count, H and G recursive by brute force over every neighbour of
random small graphs, the bounding inequality, an independent PuLP formulation, the release."""

from __future__ import annotations

import math
from unittest import mock

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from provsql_dp.graph import true_count
from provsql_dp.mechanisms.ktriangle import KTriangleCount, edge_triangles
from sequence_checks import assert_bounding, assert_convex_nondecreasing, assert_recursive, sequences

_PAIRS = [(a, b) for a in range(6) for b in range(a + 1, 6)]
# dense enough to hold triangles: a random subset of K6's 15 edges
_EDGES = st.sets(st.sampled_from(_PAIRS), min_size=3, max_size=15)


def _kt(edges, k):
    e = np.array(sorted(edges), dtype=np.int64).reshape(-1, 2)
    return KTriangleCount(e[:, 0], e[:, 1], k)


def _t_counts(edges):
    g = nx.Graph(list(edges))
    return [len(set(g[a]) & set(g[b])) for a, b in g.edges()]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 30), p=st.floats(0.05, 0.9), seed=st.integers(0, 10**6))
def test_edge_triangles_are_the_graphs_triangles(n, p, seed):
    g = nx.gnp_random_graph(n, p, seed=seed)
    e = np.array(list(g.edges()), dtype=np.int64).reshape(-1, 2)
    tri = edge_triangles(e[:, 0], e[:, 1], n)
    assert len(tri) == sum(nx.triangles(g).values()) // 3
    found = {frozenset(x for j in row for x in e[j]) for row in tri}
    assert len(found) == len(tri) and all(len(s) == 3 for s in found)
    for row in tri:
        nodes = {x for j in row for x in e[j]}
        assert all(g.has_edge(*e[j]) for j in row) and len(nodes) == 3 and len(set(row)) == 3


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("seed", range(3))
def test_true_answer_is_the_enumerated_count(k, seed):
    g = nx.gnp_random_graph(25, 0.35, seed=seed)
    e = np.array(list(g.edges()))
    assert KTriangleCount(e[:, 0], e[:, 1], k).true_answer == true_count(g, "k-triangle", k=k)


@settings(max_examples=25, deadline=None)
@given(edges=_EDGES, k=st.integers(2, 3))
def test_sequences_are_recursive_over_every_neighbour(edges, k):
    """Def. 17: H_i(P2) <= H_i(P1) <= H_{i+1}(P2) for P1 = P2 − e, every edge e; same for G;
    H_|P| is the count; H convex and nondecreasing, G nondecreasing."""
    big = _kt(edges, k)
    n = big.n_participants
    assert big.h(n) == pytest.approx(sum(math.comb(t, k) for t in _t_counts(edges)))
    assert_convex_nondecreasing(big)
    seqs = sequences(big)
    for e in edges:
        assert_recursive(big, _kt(edges - {e}, k), seqs=seqs)


@settings(max_examples=25, deadline=None)
@given(edges=_EDGES, k=st.integers(2, 3))
def test_g_bounds_h(edges, k):
    """Def. 18 with g = 1 (proved at 0/1 points in the module doc; checked here at all i, j)."""
    assert_bounding(_kt(edges, k))


def _pulp_value(edges, k, i, which):
    """An independent formulation: C_k as a convex combination of its breakpoints."""
    import pulp
    from pulp_cbc import cbc_solver

    g = nx.Graph(list(edges))
    es = [tuple(sorted(e)) for e in g.edges()]
    tris = [c for c in nx.enumerate_all_cliques(g) if len(c) == 3]
    prob = pulp.LpProblem("ktri", pulp.LpMinimize)
    f = {e: prob.add_variable(f"f_{j}", 0, 1) for j, e in enumerate(es)}
    a = {}
    for j, (x, y, z) in enumerate(tris):
        a[j] = prob.add_variable(f"a_{j}", 0)
        sides = [tuple(sorted(p)) for p in ((x, y), (x, z), (y, z))]
        prob += a[j] >= pulp.lpSum(f[s] for s in sides) - 2
    vals = []
    for e in es:
        on = [j for j, c in enumerate(tris) if set(e) <= set(c)]
        lam = [prob.add_variable(f"l_{e[0]}_{e[1]}_{m}", 0) for m in range(len(on) + 1)]
        prob += pulp.lpSum(lam) == 1
        prob += pulp.lpSum(a[j] for j in on) == pulp.lpSum(m * lam[m] for m in range(len(lam)))
        vals.append(pulp.lpSum(math.comb(m, k) * lam[m] for m in range(len(lam))))
    prob += pulp.lpSum(f.values()) == i
    if which == "h":
        prob += pulp.lpSum(vals)
    else:
        w = prob.add_variable("w", 0)
        for v in vals:
            prob += w >= v
        prob += w
    prob.solve(cbc_solver())
    value = pulp.value(prob.objective) or 0.0
    return value * 3 * k if which == "g" else value


@pytest.mark.parametrize("seed", range(3))
def test_h_and_g_match_pulp(seed):
    pytest.importorskip("pulp")
    g = nx.gnp_random_graph(7, 0.6, seed=300 + seed)
    edges = {tuple(sorted(e)) for e in g.edges()}
    for k in (2, 3):
        kt = _kt(edges, k)
        n = kt.n_participants
        for i in sorted({1, n // 2, n - 1}):
            assert kt.h(i) == pytest.approx(_pulp_value(edges, k, i, "h"), abs=1e-6)
            assert kt.g(i) == pytest.approx(_pulp_value(edges, k, i, "g"), abs=1e-6)


def test_release_and_refusals():
    g = nx.karate_club_graph()
    e = np.array(list(g.edges()))
    kt = KTriangleCount(e[:, 0], e[:, 1], 2)
    a = kt.release(1.0, rng=np.random.default_rng(3))
    b = KTriangleCount(e[:, 0], e[:, 1], 2).release(1.0, rng=np.random.default_rng(3))
    assert a.mechanism == "recursive-ktriangle" and a.value == b.value and a.epsilon == 1.0
    assert np.isfinite(a.value) and a.params["mu"] == 0.5
    with pytest.raises(ValueError, match="edge privacy"):
        KTriangleCount(e[:, 0], e[:, 1], 2, "node")
    with pytest.raises(ValueError, match="k must"):
        KTriangleCount(e[:, 0], e[:, 1], 1)
    with pytest.raises(ValueError, match="duplicate"):
        KTriangleCount([0, 1], [1, 0], 2)


def _close(a, b):
    return abs(a - b) <= 1e-7 * max(1.0, abs(b))


@settings(max_examples=30, deadline=None)
@given(n=st.integers(4, 11), p=st.floats(0.3, 0.95), seed=st.integers(0, 10**6),
       k=st.integers(2, 4), order=st.randoms(use_true_random=False))
def test_fast_lps_equal_the_plain_lp(n, p, seed, k, order):
    """The segment LPs, the reduction of free edges and the quotient by an equitable partition
    give the plain LP's H, G and X at every i, probed in any order (kept models re-solved warm);
    so do the segment LPs without the quotient."""
    g = nx.gnp_random_graph(n, p, seed=seed)
    e = np.array(list(g.edges()), dtype=np.int64).reshape(-1, 2)
    if not len(e):
        return
    fast = KTriangleCount(e[:, 0], e[:, 1], k)
    with mock.patch("provsql_dp.mechanisms.ktriangle.equitable_quotient", return_value=None):
        cols = KTriangleCount(e[:, 0], e[:, 1], k)
        if cols.n_f:  # build both quotients (here: the LPs themselves) now
            assert cols._quotient("g")[0].a.shape[1] == cols.n_cols + 1
            assert cols._quotient("h")[0].a.shape[1] == cols.n_cols
    plain = KTriangleCount(e[:, 0], e[:, 1], k, formulation="plain")
    idx = list(range(fast.n_participants + 1))
    order.shuffle(idx)
    for i in idx:
        assert _close(fast.g(i), plain.g(i)) and _close(cols.g(i), plain.g(i)), i
        assert _close(fast.h(i), plain.h(i)), i
    for dh in (0.0, 0.7, 3.0, 40.0):
        assert _close(fast.x(dh)[0], plain.x(dh)[0]), dh


def test_fast_lps_on_a_clique_with_pendant_triangles():
    """Free edges (in no triangle), light triangles (no edge with t ≥ k) and a clique, whose
    edges the quotient merges."""
    g = nx.complete_graph(7)
    g.add_edges_from([(0, 10), (1, 10), (10, 11), (11, 12), (12, 10), (20, 21), (2, 30)])
    e = np.array(list(g.edges()), dtype=np.int64)
    for k in (2, 3):
        fast = KTriangleCount(e[:, 0], e[:, 1], k)
        plain = KTriangleCount(e[:, 0], e[:, 1], k, formulation="plain")
        assert fast.n_f < plain.n_f
        for i in range(fast.n_participants, -1, -1):
            assert _close(fast.g(i), plain.g(i)) and _close(fast.h(i), plain.h(i)), (k, i)
        assert fast._quot["g"][0].a.shape[1] < fast.n_cols


def test_formulation_is_checked():
    with pytest.raises(ValueError, match="formulation"):
        KTriangleCount([0, 0, 1], [1, 2, 2], 2, formulation="dense")
