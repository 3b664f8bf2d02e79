"""A user macro with a built-in's name (``CREATE MACRO upper(x) AS (SELECT … FROM protected)``)
would change what a private query — and provsql_dp's own capture SQL — computes, and could read
protected rows outside the mechanism: while one exists no private query runs (refused before any
charge, for every route), and an analyst's public statement cannot call it either."""

import pytest

import provsql_dp
from provsql_dp.errors import PrivacyError, UnsupportedQueryError


def _db(path):
    cur = provsql_dp.connect(path)
    cur.execute("CREATE TABLE p(id INT PRIMARY KEY, name VARCHAR, salary INT)")
    cur.execute("INSERT INTO p VALUES (1, 'Alice', 10), (2, 'Bob', 20)")
    cur.execute("CREATE TABLE pub(s VARCHAR); INSERT INTO pub VALUES ('x')")
    cur.execute("PROTECT TABLE p; SET PRIVACY BUDGET 5 FOR USER 'ann'; SET PRIVACY BUDGET 5")
    return cur


@pytest.mark.parametrize("macro", ["CREATE MACRO upper(x) AS (SELECT max(name) FROM p)",
                                   "CREATE MACRO sum(x) AS 0",
                                   # the check's own lower() was this macro: it missed itself
                                   "CREATE MACRO Lower(x) AS x"])
@pytest.mark.parametrize("sql", [
    "SELECT COUNT(*) FROM p WHERE upper(name) = 'ALICE' WITH EPSILON 1",
    "SELECT SUM(salary) FROM p WITH EPSILON 1 OPTIONS (lower = 0, upper = 50)",
    "SELECT COUNT(*) FROM p a JOIN p b ON a.id < b.id WITH EPSILON 1",
    "EXPLAIN PRIVACY SELECT COUNT(*) FROM p WITH EPSILON 1",
])
def test_no_private_query_runs_while_a_macro_shadows_a_builtin(tmp_path, macro, sql):
    path = str(tmp_path / "m.duckdb")
    cur = _db(path)
    cur.execute(macro)
    cur.close()
    an = provsql_dp.connect(path, role="analyst", user="ann")
    with pytest.raises(UnsupportedQueryError, match="name of a DuckDB built-in"):
        an.execute(sql)
    assert an.ledger.remaining("ann") == 5
    an.close()


def test_dropping_the_macro_restores_private_queries(tmp_path):
    path = str(tmp_path / "m.duckdb")
    cur = _db(path)
    cur.execute("CREATE MACRO upper(x) AS (SELECT max(name) FROM p)")
    with pytest.raises(UnsupportedQueryError):
        cur.execute("SELECT COUNT(*) FROM p WITH EPSILON 1")
    cur.execute("DROP MACRO upper")
    assert cur.execute("SELECT COUNT(*) FROM p WITH EPSILON 1 OPTIONS (raw = true)").fetchone()
    cur.close()


def test_an_analysts_public_statement_cannot_call_the_macro(tmp_path):
    path = str(tmp_path / "m.duckdb")
    cur = _db(path)
    cur.execute("CREATE MACRO upper(x) AS (SELECT max(name) FROM p)")
    cur.close()
    an = provsql_dp.connect(path, role="analyst", user="ann")
    with pytest.raises(PrivacyError, match="user-defined"):
        an.execute("SELECT upper(s) FROM pub")
    an.close()
