"""Benchmark: the timing and typing attacks of issue 26, on two neighbouring databases.

Each attack is a private statement run as an analyst on a *base* database and on a *neighbour*
that differs in one person (the one the statement's predicate singles out). The side-channel rule
says the outcome, the ε charged and the time must not tell them apart; the table prints both
times, their ratio, and what the analyst saw. Run it against any checkout to compare::

    PYTHONPATH=/path/to/checkout python benchmarks/side_channel_timing.py [--people N] [--repeats R]

Attacks
-------
* ``replace-k`` — ``CASE WHEN name = 'target' THEN length(replace(replace(… name …))) ELSE 0 END``,
  ``k`` nested ``replace`` that each grow a string 10× (the issue's timing oracle);
* ``regexp`` — two ``regexp_replace(…, '', 'xxxxxxxxxx', 'g')``: 11× per level;
* ``union`` — ``SELECT salary … WHERE <predicate> UNION ALL SELECT born …``: BIGINT ∪ DATE fails
  in DuckDB exactly when a row passes the predicate (the typing oracle: answer vs error);
* ``capped`` — the same growth as ``replace-2`` with ``left(…, 1000)`` at each step (accepted).

One run (2026-11-28, 2 cores shared with five other jobs, 2 000 people, fastest of 5 after a
warm-up), before (``main``) and after (branch ``h26t``)::

    before                                                 after
    attack     base s  neighbour s ratio outcome           base s  neighbour s ratio outcome
    replace-6   0.026     0.027     1.0  answer/answer      0.030     0.036     1.2  refused/refused
    replace-7   0.027     0.206     7.7  answer/answer      0.016     0.019     1.2  refused/refused
    regexp      0.020     0.021     1.1  answer/answer      0.015     0.026     1.6  refused/refused
    union       0.168     0.029     5.7  answer/DataError   0.027     0.031     1.1  refused/refused
    capped      0.020     0.053     2.6  answer/answer      0.051     0.056     1.1  answer/answer

(The shared machine adds tens of milliseconds of jitter: ratios below ~3 on these short runs are
noise. ``replace-7`` grows the target's 10-byte name to 100 MB; each further level is 10× more —
the issue's 20 s. ``union`` before: an answer on one database, an error on its neighbour.)
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import provsql_dp


def database(name: str, people: int, plant: bool):
    cur = provsql_dp.connect(name)
    cur.autocommit = True
    cur.execute("CREATE TABLE people(id INT PRIMARY KEY, name VARCHAR, salary BIGINT, born DATE)")
    cur.execute(f"INSERT INTO people SELECT i, 'p' || i, 40000 + i, DATE '1980-01-01' + CAST(i % 9000 AS INT) "
                f"FROM range({people}) t(i)")
    if plant:
        cur.execute("UPDATE people SET name = 'targetxxxx', salary = 1 WHERE id = 0")
    cur.execute("PROTECT TABLE people")
    cur.execute("SET PRIVACY BUDGET 1000000 FOR USER 'bench'")
    return cur


def nested_replace(levels: int, inner: str = "name") -> str:
    e = inner
    for _ in range(levels):
        e = f"replace({e}, 'x', 'xxxxxxxxxx')"
    return e


ATTACKS = {
    "replace-6": "SELECT COUNT(*) FROM people WHERE length(CASE WHEN name LIKE 'target%' THEN "
                 f"{nested_replace(6)} ELSE '' END) > 0 WITH EPSILON 0.001",
    "replace-7": "SELECT COUNT(*) FROM people WHERE length(CASE WHEN name LIKE 'target%' THEN "
                 f"{nested_replace(7)} ELSE '' END) > 0 WITH EPSILON 0.001",
    "regexp": "SELECT COUNT(*) FROM people WHERE length(CASE WHEN name LIKE 'target%' THEN "
              "regexp_replace(regexp_replace(name, '', 'xxxxxxxxxx', 'g'), '', 'xxxxxxxxxx', 'g') "
              "ELSE '' END) > 0 WITH EPSILON 0.001",
    "union": "SELECT COUNT(*) FROM (SELECT salary AS v FROM people WHERE salary = 1 UNION ALL "
             "SELECT born FROM people) u WITH EPSILON 0.001",
    "capped": "SELECT COUNT(*) FROM people WHERE length(CASE WHEN name LIKE 'target%' THEN "
              "replace(left(replace(left(name, 1000), 'x', 'xxxxxxxxxx'), 1000), 'x', 'xxxxxxxxxx') "
              "ELSE '' END) > 0 WITH EPSILON 0.001",
}


def run(name: str, sql: str, repeats: int) -> tuple[float, str]:
    times, outcome = [], ""
    for _ in range(repeats + 1):  # one warm-up
        an = provsql_dp.connect(name, role="analyst", user="bench")
        an._rng = np.random.default_rng(0)
        start = time.perf_counter()
        try:
            an.execute(sql).fetchall()
            outcome = "answer"
        except provsql_dp.Error as e:
            outcome = "refused" if isinstance(e, provsql_dp.ProgrammingError) else type(e).__name__
        times.append(time.perf_counter() - start)
        an.close()
    return min(times[1:]), outcome  # the least disturbed run: the machine is shared


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--people", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--smoke", action="store_true", help="100 people, 1 repeat: seconds (CI)")
    args = ap.parse_args()
    if args.smoke:
        args.people, args.repeats = 100, 1
    keep = [database(":memory:bench_base", args.people, False),
            database(":memory:bench_plant", args.people, True)]
    print(f"{'attack':<12} {'base s':>8} {'neighbour s':>12} {'ratio':>6}  outcome")
    for what, sql in ATTACKS.items():
        if args.only and what not in args.only:
            continue
        tb, ob = run(":memory:bench_base", sql, args.repeats)
        tn, on = run(":memory:bench_plant", sql, args.repeats)
        print(f"{what:<12} {tb:>8.3f} {tn:>12.3f} {max(tb, tn) / min(tb, tn):>6.1f}  {ob} / {on}")
    del keep


if __name__ == "__main__":
    main()
