"""A private query's OPTIONS are refused with the right reason, before anything is charged: an
option no mechanism knows is *unknown* (with the list), one of another mechanism's names that
mechanism — whichever route the query takes."""

import pytest

import provsql_dp
from provsql_dp.errors import ProgrammingError


@pytest.fixture()
def con():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE t(id INT PRIMARY KEY, x INT); INSERT INTO t SELECT range, range "
              "FROM range(10); PROTECT TABLE t")
    c.execute("CREATE TABLE e(a INT, b INT); INSERT INTO e VALUES (1, 2), (2, 3); "
              "PROTECT TABLE e BY (a, b); SET PRIVACY BUDGET 1")
    return c


LAPLACE = "SELECT COUNT(*) FROM t WITH EPSILON 0.5 OPTIONS ({})"
RECURSIVE = "SELECT COUNT(*) FROM e e1 JOIN e e2 ON e1.b = e2.a WITH EPSILON 0.5 OPTIONS ({})"


@pytest.mark.parametrize("query", [LAPLACE, RECURSIVE])
@pytest.mark.parametrize("option", ["foo = 1", "thetaa = 1"])
def test_an_unknown_option_is_named_unknown_on_every_route(con, query, option):
    name = option.split()[0]
    with pytest.raises(ProgrammingError, match=f"^unknown option '{name}'; the options are theta"):
        con.execute(query.format(option))
    assert con.execute("SHOW PRIVACY BUDGET").fetchall() == [("default", "1", "0", "1")]


@pytest.mark.parametrize("option, owner", [("theta = 2", "the recursive mechanism"),
                                           ("max_contribution = 8", r"R2T \(OPTIONS \(mechanism = 'r2t'")])
def test_another_mechanism_s_option_names_that_mechanism_on_the_laplace_route(con, option, owner):
    with pytest.raises(ProgrammingError, match=f"^option {option.split()[0]} applies to {owner}.*"
                                               "answered by the Laplace mechanism"):
        con.execute(LAPLACE.format(option))
    assert con.execute("SHOW PRIVACY BUDGET").fetchall() == [("default", "1", "0", "1")]
