"""k-triangle counts written in SQL go to the triangle construction
(provsql_dp.privacy.ktriangle_route): the same release as the graph API under the same seed, the
same count as the SQL, under edge and node privacy, nothing else misrouted (other shapes, missing
declarations),
EXPLAIN PRIVACY names the construction, and a failed LP falls back after the charge."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import provsql_dp
from provsql_dp.errors import SolverError
from provsql_dp.graph import count, load_edges, pattern_sql
from provsql_dp.mechanisms.subgraph.ktriangle import KTriangleCount
from provsql_dp.privacy.routing import decide
from provsql_dp.privacy.kstar_route import star_shape
from provsql_dp.privacy.ktriangle_route import load_ktriangle, triangle_shape

from graph_sql_kit import NODES, ORIENTED, ROWS, UNION, declared_db, graph_db, plan

K4_PLUS = "(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4), (4, 5), (3, 5), (1, 5)"


def _kt_sql(k, arcs=UNION, order="<"):
    """A hand-written k-triangle query: base b, apex arcs p_j (at b.src) and q_j (at b.dst)."""
    joins = " ".join(f"JOIN {arcs} AS p{j} ON p{j}.src = b.src "
                     f"JOIN {arcs} AS q{j} ON q{j}.src = b.dst AND q{j}.dst = p{j}.dst"
                     for j in range(k))
    where = " AND ".join(f"p{j}.dst {order} p{j + 1}.dst" for j in range(k - 1))
    return f"SELECT COUNT(*) FROM edge AS b {joins} WHERE {where}"


@pytest.mark.parametrize("privacy", ["edge", "node"])
@pytest.mark.parametrize("k", [2, 3])
def test_pattern_sql_is_the_graph_apis_release(privacy, k):
    g = nx.gnp_random_graph(22, 0.35, seed=4)
    g.add_node(99)  # an isolated node: no row, changes nothing
    con = graph_db(g, privacy)
    con._rng = np.random.default_rng(5)
    cur = con.execute(f"SELECT COUNT(*) FROM ({pattern_sql(f'{k}-triangle')}) WITH EPSILON 1")
    ref = count(g, f"{k}-triangle", privacy=privacy, epsilon=1.0, rng=np.random.default_rng(5))
    assert cur.privacy.mechanism == ref.mechanism == "recursive-ktriangle"
    rel = cur.privacy.releases[0].release
    assert rel.params["privacy"] == privacy
    assert rel.value == ref.value and rel.delta_hat == ref.delta_hat
    assert cur.fetchone()[0] == max(0, round(ref.value))
    from provsql_dp.privacy.intervals import covers

    assert covers(rel).startswith("the true answer, from below")  # X ≤ the count: honest
    assert float(cur.privacy.epsilon) == 1.0 and float(cur.privacy.remaining) == 99.0


def test_options_reach_the_construction_and_r2t_stays_r2t():
    g = nx.gnp_random_graph(18, 0.4, seed=6)
    con = graph_db(g, "edge")
    con._rng = np.random.default_rng(2)
    sql = f"SELECT COUNT(*) FROM ({pattern_sql('2-triangle')}) WITH EPSILON 1"
    rel = con.execute(sql + " OPTIONS (theta = 2, split = 0.25)").privacy.releases[0].release
    e = np.array(list(g.edges()))
    ref = KTriangleCount(e[:, 0], e[:, 1], 2).release(
        1.0, rng=np.random.default_rng(2), mu=0.5, theta=2.0, eps1=0.25, eps2=0.75)
    assert rel.mechanism == "recursive-ktriangle" and rel.value == ref.value
    assert (rel.params["theta"], rel.params["eps1"]) == (2.0, 0.25)
    assert con.execute(sql + " OPTIONS (mechanism = 'r2t')").privacy.mechanism == "r2t"


# --------------------------------------------------------------------------- recognition
RECOGNISED = [
    # (query, k)
    ("SELECT COUNT(*) FROM (" + pattern_sql("2-triangle") + ")", 2),
    ("SELECT COUNT(*) FROM (" + pattern_sql("3-triangle") + ")", 3),
    (_kt_sql(2), 2),
    (_kt_sql(3, order=">"), 3),
    # comma joins, conditions in WHERE in any order, apexes compared through the q arcs
    (f"SELECT COUNT(*) FROM {UNION} q1, edge b, {UNION} p1, {UNION} p0, {UNION} q0 "
     "WHERE q1.dst = p1.dst AND p0.src = b.src AND q0.dst = p0.dst AND b.dst = q0.src "
     "AND q1.src = q0.src AND p1.src = p0.src AND q1.dst > q0.dst", 2),
    # arcs joined by their other end (the arc relation is symmetric)
    (f"SELECT COUNT(*) FROM edge b JOIN {UNION} p0 ON p0.dst = b.src "
     f"JOIN {UNION} q0 ON q0.dst = b.dst AND q0.src = p0.src "
     f"JOIN {UNION} p1 ON p1.src = b.src JOIN {UNION} q1 ON q1.src = b.dst AND q1.dst = p1.dst "
     "WHERE p0.src < p1.dst", 2),
    # a CTE for the arcs; the UNION written the other way round
    ("WITH arcs(u, v) AS (SELECT dst, src FROM edge UNION ALL SELECT src, dst FROM edge) "
     + _kt_sql(2, arcs="arcs").replace(".src", ".u").replace(".dst", ".v")
     .replace("b.u", "b.src").replace("b.v", "b.dst"), 2),
]

NOT_RECOGNISED = [
    # (ddl, protect, query)
    (ORIENTED, ROWS, _kt_sql(2, order="<=")),
    (ORIENTED, ROWS, _kt_sql(2).replace("WHERE p0.dst < p1.dst", "WHERE p0.dst <> p1.dst")),
    (ORIENTED, ROWS, _kt_sql(3).replace(" AND p1.dst < p2.dst", " AND p0.dst < p2.dst")),
    (ORIENTED, ROWS, _kt_sql(2) + " AND b.src > 1"),
    (ORIENTED, ROWS, _kt_sql(2) + " AND p0.dst < b.dst"),  # an apex compared with the base
    (ORIENTED, ROWS, _kt_sql(2).replace("COUNT(*)", "COUNT(DISTINCT b.src)")),
    (ORIENTED, ROWS, "SELECT COUNT(*) FROM (" + pattern_sql("triangle") + ")"),  # k = 1
    (ORIENTED, ROWS, f"SELECT COUNT(*) FROM edge AS b JOIN {UNION} AS p0 ON p0.src = b.src "
                     f"JOIN {UNION} AS q0 ON q0.src = b.dst AND q0.dst = p0.dst"),  # triangles
    (ORIENTED, ROWS, _kt_sql(2).replace("FROM edge AS b", f"FROM {UNION} AS b")
     + " AND b.src < b.dst"),  # the base as arcs: not a recognised form
    (ORIENTED, ROWS, _kt_sql(2, arcs="edge")),  # one direction only: misses apexes
    (ORIENTED, ROWS, _kt_sql(2).replace("q1.src = b.dst", "q1.src = b.src")),  # both at b.src
    (ORIENTED, ROWS, _kt_sql(2).replace("q1.dst = p1.dst", "q1.dst = p0.dst")),  # apex shared
    ("CREATE TABLE edge(src INT, dst INT, PRIMARY KEY (src, dst))", ROWS, _kt_sql(2)),  # no CHECK
    ("CREATE TABLE edge(src INT, dst INT, CHECK (src < dst))", ROWS, _kt_sql(2)),  # no key
    (ORIENTED, ROWS + "; SET GROUP KEYS ON edge (src) VALUES (1, 2, 3)",
     _kt_sql(2) + " GROUP BY b.src"),
]


@pytest.mark.parametrize("protect, privacy", [(ROWS, "edge"), (NODES, "node")])
@pytest.mark.parametrize("sql, k", RECOGNISED)
def test_recognised_queries(sql, k, protect, privacy):
    con = declared_db(ORIENTED, protect, K4_PLUS)
    shape = triangle_shape(con, plan(con, sql))
    assert shape is not None and shape.k == k and shape.privacy == privacy
    assert star_shape(con, plan(con, sql)) is None
    assert decide(con, plan(con, sql), 1.0, {}).path == "k-triangle"
    truth = con._duck.execute(sql).fetchone()[0]
    assert truth > 0 and load_ktriangle(con, shape).true_answer == truth


@pytest.mark.parametrize("ddl, protect, sql", NOT_RECOGNISED)
def test_other_queries_keep_the_general_path(ddl, protect, sql):
    con = declared_db(ddl, protect, K4_PLUS)
    assert triangle_shape(con, plan(con, sql)) is None
    con.execute("SET PRIVACY BUDGET 10")
    cur = con.execute(sql + " WITH EPSILON 1")
    assert cur.privacy.mechanism not in ("recursive-ktriangle", "recursive-kstar")


_PAIRS = [(a, b) for a, b in itertools.combinations(range(7), 2)]


@pytest.mark.slow  # ~13 s: CI's second step
@settings(max_examples=25, deadline=None)
@given(edges=st.sets(st.sampled_from(_PAIRS), max_size=21), k=st.integers(2, 3),
       flip=st.booleans())
def test_the_construction_counts_what_sql_counts(edges, k, flip):
    """Any simple graph (stored src < dst, or src > dst with CHECK (src > dst))."""
    con = provsql_dp.connect()
    op = ">" if flip else "<"
    con.execute(f"CREATE TABLE edge(src INT, dst INT, PRIMARY KEY (src, dst), CHECK (src {op} dst))")
    if edges:
        rows = [(b, a) if flip else (a, b) for a, b in edges]
        con.execute("INSERT INTO edge VALUES " + ", ".join(f"({a}, {b})" for a, b in rows))
    con.execute(ROWS)
    sql = _kt_sql(k)
    shape = triangle_shape(con, plan(con, sql))
    assert shape is not None
    truth = con._duck.execute(sql).fetchone()[0]
    g = nx.Graph(list(edges))
    tri = [len(set(g[a]) & set(g[b])) for a, b in g.edges()]
    assert truth == sum(math.comb(t, k) for t in tri)
    if edges:
        assert load_ktriangle(con, shape).true_answer == truth


# --------------------------------------------------------------------------- explain, failures
def test_explain_privacy_names_the_construction(tmp_path):
    path = tmp_path / "g.duckdb"
    con = provsql_dp.connect(str(path))
    load_edges(con, nx.karate_club_graph())
    con.execute("PROTECT TABLE edge; SET PRIVACY BUDGET 1 FOR USER 'ann'")
    sql = f"EXPLAIN PRIVACY SELECT COUNT(*) FROM ({pattern_sql('2-triangle')}) WITH EPSILON 1"
    row = con.execute(sql).fetchall()[0]
    assert "triangle construction" in row[2] and "2-triangles" in row[-1]
    assert "Curator only" in row[-1] and "triangles=45" in row[-1]
    con.close()
    an = provsql_dp.connect(str(path), role="analyst", user="ann")
    row = an.execute(sql).fetchall()[0]
    assert "triangle construction" in row[-1] and "Curator only" not in row[-1]
    assert float(an.ledger.remaining("ann")) == 1.0  # EXPLAIN spends nothing
    an.close()


def test_explain_privacy_names_the_node_construction():
    con = graph_db(nx.karate_club_graph(), "node")
    sql = f"EXPLAIN PRIVACY SELECT COUNT(*) FROM ({pattern_sql('2-triangle')}) WITH EPSILON 1"
    row = con.execute(sql).fetchall()[0]
    assert "node privacy, triangle construction" in row[-1] and "triangles=45" in row[-1]
    assert "participants=34" in row[-1]
    assert float(con.ledger.remaining(con.user)) == 100.0


@pytest.mark.parametrize("privacy", ["edge", "node"])
def test_a_failed_lp_releases_the_fallback_after_the_charge(monkeypatch, privacy):
    from provsql_dp.mechanisms.subgraph.ktriangle_node import NodeKTriangleCount

    con = graph_db(nx.karate_club_graph(), privacy)

    def fail(self, *a, **kw):
        raise SolverError("time limit")

    monkeypatch.setattr(KTriangleCount if privacy == "edge" else NodeKTriangleCount, "release",
                        fail)
    cur = con.execute(f"SELECT COUNT(*) FROM ({pattern_sql('2-triangle')}) WITH EPSILON 1")
    assert cur.privacy.mechanism == "recursive-ktriangle" and float(cur.privacy.remaining) == 99.0
    assert math.isfinite(cur.fetchone()[0])
    assert con._duck.execute("SELECT COUNT(*) FROM _provsql_dp.incidents").fetchone()[0] == 1


def test_estimate_error_refuses_and_spends_nothing():
    con = graph_db(nx.karate_club_graph(), "edge")
    with pytest.raises(provsql_dp.ProgrammingError, match="k-triangle"):
        con.execute(f"EXPLAIN PRIVACY SELECT COUNT(*) FROM ({pattern_sql('2-triangle')}) "
                    "WITH EPSILON 1 ESTIMATE ERROR WITH EPSILON 0.25")
    assert float(con.ledger.remaining(con.user)) == 100.0
