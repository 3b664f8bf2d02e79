"""Benchmark: what compiling an analyst's statement costs (issue 26, "compile, never pass through").

For each statement kind, the median wall time of
* ``curator`` — the statement passed through to DuckDB as it is (a curator's connection);
* ``analyst`` — the same statement on an analyst's connection: parsed, resolved by scope,
  checked, emitted and read back (:mod:`provsql_dp.sql.analyst`), then run;
* ``compile`` — the compiler alone (no DuckDB run).

The tables are small (``pub``: ``--rows`` rows), so the figures show the fixed cost per
statement. Usage: ``python benchmarks/analyst_compile.py [--rows 10000] [--repeats 50]``.

One run (2026-11-28, 2 cores shared with five other jobs — loaded and noisy; medians of 40)::

    statement           curator ms  analyst ms  compile ms
    select                    0.92        4.48        2.78
    ctes+join                 2.01       20.10       12.49
    subqueries                8.41       19.83       11.63
    view                      0.43       15.83       15.11
    pivot                    33.73       58.59       10.79
    describe table            0.35        3.22        2.45
    describe query            0.43        3.03       13.48
    summarize                17.42       35.85        8.01
    show all tables          27.54       38.47        5.23

Most of a compile is the catalog's per-statement freshness check (``Catalog.snapshot``: one
query of the generation sequence and the definitions of the tables looked up, ~1-14 ms on this
machine), which private statements pay too; the rest (parse, scope analysis, emission, reading
the emitted text back) is 2-3 ms.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import provsql_dp
from provsql_dp.sql import dialect as d
from provsql_dp.sql.analyst import compile_statement

STATEMENTS = {
    "select": "SELECT v, count(*) FROM pub WHERE k > 10 GROUP BY v ORDER BY v",
    "ctes+join": "WITH a AS (SELECT k, v FROM pub), b AS (SELECT k FROM a WHERE k % 2 = 0) "
                 "SELECT a.v, count(*) FROM a JOIN b USING (k) GROUP BY a.v",
    "subqueries": "SELECT k FROM pub WHERE k IN (SELECT k FROM pub WHERE v = 'x') AND EXISTS "
                  "(SELECT 1 FROM pub p2 WHERE p2.k = pub.k) LIMIT 10",
    "view": "SELECT count(*) FROM pubv",
    "pivot": "PIVOT pub ON v USING count(*)",
    "describe table": "DESCRIBE pub",
    "describe query": "DESCRIBE SELECT k, upper(v) FROM pub",
    "summarize": "SUMMARIZE pub",
    "show all tables": "SHOW ALL TABLES",
}


def _median(f, repeats: int) -> float:
    f()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--smoke", action="store_true", help="200 rows, 3 repeats: seconds (CI)")
    args = ap.parse_args()
    if args.smoke:
        args.rows, args.repeats = 200, 3
    path = str(Path(tempfile.mkdtemp()) / "bench.duckdb")
    cur = provsql_dp.connect(path)
    cur.execute(f"""CREATE TABLE pub AS SELECT i AS k, chr(CAST(120 + i % 3 AS INT)) AS v FROM range({args.rows}) r(i);
                    CREATE VIEW pubv AS WITH c AS (SELECT k FROM pub) SELECT k FROM c;
                    CREATE TABLE p(id INT PRIMARY KEY, name VARCHAR); PROTECT TABLE p;
                    SET PRIVACY BUDGET 1 FOR USER 'ann'""")
    an = provsql_dp.connect(path, role="analyst", user="ann")
    print(f"{'statement':18} {'curator ms':>11} {'analyst ms':>11} {'compile ms':>11}")
    for name, sql in STATEMENTS.items():
        c = _median(lambda: cur.execute(sql).fetchall(), args.repeats)
        a = _median(lambda: an.execute(sql).fetchall(), args.repeats)
        k = _median(lambda: compile_statement(an._catalog, d.parse_one(sql)), args.repeats)
        print(f"{name:18} {c * 1e3:11.2f} {a * 1e3:11.2f} {k * 1e3:11.2f}")


if __name__ == "__main__":
    main()
