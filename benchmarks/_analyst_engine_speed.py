"""Benchmark section (imported by ``benchmarks/analyst_sql.py``): unbounded ``SUM`` and ``COUNT``
at engine speed, next to plain DuckDB.

Targets (issue 28, item 7): an unbounded ``SUM`` (recursive mechanism, single-owner closed form)
over 10^7 rows ≤ 3× plain DuckDB on the same query; ``COUNT`` ≤ 1.5× (moonshot 1.2×).

Workload, built inside DuckDB from hash-based columns (nothing in the repository):

* ``people(id PRIMARY KEY, salary DOUBLE)``, N rows, ``PROTECT TABLE people`` (each row one
  participant): ``SUM(salary)`` without bounds is a signed SUM released by the closed form from
  the rows themselves (no ``GROUP BY`` owner); ``COUNT(*) … WHERE`` goes to the Laplace mechanism;
* ``visits(pid, amount)``, N rows of N/10 people, ``PROTECT TABLE visits BY (pid) AS people``:
  ``SUM(amount)`` and ``COUNT(*)`` group the rows by owner inside DuckDB first;
* ``orders(o_orderkey PRIMARY KEY, o_custkey)`` (N/10) and ``lineitem(l_orderkey, l_qty)`` (N),
  protected along foreign keys (``lineitem BY (l_orderkey) REFERENCES orders``,
  ``orders BY (o_custkey) REFERENCES customer``): the owner is found by a join in DuckDB.

How it measures: one subprocess per query (the tables it needs, then one warm-up of each side
and ``repeats`` interleaved rounds of plain DuckDB and provsql_dp; medians of wall times); the
ratio is median(provsql_dp) / median(plain) of wall times (the target's figure); the CPU ratio is
the same of the process's CPU seconds (``time.process_time``: DuckDB's threads included), which a
loaded machine moves less. Peak memory: the process's resident high-water mark
(``VmHWM``) after resetting it (``/proc/self/clear_refs``) once the tables are built — the
private query's peak, data included. Run it alone: ``python benchmarks/_analyst_engine_speed.py
[--smoke]``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: the checkout whose provsql_dp is measured (another one's, to compare before and after)
CODE = Path(os.environ.get("PROVSQL_DP_CODE", REPO))

QUERIES = [
    ("count_where", "COUNT(*) WHERE (Laplace)", ("people",),
     "SELECT COUNT(*) FROM people WHERE salary > 50000"),
    ("sum_rows", "SUM(salary) unbounded, row per person", ("people",),
     "SELECT SUM(salary) FROM people"),
    ("count_owned", "COUNT(*) of visits (10 per person)", ("visits",),
     "SELECT COUNT(*) FROM visits WHERE amount > 50"),
    ("sum_owned", "SUM(amount) unbounded, visits", ("visits",),
     "SELECT SUM(amount) FROM visits"),
    ("sum_fk", "SUM(l_qty) unbounded, lineitem via FK", ("fk",),
     "SELECT SUM(l_qty) FROM lineitem"),
]
SUM_TARGET, COUNT_TARGET = 3.0, 1.5


def _build(con, n: int, tables) -> None:
    duck = con._duck
    if "people" in tables:
        duck.execute("CREATE TABLE people(id INTEGER PRIMARY KEY, salary DOUBLE)")
        duck.execute(f"INSERT INTO people SELECT range::INTEGER, "
                     f"(hash(range * 3 + 2) % 120000)::DOUBLE FROM range({n})")
        con.execute("PROTECT TABLE people")
    if "visits" in tables:
        duck.execute("CREATE TABLE visits(pid INTEGER, amount DOUBLE)")
        duck.execute(f"INSERT INTO visits SELECT (hash(range * 11 + 5) % {max(1, n // 10)})"
                     f"::INTEGER, (hash(range * 3 + 1) % 100)::DOUBLE FROM range({n})")
        duck.execute("CREATE TABLE people(id INTEGER PRIMARY KEY)")
        con.execute("PROTECT TABLE people")
        con.execute("PROTECT TABLE visits BY (pid) AS people")
    if "fk" in tables:
        m = max(1, n // 10)
        duck.execute("CREATE TABLE customer(c_custkey INTEGER PRIMARY KEY)")
        duck.execute(f"INSERT INTO customer SELECT range FROM range({max(1, m // 10)})")
        duck.execute("CREATE TABLE orders(o_orderkey INTEGER PRIMARY KEY, o_custkey INTEGER)")
        duck.execute(f"INSERT INTO orders SELECT range, hash(range) % {max(1, m // 10)} "
                     f"FROM range({m})")
        duck.execute("CREATE TABLE lineitem(l_orderkey INTEGER, l_qty DOUBLE)")
        duck.execute(f"INSERT INTO lineitem SELECT hash(range * 7) % {m}, "
                     f"(hash(range) % 50)::DOUBLE FROM range({n})")
        con.execute("PROTECT TABLE customer")
        con.execute("PROTECT TABLE orders BY (o_custkey) REFERENCES customer")
        con.execute("PROTECT TABLE lineitem BY (l_orderkey) REFERENCES orders")
    con.execute("SET PRIVACY BUDGET 1e9")


def _peak_reset() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_mb() -> float:
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(key: str, n: int, repeats: int) -> dict:
    """One query in this process: plain and private medians (s), peak memory (MB)."""
    sys.path.insert(0, str(CODE))
    import provsql_dp

    _, label, tables, sql = next(q for q in QUERIES if q[0] == key)
    con = provsql_dp.connect()
    if os.environ.get("PROVSQL_DP_BENCH_NATIVE") == "1" and not getattr(con, "_native", False):
        raise SystemExit("PROVSQL_DP_BENCH_NATIVE=1 but the connection did not load pdp_buckets "
                         "(provsql-dp build-native)")
    _build(con, n, tables)
    private = f"{sql} WITH EPSILON 1"
    _peak_reset()
    con.execute(private).fetchall()
    peak = _peak_mb()
    con._duck.execute(sql).fetchall()
    plain_t, priv_t, plain_c, priv_c = [], [], [], []
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        con._duck.execute(sql).fetchall()
        plain_t.append(time.perf_counter() - t)
        plain_c.append(time.process_time() - c)
        t, c = time.perf_counter(), time.process_time()
        con.execute(private).fetchall()
        priv_t.append(time.perf_counter() - t)
        priv_c.append(time.process_time() - c)
    return {"key": key, "label": label, "n": n, "plain": statistics.median(plain_t),
            "private": statistics.median(priv_t), "plain_cpu": statistics.median(plain_c),
            "private_cpu": statistics.median(priv_c), "peak_mb": peak,
            "mechanism": con.execute(private).privacy.mechanism}


def engine_speed_section(smoke: bool) -> list[dict]:
    """Print the table (10^5 rows with ``smoke``, else 10^7) and return its rows."""
    n, repeats = (10**5, 3) if smoke else (10**7, 5)
    print(f"\n## Unbounded SUM and COUNT at engine speed ({n:,} rows, ε = 1, median of "
          f"{repeats}; targets: SUM ≤ {SUM_TARGET}×, COUNT ≤ {COUNT_TARGET}× plain DuckDB)\n")
    print(f"| query | mechanism | plain DuckDB | provsql_dp | ratio | CPU ratio | peak memory | "
          f"target |")
    print("|---|---|---|---|---|---|---|---|")
    rows = []
    for key, label, _, _ in QUERIES:
        proc = subprocess.run([sys.executable, __file__, "--child", key, str(n), str(repeats)],
                              capture_output=True, text=True, cwd=REPO)
        if proc.returncode != 0:
            print(f"| {label} | failed: {proc.stderr.strip().splitlines()[-1:]} | | | | | | |")
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        ratio = r["private"] / r["plain"]
        target = COUNT_TARGET if key.startswith("count") else SUM_TARGET
        met = "met" if ratio <= target else "NOT met"
        print(f"| {label} | {r['mechanism']} | {r['plain'] * 1000:.1f} ms | "
              f"{r['private'] * 1000:.1f} ms | {ratio:.1f}× | {r['private_cpu'] / r['plain_cpu']:.1f}× | "
              f"{r['peak_mb']:.0f} MB | "
              f"≤ {target}× {met} |")
        rows.append({**r, "ratio": ratio, "met": met})
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\n(1-minute load average at the end: {load:.1f} on {os.cpu_count()} CPUs; the CPU "
          f"ratio — CPU seconds of the process, DuckDB's threads included — moves less with "
          f"the load than the wall-clock ratio, the target's)")
    return rows


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(measure(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))
    else:
        engine_speed_section("--smoke" in sys.argv)
