"""The fixed cost of a private statement, part by part, for two checkouts of provsql_dp.

A private ``COUNT(*) … WHERE`` (Laplace) over ``people`` at 10^5 rows (by default), where the
scan is cheap and what the statement pays besides it shows: the whole statement next to the
plain query, the ledger's charge of a known budget, the catalog's fingerprint with the
settings check (``Catalog.snapshot`` + ``check_session_settings``), and the private statement on
a database whose DuckDB configuration is locked (as analysts' guard rails lock it, on the
servers), and the statement's own Python ("python": the private statement again with its three
DuckDB statements — the fingerprint, the known charge, the data read — answered from what they
returned before, so that only provsql_dp's Python runs; a process-CPU figure). ``--tables``
adds that many tables to the database first: the fingerprint reads ``duckdb_tables()``, which
lists every table of the database whatever its filter. Each round runs one child process per
checkout (the order alternating), each timing ``repeats`` statements of each kind; the table
gives the medians over the rounds of the children's medians (wall, ms; "python": CPU, ms) and
the 1-minute load average when each child started.

Usage::

    python benchmarks/fixed_cost_parts.py --before /path/to/other/checkout [--rows 100000]
        [--repeats 300] [--rounds 3] [--tables 0]
    python benchmarks/fixed_cost_parts.py --smoke      # this checkout against itself, quickly
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QUERY = "SELECT COUNT(*) FROM people WHERE salary > 50000"
PARTS = ("plain", "private", "charge", "fingerprint", "locked", "python")


def measure(code: str, rows: int, repeats: int, tables: int = 0) -> dict:
    """One child: the medians (ms) of each part with the provsql_dp of ``code``."""
    sys.path.insert(0, code)
    import provsql_dp
    from provsql_dp.privacy._session_settings import check_session_settings

    con = provsql_dp.connect()
    duck = con._duck
    duck.execute("CREATE TABLE people(id INTEGER PRIMARY KEY, salary DOUBLE)")
    duck.execute(f"INSERT INTO people SELECT range::INTEGER, "
                 f"(hash(range * 3 + 2) % 120000)::DOUBLE FROM range({rows})")
    for i in range(tables):  # others of the database (the fingerprint lists them all)
        duck.execute(f"CREATE TABLE other{i}(a INTEGER PRIMARY KEY, b VARCHAR, c DOUBLE)")
    con.execute("PROTECT TABLE people")
    con.execute("SET PRIVACY BUDGET 1e12")
    private = f"{QUERY} WITH EPSILON 1"
    for _ in range(20):
        con.execute(private).fetchall()
    times = {p: [] for p in PARTS}

    def timed(part, run):
        t = time.perf_counter()
        run()
        times[part].append(time.perf_counter() - t)

    def snapshot():
        with con._catalog.snapshot():
            check_session_settings(con)

    for _ in range(repeats):
        timed("plain", lambda: duck.execute(QUERY).fetchall())
        timed("private", lambda: con.execute(private).fetchall())
    for _ in range(repeats):
        timed("charge", lambda: con._ledger.charge(con.user, 1, private, "laplace"))
        timed("fingerprint", snapshot)
    # the private statement where DuckDB's configuration is locked, as on an analyst's
    # connection with guard rails (what the servers run): locked from the start, as theirs is
    locked = provsql_dp.connect(":memory:fixed_cost_locked")
    locked._duck.execute("SET lock_configuration = true")
    locked._duck.execute("CREATE TABLE people(id INTEGER PRIMARY KEY, salary DOUBLE)")
    locked._duck.execute(f"INSERT INTO people SELECT range::INTEGER, "
                         f"(hash(range * 3 + 2) % 120000)::DOUBLE FROM range({rows})")
    locked.execute("PROTECT TABLE people")
    locked.execute("SET PRIVACY BUDGET 1e12")
    for _ in range(20):
        locked.execute(private).fetchall()
    for _ in range(repeats):
        timed("locked", lambda: locked.execute(private).fetchall())
    times["python"] = python_only(con, private, repeats)
    return {p: statistics.median(v) * 1e3 for p, v in times.items()}


def python_only(con, private: str, repeats: int) -> list[float]:
    """Process-CPU seconds of ``private`` with its DuckDB statements answered from their first
    results (the catalog's fingerprint, the known-budget charge, the data read): provsql_dp's
    own Python per statement. Patches the functions for the rest of the child."""
    from provsql_dp.privacy.ledger import Ledger
    from provsql_dp.provenance.backends.duckdb import DuckDBBackend
    from provsql_dp.sql import catalog

    def first(function, key):
        seen = {}

        def answer(*args):
            k = key(*args)
            if k not in seen:
                seen[k] = function(*args)
            return seen[k]
        return answer

    catalog.fingerprint = first(catalog.fingerprint, lambda con, names, *_: names)
    # (the known budget moves with each real charge: the first one's answer for any)
    Ledger._charge_on = first(Ledger._charge_on, lambda *a: a[2:6])
    DuckDBBackend.fetchall = first(DuckDBBackend.fetchall, lambda backend, sql: sql)
    for _ in range(20):
        con.execute(private).fetchall()
    out = []
    for _ in range(repeats):
        t = time.process_time()
        con.execute(private).fetchall()
        out.append(time.process_time() - t)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, help="the other checkout (default with --smoke: this one)")
    ap.add_argument("--rows", type=int, default=10**5)
    ap.add_argument("--repeats", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tables", type=int, default=0, help="other tables in the database")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--child", nargs=4, metavar=("CODE", "ROWS", "REPEATS", "TABLES"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.child[0], *map(int, args.child[1:]))))
        return
    if args.smoke:
        args.rows, args.repeats, args.rounds = 10**4, 20, 1
        args.before = args.before or REPO
    if args.before is None:
        ap.error("--before is required (the checkout to compare with)")
    codes = {"before": str(args.before.resolve()), "after": str(REPO)}
    seen = {k: [] for k in codes}
    for r in range(args.rounds):
        for key in (("before", "after") if r % 2 == 0 else ("after", "before")):
            load = os.getloadavg()[0]
            proc = subprocess.run([sys.executable, __file__, "--child", codes[key],
                                   str(args.rows), str(args.repeats), str(args.tables)],
                                  capture_output=True, text=True, cwd=REPO)
            if proc.returncode != 0:
                raise SystemExit(f"{key} failed:\n{proc.stderr[-2000:]}")
            seen[key].append({**json.loads(proc.stdout.strip().splitlines()[-1]), "load": load})
    print(f"\n## The fixed cost of a private COUNT, part by part ({args.rows:,} rows, "
          f"{args.tables} other tables, {args.rounds} rounds × median of {args.repeats}; ms)\n")
    print("| code | plain DuckDB | private statement | its charge | fingerprint + settings check "
          "| private, configuration locked | its Python (CPU) | load |")
    print("|---|---|---|---|---|---|---|---|")
    for key in codes:
        med = {p: statistics.median(s.get(p, float("nan")) for s in seen[key])
               for p in (*PARTS, "load")}
        print(f"| {key} | {med['plain']:.2f} | {med['private']:.2f} | {med['charge']:.2f} | "
              f"{med['fingerprint']:.2f} | {med['locked']:.2f} | {med['python']:.2f} | "
              f"{med['load']:.1f} |")


if __name__ == "__main__":
    main()
