"""What one pass of DuckDB SQL costs per row for the pieces of an unbounded ``SUM`` (issue 28,
item 7: the single-owner closed form at ≤ 3× plain DuckDB over 10^7 rows).

The release (``privacy/engine_buckets.py``) runs one bucket pass over the clamped rows of a
table protected row by row. This script times, on the benchmark's ``people`` table (N rows,
``salary`` uniform in 0 … 119 999, built in DuckDB), the release's own bucket query next to the
alternatives one could build the Δ search and X from — so that a proposal can be priced before
it is written:

* ``plain``: ``SUM(salary)``, the target's denominator;
* ``clamped rows``: the rows the release reads, ``(w < 0, |w|)`` of the clamped weight, summed;
* ``bucket pass (the release's)``: the exact SQL of ``engine_buckets`` (``ln``, two bucket
  estimates, ``GROUP BY p, k, m`` with count, Σ1/c, Σc, min, max);
* ``histogram(c, thresholds)``: DuckDB's binned histogram over the thresholds ``θe^{jβ}/2``
  (counts only: the J test also needs Σ1/c above each threshold);
* ``exact bucket by a CASE tree``: the threshold index by binary search in nested ``CASE``
  (exact comparisons, no logarithm);
* ``top-K lists``: ``max(w, K), min(w, K)`` — the K largest totals of each part, from which the
  Δ search could be certified;
* ``one ungrouped pass``: count, Σ, max, min of each part (the least any exact method needs);
* ``FILTER aggregates``: the same with ``FILTER (WHERE …)`` per part;
* ``Σ min(c, Δ̂)``: X for a known Δ̂ (a second pass after the Δ search).

Each query is timed ``repeats`` times after one warm-up; the table gives median wall and CPU
(process CPU seconds, DuckDB's threads included) and the CPU ratio to plain. Run alone, under
``nice``: ``python benchmarks/sum_sql_variants.py [--rows N] [--repeats R] [--smoke]``.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from provsql_dp.mechanisms.recursive.buckets import params_for  # noqa: E402
from provsql_dp.privacy.engine_buckets import NO_ROWS, engine_buckets  # noqa: E402
from provsql_dp.provenance.clamp import DEFAULT_BOUNDS, clamp_sql  # noqa: E402


def release_bucket_sql(totals: str, params) -> str:
    """The bucket query ``engine_buckets`` runs for the rows ``totals`` (captured, not
    rewritten: the function is called with a runner that records its SQL)."""
    seen = []

    def run(sql, _p=None):
        seen.append(sql)
        return NO_ROWS

    engine_buckets(run, totals, None, params, 2, 1, inline=True, positive=True)
    return seen[0]


def variants(k_top: int) -> dict[str, str]:
    lo, hi = DEFAULT_BOUNDS
    w = f"({clamp_sql('salary', lo, hi)})::DOUBLE"
    rows = f"(SELECT {w} AS w FROM people) AS r"
    totals = (f"SELECT (w < 0)::INTEGER AS p, abs(w) AS c FROM (SELECT {w} AS w FROM people) "
              "AS t WHERE w <> 0")
    params = params_for(1.0, 2, "node")  # ε = 1 split over the two parts, as the release does
    theta, beta = params["theta"], params["beta"]
    top = math.ceil(math.log(2 * hi / theta) / beta)
    th = [theta * math.exp(j * beta) / 2 for j in range(1, top + 1)]
    listed = "[" + ", ".join(repr(x) for x in th) + "]::DOUBLE[]"

    def tree(a: int, b: int) -> str:  # #{t : th[t] < c} over th[a:b]
        if a == b:
            return str(a)
        mid = (a + b) // 2
        return f"CASE WHEN c > {th[mid]!r}::DOUBLE THEN {tree(mid + 1, b)} ELSE {tree(a, mid)} END"

    return {
        "plain SUM(salary)": "SELECT sum(salary) FROM people",
        "clamped rows, summed": f"SELECT sum(c) FROM ({totals}) AS t",
        "bucket pass (the release's)": release_bucket_sql(totals, params),
        "histogram(c, thresholds)": f"SELECT p, histogram(c, {listed}) FROM ({totals}) AS t "
                                    "GROUP BY p",
        "exact bucket by a CASE tree": f"SELECT p, {tree(0, len(th))} AS k, count(*), "
                                       f"sum(1.0 / c), sum(c) FROM ({totals}) AS t GROUP BY ALL",
        f"top-K lists (K = {k_top})": f"SELECT max(w, {k_top}), min(w, {k_top}) FROM {rows}",
        "one ungrouped pass": "SELECT count_if(w > 0), count_if(w < 0), sum(greatest(w, 0.0)), "
                              f"sum(least(w, 0.0)), max(w), min(w) FROM {rows}",
        "FILTER aggregates": "SELECT count(*) FILTER (WHERE w > 0), count(*) FILTER "
                             "(WHERE w < 0), sum(w) FILTER (WHERE w > 0), sum(w) FILTER "
                             f"(WHERE w < 0) FROM {rows} WHERE w <> 0",
        "Σ min(c, Δ̂) (X, second pass)": f"SELECT p, sum(least(c, 2.0e5)) FROM ({totals}) AS t "
                                        "GROUP BY p",
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10**7)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args(argv)
    if args.smoke:
        args.rows, args.repeats = 10**4, 1
    con = duckdb.connect()
    con.execute("CREATE TABLE people(id INTEGER PRIMARY KEY, salary DOUBLE)")
    con.execute("INSERT INTO people SELECT range::INTEGER, (hash(range * 3 + 2) % 120000)::DOUBLE "
                f"FROM range({args.rows})")
    print(f"\n## One pass of DuckDB SQL per piece of an unbounded SUM ({args.rows:,} rows, "
          f"median of {args.repeats})\n")
    print("| query | wall | CPU | CPU / plain |")
    print("|---|---|---|---|")
    base = None
    for name, sql in variants(3000).items():
        con.execute(sql).fetchall()
        wall, cpu = [], []
        for _ in range(args.repeats):
            t, c = time.perf_counter(), time.process_time()
            con.execute(sql).fetchall()
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        w, c = statistics.median(wall), statistics.median(cpu)
        base = base or c
        print(f"| {name} | {w * 1e3:.1f} ms | {c * 1e3:.1f} ms | {c / base:.1f}× |", flush=True)
    print(f"\n(1-minute load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
