"""The analyst-SQL leftovers of issue 28 (h48sql): what they cost beside plain DuckDB.

Prints three tables on generated customers/orders/events (customers protected, their orders and
events theirs; fixed seed), medians of ``--repeat`` runs, and the load average (the machine is
shared):

1. **SEMI / ANTI JOIN in FROM** — the private release of ``FROM c SEMI JOIN o ON …`` beside the
   same statement written ``WHERE EXISTS (…)`` (the same plan: the ratio should be ~1) and plain
   DuckDB running the SEMI JOIN itself;
2. **TIMESTAMP group keys** — ``date_trunc('month', ts)``, ``EXTRACT(hour FROM ts)``,
   ``date_trunc('minute', ts)`` under a WHERE that bounds ``ts``: the time to prove the domain
   (planning, no data read), the number of groups, and the release beside plain DuckDB's GROUP BY;
3. **NOT NULL columns** — planning a statement with the catalog's NOT NULL read (rule 3 of
   ``sql.owner_fd`` now asks it) against the same planner with the read stubbed out (before).

Usage: ``python benchmarks/sql_leftovers.py [--customers N] [--repeat R] [--smoke]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

import provsql_dp
from provsql_dp.sql import planner as planner_module
from provsql_dp.sql.dialect import parse_one
from provsql_dp.sql.planner import plan_query


def build(n_customers: int, seed: int = 48):
    con = provsql_dp.connect()
    con._rng = np.random.default_rng(seed)
    n_orders, n_events = n_customers * 4, n_customers * 10
    con.execute(f"""
        CREATE TABLE customer(c_custkey INT PRIMARY KEY, c_seg INT, c_email VARCHAR UNIQUE);
        INSERT INTO customer SELECT range, hash(range) % 5, CASE WHEN range % 3 = 0 THEN NULL
            ELSE 'u' || range END FROM range({n_customers});
        CREATE TABLE orders(o_orderkey INT PRIMARY KEY, o_custkey INT, o_price DOUBLE);
        INSERT INTO orders SELECT range, hash(range * 7) % {n_customers},
            (hash(range * 13) % 100000) / 100.0 FROM range({n_orders});
        CREATE TABLE events(e_custkey INT, ts TIMESTAMP);
        INSERT INTO events SELECT hash(range * 5) % {n_customers}, TIMESTAMP '2024-01-01' +
            (hash(range * 11) % (366 * 86400)) * INTERVAL 1 SECOND FROM range({n_events});
        PROTECT TABLE customer; PROTECT TABLE orders BY (o_custkey) AS customer;
        PROTECT TABLE events BY (e_custkey) AS customer;
        SET PRIVACY BUDGET 100000;
    """)
    return con


SEMI = [
    ("SEMI JOIN (owner-local)",
     "SELECT COUNT(*) FROM customer c SEMI JOIN orders o ON o.o_custkey = c.c_custkey "
     "AND o.o_price > 900",
     "SELECT COUNT(*) FROM customer c WHERE EXISTS (SELECT 1 FROM orders o WHERE "
     "o.o_custkey = c.c_custkey AND o.o_price > 900)"),
    ("ANTI JOIN (owner-local)",
     "SELECT COUNT(*) FROM customer c ANTI JOIN orders o ON o.o_custkey = c.c_custkey",
     "SELECT COUNT(*) FROM customer c WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE "
     "o.o_custkey = c.c_custkey)"),
]

KEYS = [
    ("month of a year", "date_trunc('month', ts)",
     "ts >= TIMESTAMP '2024-01-01' AND ts < TIMESTAMP '2025-01-01'"),
    ("hour of day, 30 days", "EXTRACT(hour FROM ts)",
     "ts BETWEEN TIMESTAMP '2024-03-01' AND TIMESTAMP '2024-03-31'"),
    ("minute, 2 hours", "date_trunc('minute', ts)",
     "ts BETWEEN TIMESTAMP '2024-06-01 10:00' AND TIMESTAMP '2024-06-01 11:59:59'"),
]


def _median(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _table(title, header, rows):
    print(f"\n{title}")
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    print("  ".join(str(h).ljust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(str(x).ljust(w) for x, w in zip(r, widths)))


def semi_table(con, repeat):
    rows = []
    duck = con._duck
    for name, semi, exists in SEMI:
        truth = duck.execute(semi).fetchone()[0]
        runs = {"semi": [], "exists": [], "duck": []}
        calls = {"semi": lambda: con.execute(semi + " WITH EPSILON 1").fetchall(),
                 "exists": lambda: con.execute(exists + " WITH EPSILON 1").fetchall(),
                 "duck": lambda: duck.execute(semi).fetchall()}
        for f in calls.values():
            f()  # warm: the first release of a statement plans and caches what it may
        for _ in range(repeat):  # interleaved: the shared machine's load moves less between them
            for k, f in calls.items():
                runs[k].append(_median(f, 1))
        t_semi, t_exists, t_duck = (statistics.median(runs[k]) for k in ("semi", "exists", "duck"))
        released = con.execute(semi + " WITH EPSILON 1").fetchone()[0]
        rows.append((name, truth, released, f"{t_semi * 1e3:.1f}", f"{t_exists * 1e3:.1f}",
                     f"{t_semi / t_exists:.2f}", f"{t_duck * 1e3:.1f}", f"{t_semi / t_duck:.1f}"))
    _table("1. SEMI / ANTI JOIN in FROM (ms, medians of interleaved runs after a warm-up)",
           ("statement", "truth", "released", "FROM form", "EXISTS form", "FROM/EXISTS",
            "DuckDB", "FROM/DuckDB"), rows)


def key_table(con, repeat):
    rows = []
    duck = con._duck
    for name, key, where in KEYS:
        sql = f"SELECT {key} AS g, COUNT(*) FROM events WHERE {where} GROUP BY 1"
        tree = parse_one(sql)
        plan = plan_query(tree, con._catalog)
        from provsql_dp.sql.key_domain import proved_domain

        groups = proved_domain(con._catalog, plan.child, plan.group_by[0])
        t_prove = _median(lambda: proved_domain(con._catalog, plan.child, plan.group_by[0]),
                          repeat)
        t_rel = _median(lambda: con.execute(sql + " WITH EPSILON 1").fetchall(), repeat)
        t_duck = _median(lambda: duck.execute(sql).fetchall(), repeat)
        seen = len(duck.execute(sql).fetchall())
        rows.append((name, len(groups), seen, f"{t_prove * 1e3:.1f}", f"{t_rel * 1e3:.1f}",
                     f"{t_duck * 1e3:.1f}", f"{t_rel / t_duck:.1f}"))
    _table("2. TIMESTAMP group keys (ms, medians)",
           ("key", "groups proved", "groups in data", "prove", "release", "DuckDB",
            "release/DuckDB"), rows)


def not_null_table(con, repeat):
    sql = parse_one("SELECT COUNT(*) FROM customer c, orders o WHERE o.o_custkey = c.c_custkey "
                    "AND c.c_seg = 1")
    real = planner_module.not_null_columns

    def plan():
        con._catalog.changed()  # a fresh snapshot: the catalog reads are not cached
        with con._catalog.snapshot():
            plan_query(sql, con._catalog)

    before, after = [], []
    for _ in range(repeat):  # interleaved: the load moves less between the two
        after.append(_median(plan, 1))
        planner_module.not_null_columns = lambda catalog, info: ()
        try:
            before.append(_median(plan, 1))
        finally:
            planner_module.not_null_columns = real
    t_before, t_after = statistics.median(before), statistics.median(after)
    _table("3. planning with the NOT NULL read (ms, medians, fresh catalog snapshot each)",
           ("before (no read)", "after", "after/before"),
           [(f"{t_before * 1e3:.2f}", f"{t_after * 1e3:.2f}", f"{t_after / t_before:.2f}")])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--customers", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--smoke", action="store_true", help="a tiny run of the same code paths")
    args = ap.parse_args(argv)
    if args.smoke:
        args.customers, args.repeat = 300, 1
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; "
          f"{args.customers} customers, {args.repeat} repeats")
    con = build(args.customers)
    semi_table(con, args.repeat)
    key_table(con, args.repeat)
    not_null_table(con, max(args.repeat, 20))
    return 0


if __name__ == "__main__":
    sys.exit(main())
