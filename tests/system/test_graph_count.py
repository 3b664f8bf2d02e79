"""End to end: provsql_dp.graph.count → recursive mechanism, and the same count from SQL."""

import networkx as nx
import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import InterfaceError, UnsupportedQueryError
from provsql_dp.graph import count, load_edges, pattern_sql, relation, true_count
from provsql_dp.mechanisms.recursive import efficient as rm


def _graph():
    return nx.gnp_random_graph(40, 0.25, seed=11)


@pytest.mark.parametrize("privacy, mu", [("node", 1.0), ("edge", 0.5)])
def test_count_returns_a_release_with_the_papers_defaults(privacy, mu):
    rel = count(_graph(), "triangle", privacy=privacy, epsilon=0.5, rng=np.random.default_rng(0))
    assert np.isfinite(rel.value) and rel.delta_hat > 0
    assert rel.epsilon == pytest.approx(0.5)
    assert rel.params["mu"] == mu and rel.params["beta"] == pytest.approx(0.1)
    assert rel.params["theta"] == 1.0


def test_count_is_accurate_on_a_dense_graph():
    g = _graph()
    truth = true_count(g, "triangle")
    rng = np.random.default_rng(1)
    kr = relation(g, "triangle", privacy="edge")
    vals = [rm.release(kr, epsilon=0.5, privacy="edge", rng=rng).value for _ in range(9)]
    assert abs(np.median(vals) - truth) / truth < 0.5


def test_count_is_the_same_mechanism_on_the_same_relation():
    g = _graph()
    a = count(g, "2-star", privacy="node", epsilon=1.0, rng=np.random.default_rng(5),
              construction="enumerate")
    kr = relation(g, "2-star", privacy="node")
    b = rm.release(kr, epsilon=1.0, privacy="node", rng=np.random.default_rng(5))
    assert a.value == pytest.approx(b.value) and a.delta_hat == pytest.approx(b.delta_hat)


def test_merging_does_not_change_the_release():
    g = nx.gnp_random_graph(16, 0.5, seed=2)
    merged = relation(g, "k-triangle", k=2, privacy="node")
    raw = relation(g, "k-triangle", k=2, privacy="node", merge=False)
    assert len(merged) < len(raw)
    for i in (len(merged.participants), len(merged.participants) - 2):
        assert rm.H(merged, i) == pytest.approx(rm.H(raw, i))
        assert rm.G(merged, i) == pytest.approx(rm.G(raw, i))
    a = rm.release(merged, epsilon=1.0, privacy="node", rng=np.random.default_rng(3))
    b = rm.release(raw, epsilon=1.0, privacy="node", rng=np.random.default_rng(3))
    assert a.value == pytest.approx(b.value, rel=1e-6)


def test_constraints_reach_the_mechanism():
    g = _graph()
    nx.set_node_attributes(g, {v: 20 + v for v in g}, "age")
    kr = relation(g, "triangle", privacy="node", node_filter="age > 30")
    assert kr.true_answer() == true_count(g, "triangle", node_filter="age > 30")
    assert all(p[1] + 20 > 30 for p in {p for i in range(len(kr)) for m in kr.annotation(i) for p in m})
    rel = count(g, "triangle", privacy="node", epsilon=0.5, node_filter="age > 30",
                rng=np.random.default_rng(0))
    assert np.isfinite(rel.value)


def test_edge_list_file_input(tmp_path):
    path = tmp_path / "k5.edges"
    path.write_text("# K5\n" + "".join(f"{a} {b}\n" for a, b in nx.complete_graph(5).edges()))
    rel = count(str(path), "triangle", privacy="edge", epsilon=1.0, rng=np.random.default_rng(0))
    assert np.isfinite(rel.value)


def test_refusals_spend_nothing_and_say_why():
    with pytest.raises(InterfaceError, match="undirected"):
        count(nx.DiGraph([(0, 1)]), "edge", epsilon=1.0)
    with pytest.raises(InterfaceError, match="simple"):
        count(nx.MultiGraph([(0, 1)]), "edge", epsilon=1.0)
    with pytest.raises(InterfaceError, match="epsilon"):
        count(_graph(), "edge", epsilon=0)
    with pytest.raises(InterfaceError, match="privacy"):
        count(_graph(), "edge", epsilon=1.0, privacy="row")
    with pytest.raises(UnsupportedQueryError, match="max_entries"):
        count(nx.star_graph(40), "k-star", k=4, epsilon=1.0, max_entries=10_000,
              construction="enumerate")
    with pytest.raises(InterfaceError, match="construction"):
        count(_graph(), "triangle", epsilon=1.0, construction="degree")


def test_kstars_use_the_degree_construction_without_a_size_limit():
    """C(400, 4) = 1.06e9 4-stars: refused by the enumerated path, released by the degree one;
    count() is the degree mechanism on the same graph (same seed, same value)."""
    from provsql_dp.mechanisms.subgraph.kstar import KStarCount

    g = nx.star_graph(400)
    g.add_edges_from([(1, 2), (2, 3)])
    for privacy in ("edge", "node"):
        a = count(g, "k-star", k=4, privacy=privacy, epsilon=1.0, max_entries=10_000,
                  rng=np.random.default_rng(4))
        e = np.array(list(g.edges()))
        b = KStarCount(e[:, 0], e[:, 1], 4, privacy,
                       n_nodes=g.number_of_nodes()).release(1.0, rng=np.random.default_rng(4))
        assert a.mechanism == "recursive-kstar" and a.value == b.value


def test_empty_relation_releases_noise_around_zero():
    rel = count(nx.path_graph(5), "triangle", privacy="node", epsilon=1.0,
                rng=np.random.default_rng(0))
    assert np.isfinite(rel.value)


def test_the_same_count_from_sql():
    """The SQL route: load, PROTECT, capture pattern_sql; identical relation to count()'s."""
    g = _graph()
    con = provsql_dp.connect(":memory:")
    load_edges(con, g)
    con.execute("PROTECT TABLE edge BY (src, dst) AS node")
    kr = con.provenance(pattern_sql("4-cycle"))
    assert kr.true_answer() == true_count(g, "4-cycle")
    ref = relation(g, "4-cycle", privacy="node", merge=False)
    canon = lambda r: sorted(sorted(map(sorted, r.annotation(i))) for i in range(len(r)))
    assert canon(kr) == canon(ref)
    con.close()


def test_count_charges_a_budget_before_noise():
    con = provsql_dp.connect(user="g")
    con.execute("SET PRIVACY BUDGET 1")
    G = nx.karate_club_graph()
    rel = count(G, "triangle", privacy="edge", epsilon=0.75, budget=con, rng=np.random.default_rng(1))
    assert rel.epsilon == 0.75
    (entry,) = con.ledger.entries()
    assert entry.epsilon == provsql_dp.privacy.ledger.to_fraction(0.75) and "triangle" in entry.statement
    with pytest.raises(provsql_dp.BudgetExceededError):
        count(G, "triangle", privacy="edge", epsilon=0.5, budget=con)
    assert len(con.ledger.entries()) == 1


def test_kstar_constraints_filter_the_edges_first():
    """node_filter on the degree construction: the stars of the sub-graph of passing nodes."""
    from provsql_dp.graph._kstar import kstar_structure

    g = nx.gnp_random_graph(30, 0.3, seed=9)
    nx.set_node_attributes(g, {v: v % 3 for v in g}, "group")
    sub = g.subgraph([v for v in g if v % 3 != 0])
    a = count(g, "2-star", privacy="edge", epsilon=1.0, node_filter="\"group\" <> 0",
              rng=np.random.default_rng(2))
    ks = kstar_structure(nx.Graph(sub.edges()), 2, "edge")
    assert ks.true_answer == sum(d * (d - 1) // 2 for _, d in sub.degree())
    assert a.value == ks.release(1.0, rng=np.random.default_rng(2)).value


def test_kstar_release_charges_the_budget_and_refusals_spend_nothing():
    con = provsql_dp.connect()
    con.execute("SET PRIVACY BUDGET 2")
    count(nx.karate_club_graph(), "3-star", privacy="node", epsilon=0.5, budget=con,
          rng=np.random.default_rng(0))
    assert con.ledger.remaining(con.user) == 1.5
    with pytest.raises(InterfaceError, match="does not apply"):
        count(nx.karate_club_graph(), "3-star", epsilon=0.5, budget=con, solver="ipm")
    with pytest.raises(InterfaceError, match="beta"):
        count(nx.karate_club_graph(), "3-star", epsilon=0.5, budget=con, beta=-1)
    assert con.ledger.remaining(con.user) == 1.5


def test_ktriangles_use_the_triangle_constructions():
    """count() is KTriangleCount (edge privacy) / NodeKTriangleCount (node privacy) on the same
    graph (same seed, same value); 'enumerate' keeps the K-relation; 'degree' is refused where
    it does not apply."""
    from provsql_dp.mechanisms.subgraph.ktriangle import KTriangleCount
    from provsql_dp.mechanisms.subgraph.ktriangle_node import NodeKTriangleCount

    g = nx.gnp_random_graph(25, 0.35, seed=4)
    e = np.array(list(g.edges()))
    for k in (2, 3):
        a = count(g, "k-triangle", k=k, privacy="edge", epsilon=1.0, rng=np.random.default_rng(6))
        b = KTriangleCount(e[:, 0], e[:, 1], k).release(1.0, rng=np.random.default_rng(6))
        assert a.mechanism == "recursive-ktriangle" and a.value == b.value
    a = count(g, "2-triangle", privacy="node", epsilon=1.0, rng=np.random.default_rng(6))
    b = NodeKTriangleCount(e[:, 0], e[:, 1], 2, n_nodes=25).release(
        1.0, rng=np.random.default_rng(6))
    assert a.mechanism == "recursive-ktriangle" and a.value == b.value
    for privacy in ("edge", "node"):
        c = count(g, "2-triangle", privacy=privacy, epsilon=1.0, construction="enumerate",
                  rng=np.random.default_rng(6))
        assert c.mechanism == "recursive"
    with pytest.raises(InterfaceError, match="k-triangles"):
        count(g, "4-cycle", privacy="node", epsilon=1.0, construction="degree")
