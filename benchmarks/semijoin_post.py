"""Semi-joins and post-processing in SQL (issue 28): what they cost beside plain DuckDB.

Prints two tables on generated customers/orders/nations (customers protected, their orders
theirs, nations and the "flagged" order list public; fixed seed):

1. **semi-joins** — per statement, the true answer, the released one, the route, the time of the
   private release and of the same query in plain DuckDB, and the tuples of the captured
   K-relation against the rows the same query written as a join would count (a semi-join keeps a
   row once, a join once per match);
2. **post-processing** — a GROUP BY with and without ORDER BY / LIMIT / HAVING / arithmetic over
   the released aggregates: the post-processing's own cost is the difference (it runs on the
   released rows only).

Usage: ``python benchmarks/semijoin_post.py [--customers N] [--smoke]``.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import provsql_dp


def build(n_customers: int, orders_per: int, seed: int = 28):
    con = provsql_dp.connect()
    con._rng = np.random.default_rng(seed)
    n_orders = n_customers * orders_per
    con.execute(f"""
        CREATE TABLE nation(n_nationkey INT PRIMARY KEY, n_name VARCHAR);
        INSERT INTO nation SELECT range, 'N' || range FROM range(25);
        CREATE TABLE customer(c_custkey INT PRIMARY KEY, c_nationkey INT);
        INSERT INTO customer SELECT range, hash(range) % 25 FROM range({n_customers});
        CREATE TABLE orders(o_orderkey INT PRIMARY KEY, o_custkey INT, o_totalprice DOUBLE);
        INSERT INTO orders SELECT range, hash(range * 7) % {n_customers},
            (hash(range * 13) % 100000) / 100.0 FROM range({n_orders});
        CREATE TABLE flagged(f_orderkey INT);
        INSERT INTO flagged SELECT range FROM range({n_orders}) WHERE hash(range * 3) % 10 = 0;
        PROTECT TABLE customer; PROTECT TABLE orders BY (o_custkey) AS customer;
        SET BOUNDS ON orders (o_totalprice) BETWEEN 0 AND 1000;
        SET PRIVACY BUDGET 1000;
    """)
    return con


SEMIJOINS = [
    ("IN (public subquery)",
     "SELECT COUNT(*) FROM orders WHERE o_orderkey IN (SELECT f_orderkey FROM flagged)",
     "SELECT COUNT(*) FROM orders JOIN flagged ON o_orderkey = f_orderkey"),
    ("IN (… GROUP BY … HAVING), public",
     "SELECT COUNT(*) FROM customer WHERE c_nationkey IN (SELECT n_nationkey FROM nation "
     "GROUP BY n_nationkey HAVING MIN(n_name) < 'N2')",
     "SELECT COUNT(*) FROM customer JOIN nation ON c_nationkey = n_nationkey "
     "WHERE n_name < 'N2'"),
    ("EXISTS (protected, correlated)",
     "SELECT COUNT(*) FROM customer c WHERE EXISTS (SELECT 1 FROM orders o WHERE "
     "o.o_custkey = c.c_custkey AND o.o_totalprice > 900)",
     "SELECT COUNT(*) FROM customer c JOIN orders o ON o.o_custkey = c.c_custkey "
     "WHERE o.o_totalprice > 900"),
]

POST = [
    ("GROUP BY (no post-processing)",
     "SELECT n_name, SUM(o_totalprice) AS revenue FROM customer, orders, nation WHERE "
     "c_custkey = o_custkey AND c_nationkey = n_nationkey GROUP BY n_name"),
    ("… ORDER BY revenue DESC LIMIT 5",
     "SELECT n_name, SUM(o_totalprice) AS revenue FROM customer, orders, nation WHERE "
     "c_custkey = o_custkey AND c_nationkey = n_nationkey GROUP BY n_name "
     "ORDER BY revenue DESC LIMIT 5"),
    ("… SUM / COUNT, HAVING COUNT(*) > k",
     "SELECT n_name, SUM(o_totalprice) / COUNT(*) AS avg_price FROM customer, orders, nation "
     "WHERE c_custkey = o_custkey AND c_nationkey = n_nationkey GROUP BY n_name "
     "HAVING COUNT(*) > 10 ORDER BY avg_price"),
]


def _timed(fn, repeat: int):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--customers", type=int, default=2000)
    ap.add_argument("--orders-per", type=int, default=5)
    ap.add_argument("--smoke", action="store_true", help="a tiny run (CI)")
    args = ap.parse_args(argv)
    n = 60 if args.smoke else args.customers
    repeat = 1 if args.smoke else 3
    con = build(n, args.orders_per)
    duck = con._duck
    print(f"# semi-joins: {n} customers, {n * args.orders_per} orders, ε = 1")
    print("| statement | true | released | route | private s | DuckDB s | K-relation tuples "
          "| rows as a join |")
    print("|---|---:|---:|---|---:|---:|---:|---:|")
    for name, sql, as_join in SEMIJOINS:
        t_priv, cur = _timed(lambda: con.execute(f"{sql} WITH EPSILON 1"), repeat)
        t_duck, true = _timed(lambda: duck.execute(sql).fetchone()[0], repeat)
        tuples = len(con.provenance(sql))
        joined = duck.execute(as_join).fetchone()[0]
        print(f"| {name} | {true} | {cur.fetchone()[0]} | {cur.privacy.routes[0]} | "
              f"{t_priv:.3f} | {t_duck:.4f} | {tuples} | {joined} |")
    print()
    print("# post-processing (ORDER BY, LIMIT, HAVING, arithmetic) over released groups, ε = 1")
    print("| statement | rows | ε charged | private s |")
    print("|---|---:|---:|---:|")
    for name, sql in POST:
        t_priv, cur = _timed(lambda: con.execute(f"{sql} WITH EPSILON 1"), repeat)
        print(f"| {name} | {len(cur.fetchall())} | {cur.privacy.epsilon:g} | {t_priv:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
