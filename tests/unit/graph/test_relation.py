"""The sensitive K-relation of a pattern count: support, possible worlds, merging, size guard."""

import networkx as nx
import numpy as np
import pytest

from provsql_dp.errors import InterfaceError, UnsupportedQueryError
from provsql_dp.graph import relation, true_count
from provsql_dp.graph._relation import merge_equal_annotations

PATTERNS = [("triangle", None), ("k-star", 2), ("k-triangle", 2), ("cycle", 4), ("path", 3)]


def _graph(seed=0, n=14, p=0.35):
    return nx.gnp_random_graph(n, p, seed=seed)


@pytest.mark.parametrize("name, k", PATTERNS)
@pytest.mark.parametrize("privacy", ["node", "edge"])
def test_support_is_the_true_count(name, k, privacy):
    g = _graph(1)
    kr = relation(g, name, k, privacy=privacy, merge=False)
    assert len(kr) == kr.true_answer() == true_count(g, name, k)
    merged = relation(g, name, k, privacy=privacy)
    assert merged.true_answer() == kr.true_answer()


@pytest.mark.parametrize("capture", ["sql", "direct"])
@pytest.mark.parametrize("name, k", PATTERNS)
def test_node_privacy_possible_worlds(name, k, capture):
    """Withdrawing node v leaves exactly the occurrences of G − v."""
    g = _graph(2)
    kr = relation(g, name, k, privacy="node", merge=False, capture=capture)
    everyone = set(kr.participants)
    for v in list(g.nodes())[:6]:
        h = g.copy()
        h.remove_node(v)
        world = everyone - {("node", v)}
        present = kr.present(world)
        assert len(present) == true_count(h, name, k)
        assert all(v not in row for row in present)
        assert len(kr.rows) - len(present) == sum(1 for row in kr.rows if v in row)


@pytest.mark.parametrize("capture", ["sql", "direct"])
@pytest.mark.parametrize("name, k", PATTERNS)
def test_edge_privacy_possible_worlds(name, k, capture):
    """Withdrawing edge e leaves exactly the occurrences of G − e."""
    g = _graph(3)
    kr = relation(g, name, k, privacy="edge", merge=False, capture=capture)
    everyone = set(kr.participants)
    for u, v in list(g.edges())[:6]:
        h = g.copy()
        h.remove_edge(u, v)
        world = everyone - {("edge", (min(u, v), max(u, v)))}
        assert len(kr.present(world)) == true_count(h, name, k)


def test_edge_privacy_withdrawing_two_edges():
    g = _graph(4)
    kr = relation(g, "triangle", privacy="edge", merge=False)
    edges = list(g.edges())[:2]
    h = g.copy()
    h.remove_edges_from(edges)
    world = set(kr.participants) - {("edge", (min(a, b), max(a, b))) for a, b in edges}
    assert len(kr.present(world)) == true_count(h, "triangle")


@pytest.mark.parametrize("name, k", PATTERNS)
@pytest.mark.parametrize("privacy", ["node", "edge"])
def test_sql_capture_equals_direct_construction(name, k, privacy):
    g = _graph(5, n=16)
    a = relation(g, name, k, privacy=privacy, merge=False, capture="sql")
    b = relation(g, name, k, privacy=privacy, merge=False, capture="direct")
    assert a.participant_list == b.participant_list
    canon = lambda kr: sorted((r, sorted(map(sorted, kr.annotation(i)))) for i, r in enumerate(kr.rows))
    assert canon(a) == canon(b)


def test_annotations_are_fig2a():
    """papers/003 Fig. 2(a): triangle abc ↦ a∧b∧c (node), e_ab∧e_ac∧e_bc (edge)."""
    g = nx.Graph([(1, 2), (2, 3), (1, 3), (3, 4)])
    node = relation(g, "triangle", privacy="node")
    edge = relation(g, "triangle", privacy="edge")
    assert node.annotation(0) == frozenset({frozenset({("node", 1), ("node", 2), ("node", 3)})})
    assert edge.annotation(0) == frozenset(
        {frozenset({("edge", (1, 2)), ("edge", (1, 3)), ("edge", (2, 3))})}
    )
    # node 4 and edge 3–4 are participants that occur in no tuple
    assert ("node", 4) in node.participants and ("edge", (3, 4)) in edge.participants


def test_merge_keeps_weight_per_node_set():
    g = nx.complete_graph(4)
    kr = relation(g, "k-triangle", k=2, privacy="node")
    assert len(kr) == 1 and kr.weights.tolist() == [6.0]  # the 6 diamonds of K4 share one node set
    kr = relation(g, "k-star", k=2, privacy="node")
    assert len(kr) == 4 and kr.weights.tolist() == [3.0] * 4  # C(4,3) node sets × 3 centres
    # edge privacy never merges: different occurrences have different edge sets
    assert len(relation(g, "k-triangle", k=2, privacy="edge")) == 6


def test_merge_preserves_per_participant_weight():
    """Σ_{t∋p} q(t) — the quantity G_i is built from — is unchanged by merging."""
    g = _graph(6, n=18, p=0.4)
    raw = relation(g, "k-triangle", k=2, privacy="node", merge=False)
    merged = merge_equal_annotations(raw)
    assert len(merged) < len(raw)

    def per_participant(kr):
        out = np.zeros(kr.n_participants)
        np.add.at(out, kr.mono_part, np.repeat(kr.weights, np.diff(kr.mono_ptr)))
        return out

    assert np.allclose(per_participant(raw), per_participant(merged))


def test_size_guard_refuses_before_materialising():
    g = nx.star_graph(60)  # C(60, 3) = 34,220 3-stars
    with pytest.raises(UnsupportedQueryError, match="max_entries"):
        relation(g, "k-star", k=3, privacy="node", max_entries=100_000)
    assert relation(g, "k-star", k=3, privacy="edge", max_entries=None).true_answer() == 34220


def test_relation_rejects_bad_arguments():
    g = nx.path_graph(3)
    with pytest.raises(InterfaceError, match="privacy"):
        relation(g, "edge", privacy="vertex")
    with pytest.raises(InterfaceError, match="capture"):
        relation(g, "edge", capture="magic")
    with pytest.raises(InterfaceError, match="undirected"):
        relation(nx.DiGraph(g), "edge")
    with pytest.raises(InterfaceError, match="simple"):
        relation(nx.MultiGraph(g), "edge")
