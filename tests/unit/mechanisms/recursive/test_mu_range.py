"""The explicit μ of the recursive mechanism (``OPTIONS (mu = …)``): its range follows Theorem 1 /
Lemma 6 of Chen & Zhou — past ln(2^53)·β/ε₁ the failure probability is below 2^−53 and a larger μ
only multiplies the noise — and a statement outside it is refused before anything is charged."""

import math

import pytest
from hypothesis import given, settings, strategies as st

import provsql_dp
from provsql_dp.errors import ProgrammingError
from provsql_dp.mechanisms.recursive._framework import (BETA_CAP, DEFAULT_MU, MU_FLOOR, check_mu,
                                                        mu_cap, resolve_params)


@settings(max_examples=200, deadline=None)
@given(eps=st.floats(1e-6, 1e6), beta=st.floats(1e-9, BETA_CAP), split=st.floats(0.01, 0.99))
def test_the_cap_is_where_lemma_6_fails_negligibly(eps, beta, split):
    eps1 = eps * split
    cap = mu_cap(eps1, beta)
    assert 1.0 <= cap <= 700.0 and math.isfinite(math.exp(cap))
    assert cap >= max(DEFAULT_MU.values())  # the paper's own μ always fits
    if 1.0 < cap < 700.0:  # the failure probability ½e^{−με₁/β} at the cap is 2^−53·½
        assert math.isclose(0.5 * math.exp(-cap * eps1 / beta), 2.0 ** -54, rel_tol=1e-6)


def test_check_mu_takes_the_range_and_refuses_outside():
    p = resolve_params(1.0, "node", mu=1.0)
    assert check_mu(p) == 1.0
    top = mu_cap(p["eps1"], p["beta"])
    assert check_mu(resolve_params(1.0, "node", mu=top)) == top
    for mu in (top * 1.001, 1e3, 1e15):
        with pytest.raises(ValueError, match="outside the recursive mechanism's range"):
            check_mu(resolve_params(1.0, "node", mu=mu))
    with pytest.raises(ValueError):
        check_mu(resolve_params(1.0, "node", mu=MU_FLOOR / 2))


def test_a_statement_outside_the_range_is_refused_and_charges_nothing():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE p(id INT PRIMARY KEY); CREATE TABLE v(pid INT, a INT)")
    con.execute("INSERT INTO p SELECT range FROM range(20); "
                "INSERT INTO v SELECT range % 20, range FROM range(60)")
    con.execute("PROTECT TABLE p; PROTECT TABLE v BY (pid) AS p; SET PRIVACY BUDGET 10")
    before = con.ledger.remaining(con.user)
    for mu in ("1e15", "100", "15"):
        with pytest.raises(ProgrammingError, match=r"mu = .* outside .*\[1e-09, 14\.7\]"):
            con.execute(f"SELECT COUNT(*) FROM v WITH EPSILON 1 OPTIONS (mu = {mu})")
        with pytest.raises(ProgrammingError, match="outside"):
            con.execute(f"EXPLAIN PRIVACY SELECT COUNT(*) FROM v WITH EPSILON 1 OPTIONS (mu = {mu})")
    assert con.ledger.remaining(con.user) == before
    con.execute("SELECT COUNT(*) FROM v WITH EPSILON 1 OPTIONS (mu = 14)").fetchall()


def test_graph_count_refuses_it_too():
    import networkx as nx

    from provsql_dp.errors import InterfaceError
    from provsql_dp.graph import count

    with pytest.raises(InterfaceError, match="mu = 1e\\+15 is outside"):
        count(nx.karate_club_graph(), "triangle", privacy="edge", epsilon=0.5, mu=1e15)
