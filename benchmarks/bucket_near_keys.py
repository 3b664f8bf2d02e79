"""Benchmark: near-boundary totals in the engine bucket pass, keyed by cell (h55hard).

An analyst can push many distinct per-participant totals into the greedy slack of a threshold
``W_j`` of the Δ search (``CASE WHEN <secret> THEN W_j + id·ε …``). When the bucket pass
(:mod:`provsql_dp.privacy.engine_buckets`) grouped such near totals by their exact value, its
hash table — and the rows returned to Python — grew with their number; keyed by their cell among
the boundaries around them (``buckets.near_key_sql``) the bucket rows stay a function of the
boundaries. The table prints, per number of pushed totals among ``--rows`` totals, the bucket
rows the pass returns and its median time (what remains is the per-row cost of classifying a
near total, as for any expression an analyst writes).

    python benchmarks/bucket_near_keys.py [--rows 3000000] [--repeats 5] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import time

import duckdb
import numpy as np

from provsql_dp.mechanisms.recursive.single_owner import search_range
from provsql_dp.privacy.engine_buckets import engine_buckets

PARAMS = {"theta": 1.0, "beta": 0.1, "mu": 0.5, "eps2": 0.5}  # ε = 1, one part


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=3_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--smoke", action="store_true", help="a tiny run (seconds)")
    a = ap.parse_args()
    rows, repeats = (20_000, 1) if a.smoke else (a.rows, a.repeats)
    _, (_, w, gb) = search_range(2000.0, 10**7, 1.0, PARAMS["beta"])
    con = duckdb.connect()
    load = os.getloadavg()
    print(f"bucket pass over {rows:,} totals, {repeats} runs each "
          f"(load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f})")
    print(f"{'pushed into (W_5, gb_5]':>24} {'bucket rows':>12} {'median s':>9} {'min s':>7}")
    for n in sorted({0, rows // 30, rows // 3}):
        con.execute(f"CREATE OR REPLACE TABLE tot AS SELECT CASE WHEN range < {n} THEN "
                    f"{float(w[4])!r} + {float(gb[4] - w[4])!r} * (range + 1) / ({n} + 2) "
                    f"ELSE (range * 7919) % 100000 / 100.0 END AS c0 FROM range({rows})")
        got, ts = [], []

        def run(sql, p=None):
            out = con.execute(sql, p).fetchnumpy()
            got.append(len(out["n"]))
            return out

        for _ in range(repeats):
            t0 = time.perf_counter()
            engine_buckets(run, "SELECT 0 AS g, c0 FROM tot", None, PARAMS, 1, 1)
            ts.append(time.perf_counter() - t0)
        print(f"{n:>24,} {got[0]:>12,} {np.median(ts):9.3f} {min(ts):7.3f}")


if __name__ == "__main__":
    main()
