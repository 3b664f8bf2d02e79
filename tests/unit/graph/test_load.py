import duckdb
import networkx as nx
import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import DataError, InterfaceError
from provsql_dp.graph import load_edges, read_edge_list


def _edges(duck, table="edge"):
    return duck.execute(f"SELECT src, dst FROM {table} ORDER BY ALL").fetchall()


def test_file_with_comments_duplicates_reverse_and_loops(tmp_path):
    path = tmp_path / "g.edges"
    path.write_text(
        "# graph: toy\n# isolated: 40 41\n# a comment\n3 1\n1 3\n1 2\n2 2\n2 3\n5 4\n"
    )
    duck = duckdb.connect()
    info = load_edges(duck, path, node_table="node")
    assert _edges(duck) == [(1, 2), (1, 3), (2, 3), (4, 5)]
    assert (info.n_edges, info.n_nodes) == (4, 7)
    assert duck.execute("SELECT list(id ORDER BY id) FROM node").fetchone()[0] == [1, 2, 3, 4, 5, 40, 41]
    types = dict(duck.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE table_name='edge'").fetchall())
    assert types == {"src": "BIGINT", "dst": "BIGINT"}


def test_edge_table_has_primary_key():
    duck = duckdb.connect()
    load_edges(duck, nx.path_graph(3))
    pk = duck.execute(
        "SELECT constraint_column_names FROM duckdb_constraints() "
        "WHERE table_name = 'edge' AND constraint_type = 'PRIMARY KEY'"
    ).fetchall()
    assert pk == [(["src", "dst"],)]


def test_tab_separated_file_falls_back_to_numpy(tmp_path):
    path = tmp_path / "g.tsv"
    path.write_text("# tabs\n1\t2\n2\t3\n")
    u, v, iso = read_edge_list(path)
    assert u.tolist() == [1, 2] and v.tolist() == [2, 3] and iso.tolist() == []


def test_bad_files(tmp_path):
    with pytest.raises(InterfaceError, match="no edge-list file"):
        read_edge_list(tmp_path / "missing.edges")
    bad = tmp_path / "bad.edges"
    bad.write_text("a b\nc d\n")
    with pytest.raises(DataError, match="integer pairs"):
        read_edge_list(bad)


def test_empty_file(tmp_path):
    path = tmp_path / "empty.edges"
    path.write_text("# nothing\n# isolated: 3\n")
    duck = duckdb.connect()
    info = load_edges(duck, path)
    assert (info.n_edges, info.n_nodes) == (0, 1)
    assert _edges(duck) == []


def test_networkx_integer_labels_kept():
    g = nx.Graph([(10, 3), (3, 7)])
    g.add_node(99)
    duck = duckdb.connect()
    info = load_edges(duck, g, node_table="node")
    assert _edges(duck) == [(3, 7), (3, 10)]
    assert info.labels is None and info.n_nodes == 4
    assert duck.execute("SELECT list(id ORDER BY id) FROM node").fetchone()[0] == [3, 7, 10, 99]


def test_networkx_attributes_with_missing_values():
    g = nx.Graph()
    g.add_node("a", age=30, city="Lyon")
    g.add_node("b", age=41.5)
    g.add_edge("a", "b", weight=2, kind="work")
    g.add_edge("b", "c")
    duck = duckdb.connect()
    load_edges(duck, g, node_table="people", node_attributes=True, edge_attributes=["weight"])
    assert duck.execute("SELECT id, label, age, city FROM people ORDER BY id").fetchall() == [
        (0, "a", 30, "Lyon"), (1, "b", 41.5, None), (2, "c", None, None)
    ]
    assert duck.execute("SELECT src, dst, weight FROM edge ORDER BY ALL").fetchall() == [
        (0, 1, 2), (1, 2, None)
    ]


def test_works_through_a_provsql_connection():
    con = provsql_dp.connect(":memory:")
    load_edges(con, nx.complete_graph(4), table="g")
    assert con.execute("SELECT COUNT(*) FROM g").fetchone()[0] == 6
    con.close()


@pytest.mark.parametrize(
    "graph, message",
    [(nx.DiGraph([(0, 1)]), "undirected"), (nx.MultiGraph([(0, 1), (0, 1)]), "simple")],
)
def test_directed_and_multigraphs_are_refused(graph, message):
    with pytest.raises(InterfaceError, match=message):
        load_edges(duckdb.connect(), graph)


def test_not_a_connection():
    with pytest.raises(InterfaceError, match="connection"):
        load_edges(object(), nx.path_graph(2))


def test_bulk_load_of_a_large_graph_is_exact():
    rng = np.random.default_rng(0)
    g = nx.gnm_random_graph(20_000, 60_000, seed=int(rng.integers(1 << 30)))
    duck = duckdb.connect()
    info = load_edges(duck, g)
    assert info.n_edges == 60_000
    got = duck.execute("SELECT SUM(src * 31 + dst), MIN(dst - src) FROM edge").fetchone()
    want = sum(min(u, v) * 31 + max(u, v) for u, v in g.edges())
    assert got == (want, 1) or (got[0] == want and got[1] >= 1)
