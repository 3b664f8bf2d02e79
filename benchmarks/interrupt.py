"""How promptly the clock and a cancel stop a release (issue 26): prints a table.

* **clock**: a private COUNT whose DuckDB step (a 200,000² cross product no pair passes) would
  take many minutes, under ``release_seconds = S`` and, separately, ``release_time_limit = S``:
  the wall time of the release (it returns the data-independent fallback) and its overrun past S;
* **cancel, DuckDB**: the same release cancelled from another thread 0.3 s in: the time from
  ``con.cancel()`` to the ``StatementCancelled``;
* **cancel, LP**: a node-private path count on a 40,000-edge random graph with the plain LPs
  (``_lp.CUTS = False``: long PDLP solves), cancelled while an LP runs.

Run: ``python benchmarks/interrupt.py [repeats]`` (default 3; ``--smoke``: one repeat at 0.5 s).
"""

from __future__ import annotations

import sys
import threading
import time

import provsql_dp
import provsql_dp.mechanisms.recursive._lp as lp
from provsql_dp.errors import StatementCancelled

SLOW = "SELECT COUNT(*) FROM t a JOIN t b ON (a.x * b.x + a.id) % 1000003 = 1000004 WITH EPSILON 1"
PATHS = "SELECT COUNT(*) FROM e a JOIN e b ON a.dst = b.src WITH EPSILON 1"


def slow_db():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE t AS SELECT i AS id, i % 1000 AS x FROM range(200000) r(i)")
    con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 1000")
    return con


def graph_db():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE e AS SELECT DISTINCT least(a, b) AS src, greatest(a, b) AS dst "
                "FROM (SELECT (hash(i) % 1000)::INT AS a, (hash(i + 1000000) % 1000)::INT AS b "
                "FROM range(40000) r(i)) WHERE a <> b")
    con.execute("PROTECT TABLE e BY (src, dst) AS node; SET PRIVACY BUDGET 1000")
    return con


def clock(setting: str, seconds: float) -> float:
    con = slow_db()
    setattr(con, setting, seconds)
    t = time.monotonic()
    con.execute(SLOW).fetchall()
    return time.monotonic() - t


def cancel_latency(con, sql: str, ready) -> float:
    called = {}

    def cancel():
        while not ready():
            time.sleep(0.005)
        called["at"] = time.monotonic()
        con.cancel()

    th = threading.Thread(target=cancel)
    th.start()
    try:
        con.execute(sql)
    except StatementCancelled:
        pass
    th.join()
    return time.monotonic() - called["at"]


def main(repeats: int = 3, limits=(0.5, 1.0, 2.0)) -> None:
    print(f"{'measure':<44} {'S':>5} {'min':>8} {'max':>8}")
    for setting in ("release_seconds", "release_time_limit"):
        for s in limits:
            over = [clock(setting, s) - s for _ in range(repeats)]
            print(f"{'clock ' + setting + ': overrun past S (s)':<44} {s:>5g} "
                  f"{min(over):>8.3f} {max(over):>8.3f}")
    con = slow_db()
    lat = []
    for _ in range(repeats):
        start = time.monotonic()
        lat.append(cancel_latency(con, SLOW, lambda: time.monotonic() - start > 0.3))
    print(f"{'cancel, DuckDB step: latency (s)':<44} {'':>5} {min(lat):>8.3f} {max(lat):>8.3f}")
    lp.CUTS = False
    con = graph_db()
    lat = [cancel_latency(con, PATHS, lambda: bool(con._cancel._solvers)) for _ in range(repeats)]
    print(f"{'cancel, LP release: latency (s)':<44} {'':>5} {min(lat):>8.3f} {max(lat):>8.3f}")


if __name__ == "__main__":
    if "--smoke" in sys.argv[1:]:  # one repeat of one limit: seconds (CI)
        main(1, (0.5,))
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
