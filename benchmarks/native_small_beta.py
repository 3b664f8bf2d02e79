"""Benchmark: the SQL bucket pass against the native one (``pdp_buckets``) as β shrinks.

With a small β nearly every distinct total is its own bucket (β = 1e-6: ~800 000 buckets of
10^6 totals), the native pass's per-row code takes a logarithm and a hash-table insert per
total, and the fine cells' block code is off (β < ~0.0078, ``pdp_params.h``). This prints, per
β, the bucket rows and the median time of each pass (``engine_buckets`` on the direct path of
``x`` = e^U(0, 20), one DuckDB table, 2 threads), and their ratio: the table behind the public
rule :data:`provsql_dp.privacy.engine_buckets._NATIVE_MIN_BETA`.

    python benchmarks/native_small_beta.py [--rows 1000000] [--repeats 5] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from provsql_dp.privacy import native
from provsql_dp.privacy.engine_buckets import engine_buckets
from provsql_dp.provenance.clamp import clamp_sql

BETAS = (1e-6, 1e-5, 1e-4, 3e-4, 1e-3, 3e-3, 0.0078, 0.01, 0.1)


def _time(duck, totals, params, nat, repeats):
    times, rows = [], 0
    for _ in range(repeats):
        got = []

        def run(sql, p=None, got=got):
            data = duck.execute(sql, p).fetchnumpy()
            got.append(native.decode(data) if nat is not None and not got else data)
            return data

        t = time.perf_counter()
        engine_buckets(run, totals, None, params, 2, 1, inline=True, native=nat)
        times.append(time.perf_counter() - t)
        rows = len(got[0]["n"])
    return statistics.median(times), rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10**6)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args(argv)
    if args.smoke:
        args.rows, args.repeats = 10**4, 1
    duck, loaded = native.open_duckdb(":memory:", config={"threads": 2})
    if not loaded:
        print("pdp_buckets is not built (provsql-dp build-native): nothing to compare")
        return
    duck.execute(f"CREATE TABLE r AS SELECT exp((hash(range) % 2000000000)::DOUBLE / 1e8) "
                 f"* (CASE WHEN range % 3 = 0 THEN -1 ELSE 1 END) AS x FROM range({args.rows})")
    lo, hi = -1e12, 1e12
    w = clamp_sql("x", lo, hi)
    totals = (f"SELECT (w < 0)::INTEGER AS p, abs(w) AS c FROM (SELECT ({w})::DOUBLE AS w "
              "FROM r) AS t WHERE w <> 0")
    print(f"\nbucket pass, {args.rows:,} rows x = ±e^U(0, 20), median of {args.repeats} "
          f"(load average {os.getloadavg()[0]:.1f})\n")
    print("| β | bucket rows | SQL pass | native | native / SQL |")
    print("|---|---|---|---|---|")
    for beta in BETAS:
        params = {"theta": 1.0, "beta": beta, "mu": 0.5, "eps2": 0.5}
        nat = native.direct_sql("SELECT * FROM r", "x", lo, hi, True, params)
        t_sql, n_sql = _time(duck, totals, params, None, args.repeats)
        t_nat, n_nat = _time(duck, totals, params, nat, args.repeats)
        assert n_sql == n_nat, (beta, n_sql, n_nat)
        print(f"| {beta:g} | {n_nat:,} | {t_sql * 1000:.0f} ms | {t_nat * 1000:.0f} ms | "
              f"{t_nat / t_sql:.2f} |")


if __name__ == "__main__":
    main()
