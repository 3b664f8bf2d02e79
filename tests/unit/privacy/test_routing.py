"""The route table (``provsql_dp.privacy.routing.ROUTES``): ``EXPLAIN PRIVACY`` and the release
read the same table, so on a corpus that takes every route at least once the route EXPLAIN
names (its ``route`` column, one per row) is the route the release took
(``cursor.privacy.routes``); a refused statement is refused alike by both, charging nothing."""

from __future__ import annotations

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import UnsupportedQueryError
from provsql_dp.graph import pattern_sql
from provsql_dp.privacy.routing import ROUTES, Statement, choose
from provsql_dp.sql import dialect as d

TWO_PATHS = "SELECT COUNT(*) FROM e a JOIN e b ON a.dst = b.src"
STARS = ("SELECT COUNT(*) FROM (SELECT src, dst FROM edge UNION ALL SELECT dst, src FROM edge) a "
         "JOIN (SELECT src, dst FROM edge UNION ALL SELECT dst, src FROM edge) b ON a.src = b.src "
         "WHERE a.dst < b.dst")

#: (statement without its privacy clause, privacy clause, the routes its release takes)
CORPUS = [
    ("SELECT COUNT(*) FROM p", "WITH EPSILON 1", ("laplace",)),
    ("SELECT COUNT(*), SUM(age) FROM p", "WITH EPSILON 1", ("laplace", "laplace")),
    ("SELECT COUNT(*) FROM p", "WITH EPSILON 1 OPTIONS (mechanism = 'recursive')",
     ("single-owner",)),
    ("SELECT SUM(x) FROM v", "WITH EPSILON 1 OPTIONS (lower = 0, upper = 5)", ("single-owner",)),
    (TWO_PATHS, "WITH EPSILON 1", ("recursive-lp",)),
    (TWO_PATHS, "WITH EPSILON 1 OPTIONS (mechanism = 'r2t', max_contribution = 16)", ("r2t",)),
    ("SELECT COUNT(*), SUM(x) FROM v", "WITH EPSILON 1 OPTIONS (lower = 0, upper = 5)",
     ("single-owner", "single-owner")),
    ("SELECT COUNT(*), SUM(a.src) FROM e a JOIN e b ON a.dst = b.src",
     "WITH EPSILON 1 OPTIONS (mechanism = 'r2t', max_contribution = 16, lower = 0, upper = 5)",
     ("r2t", "r2t")),  # several aggregates on R2T: EXPLAIN used to refuse them
    ("SELECT AVG(age) FROM p", "WITH EPSILON 1", ("laplace", "laplace")),  # its SUM and COUNT
    (STARS, "WITH EPSILON 1", ("k-star",)),
    (f"SELECT COUNT(*) FROM ({pattern_sql('2-triangle')})", "WITH EPSILON 1", ("k-triangle",)),
    ("SELECT age, COUNT(*) FROM p GROUP BY age", "WITH EPSILON 1", ("policy",)),  # Blowfish
    ("COUNT RANGES (x >= 0.2 AND x < 0.5) FROM pts", "WITH EPSILON 1", ("policy",)),  # δ
    ("SELECT MEDIAN(x) FROM pts", "WITH EPSILON 1", ("quantile",)),  # under the δ policy
    ("SELECT MEDIAN(age) FROM p", "WITH EPSILON 1", ("quantile",)),  # declared bounds
    ("SELECT STDDEV_POP(age) FROM p", "WITH EPSILON 1", ("variance",)),
    ("SELECT COUNT(DISTINCT s) FROM sp", "WITH EPSILON 1", ("distinct",)),  # declared keys
    ("SELECT COUNT(DISTINCT s) FROM sp WHERE id > 3", "WITH EPSILON 1", ("distinct",)),
    ("SELECT SUM(CASE WHEN age > 40 THEN 1 ELSE 0 END) FROM p", "WITH EPSILON 1", ("laplace",)),
    ("SELECT COUNT(*) FILTER (WHERE age > 40), SUM(age) FILTER (WHERE age < 20) FROM p",
     "WITH EPSILON 1", ("laplace", "laplace")),
    # route "mixed": each part by its own route, one EXPLAIN row per released aggregate
    ("SELECT COUNT(*), STDDEV_POP(age), MEDIAN(age) FROM p", "WITH EPSILON 1",
     ("laplace", "variance", "quantile")),
    ("SELECT s, COUNT(*), MEDIAN(id) FROM sp GROUP BY s", "WITH EPSILON 1",
     ("laplace", "quantile")),
]

REFUSED = [
    ("SELECT id FROM p", "raw rows are never released"),
    ("SELECT COUNT(*) FROM pub", "reads no protected table"),
]


def _con():
    con = provsql_dp.connect()
    con._rng = np.random.default_rng(7)
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, age INT)")
    con.execute("INSERT INTO p SELECT range, range % 90 FROM range(40)")
    con.execute("PROTECT TABLE p")
    con.execute("SET BOUNDS ON p (age) BETWEEN 0 AND 100")
    con.execute("CREATE POLICY a ON p (age) AS LINE DOMAIN [0, 100) WIDTH 10")
    con.execute("CREATE TABLE v(owner INT, x INT); INSERT INTO v SELECT range % 7, range % 5 "
                "FROM range(30)")
    con.execute("PROTECT TABLE v BY (owner)")
    con.execute("CREATE TABLE e(src INT, dst INT); INSERT INTO e VALUES (1,2),(2,3),(1,3),(3,4)")
    con.execute("PROTECT TABLE e BY (src, dst) AS node")
    con.execute("CREATE TABLE edge(src INT, dst INT, PRIMARY KEY (src, dst), CHECK (src < dst))")
    con.execute("INSERT INTO edge VALUES (1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)")
    con.execute("PROTECT TABLE edge")
    con.execute("CREATE TABLE pts(id INT PRIMARY KEY, x DOUBLE)")
    con.execute("INSERT INTO pts SELECT range, (range * 37 % 100) / 100.0 FROM range(60)")
    con.execute("PROTECT TABLE pts")
    con.execute("CREATE POLICY near ON pts (x) AS DELTA 0.05 DOMAIN [0, 1) WIDTH 0.01 BOUNDED")
    con.execute("CREATE TABLE pub(a INT); INSERT INTO pub VALUES (1)")
    con.execute("CREATE TABLE sp(id INT PRIMARY KEY, s VARCHAR); INSERT INTO sp SELECT range, "
                "['a', 'b'][range % 2 + 1] FROM range(20); PROTECT TABLE sp")
    con.execute("SET GROUP KEYS ON sp (s) VALUES ('a', 'b', 'c')")
    con.execute("SET BOUNDS ON sp (id) BETWEEN 0 AND 20")
    con.execute("SET PRIVACY BUDGET 1000")
    return con


@pytest.fixture(scope="module")
def con():
    return _con()


def _explained(con, sql, clause):
    cur = con.execute(f"EXPLAIN PRIVACY {sql} {clause}")
    names = [c[0] for c in cur.description]
    return tuple(dict(zip(names, row))["route"] for row in cur.fetchall())


@pytest.mark.parametrize("sql,clause,routes", CORPUS, ids=[f"{i}-{c[2][0]}"
                                                           for i, c in enumerate(CORPUS)])
def test_explain_names_the_route_the_release_takes(con, sql, clause, routes):
    explained = _explained(con, sql, clause)
    released = con.execute(f"{sql} {clause}").privacy.routes
    assert explained == released == routes


def test_the_corpus_takes_every_route(con):
    taken = {r for _, _, routes in CORPUS for r in routes} | {"refused"}
    # a mixed list's rows name its parts' routes: the route table's "mixed" is chosen alone
    mixed = {choose(Statement(con, d.parse_one(sql), {})).name for sql, _, routes in CORPUS
             if len(set(routes)) > 1}
    assert taken | mixed == {r.name for r in ROUTES} and mixed == {"mixed"}


@pytest.mark.parametrize("sql,why", REFUSED)
def test_a_refused_statement_is_refused_alike_and_charges_nothing(con, sql, why):
    before = len(con.ledger.entries())
    for text in (f"EXPLAIN PRIVACY {sql} WITH EPSILON 1", f"{sql} WITH EPSILON 1"):
        with pytest.raises(UnsupportedQueryError, match=why):
            con.execute(text)
    assert len(con.ledger.entries()) == before
    import sqlglot

    st = Statement(con, sqlglot.parse_one(sql, read="duckdb"), {})
    assert choose(st).name == "refused"


def test_routes_are_decided_before_any_row_is_read():
    """The same statements on an empty copy of the schema take the same routes: ``applies``
    reads the statement, the plan and the declarations only."""
    full, empty = _con(), _con()
    for t in ("p", "v", "e", "edge", "pts"):
        empty._duck.execute(f"DELETE FROM {t}")
    for sql, clause, _ in CORPUS:
        assert _explained(full, sql, clause) == _explained(empty, sql, clause), sql


def test_the_policy_route_refuses_in_explain_what_its_release_refuses(con):
    """EXPLAIN PRIVACY validates OPTIONS as the release does (it used to ignore them)."""
    for text in ("SELECT age, COUNT(*) FROM p GROUP BY age WITH EPSILON 1 OPTIONS (theta = 2)",
                 "SELECT MEDIAN(age) FROM p WITH EPSILON 1 OPTIONS (theta = 2)"):
        for stmt in (f"EXPLAIN PRIVACY {text}", text):
            with pytest.raises(provsql_dp.ProgrammingError):
                con.execute(stmt)
