"""GROUP BY a public table's column, narrowed by the statement's public conditions
(``sql/public_groups.py``; TPC-H Q21's suppliers of one nation)."""

import pytest

import provsql_dp


@pytest.fixture
def con():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE nation(nk INT PRIMARY KEY, name TEXT)")
    c.execute("INSERT INTO nation VALUES (1, 'PERU'), (2, 'CHILE')")
    c.execute("CREATE TABLE supplier(sk INT PRIMARY KEY, nk INT, sname TEXT)")
    c.execute("INSERT INTO supplier SELECT i, 1 + i % 2, 'S' || i FROM range(10) t(i)")
    c.execute("CREATE TABLE sales(id INT PRIMARY KEY, sk INT, qty INT)")
    # supplier 8 (PERU) sells nothing: its group is released all the same
    c.execute("INSERT INTO sales SELECT i, i % 8, i % 5 FROM range(200) t(i)")
    c.execute("PROTECT TABLE sales")
    c.execute("SET PRIVACY BUDGET 100")
    return c


def groups(con, where: str) -> list:
    sql = ("SELECT s.sname, COUNT(*) FROM sales l JOIN supplier s ON l.sk = s.sk JOIN nation n "
           f"ON s.nk = n.nk WHERE {where} GROUP BY s.sname WITH EPSILON 1")
    return sorted(r[0] for r in con.execute(sql).fetchall())


def test_the_public_filter_narrows_the_groups(con):
    assert groups(con, "n.name = 'PERU'") == ["S0", "S2", "S4", "S6", "S8"]


def test_the_narrowed_groups_do_not_follow_the_protected_rows(con):
    before = groups(con, "n.name = 'PERU'")
    con.execute("DELETE FROM sales WHERE sk IN (0, 2)")
    assert groups(con, "n.name = 'PERU'") == before


def test_a_condition_that_reads_protected_columns_does_not_narrow(con):
    """``l.qty > s.nk`` mixes a protected column: not used, every supplier is a group (a narrowing
    by it would follow the protected rows)."""
    assert groups(con, "l.qty > s.nk") == sorted(f"S{i}" for i in range(10))


def test_a_subquerys_public_scans_do_not_narrow(con):
    """Conditions inside an EXISTS hold of the match, not of the group's table alone."""
    sql = ("SELECT s.sname, COUNT(*) FROM sales l JOIN supplier s ON l.sk = s.sk WHERE EXISTS "
           "(SELECT 1 FROM nation n WHERE n.nk = s.nk AND n.name = 'CHILE') GROUP BY s.sname "
           "WITH EPSILON 1")
    names = sorted(r[0] for r in con.execute(sql).fetchall())
    assert names == sorted(f"S{i}" for i in range(10))


def test_a_conjunct_holding_a_subquery_never_narrows():
    """A subquery can read a protected table without naming a column of it: such a conjunct is
    never used for the groups (``public_groups._usable``), whatever the planner admits."""
    import sqlglot

    from provsql_dp.sql.public_groups import _usable

    k = sqlglot.parse_one("c1 < (SELECT COUNT(*) FROM sales)")
    assert _usable(sqlglot.parse_one("c1 < 3"), {"c1": object()})
    assert not _usable(k, {"c1": object()})
