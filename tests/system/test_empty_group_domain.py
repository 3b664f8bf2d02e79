"""A GROUP BY over a public table with no rows: every route answers the empty result (as the
Laplace route always did) and EXPLAIN PRIVACY shows 0 groups — no division by zero."""

from __future__ import annotations

import pytest

import provsql_dp


@pytest.fixture(scope="module")
def con():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, city INT)")
    con.execute("INSERT INTO p SELECT range, range % 3 FROM range(50)")
    con.execute("CREATE TABLE o(oid INT PRIMARY KEY, pid INT, v DOUBLE)")
    con.execute("INSERT INTO o SELECT range, range % 50, range % 7 FROM range(200)")
    con.execute("CREATE TABLE e(a INT, b INT)")
    con.execute("INSERT INTO e SELECT range % 50, (range * 7 + 1) % 50 FROM range(120)")
    con.execute("CREATE TABLE cities(id INT PRIMARY KEY, name VARCHAR)")  # public, empty
    con.execute("PROTECT TABLE p")
    con.execute("PROTECT TABLE o BY (pid) AS p")
    con.execute("PROTECT TABLE e BY (a, b) AS p")
    con.execute("SET PRIVACY BUDGET 100")
    return con


CITY = "JOIN cities ON p.city = cities.id GROUP BY cities.name WITH EPSILON 1"
QUERIES = {
    "single-owner count": f"SELECT cities.name, COUNT(*) FROM o JOIN p ON o.pid = p.id {CITY}",
    "single-owner sum": f"SELECT cities.name, SUM(v) FROM o JOIN p ON o.pid = p.id {CITY}",
    "recursive-lp": f"SELECT cities.name, COUNT(*) FROM e JOIN p ON e.a = p.id {CITY}",
    "r2t": f"SELECT cities.name, COUNT(*) FROM e JOIN p ON e.a = p.id {CITY} "
           "OPTIONS (mechanism = 'r2t', max_contribution = 10)",
    "avg": f"SELECT cities.name, AVG(v) FROM o JOIN p ON o.pid = p.id {CITY} "
           "OPTIONS (lower = 0, upper = 7)",
}


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_no_group_no_row_and_explain_shows_zero_groups(con, name):
    sql = QUERIES[name]
    rows = con.execute(f"EXPLAIN PRIVACY {sql}").fetchall()
    assert rows and all(row[3] == 0 for row in rows), rows  # the groups column
    spent = float(con.execute("SHOW PRIVACY BUDGET").fetchall()[0][2])
    cur = con.execute(sql)
    assert cur.fetchall() == []
    assert cur.privacy.releases == ()
    assert float(con.execute("SHOW PRIVACY BUDGET").fetchall()[0][2]) == spent + 1


def test_estimate_error_on_no_group_is_refused_before_any_charge(con):
    from provsql_dp.errors import ProgrammingError

    before = con.execute("SHOW PRIVACY BUDGET").fetchall()
    with pytest.raises(ProgrammingError, match="no group.*nothing was spent"):
        con.execute(f"EXPLAIN PRIVACY {QUERIES['single-owner count']} "
                    "ESTIMATE ERROR WITH EPSILON 0.1")
    assert con.execute("SHOW PRIVACY BUDGET").fetchall() == before
