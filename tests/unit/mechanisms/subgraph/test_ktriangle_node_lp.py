"""The node k-triangle LPs reduced and solved on their quotient (mechanisms/subgraph/_ktriangle_node_lp.py,
``formulation="quotient"``) against the LPs as written (``formulation="plain"``): the same H, K,
G at every i and X at every Δ̂, probed in any order (kept models re-solved warm, S's κ changed in
place), the same releases; with the quotient refused (the reduced LPs themselves) too."""

from __future__ import annotations

from unittest import mock

import networkx as nx
import numpy as np
import pytest
from conftest import breadth
from hypothesis import given, settings
from hypothesis import strategies as st

from provsql_dp.mechanisms.subgraph.ktriangle_node import NodeKTriangleCount

_PATCH = "provsql_dp.mechanisms.subgraph._ktriangle_node_lp.equitable_quotient"


def _close(a, b):
    return abs(a - b) <= 1e-7 * max(1.0, abs(b))


def _edges(g: nx.Graph) -> np.ndarray:
    return np.array(sorted(tuple(sorted(x)) for x in g.edges()), dtype=np.int64).reshape(-1, 2)


def _assert_same(g: nx.Graph, k: int, order=None, n_nodes=None) -> NodeKTriangleCount:
    e = _edges(g)
    fast = NodeKTriangleCount(e[:, 0], e[:, 1], k, n_nodes=n_nodes)
    with mock.patch(_PATCH, return_value=None):  # the reduced LPs, unquotiented
        red = NodeKTriangleCount(e[:, 0], e[:, 1], k, n_nodes=n_nodes)
        for kind in ("h", "k", "g"):
            red._lps.quotient(kind)
    plain = NodeKTriangleCount(e[:, 0], e[:, 1], k, n_nodes=n_nodes, formulation="plain")
    n = fast.n_participants
    idx = list(range(n + 1))
    if order is not None:
        order.shuffle(idx)
    for i in idx:
        j = n - i
        assert _close(fast.kappa_withdrawn(j), plain.kappa_withdrawn(j)), ("K", i)
        assert _close(fast.g(i), plain.g(i)) and _close(red.g(i), plain.g(i)), ("G", i)
        assert _close(fast.h(i), plain.h(i)) and _close(red.h(i), plain.h(i)), ("H", i)
    for dh in (0.0, 0.7, 3.0, 40.0, 1e4):
        assert _close(fast.x(dh)[0], plain.x(dh)[0]) and _close(red.x(dh)[0], plain.x(dh)[0])
    return fast


@breadth(8, 40, n=st.integers(4, 10), p=st.floats(0.3, 0.95), seed=st.integers(0, 10**6),
         k=st.integers(2, 4), order=st.randoms(use_true_random=False))
def test_quotient_lps_equal_the_plain_lps(n, p, seed, k, order):
    g = nx.gnp_random_graph(n, p, seed=seed)
    if g.number_of_edges():
        _assert_same(g, k, order)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(4, 9), p=st.floats(0.4, 0.95), seed=st.integers(0, 10**6),
       k=st.integers(2, 3), rs=st.integers(0, 10**6))
def test_same_released_values(n, p, seed, k, rs):
    """Same H, G, X ⇒ same Δ, same X, same noise draws: the same released values."""
    g = nx.gnp_random_graph(n, p, seed=seed)
    e = _edges(g)
    if not len(e):
        return
    fast = NodeKTriangleCount(e[:, 0], e[:, 1], k)
    plain = NodeKTriangleCount(e[:, 0], e[:, 1], k, formulation="plain")
    ra, rb = np.random.default_rng(rs), np.random.default_rng(rs)
    for eps in (0.5, 2.0, 0.5):
        a, b = fast.release(eps, rng=ra), plain.release(eps, rng=rb)
        assert a.delta_hat == pytest.approx(b.delta_hat, rel=1e-9)
        assert a.value == pytest.approx(b.value, rel=1e-9, abs=1e-6)


@pytest.mark.parametrize("name", ["K7", "cliques-with-pendants", "windmill", "book"])
def test_symmetric_graphs_merge_and_agree(name):
    """Cliques (whose nodes, edges and triangles merge), light triangles (no edge with t ≥ k),
    triangle-free nodes and isolated participants."""
    if name == "K7":
        g = nx.complete_graph(7)
    elif name == "cliques-with-pendants":
        g = nx.complete_graph(6)
        g.add_edges_from([(0, 10), (1, 10), (10, 11), (11, 12), (12, 10), (20, 21), (2, 30)])
        g.add_edges_from((40 + a, 40 + b) for a in range(5) for b in range(a + 1, 5))
    elif name == "windmill":
        g = nx.Graph((0, x) for x in range(1, 13))
        g.add_edges_from((x, x + 1) for x in range(1, 13, 3))
        g.add_edges_from((x, x + 2) for x in range(1, 13, 3))
        g.add_edges_from((x + 1, x + 2) for x in range(1, 13, 3))
    else:
        g = nx.Graph([(0, 1)] + [(x, 2 + w) for w in range(6) for x in (0, 1)])
    for k in (2, 3):
        fast = _assert_same(g, k, n_nodes=g.number_of_nodes() + 2)
        for kind in ("h", "k", "g"):
            q = fast._lps.quotient(kind)[0]
            if q is not None:
                assert q.a.shape[1] < fast._lps.model(kind)[5].shape[1], (name, k, kind)


def test_free_nodes_and_light_edges_are_dropped():
    """A K5 (heavy for k = 2, 3) beside a triangle (light) and a path: H, K and X keep only the
    K5's nodes; S keeps every node of a triangle (its apex load counts the light one)."""
    g = nx.complete_graph(5)
    g.add_edges_from([(10, 11), (11, 12), (10, 12), (12, 13), (13, 14)])
    for k in (2, 3):
        fast = _assert_same(g, k)
        assert fast.n_f == 5 and fast._lps.quotient("h")[3] == 5
        assert fast._lps.quotient("k")[3] == 5 and fast._lps.quotient("g")[3] == 8
        assert len(fast._lps.heavy) == 10


def test_kappa_is_set_on_the_kept_quotient():
    """The S quotient kept warm serves every κ: the entries (node-row class, s class) become
    −κ·count; a cold structure asked the same (mass, κ) gives the same value, in any order."""
    g = nx.compose(nx.complete_graph(6), nx.relabel_nodes(nx.complete_graph(5),
                                                          {i: i + 4 for i in range(5)}))
    e = _edges(g)
    warm = NodeKTriangleCount(e[:, 0], e[:, 1], 2)
    for mass, kappa in ((7.0, 3.0), (5.0, 0.0), (7.0, 11.5), (8.0, 3.0), (6.0, 0.25)):
        cold = NodeKTriangleCount(e[:, 0], e[:, 1], 2)
        plain = NodeKTriangleCount(e[:, 0], e[:, 1], 2, formulation="plain")
        want = plain._solve_g("g", mass, kappa)
        assert _close(warm._solve_g("g", mass, kappa), want)
        assert _close(cold._solve_g("g", mass, kappa), want)


def test_formulation_is_checked():
    with pytest.raises(ValueError, match="formulation"):
        NodeKTriangleCount([0, 0, 1], [1, 2, 2], 2, formulation="segments")


def test_interior_point_cold_solves_and_warm_re_solves_after_them():
    """Large S and X LPs are solved cold by interior point with crossover and re-solved warm by
    dual simplex from that basis (forced here on a small graph): the same G, H and X as the plain
    LPs."""
    g = nx.compose(nx.complete_graph(7), nx.relabel_nodes(nx.complete_graph(5),
                                                          {i: i + 5 for i in range(5)}))
    g.add_edges_from([(0, 20), (1, 20), (20, 21), (21, 0)])
    with mock.patch("provsql_dp.mechanisms.subgraph._ktriangle_node_lp.IPM_ROWS", 0):
        for k in (2, 3):
            fast = _assert_same(g, k)
            for kind in ("g", "x"):
                assert any(alg == "ipm" for what, alg, *_ in fast.stats.log
                           if what.endswith(" " + kind)), kind
