"""The k-triangle construction (mechanisms/subgraph/ktriangle.py): triangle listing against networkx, exact
top values against the enumerated count, H and G recursive by brute force over every neighbour of
random small graphs, the bounding inequality (2-bounding; the proof's rate bound at fractional
points; the counterexample to 1-bounding), an independent PuLP formulation, the release."""

from __future__ import annotations

import math
from unittest import mock

import networkx as nx
import numpy as np
import pytest
from conftest import breadth
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from provsql_dp.graph import true_count
from provsql_dp.mechanisms.recursive._framework import accuracy_bound, resolve_params
from provsql_dp.mechanisms.subgraph.ktriangle import KTriangleCount, edge_triangles
from sequence_checks import (
    assert_convex_nondecreasing,
    assert_g_bounding,
    assert_recursive,
    c_k,
    c_k_left_slope,
    dense_graphs,
    sequences,
)

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


@breadth(5, 25, edges=_EDGES, k=st.integers(2, 3))
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
def test_g_is_two_bounding(edges, k):
    """Def. 18 with g = 2 at all i ≤ j: proved for the factor 10k, i.e. (10/3)·G (module doc,
    "Bounding"); conjectured, and checked here, for the shipped G (factor 3k)."""
    kt = _kt(edges, k)
    seqs = sequences(kt)
    assert_g_bounding(kt, 2, 10.0 / 3.0, seqs=seqs)
    assert_g_bounding(kt, 2, 1.0, seqs=seqs)




def _edge_point(g: nx.Graph, f: dict):
    """``a_τ`` per triangle (as a frozenset of its three edges) and ``x_e`` per edge at ``f``."""
    es = {frozenset(e) for e in g.edges()}
    tris = {frozenset(frozenset(p) for p in ((a, b), (a, c), (b, c)))
            for a, b in g.edges() for c in set(g[a]) & set(g[b])}
    a = {t: max(0.0, sum(f[e] for e in t) - 2) for t in tris}
    x = {e: sum(v for t, v in a.items() if e in t) for e in es}
    return a, x


_POINT = st.lists(st.sampled_from([0.0, 0.5, 0.55, 0.6, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0, 1.0])
                  | st.floats(0.5, 1), min_size=21, max_size=21)


# a hill-climb's point on K6, k = 2: rate 5.32·k·M(g), the largest found (module doc)
_K6_WORST = [0.651, 0.795, 0.954, 0.698, 0.974, 0.366, 0.291, 0.609, 0.013, 0.979, 0.605, 0.951,
             0.0, 0.853, 0.357] + [1.0] * 6


@breadth(40, 200, g=dense_graphs(7, 4), k=st.integers(2, 4), gvals=_POINT, shrink=_POINT)
@example(g=nx.complete_graph(6), k=2, gvals=_K6_WORST, shrink=[0.5] * 21)
def test_rate_bound_of_the_two_bounding_proof(g, k, gvals, shrink):
    """The module doc's steps (c)–(d), written independently: at ``f = max(0, 2g − 1)`` every
    participant's rate ``D_p ≤ 10k·M(g)``, and (integrated) ``Obj(f) − Obj(z) ≤ Σ(f − z)·10k·M(g)``
    for ``z ≤ f``; at a random fractional g (the search steered towards the largest rate)."""
    es = [frozenset(e) for e in sorted(tuple(sorted(e)) for e in g.edges())]
    gp = dict(zip(es, gvals))
    f = {e: max(0.0, 2 * v - 1) for e, v in gp.items()}
    m_g = max(c_k(x, k) for x in _edge_point(g, gp)[1].values())
    a, x = _edge_point(g, f)
    worst = 0.0
    for p in es:
        rate = sum(c_k_left_slope(x[e], k) for t, v in a.items() if p in t and v > 1e-12 for e in t)
        assert rate <= 10 * k * m_g + 1e-9, (p, rate, m_g)
        worst = max(worst, rate / (k * m_g) if rate > 0 else 0.0)
    target(worst)
    z = {e: f[e] * s for e, s in zip(es, shrink)}

    def obj(pt):
        return sum(c_k(v, k) for v in _edge_point(g, pt)[1].values())

    assert obj(f) - obj(z) <= sum(f[e] - z[e] for e in es) * 10 * k * m_g + 1e-9


def _book_gadget(k: int, t: int, copies: int):
    """``copies`` of: an edge uv with t apexes c, each side uc, vc in k − 1 more triangles on
    private nodes (module doc, "Bounding")."""
    edges, nid = [], 0
    for _ in range(copies):
        u, v = nid, nid + 1
        nid += 2
        edges.append((u, v))
        for _ in range(t):
            c = nid
            nid += 1
            edges += [(u, c), (v, c)]
            for side in (u, v):
                for _ in range(k - 1):
                    edges += [(side, nid), (c, nid)]
                    nid += 1
    e = np.array(edges, dtype=np.int64)
    return KTriangleCount(e[:, 0], e[:, 1], k)


def test_book_gadget_is_a_counterexample_to_one_bounding():
    """Regression (module doc): k = 2, T = 4, N = 4, i = |P| − 4, j = i + 1 (every uv at ¼):
    ``H_j − H_i = 2TNε = 8 > (|P| − i)·G_j = 4·3k·¼ = 6``, ratio 2T/(3k) = 4/3 — the factor 3k is
    not 1-bounding (nor is any factor of k alone); the 2-bounding inequality holds there."""
    kt = _book_gadget(2, 4, 4)
    n = kt.n_participants
    i, j = n - 4, n - 3
    h_i, h_j, g_j = kt.h(i), kt.h(j), kt.g(j)
    assert h_i == pytest.approx(0.0, abs=1e-9)
    assert h_j == pytest.approx(8.0)
    assert g_j == pytest.approx(1.5)
    assert h_j - h_i > (n - i) * g_j + 1.0
    assert h_j <= h_i + (n - i) * kt.g(n - (n - j) // 2) + 1e-9


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


@breadth(6, 30, n=st.integers(4, 11), p=st.floats(0.3, 0.95), seed=st.integers(0, 10**6),
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
    with mock.patch("provsql_dp.mechanisms.subgraph.ktriangle.equitable_quotient", return_value=None):
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


@settings(max_examples=60, deadline=None)
@given(g_top=st.floats(0.5, 1e4), beta=st.floats(0.01, 1.0), mu=st.floats(0.1, 5.0),
       eps=st.floats(0.05, 2.0), scale=st.floats(1.0, 20.0))
def test_accuracy_bound_with_a_scaled_bounding_sequence(g_top, beta, mu, eps, scale):
    """``scale = 1`` is Theorem 1's formula; a larger scale (only ``s·G`` is g-bounding) keeps the
    bound and lowers the probability by Lemma 8's extra condition ``Δ̂ ≥ sΔ``."""
    kw = {"theta": 1.0, "beta": beta, "mu": mu, "eps1": eps, "eps2": eps, "c": 3.0, "g": 2}
    b1, p1 = accuracy_bound(g_top, **kw)
    half = 1 / (1 + math.exp(-eps))  # the discrete Laplace tail of Δ̂'s index, not ½
    assert p1 == pytest.approx(max(0.0, 1 - 2 * half * math.exp(-mu * eps / beta) - math.exp(-3.0)))
    assert p1 <= max(0.0, 1 - math.exp(-mu * eps / beta) - math.exp(-3.0)) + 1e-12  # never above the paper's
    b2, p2 = accuracy_bound(g_top, scale=scale, **kw)
    assert b2 == b1 and p2 <= p1 + 1e-12
    assert p2 == pytest.approx(max(0.0, 1 - half * math.exp(-mu * eps / beta)
                                   - half * math.exp(-(mu - math.log(scale)) * eps / beta)
                                   - math.exp(-3.0)))  # a vacuous probability is 0, never negative
    with pytest.raises(ValueError, match="scale"):
        accuracy_bound(g_top, scale=0.5, **kw)


def test_explain_states_the_proved_bounding():
    """``explain``'s Theorem 1 bound uses what is proved — (10/3)·G 2-bounding — not g = 1."""
    kt = _kt({(a, b) for a in range(5) for b in range(a + 1, 5)}, 2)
    ex = kt.explain(1.0)
    p = resolve_params(1.0, "edge")
    args = {key: p[key] for key in ("theta", "beta", "mu", "eps1", "eps2")} | {"c": math.log(20)}
    assert ex["accuracy"] == accuracy_bound(kt.g_top, g=2, scale=10 / 3, **args)
    assert ex["accuracy"] != accuracy_bound(kt.g_top, g=1, **args)
