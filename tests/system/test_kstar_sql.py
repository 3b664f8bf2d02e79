"""k-star counts written in SQL go to the degree construction (provsql_dp.privacy.kstar_route):
the same release as the graph API, the same count as the SQL, nothing else misrouted, EXPLAIN
PRIVACY names the construction, and a failed LP falls back without leaking."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import provsql_dp
from provsql_dp.errors import SolverError
from provsql_dp.graph import count, load_edges, pattern_sql
from provsql_dp.mechanisms.subgraph.kstar import KStarCount
from provsql_dp.privacy.routing import decide
from provsql_dp.privacy.kstar_route import load_kstar, star_shape

from graph_sql_kit import NODES, ORIENTED, ROWS, UNION, declared_db, graph_db
from graph_sql_kit import plan as _plan


@pytest.mark.parametrize("privacy", ["edge", "node"])
@pytest.mark.parametrize("k", [2, 3])
def test_pattern_sql_is_the_graph_apis_release(privacy, k):
    g = nx.gnp_random_graph(25, 0.3, seed=3)
    g.add_node(99)  # an isolated node: no row, changes nothing
    con = graph_db(g, privacy)
    con._rng = np.random.default_rng(11)
    cur = con.execute(f"SELECT COUNT(*) FROM ({pattern_sql(f'{k}-star')}) WITH EPSILON 1")
    ref = count(g, f"{k}-star", privacy=privacy, epsilon=1.0, rng=np.random.default_rng(11))
    assert cur.privacy.mechanism == ref.mechanism == "recursive-kstar"
    rel = cur.privacy.releases[0].release  # the row is the post-processed (rounded) count
    assert rel.value == ref.value and rel.delta_hat == ref.delta_hat
    assert cur.fetchone()[0] == max(0, round(ref.value))
    from provsql_dp.privacy.intervals import covers

    assert covers(rel).startswith("the true answer, from below")  # X ≤ the count: honest
    assert float(cur.privacy.epsilon) == 1.0


def test_options_reach_the_construction_and_r2t_stays_r2t():
    g = nx.gnp_random_graph(20, 0.3, seed=5)
    con = graph_db(g, "node")
    con._rng = np.random.default_rng(2)
    cur = con.execute(f"SELECT COUNT(*) FROM ({pattern_sql('2-star')}) "
                      "WITH EPSILON 1 OPTIONS (privacy = 'edge', theta = 2, split = 0.25)")
    rel = cur.privacy.releases[0].release
    assert rel.mechanism == "recursive-kstar"
    assert (rel.params["mu"], rel.params["theta"], rel.params["eps1"]) == (0.5, 2.0, 0.25)
    ref = KStarCount(*np.array(list(g.edges())).T, 2, "node").release(
        1.0, rng=np.random.default_rng(2), mu=0.5, theta=2.0, eps1=0.25, eps2=0.75)
    assert rel.value == ref.value
    cur = con.execute(f"SELECT COUNT(*) FROM ({pattern_sql('2-star')}) "
                      "WITH EPSILON 1 OPTIONS (mechanism = 'r2t')")
    assert cur.privacy.mechanism == "r2t"


def test_a_star_too_large_to_enumerate_is_released():
    """C(600, 4) ≈ 5.3e9 4-stars: the general path would capture them all."""
    g = nx.star_graph(600)
    g.add_edges_from([(1, 2), (2, 3)])
    con = graph_db(g, "edge")
    cur = con.execute(f"SELECT COUNT(*) FROM ({pattern_sql('4-star')}) WITH EPSILON 1")
    assert cur.privacy.mechanism == "recursive-kstar" and math.isfinite(cur.fetchone()[0])


# --------------------------------------------------------------------------- recognition
RECOGNISED = [
    # (ddl, protect, query, k, undirected, privacy)
    (ORIENTED, ROWS, f"SELECT COUNT(*) FROM {UNION} a JOIN {UNION} b ON a.src = b.src "
                     "WHERE a.dst < b.dst", 2, True, "edge"),
    (ORIENTED, NODES, f"SELECT COUNT(*) FROM {UNION} a, {UNION} b, {UNION} c "
                      "WHERE b.src = a.src AND c.src = b.src AND c.dst > b.dst AND b.dst > a.dst",
     3, True, "node"),
    (ORIENTED, "PROTECT TABLE edge BY (dst, src) AS person",
     f"WITH arcs(c, l) AS {UNION} SELECT COUNT(*) FROM arcs x JOIN arcs y "
     "ON x.c = y.c AND x.l < y.l", 2, True, "node"),
    (ORIENTED, ROWS, f"SELECT COUNT(*) FROM {UNION} a JOIN {UNION} b ON a.dst = b.src "
                     "WHERE a.src < b.dst", 2, True, "edge"),  # centre a.dst: the union is symmetric
    ("CREATE TABLE edge(src INT, dst INT, UNIQUE (src, dst))", ROWS,
     "SELECT COUNT(*) FROM edge a JOIN edge b ON a.src = b.src JOIN edge c ON c.src = a.src "
     "WHERE a.dst < b.dst AND b.dst < c.dst", 3, False, "edge"),
    ("CREATE TABLE edge(src INT, dst INT, PRIMARY KEY (src, dst))", NODES,
     "SELECT COUNT(*) FROM edge a, edge b WHERE a.src = b.src AND a.dst < b.dst", 2, False,
     "node"),
]

NOT_RECOGNISED = [
    (ORIENTED, ROWS, f"SELECT COUNT(*) FROM {UNION} a JOIN {UNION} b ON a.src = b.src "
                     "WHERE a.dst <= b.dst"),
    (ORIENTED, ROWS, f"SELECT COUNT(*) FROM {UNION} a JOIN {UNION} b ON a.src = b.src "
                     "WHERE a.dst <> b.dst"),
    (ORIENTED, ROWS, f"SELECT COUNT(*) FROM {UNION} a, {UNION} b, {UNION} c WHERE a.src = b.src "
                     "AND a.src = c.src AND a.dst < b.dst AND a.dst < c.dst"),  # b, c unordered
    (ORIENTED, ROWS, f"SELECT COUNT(*) FROM {UNION} a JOIN {UNION} b ON a.src = b.src "
                     "WHERE a.dst < b.dst AND a.dst > 1"),
    (ORIENTED, ROWS, f"SELECT COUNT(DISTINCT a.src) FROM {UNION} a JOIN {UNION} b "
                     "ON a.src = b.src WHERE a.dst < b.dst"),
    (ORIENTED, ROWS, "SELECT COUNT(*) FROM (" + pattern_sql("triangle") + ")"),
    (ORIENTED, ROWS, "SELECT COUNT(*) FROM (" + pattern_sql("2-path") + ") WHERE n0 > 0"),
    (ORIENTED, ROWS, "SELECT COUNT(*) FROM edge a JOIN edge b ON a.dst = b.src"),  # a path
    (ORIENTED, ROWS, f"SELECT COUNT(*) FROM {UNION} a JOIN edge b ON a.src = b.src "
                     "WHERE a.dst < b.dst"),  # mixed arc relations
    (ORIENTED, ROWS, f"SELECT COUNT(*) FROM {UNION} a JOIN {UNION} b ON a.src = b.src "
                     "WHERE a.src < b.dst"),  # a centre compared
    (ORIENTED, ROWS, f"SELECT COUNT(*) FROM {UNION} a JOIN {UNION} b ON a.src = b.src "
                     "AND a.dst = b.dst"),
    (ORIENTED, "PROTECT TABLE edge BY (src) AS node",
     f"SELECT COUNT(*) FROM {UNION} a JOIN {UNION} b ON a.src = b.src WHERE a.dst < b.dst"),
    ("CREATE TABLE edge(src INT, dst INT, PRIMARY KEY (src, dst))", ROWS,  # no CHECK
     f"SELECT COUNT(*) FROM {UNION} a JOIN {UNION} b ON a.src = b.src WHERE a.dst < b.dst"),
    ("CREATE TABLE edge(src INT, dst INT, CHECK (src < dst))", ROWS,  # no key
     f"SELECT COUNT(*) FROM {UNION} a JOIN {UNION} b ON a.src = b.src WHERE a.dst < b.dst"),
    ("CREATE TABLE edge(src INT, dst INT)", ROWS,  # no key: arcs may repeat
     "SELECT COUNT(*) FROM edge a JOIN edge b ON a.src = b.src WHERE a.dst < b.dst"),
    ("CREATE TABLE edge(src INT, dst INT, PRIMARY KEY (src, dst), CHECK (src <> dst))", ROWS,
     f"SELECT COUNT(*) FROM {UNION} a JOIN {UNION} b ON a.src = b.src WHERE a.dst < b.dst"),
]


@pytest.mark.parametrize("ddl, protect, sql, k, undirected, privacy", RECOGNISED)
def test_recognised_queries(ddl, protect, sql, k, undirected, privacy):
    con = declared_db(ddl, protect)
    shape = star_shape(con, _plan(con, sql))
    assert shape is not None
    assert (shape.k, shape.undirected, shape.privacy) == (k, undirected, privacy)
    assert decide(con, _plan(con, sql), 1.0, {}).path == "k-star"
    # the construction counts what the SQL counts
    assert load_kstar(con, shape).true_answer == con._duck.execute(sql).fetchone()[0]


@pytest.mark.parametrize("ddl, protect, sql", NOT_RECOGNISED)
def test_other_queries_keep_the_general_path(ddl, protect, sql):
    con = declared_db(ddl, protect)
    plan = _plan(con, sql)
    assert star_shape(con, plan) is None
    con.execute("SET PRIVACY BUDGET 10")
    cur = con.execute(sql + " WITH EPSILON 1")
    assert cur.privacy.mechanism != "recursive-kstar"


@pytest.mark.slow  # ~10 s: CI's second step
@settings(max_examples=30, deadline=None)
@given(arcs=st.sets(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=18),
       k=st.integers(2, 3), nodes=st.booleans(), symmetric=st.booleans())
def test_directed_tables_count_what_sql_counts(arcs, k, nodes, symmetric):
    """Any table with a key on (src, dst) — asymmetric, self-loops — has the SQL's count."""
    if symmetric:
        arcs = arcs | {(b, a) for a, b in arcs}
    con = provsql_dp.connect()
    con.execute("CREATE TABLE edge(src INT, dst INT, PRIMARY KEY (src, dst))")
    if arcs:
        con.execute("INSERT INTO edge VALUES " + ", ".join(f"({a}, {b})" for a, b in arcs))
    con.execute(NODES if nodes else ROWS)
    names = [f"e{i}" for i in range(k)]
    sql = ("SELECT COUNT(*) FROM " + ", ".join(f"edge {n}" for n in names) + " WHERE "
           + " AND ".join([f"{names[0]}.src = {n}.src" for n in names[1:]]
                          + [f"{a}.dst < {b}.dst" for a, b in zip(names, names[1:])]))
    shape = star_shape(con, _plan(con, sql))
    assert shape is not None and not shape.undirected
    assert load_kstar(con, shape).true_answer == con._duck.execute(sql).fetchone()[0]


# --------------------------------------------------------------------------- explain, failures
def test_explain_privacy_names_the_construction(tmp_path):
    path = tmp_path / "g.duckdb"
    con = graph_db(nx.karate_club_graph(), "node")
    con.close()
    con = provsql_dp.connect(str(path))
    load_edges(con, nx.karate_club_graph())
    con.execute("PROTECT TABLE edge BY (src, dst) AS node; SET PRIVACY BUDGET 1 FOR USER 'ann'")
    sql = f"EXPLAIN PRIVACY SELECT COUNT(*) FROM ({pattern_sql('3-star')}) WITH EPSILON 1"
    row = con.execute(sql).fetchall()[0]
    assert "degree construction" in row[2] and "3-stars" in row[-1]
    assert "Curator only" in row[-1] and "participants=34" in row[-1]
    con.close()
    an = provsql_dp.connect(str(path), role="analyst", user="ann")
    row = an.execute(sql).fetchall()[0]
    assert "degree construction" in row[-1] and "Curator only" not in row[-1]
    an.close()


def test_a_failed_lp_releases_the_fallback_after_the_charge(monkeypatch):
    con = graph_db(nx.karate_club_graph(), "edge")

    def fail(self, *a, **kw):
        raise SolverError("time limit")

    monkeypatch.setattr(KStarCount, "release", fail)
    cur = con.execute(f"SELECT COUNT(*) FROM ({pattern_sql('2-star')}) WITH EPSILON 1")
    assert cur.privacy.mechanism == "recursive-kstar" and float(cur.privacy.remaining) == 99.0
    assert math.isfinite(cur.fetchone()[0])
    assert con._duck.execute("SELECT COUNT(*) FROM _provsql_dp.incidents").fetchone()[0] == 1


def test_estimate_error_refuses_a_kstar_count_and_spends_nothing():
    con = graph_db(nx.karate_club_graph(), "edge")
    with pytest.raises(provsql_dp.ProgrammingError, match="k-star"):
        con.execute(f"EXPLAIN PRIVACY SELECT COUNT(*) FROM ({pattern_sql('2-star')}) "
                    "WITH EPSILON 1 ESTIMATE ERROR WITH EPSILON 0.25")
    assert float(con.ledger.remaining(con.user)) == 100.0
