"""An explicit ``OPTIONS (beta = …)`` outside the recursive mechanism's range is refused, naming
β and the range, before anything is charged (it was accepted: β = 1e15 made every threshold
overflow and the answer noise of scale e^700 — private, but absurd)."""

from __future__ import annotations

import pytest

import provsql_dp
from provsql_dp.errors import ProgrammingError
from provsql_dp.mechanisms.recursive._framework import BETA_CAP, check_beta


@pytest.fixture(scope="module")
def con():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE c(id INT PRIMARY KEY)")
    con.execute("INSERT INTO c SELECT range FROM range(40)")
    con.execute("CREATE TABLE o(oid INT PRIMARY KEY, cid INT, v DOUBLE)")
    con.execute("INSERT INTO o SELECT range, range % 40, range % 5 FROM range(200)")
    con.execute("PROTECT TABLE c")
    con.execute("PROTECT TABLE o BY (cid) AS c")
    con.execute("SET PRIVACY BUDGET 100")
    return con


QUERIES = [
    "SELECT COUNT(*) FROM o",  # single-owner
    "SELECT SUM(v) FROM o OPTIONS (lower = 0, upper = 5)",  # single-owner, in DuckDB buckets
    "SELECT COUNT(*) FROM o JOIN c ON o.cid = c.id",  # the LPs
]


def _with_beta(sql: str, beta: str) -> str:
    if "OPTIONS (" in sql:
        return sql.replace("OPTIONS (", f"WITH EPSILON 1 OPTIONS (beta = {beta}, ")
    return f"{sql} WITH EPSILON 1 OPTIONS (beta = {beta})"


@pytest.mark.parametrize("sql", QUERIES)
@pytest.mark.parametrize("beta", ["1e15", "1.5", "710"])
def test_a_huge_beta_is_refused_before_any_charge(con, sql, beta):
    before = con.execute("SHOW PRIVACY BUDGET").fetchall()
    for text in (_with_beta(sql, beta), "EXPLAIN PRIVACY " + _with_beta(sql, beta),
                 "EXPLAIN PRIVACY " + _with_beta(sql, beta) + " ESTIMATE ERROR WITH EPSILON 0.5"):
        with pytest.raises(ProgrammingError, match=r"beta = .* outside .*range \[1e-09, 1\]"):
            con.execute(text)
    assert con.execute("SHOW PRIVACY BUDGET").fetchall() == before


@pytest.mark.parametrize("sql", QUERIES)
def test_beta_up_to_the_cap_is_released_with_it(con, sql):
    cur = con.execute(_with_beta(sql, str(BETA_CAP)))
    assert cur.privacy.releases[0].params["beta"] == BETA_CAP
    assert abs(cur.fetchone()[0]) < 1e6  # a sane answer, not noise of scale e^700


def test_the_check_names_beta_and_its_range():
    assert check_beta(BETA_CAP) == BETA_CAP and check_beta(1e-9) == 1e-9
    for beta in (7.0, 1e-10):
        with pytest.raises(ValueError, match=r"beta = .* is outside .* \[1e-09, 1\]"):
            check_beta(beta)


def test_graph_count_refuses_it_before_reading_the_graph():
    import networkx as nx

    from provsql_dp import graph
    from provsql_dp.errors import InterfaceError

    g = nx.path_graph(6)
    for pattern in ("triangle", "2-star"):
        with pytest.raises(InterfaceError, match="beta = 1e\\+15 is outside"):
            graph.count(g, pattern, epsilon=1.0, beta=1e15)
