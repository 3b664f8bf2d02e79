"""The degree construction for k-stars (mechanisms/subgraph/kstar.py): exact top values, the recursive and
bounding properties checked by brute force over neighbouring small graphs, an independent PuLP
formulation of H and G, the comparison with the enumerated K-relation, and the release."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest

from provsql_dp.mechanisms.recursive import efficient as rm
from provsql_dp.mechanisms.subgraph.kstar import KStarCount
from provsql_dp.provenance.krelation import KRelation
from sequence_checks import TOL, assert_bounding, assert_convex_nondecreasing, assert_recursive, sequences


def random_graph(seed: int, n: int = 6, p: float = 0.5) -> nx.Graph:
    g = nx.gnp_random_graph(n, p, seed=seed)
    return g


def arrays(g: nx.Graph):
    e = np.array(list(g.edges()), dtype=np.int64).reshape(-1, 2)
    return e[:, 0], e[:, 1]


def kstar(g, k, privacy):
    u, v = arrays(g)
    return KStarCount(u, v, k, privacy, n_nodes=g.number_of_nodes() if privacy == "node" else None)


def count_stars(g, k):
    return sum(math.comb(d, k) for _, d in g.degree())


def neighbours(g, privacy):
    """(P₂ = g, P₁ = g − p) for every participant p."""
    if privacy == "edge":
        for e in list(g.edges()):
            h = g.copy()
            h.remove_edge(*e)
            yield h
    else:
        for w in list(g.nodes()):
            h = g.copy()
            h.remove_node(w)
            yield h


@pytest.mark.parametrize("privacy", ["edge", "node"])
@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("seed", range(4))
def test_top_values_and_recursive_sequences(seed, k, privacy):
    g2 = random_graph(seed)
    big = kstar(g2, k, privacy)
    n2 = big.n_participants
    assert big.h(n2) == pytest.approx(count_stars(g2, k))
    assert big.h(0) == 0 and big.g(0) == 0
    seqs = sequences(big)
    for g1 in neighbours(g2, privacy):
        assert_recursive(big, kstar(g1, k, privacy), seqs=seqs)


@pytest.mark.parametrize("privacy", ["edge", "node"])
@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("seed", range(6))
def test_g_bounds_h(seed, k, privacy):
    """Def. 18 with g = 1: H_j <= H_i + (|P| - i) G_j for all i <= j (proved for edge privacy,
    checked here for both)."""
    ks = kstar(random_graph(100 + seed, n=7, p=0.55), k, privacy)
    assert_bounding(ks)
    assert_convex_nondecreasing(ks)


def _pulp_value(g, k, privacy, i, which):
    """An independent formulation: C_k as the convex combination of its breakpoints."""
    import pulp
    from pulp_cbc import cbc_solver

    nodes = list(g.nodes())
    edges = list(g.edges())
    prob = pulp.LpProblem("kstar", pulp.LpMinimize)
    parts = edges if privacy == "edge" else nodes
    f = {p: prob.add_variable(f"f_{n}", 0, 1) for n, p in enumerate(parts)}
    xs = {}
    for v in nodes:
        inc = [e for e in edges if v in e]
        if privacy == "edge":
            xs[v] = pulp.lpSum(f[e] for e in inc)
        else:
            terms = []
            for n, (a, b) in enumerate(inc):
                y = prob.add_variable(f"a_{v}_{n}", 0)
                prob += y >= f[a] + f[b] - 1
                terms.append(y)
            xs[v] = pulp.lpSum(terms)
    kk = k - 1 if (which == "g" and privacy == "edge") else k
    vals = {}
    for v in nodes:
        d = g.degree(v)
        lam = [prob.add_variable(f"l_{v}_{m}", 0) for m in range(d + 1)]
        prob += pulp.lpSum(lam) == 1
        prob += xs[v] == pulp.lpSum(m * lam[m] for m in range(d + 1))
        vals[v] = pulp.lpSum(math.comb(m, kk) * lam[m] for m in range(d + 1))
    prob += pulp.lpSum(f.values()) == i
    if which == "h":
        prob += pulp.lpSum(vals.values())
    else:
        w = prob.add_variable("w", 0)
        for v in nodes:
            prob += w >= vals[v]
        prob += w
    prob.solve(cbc_solver())
    value = pulp.value(prob.objective)
    if which == "g":
        value *= 2 if privacy == "edge" else 2 * k
    return value


@pytest.mark.parametrize("privacy", ["edge", "node"])
@pytest.mark.parametrize("seed", range(3))
def test_h_and_g_match_pulp(seed, privacy):
    pytest.importorskip("pulp")
    g = random_graph(200 + seed, n=7, p=0.5)
    g = g.subgraph(max(nx.connected_components(g), key=len)).copy()  # no isolated nodes
    for k in (2, 3):
        ks = kstar(g, k, privacy)
        n = ks.n_participants
        for i in sorted({1, n // 2, n - 1}):
            assert ks.h(i) == pytest.approx(_pulp_value(g, k, privacy, i, "h"), abs=1e-6)
            assert ks.g(i) == pytest.approx(_pulp_value(g, k, privacy, i, "g"), abs=1e-6)


def enumerated(g, k, privacy) -> KRelation:
    rows, ann = [], []
    for v in g.nodes():
        for leaves in itertools.combinations(sorted(g.neighbors(v)), k):
            rows.append((v, leaves))
            if privacy == "edge":
                ann.append([{("edge", (min(v, u), max(v, u))) for u in leaves}])
            else:
                ann.append([{("node", x) for x in (v, *leaves)}])
    return KRelation.from_annotations(rows, ann)


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("seed", range(3))
def test_edge_h_dominates_the_enumerated_relation(seed, k):
    """Edge privacy: C_k(x_v) is the largest value of the enumerated per-centre φ-sum over the
    slice Σ f = x_v, so our H is at least the enumerated H (less truncation), equal at the top."""
    g = random_graph(300 + seed, n=7, p=0.6)
    ks = kstar(g, k, "edge")
    kr = enumerated(g, k, "edge")
    n = ks.n_participants
    assert len(kr.participants) == n - sum(1 for e in g.edges() if
                                           g.degree(e[0]) < k and g.degree(e[1]) < k)
    for i in range(n + 1):
        # the enumerated relation's participants are the edges in some star
        assert ks.h(i) >= rm.H(kr, max(0, i - (n - kr.n_participants))) - TOL
    assert ks.h(n) == pytest.approx(kr.true_answer())


def test_release_is_reproducible_and_private_parameters():
    g = random_graph(7, n=12, p=0.4)
    a = kstar(g, 2, "edge").release(0.5, rng=np.random.default_rng(3))
    b = kstar(g, 2, "edge").release(0.5, rng=np.random.default_rng(3))
    assert a.value == b.value and a.delta_hat == b.delta_hat
    assert a.epsilon == 0.5 and a.params["beta"] == pytest.approx(0.1)


def test_large_star_counts_cost_no_more_than_the_degrees():
    """A hub with 400 leaves has C(400, 3) = 10.6 M 3-stars (the enumerated path refuses); the
    degree LPs have a few hundred columns."""
    g = nx.star_graph(400)
    g.add_edges_from([(1, 2), (3, 4)])
    ks = kstar(g, 3, "node")
    assert ks.true_answer == math.comb(400, 3) + 2 * math.comb(2, 3)
    rel = ks.release(1.0, rng=np.random.default_rng(0))
    assert math.isfinite(rel.value)
    assert ks.n_cols < 2000


def test_bad_input():
    with pytest.raises(ValueError, match="k must be"):
        KStarCount([0], [1], 1)
    with pytest.raises(ValueError, match="duplicate"):
        KStarCount([0, 1], [1, 0], 2)
    with pytest.raises(ValueError, match="self-loops"):
        KStarCount([0], [0], 2)
    with pytest.raises(ValueError, match="privacy"):
        KStarCount([0], [1], 2, "vertex")


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("seed", range(4))
def test_edge_h_equals_the_enumerated_relation_when_each_centre_has_one_star(seed, k):
    """With every degree ≤ k a centre holds at most one k-star, C_k(x) = max(0, x − k + 1) is its
    φ, and the two H sequences coincide exactly."""
    rng = np.random.default_rng(seed)
    g = nx.random_regular_graph(k, 8, seed=seed) if k * 8 % 2 == 0 else nx.cycle_graph(8)
    g.remove_edges_from([e for e in list(g.edges()) if rng.random() < 0.2])
    ks = kstar(g, k, "edge")
    kr = enumerated(g, k, "edge")
    n = ks.n_participants
    for i in range(n + 1):
        assert ks.h(i) == pytest.approx(rm.H(kr, max(0, i - (n - kr.n_participants))), abs=1e-7)


@pytest.mark.parametrize("privacy", ["edge", "node"])
@pytest.mark.parametrize("seed", range(3))
def test_delta_and_x_match_their_definitions(seed, privacy):
    """Δ = min{e^{jβ}θ : G_{|P|−j} ≤ e^{jβ}θ} and X = min_i H_i + (|P| − i)Δ̂ evaluated over
    every index, against the binary search and the real-interval LP."""
    ks = kstar(random_graph(400 + seed, n=9, p=0.5), 2, privacy)
    n = ks.n_participants
    theta, beta = 1.0, 0.1
    js = [j for j in range(n + 1) if ks.g(n - j) <= math.exp(j * beta) * theta * (1 + 1e-9) + 1e-9]
    assert ks.delta(theta, beta)[0] == min(js)
    for dh in (0.5, 3.0, 17.0):
        brute = min(ks.h(i) + (n - i) * dh for i in range(n + 1))
        assert ks.x(dh)[0] == pytest.approx(brute, abs=1e-7)


# ------------------------------------------------------------------ directed arcs (SQL route)
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_ARCS = st.sets(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=9)


def _directed(arcs, k, privacy, n_nodes=None):
    a = np.array(sorted(arcs), dtype=np.int64).reshape(-1, 2)
    return KStarCount(a[:, 0], a[:, 1], k, privacy, n_nodes=n_nodes, directed=True)


def _directed_neighbours(arcs, privacy):
    if privacy == "edge":
        for e in arcs:
            yield arcs - {e}
    else:
        for w in {x for e in arcs for x in e}:
            yield {e for e in arcs if w not in e}


@settings(max_examples=40, deadline=None)
@given(arcs=_ARCS, k=st.integers(2, 3), privacy=st.sampled_from(["edge", "node"]))
def test_directed_sequences_are_recursive(arcs, k, privacy):
    """Def. 17 over every neighbour of a random table of arcs (self-loops and one-way arcs
    included): H_i(P2) <= H_i(P1) <= H_{i+1}(P2), the same for G, and H_|P| = the star count."""
    big = _directed(arcs, k, privacy)
    out = {}
    for s, _ in arcs:
        out[s] = out.get(s, 0) + 1
    assert big.h(big.n_participants) == pytest.approx(sum(math.comb(d, k) for d in out.values()))
    seqs = sequences(big)
    for small_arcs in _directed_neighbours(arcs, privacy):
        if not small_arcs:
            continue
        n2 = big.n_participants
        # node privacy: nodes left without arcs stay participants of the neighbour (isolated)
        small = _directed(small_arcs, k, privacy, n_nodes=n2 - 1 if privacy == "node" else None)
        assert_recursive(big, small, seqs=seqs)


@settings(max_examples=30, deadline=None)
@given(arcs=_ARCS, k=st.integers(2, 3))
def test_directed_edge_privacy_g_is_1_bounding(arcs, k):
    """Def. 18 with g = 1 and M = max_v C_{k-1}(x_v) (one centre per row, proved in the doc)."""
    assert_bounding(_directed(arcs, k, "edge"))


def test_symmetric_arcs_are_the_undirected_construction_under_node_privacy():
    g = random_graph(7, n=7, p=0.5)
    u, v = arrays(g)
    und = KStarCount(u, v, 2, "node")
    both = KStarCount(np.concatenate([u, v]), np.concatenate([v, u]), 2, "node", directed=True)
    for i in range(und.n_participants + 1):
        assert und.h(i) == pytest.approx(both.h(i)) and und.g(i) == pytest.approx(both.g(i))


@pytest.mark.parametrize("privacy", ["edge", "node"])
def test_warm_started_lps_match_cold_ones(privacy):
    """X re-solved for a second Δ̂ from the kept model, and the first H cloned from the X model
    (warm start), give the optima of fresh cold solves."""
    from provsql_dp.mechanisms.subgraph.ktriangle import KTriangleCount

    g = random_graph(31, n=12, p=0.5)
    u, v = arrays(g)
    for make in (lambda: KStarCount(u, v, 2, privacy), lambda: KTriangleCount(u, v, 2)):
        if privacy == "node" and make().__class__ is KTriangleCount:
            continue
        warm = make()
        for dh in (3.0, 0.7, 9.0):
            cold = make()
            assert warm._solve("x", None, penalty=dh)[0] == pytest.approx(
                cold._solve("x", None, penalty=dh)[0], abs=1e-6)
            assert warm.x(dh)[0] == pytest.approx(make().x(dh)[0], abs=1e-6)
        n = warm.n_participants
        fresh = make()
        for i in (1, n // 3, n // 2, n - 2):
            assert warm.h(i) == pytest.approx(fresh.h(i), abs=1e-6)
