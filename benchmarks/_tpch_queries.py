"""The TPC-H queries of ``benchmarks/tpch.py`` as TPC-H writes them, and who owns what.

Q3, Q5, Q7, Q8, Q10, Q11, Q12, Q18, Q20 and Q21 are the TPC-H 3.0 texts with the validation
parameters (TPC-H §2.4: Q3 'BUILDING' and 1995-03-15, Q5 'ASIA' 1994, …), unchanged: their
semi-joins (``IN``, ``EXISTS``, ``NOT EXISTS``), ``HAVING``, ``ORDER BY`` and ``LIMIT`` stay.
The participant is the customer. ``OWNERSHIP`` holds the declarations in one place:

* ``"foreign-keys"``: ownership along foreign keys (``PROTECT TABLE orders REFERENCES customer``,
  ``PROTECT TABLE lineitem BY (l_orderkey) REFERENCES orders``) — every order and line item
  belongs to its customer;
* ``"columns"``: what a database without that statement can declare — the tables that carry a
  customer key (``customer``, ``orders BY (o_custkey)``); ``lineitem`` has none, so it stays
  public, and a query reading line items without their order protects them not at all.

``tpch.py --ownership auto`` (the default) uses the first that the checkout accepts.
``PUBLIC`` declares what TPC-H makes public: the domains of the low-cardinality columns (TPC-H
§4.2.2.13 and §4.2.3) as group keys, the value ranges as bounds.

>>> import sys; sys.path.insert(0, "benchmarks")
>>> import _tpch_queries as q
>>> sorted(q.QUERIES, key=lambda k: int(k[1:]))
['Q3', 'Q5', 'Q7', 'Q8', 'Q10', 'Q11', 'Q12', 'Q18', 'Q20', 'Q21']
>>> q.tables_read(q.QUERIES["Q12"].sql)
['orders', 'lineitem']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TABLES = ("customer", "orders", "lineitem", "supplier", "nation", "region", "partsupp", "part")
#: primary keys (TPC-H §1.4.2), declared so ownership can follow the foreign keys
PRIMARY_KEYS = {"customer": "c_custkey", "orders": "o_orderkey", "supplier": "s_suppkey",
                "part": "p_partkey", "nation": "n_nationkey", "region": "r_regionkey"}

#: who owns what, in one place: swap the line tpch.py uses to change the participant model
OWNERSHIP = {
    "foreign-keys": ("PROTECT TABLE customer",
                     "PROTECT TABLE orders BY (o_custkey) REFERENCES customer (c_custkey)",
                     "PROTECT TABLE lineitem BY (l_orderkey) REFERENCES orders (o_orderkey)"),
    "columns": ("PROTECT TABLE customer BY (c_custkey) AS customer",
                "PROTECT TABLE orders BY (o_custkey) AS customer"),
}

_MODES = "'AIR', 'FOB', 'MAIL', 'RAIL', 'REG AIR', 'SHIP', 'TRUCK'"
#: TPC-H's public facts: bounds of the values (§4.2.3) and domains of the grouped columns
PUBLIC = (
    "SET BOUNDS ON lineitem (l_extendedprice) BETWEEN 0 AND 105000",
    "SET BOUNDS ON lineitem (l_quantity) BETWEEN 1 AND 50",
    "SET BOUNDS ON lineitem (l_discount) BETWEEN 0 AND 0.1",
    "SET BOUNDS ON orders (o_totalprice) BETWEEN 0 AND 600000",
    f"SET GROUP KEYS ON lineitem (l_shipmode) VALUES ({_MODES})",
)


@dataclass(frozen=True)
class Query:
    """A TPC-H query: its text, and which of its output columns are aggregates (the rest name
    the group; errors compare released and true values group by group)."""

    sql: str
    aggregates: tuple[int, ...]
    #: its groups are not public (a private column or a computed key): released by private
    #: partition selection under (ε, δ) where the checkout has it, with these contribution
    #: bounds (Tumult's MaxGroupsPerID / MaxRowsPerGroupPerID): a customer's orders in the
    #: query's groups, and TPC-H's at most 7 line items per order
    selection: str = ""


QUERIES = {
    "Q3": Query("""SELECT l_orderkey, SUM(l_extendedprice * (1 - l_discount)) AS revenue,
       o_orderdate, o_shippriority
FROM customer, orders, lineitem
WHERE c_mktsegment = 'BUILDING' AND c_custkey = o_custkey AND l_orderkey = o_orderkey
  AND o_orderdate < DATE '1995-03-15' AND l_shipdate > DATE '1995-03-15'
GROUP BY l_orderkey, o_orderdate, o_shippriority
ORDER BY revenue DESC, o_orderdate
LIMIT 10""", (1,),
    "OPTIONS (max_groups = 10, max_rows = 7, lower = 0, upper = 105000)"),
    "Q5": Query("""SELECT n_name, SUM(l_extendedprice * (1 - l_discount)) AS revenue
FROM customer, orders, lineitem, supplier, nation, region
WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND l_suppkey = s_suppkey
  AND c_nationkey = s_nationkey AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey
  AND r_name = 'ASIA' AND o_orderdate >= DATE '1994-01-01'
  AND o_orderdate < DATE '1994-01-01' + INTERVAL '1' YEAR
GROUP BY n_name
ORDER BY revenue DESC""", (1,)),
    "Q7": Query("""SELECT supp_nation, cust_nation, l_year, SUM(volume) AS revenue
FROM (SELECT n1.n_name AS supp_nation, n2.n_name AS cust_nation,
             EXTRACT(year FROM l_shipdate) AS l_year, l_extendedprice * (1 - l_discount) AS volume
      FROM supplier, lineitem, orders, customer, nation n1, nation n2
      WHERE s_suppkey = l_suppkey AND o_orderkey = l_orderkey AND c_custkey = o_custkey
        AND s_nationkey = n1.n_nationkey AND c_nationkey = n2.n_nationkey
        AND ((n1.n_name = 'FRANCE' AND n2.n_name = 'GERMANY')
          OR (n1.n_name = 'GERMANY' AND n2.n_name = 'FRANCE'))
        AND l_shipdate BETWEEN DATE '1995-01-01' AND DATE '1996-12-31') AS shipping
GROUP BY supp_nation, cust_nation, l_year
ORDER BY supp_nation, cust_nation, l_year""", (3,),
    "OPTIONS (max_groups = 2, max_rows = 50, lower = 0, upper = 105000)"),
    "Q8": Query("""SELECT o_year, SUM(CASE WHEN nation = 'BRAZIL' THEN volume ELSE 0 END)
       / SUM(volume) AS mkt_share
FROM (SELECT EXTRACT(year FROM o_orderdate) AS o_year,
             l_extendedprice * (1 - l_discount) AS volume, n2.n_name AS nation
      FROM part, supplier, lineitem, orders, customer, nation n1, nation n2, region
      WHERE p_partkey = l_partkey AND s_suppkey = l_suppkey AND l_orderkey = o_orderkey
        AND o_custkey = c_custkey AND c_nationkey = n1.n_nationkey
        AND n1.n_regionkey = r_regionkey AND r_name = 'AMERICA'
        AND s_nationkey = n2.n_nationkey
        AND o_orderdate BETWEEN DATE '1995-01-01' AND DATE '1996-12-31'
        AND p_type = 'ECONOMY ANODIZED STEEL') AS all_nations
GROUP BY o_year
ORDER BY o_year""", (1,)),
    "Q10": Query("""SELECT c_custkey, c_name, SUM(l_extendedprice * (1 - l_discount)) AS revenue,
       c_acctbal, n_name, c_address, c_phone, c_comment
FROM customer, orders, lineitem, nation
WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey
  AND o_orderdate >= DATE '1993-10-01' AND o_orderdate < DATE '1993-10-01' + INTERVAL '3' MONTH
  AND l_returnflag = 'R' AND c_nationkey = n_nationkey
GROUP BY c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
ORDER BY revenue DESC
LIMIT 20""", (2,),
    "OPTIONS (max_groups = 1, max_rows = 50, lower = 0, upper = 105000)"),
    "Q11": Query("""SELECT ps_partkey, SUM(ps_supplycost * ps_availqty) AS value
FROM partsupp, supplier, nation
WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = 'GERMANY'
GROUP BY ps_partkey
HAVING SUM(ps_supplycost * ps_availqty) > (
    SELECT SUM(ps_supplycost * ps_availqty) * 0.0001
    FROM partsupp, supplier, nation
    WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = 'GERMANY')
ORDER BY value DESC""", (1,)),
    "Q12": Query("""SELECT l_shipmode,
       SUM(CASE WHEN o_orderpriority = '1-URGENT' OR o_orderpriority = '2-HIGH'
                THEN 1 ELSE 0 END) AS high_line_count,
       SUM(CASE WHEN o_orderpriority <> '1-URGENT' AND o_orderpriority <> '2-HIGH'
                THEN 1 ELSE 0 END) AS low_line_count
FROM orders, lineitem
WHERE o_orderkey = l_orderkey AND l_shipmode IN ('MAIL', 'SHIP')
  AND l_commitdate < l_receiptdate AND l_shipdate < l_commitdate
  AND l_receiptdate >= DATE '1994-01-01'
  AND l_receiptdate < DATE '1994-01-01' + INTERVAL '1' YEAR
GROUP BY l_shipmode
ORDER BY l_shipmode""", (1, 2)),
    "Q18": Query("""SELECT c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, SUM(l_quantity)
FROM customer, orders, lineitem
WHERE o_orderkey IN (SELECT l_orderkey FROM lineitem GROUP BY l_orderkey
                     HAVING SUM(l_quantity) > 300)
  AND c_custkey = o_custkey AND o_orderkey = l_orderkey
GROUP BY c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
ORDER BY o_totalprice DESC, o_orderdate
LIMIT 100""", (5,),
    "OPTIONS (max_groups = 10, max_rows = 7, lower = 1, upper = 50)"),
    "Q20": Query("""SELECT s_name, s_address
FROM supplier, nation
WHERE s_suppkey IN (
    SELECT ps_suppkey FROM partsupp
    WHERE ps_partkey IN (SELECT p_partkey FROM part WHERE p_name LIKE 'forest%')
      AND ps_availqty > (SELECT 0.5 * SUM(l_quantity) FROM lineitem
                         WHERE l_partkey = ps_partkey AND l_suppkey = ps_suppkey
                           AND l_shipdate >= DATE '1994-01-01'
                           AND l_shipdate < DATE '1994-01-01' + INTERVAL '1' YEAR))
  AND s_nationkey = n_nationkey AND n_name = 'CANADA'
ORDER BY s_name""", ()),
    "Q21": Query("""SELECT s_name, COUNT(*) AS numwait
FROM supplier, lineitem l1, orders, nation
WHERE s_suppkey = l1.l_suppkey AND o_orderkey = l1.l_orderkey AND o_orderstatus = 'F'
  AND l1.l_receiptdate > l1.l_commitdate
  AND EXISTS (SELECT * FROM lineitem l2
              WHERE l2.l_orderkey = l1.l_orderkey AND l2.l_suppkey <> l1.l_suppkey)
  AND NOT EXISTS (SELECT * FROM lineitem l3
                  WHERE l3.l_orderkey = l1.l_orderkey AND l3.l_suppkey <> l1.l_suppkey
                    AND l3.l_receiptdate > l3.l_commitdate)
  AND s_nationkey = n_nationkey AND n_name = 'SAUDI ARABIA'
GROUP BY s_name
ORDER BY numwait DESC, s_name
LIMIT 100""", (1,)),
}


def tables_read(sql: str) -> list[str]:
    """The TPC-H tables a query names, in TABLES order."""
    return [t for t in TABLES if re.search(rf"\b{t}\b", sql, re.IGNORECASE)]
