"""Benchmark: the timing attack on the engine bucket route of an unbounded SUM (red team, h49attack).

:mod:`provsql_dp.privacy.engine_buckets` summarises the per-participant totals of an unbounded
``SUM`` in buckets; a bucket that straddles a threshold ``W_j = θe^{jβ}/2`` of the Δ search
(public: θ = 1, β = 0.1 by default) is read exactly by one more pass over the totals. The
analyst puts participant 1's total exactly on ``W_j`` when a secret holds::

    SELECT SUM(CASE WHEN id = 1 AND salary = 50001 THEN <W_j> ELSE x END) FROM t WITH EPSILON 1

and reads the secret from the running time. Two neighbouring databases (participant 1 with
salary 50001, or with salary 1 — the statement is the same), alternated, ``--repeats`` releases
each; the table prints the exact re-reads and the median time of each, their ratio and the load
average (the machine is shared). ``tests/system/test_red_team_bucket_passes.py`` counts the
re-reads (deterministic); this script shows what they cost.

    python benchmarks/bucket_pass_timing.py [--rows 3000000] [--repeats 5] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import provsql_dp
import provsql_dp.privacy.fast_path as fast_path
from provsql_dp.mechanisms.recursive.single_owner import search_range

READS: list[int] = []


def _count_exact_reads() -> None:
    inner = fast_path.engine_buckets

    def counting(run, sql, params, p, *a, **k):
        if len(a) >= 3 and a[2] is not None:
            real = a[2]
            a = a[:2] + ((lambda *x, **y: READS.append(1) or real(*x, **y)),) + a[3:]
        return inner(run, sql, params, p, *a, **k)
    fast_path.engine_buckets = counting


def database(rows: int, secret_holds: bool):
    con = provsql_dp.connect()
    con.execute("CREATE TABLE t(id INT PRIMARY KEY, salary INT, x DOUBLE)")
    con.execute(f"INSERT INTO t SELECT range + 2, 40000, (range * 7919) % 1000 / 100.0 "
                f"FROM range({rows})")
    con.execute(f"INSERT INTO t VALUES (1, {50001 if secret_holds else 1}, 0.0)")
    con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 1e6")
    con._rng = np.random.default_rng(1)
    return con


def threshold() -> float:
    """``W_3`` of the Δ search (θ = 1, β = 0.1): public, whatever the data."""
    _, (js, w, gb) = search_range(20.0, 1000, 1.0, 0.1)
    return float(w[2])


def release(con, w: float) -> tuple[int, float]:
    READS.clear()
    t0 = time.perf_counter()
    con.execute(f"SELECT SUM(CASE WHEN id = 1 AND salary = 50001 THEN {w!r} ELSE x END) "
                "FROM t WITH EPSILON 1").fetchall()
    return len(READS), time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=3_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--smoke", action="store_true", help="a tiny run (seconds)")
    a = ap.parse_args()
    rows, repeats = (5_000, 1) if a.smoke else (a.rows, a.repeats)
    _count_exact_reads()
    w = threshold()
    dbs = {s: database(rows, s) for s in (True, False)}
    for s in dbs:
        release(dbs[s], w)  # warm-up
    times = {True: [], False: []}
    reads = {True: set(), False: set()}
    for _ in range(repeats):
        for s in (True, False):
            n, t = release(dbs[s], w)
            times[s].append(t)
            reads[s].add(n)
    load = os.getloadavg()
    print(f"unbounded SUM over {rows:,} rows, W = {w!r}, {repeats} releases each "
          f"(load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f})")
    print(f"{'participant 1':<24} {'exact re-reads':>15} {'median s':>9} {'min s':>7} {'max s':>7}")
    for s, label in ((True, "salary = 50001 (secret)"), (False, "salary = 1")):
        ts = times[s]
        print(f"{label:<24} {','.join(map(str, sorted(reads[s]))):>15} {np.median(ts):9.3f} "
              f"{min(ts):7.3f} {max(ts):7.3f}")
    print(f"ratio of medians: {np.median(times[True]) / np.median(times[False]):.2f}")


if __name__ == "__main__":
    main()
