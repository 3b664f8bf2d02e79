"""True counts from the compiled SQL equal brute-force / closed-form counts."""

import math

import duckdb
import networkx as nx
import pytest
from graph_brute import brute_occurrences
from conftest import breadth
from hypothesis import strategies as st

from provsql_dp.errors import InterfaceError
from provsql_dp.graph import load_edges, pattern_sql, resolve_pattern, true_count
from provsql_dp.graph._compile import compile_pattern

NAMED = [
    ("edge", None),
    ("triangle", None),
    ("k-star", 1),
    ("k-star", 2),
    ("k-star", 3),
    ("k-triangle", 1),
    ("k-triangle", 2),
    ("k-triangle", 3),
    ("path", 2),
    ("path", 3),
    ("path", 4),
    ("cycle", 3),
    ("cycle", 4),
    ("cycle", 5),
]


def _closed_form(g: nx.Graph, name: str, k):
    if name == "edge" or (name == "k-star" and k == 1):  # a 1-star is an edge
        return g.number_of_edges()
    if name == "triangle" or (name == "cycle" and k == 3) or (name == "k-triangle" and k == 1):
        return sum(nx.triangles(g).values()) // 3
    if name == "k-star":
        return sum(math.comb(d, k) for _, d in g.degree())
    if name == "k-triangle":
        return sum(math.comb(len(set(g[u]) & set(g[v])), k) for u, v in g.edges())
    return None


def _occurrence_rows(g, pattern, k):
    duck = duckdb.connect()
    load_edges(duck, g)
    c = compile_pattern(pattern, k)
    rows = duck.execute(c.sql).fetchall()
    duck.close()
    return c, rows


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("name, k", NAMED)
def test_named_counts_match_brute_force(name, k, seed):
    g = nx.gnp_random_graph(11, 0.35, seed=seed)
    p = resolve_pattern(name, k)
    brute = brute_occurrences(g, p.graph)
    c, rows = _occurrence_rows(g, name, k)
    assert len(rows) == len(brute)
    # every row is a distinct occurrence: its image edge set is an occurrence, none repeats
    images = {frozenset(frozenset((r[a], r[b])) for a, b in p.graph.edges()) for r in rows}
    assert images == brute
    closed = _closed_form(g, name, k)
    if closed is not None:
        assert len(rows) == closed


ATLAS5 = [g for g in nx.graph_atlas_g()[1:] if 2 <= g.number_of_nodes() <= 5 and nx.is_connected(g)]


@pytest.mark.parametrize("idx", range(len(ATLAS5)))
def test_every_small_pattern_counts_each_occurrence_once(idx):
    p = ATLAS5[idx]
    g = nx.gnp_random_graph(9, 0.5, seed=100 + idx)
    brute = brute_occurrences(g, p)
    assert true_count(g, p) == len(brute)


@breadth(5, 25, n=st.integers(min_value=1, max_value=10), p=st.floats(min_value=0.0, max_value=1.0),
         seed=st.integers(min_value=0, max_value=10**6), which=st.sampled_from(NAMED))
def test_hypothesis_counts(n, p, seed, which):
    g = nx.gnp_random_graph(n, p, seed=seed)
    name, k = which
    assert true_count(g, name, k) == len(brute_occurrences(g, resolve_pattern(name, k).graph))


def test_counts_with_sparse_arbitrary_ids():
    # node ids far apart and negative: nothing may depend on ids being dense or small
    g0 = nx.gnp_random_graph(12, 0.4, seed=3)
    g = nx.relabel_nodes(g0, {v: (v * 7919 - 40) * 10**9 for v in g0})
    for name, k in [("triangle", None), ("k-star", 2), ("cycle", 4), ("k-triangle", 2)]:
        assert true_count(g, name, k) == true_count(g0, name, k)


def test_string_labels():
    g = nx.relabel_nodes(nx.complete_graph(5), {i: f"v{i}" for i in range(5)})
    assert true_count(g, "triangle") == 10
    assert true_count(g, "k-star", k=4) == 5


def test_isolated_nodes_and_empty_graph():
    g = nx.empty_graph(4)
    assert true_count(g, "triangle") == 0
    g.add_edge(0, 1)
    assert true_count(g, "edge") == 1
    assert true_count(g, "2-star") == 0


def test_count_on_connection_with_custom_table():
    duck = duckdb.connect()
    load_edges(duck, nx.complete_graph(6), table="friends")
    assert true_count(duck, "triangle", table="friends") == 20
    assert duck.execute(pattern_sql("4-cycle", table="friends", count=True)).fetchone()[0] == 45


def test_quoted_table_names():
    sql = pattern_sql("edge", table='my "odd" table')
    assert '"my ""odd"" table"' in sql


def test_filters_node_and_edge():
    g = nx.complete_graph(5)
    nx.set_node_attributes(g, {0: 10, 1: 40, 2: 50, 3: 60, 4: 70}, "age")
    nx.set_edge_attributes(g, {e: 1 for e in g.edges()}, "w")
    g.edges[1, 2]["w"] = 5
    assert true_count(g, "triangle", node_filter="age > 30") == 4  # K4 on {1,2,3,4}
    assert true_count(g, "triangle", edge_filter="w < 2") == 10 - 3  # triangles avoiding 1–2
    assert true_count(g, "triangle", node_filter="age > 30", edge_filter="w < 2") == 4 - 2
    # the SQL form over tables agrees
    duck = duckdb.connect()
    load_edges(duck, g, node_table="node", node_attributes=True, edge_attributes=True)
    sql = pattern_sql("triangle", node_filter="age > 30", edge_filter="w < 2", count=True)
    assert duck.execute(sql).fetchone()[0] == 2


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"node_filter": "age > (SELECT 1)"}, "row-local"),
        ({"node_filter": "sum(age) > 1"}, "row-local"),
        ({"node_filter": "node.age > 1"}, "unqualified"),
        ({"edge_filter": ""}, "non-empty"),
        ({"edge_filter": "w >"}, "not a valid SQL"),
    ],
)
def test_bad_filters(kwargs, message):
    with pytest.raises(InterfaceError, match=message):
        pattern_sql("triangle", **kwargs)


def test_filter_on_missing_attribute_is_a_clear_error():
    g = nx.complete_graph(3)
    nx.set_node_attributes(g, 1, "age")
    with pytest.raises(InterfaceError, match="constraint could not be evaluated"):
        true_count(g, "triangle", node_filter="height > 2")


def test_filters_need_a_graph_with_attributes(tmp_path):
    path = tmp_path / "g.edges"
    path.write_text("0 1\n1 2\n0 2\n")
    with pytest.raises(InterfaceError, match="need attributes"):
        true_count(str(path), "triangle", node_filter="age > 3")
    assert true_count(str(path), "triangle") == 1


def test_triangle_sql_needs_no_union():
    c = compile_pattern("triangle")
    assert all(c.oriented) and "UNION" not in c.sql
    assert compile_pattern("k-star", k=2).oriented == (False, False)
