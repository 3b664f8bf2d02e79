"""Issue 28, TPC-H Q8/Q11/Q20's shapes end to end: computed GROUP BY keys whose values the
statement proves (pure ε, every group released), a ratio of two released SUMs over them, a
private statement that reads no protected table, and the refusals that must stay."""

import pytest

import provsql_dp
from provsql_dp.errors import UnsupportedQueryError


@pytest.fixture
def con():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE orders(okey INT PRIMARY KEY, cust INT, odate DATE, price DOUBLE)")
    c.execute("INSERT INTO orders SELECT i, i % 50, DATE '1995-01-01' + INTERVAL (i % 700) DAY, "
              "i % 100 FROM range(1000) t(i)")
    c.execute("CREATE TABLE nation(nkey INT, name VARCHAR)")
    c.execute("INSERT INTO nation VALUES (1, 'BRAZIL'), (2, 'PERU')")
    c.execute("PROTECT TABLE orders BY (cust)")
    c.execute("SET BOUNDS ON orders (price) BETWEEN 0 AND 100")
    c.execute("SET PRIVACY BUDGET 100")
    c.execute("SET PRIVACY BUDGET EPSILON 100 DELTA 0.01")
    return c


Q8 = ("SELECT o_year, SUM(CASE WHEN price > 50 THEN price ELSE 0 END) / SUM(price) AS share "
      "FROM (SELECT EXTRACT(year FROM odate) AS o_year, price FROM orders "
      "WHERE odate BETWEEN DATE '1995-01-01' AND DATE '1997-12-31') AS a "
      "GROUP BY o_year ORDER BY o_year WITH EPSILON 1")


def test_q8_shape_releases_every_proved_year_and_the_ratio(con):
    cur = con.execute(Q8)
    rows = cur.fetchall()
    # 1997 holds no order (the data ends in 1996-12): released too, as noise — the set of
    # groups is the statement's, not the data's
    assert [r[0] for r in rows] == [1995, 1996, 1997]
    assert [d[0] for d in cur.description] == ["o_year", "share"]
    assert cur.privacy.epsilon == 1
    assert con.execute("SHOW PRIVACY BUDGET").fetchall()  # the charge is one statement's


def test_the_proved_groups_do_not_depend_on_the_data(con):
    before = [r[0] for r in con.execute(Q8).fetchall()]
    con.execute("DELETE FROM orders WHERE odate >= DATE '1996-01-01'")
    after = [r[0] for r in con.execute(Q8).fetchall()]
    assert before == after == [1995, 1996, 1997]


def test_a_bounded_integer_key_is_pure_epsilon(con):
    cur = con.execute("SELECT cust // 10 AS q, COUNT(*) FROM orders WHERE cust BETWEEN 0 AND 39 "
                      "GROUP BY 1 WITH EPSILON 1")
    assert sorted(r[0] for r in cur.fetchall()) == [0, 1, 2, 3]
    assert cur.privacy.epsilon == 1


def test_a_proved_key_after_a_public_key(con):
    """A computed key after a key of a public table: the first key must not switch the proof off
    for the second (a merge once reused the flag's name for the proved values)."""
    con.execute("CREATE TABLE custnation(cust INT PRIMARY KEY, nkey INT)")
    con.execute("INSERT INTO custnation SELECT i, 1 + i % 2 FROM range(50) t(i)")
    cur = con.execute("SELECT n.name, year(o.odate) AS y, COUNT(*) FROM orders o JOIN custnation c "
                      "ON o.cust = c.cust JOIN nation n ON n.nkey = c.nkey WHERE o.odate BETWEEN "
                      "DATE '1995-01-01' AND DATE '1996-12-31' GROUP BY 1, 2 WITH EPSILON 1")
    assert sorted((r[0], r[1]) for r in cur.fetchall()) == [
        ("BRAZIL", 1995), ("BRAZIL", 1996), ("PERU", 1995), ("PERU", 1996)]


def test_with_delta_a_proved_key_still_takes_partition_selection(con):
    """(ε, δ) with selection's OPTIONS asks for partition selection (TPC-H Q7): unchanged."""
    cur = con.execute("SELECT year(odate) AS y, COUNT(*) FROM orders WHERE odate BETWEEN "
                      "DATE '1995-01-01' AND DATE '1996-12-31' GROUP BY 1 WITH EPSILON 1 "
                      "DELTA 1e-6 OPTIONS (max_groups = 2, max_rows = 20)")
    assert cur.privacy.routes == ("partition-selection",)


def test_a_computed_key_over_an_unbounded_column_stays_refused(con):
    before = con.execute("SHOW PRIVACY BUDGET").fetchall()
    with pytest.raises(UnsupportedQueryError, match="GROUP BY .* not supported.*statement bounds"):
        con.execute("SELECT year(odate), COUNT(*) FROM orders WHERE odate > DATE '1995-06-01' "
                    "GROUP BY 1 WITH EPSILON 1")
    assert con.execute("SHOW PRIVACY BUDGET").fetchall() == before  # nothing charged


def test_a_ratio_under_partition_selection_stays_refused(con):
    """Unproved keys need partition selection, which releases one aggregate: a ratio of two is
    refused before any charge."""
    before = con.execute("SHOW PRIVACY BUDGET").fetchall()
    with pytest.raises(UnsupportedQueryError, match="several aggregates over groups without"):
        con.execute("SELECT year(odate) AS y, SUM(price) / COUNT(*) AS r FROM orders GROUP BY 1 "
                    "WITH EPSILON 1 DELTA 1e-6 OPTIONS (max_groups = 1, max_rows = 20)")
    assert con.execute("SHOW PRIVACY BUDGET").fetchall() == before
    with pytest.raises(UnsupportedQueryError, match="several aggregates over groups without"):
        con.execute("EXPLAIN PRIVACY SELECT year(odate) AS y, SUM(price), COUNT(*) "
                    "FROM orders GROUP BY 1 WITH EPSILON 1 DELTA 1e-6")
    # one aggregate over the same key: partition selection answers it
    cur = con.execute("SELECT year(odate) AS y, COUNT(*) FROM orders GROUP BY 1 "
                      "WITH EPSILON 1 DELTA 1e-6 OPTIONS (max_groups = 1, max_rows = 20)")
    assert cur.privacy.routes == ("partition-selection",)


def test_a_statement_that_reads_no_protected_table_says_so(con):
    """TPC-H Q11's shape: a subquery in HAVING over public tables only — the reason given is
    that there is nothing to protect, and the query runs without its clause."""
    sql = ("SELECT name, COUNT(*) FROM nation GROUP BY name HAVING COUNT(*) > "
           "(SELECT COUNT(*) * 0.1 FROM nation)")
    before = con.execute("SHOW PRIVACY BUDGET").fetchall()
    with pytest.raises(UnsupportedQueryError, match="reads no protected table"):
        con.execute(sql + " WITH EPSILON 1")
    with pytest.raises(UnsupportedQueryError, match="reads no protected table"):
        con.execute("EXPLAIN PRIVACY " + sql + " WITH EPSILON 1")
    assert con.execute("SHOW PRIVACY BUDGET").fetchall() == before
    assert sorted(con.execute(sql).fetchall()) == [("BRAZIL", 1), ("PERU", 1)]
    with pytest.raises(UnsupportedQueryError, match="not supported"):  # protected: its own reason
        con.execute("SELECT cust, COUNT(*) FROM orders GROUP BY cust HAVING COUNT(*) > "
                    "(SELECT COUNT(*) FROM orders) WITH EPSILON 1")


def test_a_comparison_with_an_aggregate_subquery_is_refused_as_non_monotone(con):
    """TPC-H Q20's shape: a row kept when a column exceeds an aggregate of many participants'
    rows."""
    with pytest.raises(UnsupportedQueryError, match="aggregate subquery.*not monotone"):
        con.execute("SELECT COUNT(*) FROM nation n WHERE n.nkey > (SELECT 0.5 * SUM(price) "
                    "FROM orders o WHERE o.cust = n.nkey) WITH EPSILON 1")


def test_explain_privacy_names_the_proved_groups_route(con):
    rows = con.execute("EXPLAIN PRIVACY " + Q8).fetchall()
    assert rows and all(r[-2] for r in rows)  # a route per released aggregate, and the post row


def test_a_bare_integer_column_bounded_by_the_where_is_grouped_by_its_proved_values():
    """A row-per-participant table's COUNT grouped by a protected INTEGER column: the policy
    route refused it ("without declared keys") before the plan routes could prove its groups
    from the WHERE; it now leaves it to them. Unbounded, it is refused, naming the way out."""
    c = provsql_dp.connect()
    c.execute("CREATE TABLE p(id INT PRIMARY KEY, year INT)")
    c.execute("INSERT INTO p SELECT i, 2007 + i % 3 FROM range(300) t(i)")
    c.execute("PROTECT TABLE p; SET PRIVACY BUDGET 1e9")
    rows = c.execute("SELECT year, COUNT(*) FROM p WHERE year BETWEEN 2006 AND 2009 GROUP BY year "
                     "WITH EPSILON 1e6").fetchall()
    assert [(y, round(n)) for y, n in rows] == [(2006, 0), (2007, 100), (2008, 100), (2009, 100)]
    before = c.execute("SHOW PRIVACY BUDGET").fetchall()
    with pytest.raises(UnsupportedQueryError, match="WHERE year BETWEEN … AND …"):
        c.execute("SELECT year, COUNT(*) FROM p GROUP BY year WITH EPSILON 1")
    assert c.execute("SHOW PRIVACY BUDGET").fetchall() == before
