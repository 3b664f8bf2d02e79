"""Red team h85attack-1: ownership along a foreign key after the referenced table changed.

``PROTECT TABLE lineitem BY (l_orderkey) REFERENCES orders`` checks, when declared, that
``o_orderkey`` is a declared key of ``orders`` (so DuckDB keeps it unique and a lineitem row
finds one order, one owner) and that the two columns are of one type family. The declaration is
stored by name and outlives the table it read: after ``CREATE OR REPLACE TABLE orders AS …``
(a reload: it keeps the rows and drops the key) with order 10 listed for customers 1 and 2, each
private query joined a lineitem row of order 10 to both orders rows — two tuples, each owned by
one customer, while the declaration says the row belongs to the customers of its order and
leaves with either: removing customer 1 moves the count by 2 per such row, the mechanism assumed
1 (k listings: k×). The same with a wider ``UNIQUE (o_orderkey, o_custkey)``, a view in the
table's place, or a DOUBLE key (``2**53`` and ``2**53 + 1`` are one double). A dropped
``orders`` threw a Python ``AttributeError`` out of ``execute``.

Fixed by :func:`provsql_dp.sql.foreign_owners.check_hop`: each scan checks the hop as the
declaration did (from the schema), so the statement is refused before its charge.
"""

from __future__ import annotations

import pytest
from test_foreign_owners import _tpch

from provsql_dp.errors import DeclarationError

RELOADS = {
    "key dropped by a reload": [
        "CREATE OR REPLACE TABLE orders AS SELECT * FROM orders UNION ALL SELECT 10, 2"],
    "a wider unique key": [
        "CREATE OR REPLACE TABLE orders2(o_orderkey INT, o_custkey INT, UNIQUE (o_orderkey, o_custkey))",
        "INSERT INTO orders2 SELECT * FROM orders UNION ALL SELECT 10, 2",
        "DROP TABLE orders", "ALTER TABLE orders2 RENAME TO orders"],
    "a view in its place": [
        "CREATE TABLE orders_raw AS SELECT * FROM orders UNION ALL SELECT 10, 2",
        "DROP TABLE orders", "CREATE VIEW orders AS SELECT * FROM orders_raw"],
    "a key of another type": [
        "CREATE OR REPLACE TABLE orders(o_orderkey DOUBLE PRIMARY KEY, o_custkey INT)",
        "INSERT INTO orders VALUES (10, 1), (11, 1), (12, 2), (13, 3), (14, 1)"],
    "the table dropped": ["DROP TABLE orders"],
}


def _behind_its_back(con, stmt: str) -> None:
    """``stmt`` run by DuckDB's own client when provsql_dp refuses it (a drop or a reload of a
    table a declaration names: ``interfaces/dbapi/declared_drops.py``; a copy of its rows into a
    table no declaration protects: ``protected_copies.py``): each scan's check is what
    stands against a change made outside provsql_dp."""
    try:
        con.execute(stmt)
    except DeclarationError as e:  # or a copy of the protected rows (protected_copies)
        assert any(w in str(e) for w in ("declarations name it", "cannot write the protected rows",
                                         "dropped outside provsql_dp"))  # an orphan's name
        con._duck.execute(stmt)
        con._catalog.changed()


def _spent(con) -> str:
    return con.execute("SHOW PRIVACY BUDGET").fetchall()[0][2]


@pytest.mark.parametrize("change", list(RELOADS), ids=list(RELOADS))
def test_a_hop_whose_key_no_longer_holds_is_refused_before_the_charge(change):
    con = _tpch(True)
    for stmt in RELOADS[change]:
        _behind_its_back(con, stmt)
    con.commit()
    if change != "the table dropped" and change != "a key of another type":
        # the premise: order 10's lines join two orders rows (two customers)
        assert con.execute("SELECT COUNT(*) FROM lineitem JOIN orders ON l_orderkey = o_orderkey "
                           "WHERE l_orderkey = 10").fetchone()[0] == 4
    before = _spent(con)
    for sql in ("SELECT COUNT(*) FROM lineitem WITH EPSILON 1",
                "SELECT SUM(l_quantity) FROM lineitem WITH EPSILON 1 OPTIONS (lower = 0, upper = 10)",
                "EXPLAIN PRIVACY SELECT COUNT(*) FROM lineitem WITH EPSILON 1"):
        with pytest.raises(DeclarationError, match="cannot read the owners of 'lineitem'.*orders"):
            con.execute(sql)
    with pytest.raises(DeclarationError, match="owners of 'lineitem'"):
        con.provenance("SELECT l_orderkey FROM lineitem")
    assert _spent(con) == before  # refused: nothing charged


def test_a_reload_that_keeps_the_key_still_answers():
    con = _tpch(True)
    _behind_its_back(con, "CREATE OR REPLACE TABLE orders(o_orderkey INT PRIMARY KEY, "
                          "o_custkey INT)")
    con.execute("INSERT INTO orders VALUES (10, 1), (11, 1), (12, 2), (13, 3), (14, 1)")
    con.commit()
    kr = con.provenance("SELECT l_orderkey, l_linenumber FROM lineitem")
    assert len(kr.rows) == 9  # one tuple per lineitem row, one owner each
    assert all(len(kr.annotation(t)) == 1 for t in range(len(kr.rows)))
    con.execute("SELECT COUNT(*) FROM lineitem WITH EPSILON 1").fetchall()
