"""Benchmark: can one participant's row change the running time of the native bucket pass?
(red team h64native, on the approach of ``benchmarks/bucket_pass_timing.py``).

``pdp_buckets`` (:mod:`provsql_dp.privacy.native`) has per-row paths of different cost: the cell
table (a total ≥ 1 away from every breakpoint: no logarithm), the logarithm and the near test,
the near key (eight ``exp``), the first use of a cell (a logarithm, four ``exp`` and, for the
first total ≥ 1, the table's allocation), a new bucket that makes a hash table double, and on
the block path the first total of a binade (its page of fine cells built: 2^12 comparisons and a
few ``cell_at``). The
analyst puts participant 1's total on one of them when a secret holds::

    SELECT SUM(CASE WHEN id = 1 AND salary = 50001 THEN <trigger> ELSE x END) FROM t WITH EPSILON 1

Two neighbouring databases (participant 1's salary 50001 or 1: the statement is the same),
alternated, ``--repeats`` releases each on the native pass; the table prints each trigger's
median times and their ratio, and the number of passes the release made (the same whatever the
data: no exact read).

    python benchmarks/native_bucket_pass_timing.py [--rows 1000000] [--repeats 7] [--smoke]
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

import provsql_dp
import provsql_dp.privacy.fast_path as fast_path
from provsql_dp.mechanisms.recursive.single_owner import search_range

PASSES: list[int] = []


def _count_passes() -> None:
    inner = fast_path.engine_buckets

    def counting(run, *a, **k):
        def counted(*x, **y):
            PASSES.append(1)
            return run(*x, **y)
        if len(a) >= 6 and a[5] is not None:  # run_exact
            real = a[5]
            a = a[:5] + ((lambda *x, **y: PASSES.append(1) or real(*x, **y)),) + a[6:]
        return inner(counted, *a, **k)
    fast_path.engine_buckets = counting


def triggers() -> dict[str, tuple[str, str]]:
    """(the weight of the other rows, participant 1's weight when the secret holds): public."""
    _, (js, w, gb) = search_range(20.0, 1000, 1.0, 0.1)
    return {
        "near key (on W_3)": ("(range * 7919) % 1000 / 100.0", repr(float(w[2]))),
        "cell table's first total >= 1": ("((range * 7919) % 1000 + 1) / 2000.0", "7.25"),
        "a new bucket (table grows)": ("exp(((range * 7919) % 128) * 0.1)", repr(math.exp(40.05))),
        "a fine page's first total": ("((range * 7919) % 1000 + 1000) * 1.0", "7.25e9"),
        "NaN (the rest)": ("(range * 7919) % 1000 / 100.0", "'nan'::DOUBLE"),
    }


def database(rows: int, others: str, secret_holds: bool):
    con = provsql_dp.connect()
    con.execute("CREATE TABLE t(id INT PRIMARY KEY, salary INT, x DOUBLE)")
    con._duck.execute(f"INSERT INTO t SELECT range + 2, 40000, {others} FROM range({rows})")
    con.execute(f"INSERT INTO t VALUES (1, {50001 if secret_holds else 1}, 3.0)")
    con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 1e6")
    con._rng = np.random.default_rng(1)
    return con


def release(con, trigger: str) -> tuple[int, float, str]:
    PASSES.clear()
    t0 = time.perf_counter()
    cur = con.execute(f"SELECT SUM(CASE WHEN id = 1 AND salary = 50001 THEN {trigger} ELSE x END) "
                      "FROM t WITH EPSILON 1")
    cur.fetchall()
    return len(PASSES), time.perf_counter() - t0, cur.privacy.bucket_pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--smoke", action="store_true", help="a tiny run (seconds)")
    a = ap.parse_args()
    rows, repeats = (5_000, 1) if a.smoke else (a.rows, a.repeats)
    if not provsql_dp.connect()._native:
        print("pdp_buckets is not loaded (provsql-dp build-native; PROVSQL_DP_NATIVE=0 turns it "
              "off): nothing to measure")
        return
    _count_passes()
    print(f"native bucket pass, {rows:,} rows, {repeats} releases per database")
    print(f"{'participant 1 when the secret holds':<32} {'passes':>7} {'secret s':>9} "
          f"{'other s':>8} {'ratio':>6}")
    for name, (others, trigger) in triggers().items():
        dbs = {s: database(rows, others, s) for s in (True, False)}
        for s in dbs:
            release(dbs[s], trigger)  # warm-up
        times, passes, kinds = {True: [], False: []}, set(), set()
        for _ in range(repeats):
            for s in (True, False):
                n, t, kind = release(dbs[s], trigger)
                times[s].append(t)
                passes.add(n)
                kinds.add(kind)
        assert kinds == {"native"}, kinds
        m1, m0 = np.median(times[True]), np.median(times[False])
        print(f"{name:<32} {','.join(map(str, sorted(passes))):>7} {m1:9.4f} {m0:8.4f} "
              f"{m1 / m0:6.3f}")
        for con in dbs.values():
            con.close()
    load = os.getloadavg()
    print(f"(load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; the machine is shared)")


if __name__ == "__main__":
    main()
