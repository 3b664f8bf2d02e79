import networkx as nx
import pytest

from provsql_dp.errors import InterfaceError
from provsql_dp.graph import PATTERN_NAMES, resolve_pattern


@pytest.mark.parametrize(
    "spec, k, name, nodes, edges",
    [
        ("edge", None, "edge", 2, 1),
        ("triangle", None, "triangle", 3, 3),
        ("k-star", 3, "3-star", 4, 3),
        ("2-star", None, "2-star", 3, 2),
        ("star", 5, "5-star", 6, 5),
        ("k-triangle", 2, "2-triangle", 4, 5),
        ("3-triangle", None, "3-triangle", 5, 7),
        ("path", 3, "3-path", 4, 3),
        ("cycle", 4, "4-cycle", 4, 4),
        ("4-cycle", 4, "4-cycle", 4, 4),
        (" Triangle ", None, "triangle", 3, 3),
    ],
)
def test_named_patterns(spec, k, name, nodes, edges):
    p = resolve_pattern(spec, k)
    assert (p.name, p.n_nodes, p.n_edges) == (name, nodes, edges)
    assert nx.is_connected(p.graph)
    assert sorted(p.graph.nodes()) == list(range(nodes))


def test_k_triangle_is_k_triangles_on_one_edge():
    g = resolve_pattern("k-triangle", k=3).graph
    assert sum(nx.triangles(g).values()) // 3 == 3
    assert all(g.has_edge(0, a) and g.has_edge(1, a) for a in (2, 3, 4))


def test_every_listed_name_resolves():
    for name in PATTERN_NAMES:
        k = 3 if name.startswith("k-") or name in ("path", "cycle") else None
        resolve_pattern(name, k)


@pytest.mark.parametrize(
    "spec, k, message",
    [
        ("k-star", None, "needs k"),
        ("k-star", 0, "k >= 1"),
        ("cycle", 2, "k >= 3"),
        ("path", 1.5, "integer"),
        ("k-star", True, "integer"),
        ("2-star", 3, "already fixes"),
        ("pentagram", None, "unknown pattern"),
        (42, None, "name or a networkx.Graph"),
    ],
)
def test_bad_names(spec, k, message):
    with pytest.raises(InterfaceError, match=message):
        resolve_pattern(spec, k)


@pytest.mark.parametrize(
    "graph, message",
    [
        (nx.DiGraph([(0, 1)]), "undirected"),
        (nx.MultiGraph([(0, 1), (0, 1)]), "simple"),
        (nx.empty_graph(3), "at least one edge"),
        (nx.Graph([(0, 0), (0, 1)]), "self-loops"),
        (nx.Graph([(0, 1), (2, 3)]), "connected"),
        (nx.path_graph(17), "at most 16"),
    ],
)
def test_bad_graphs(graph, message):
    with pytest.raises(InterfaceError, match=message):
        resolve_pattern(graph)


def test_custom_graph_keeps_labels():
    p = resolve_pattern(nx.Graph([("x", "y"), ("y", "z")]))
    assert p.name == "custom" and p.labels == ("x", "y", "z")
    assert sorted(p.graph.edges()) == [(0, 1), (1, 2)]
