"""Benchmark: stated vs observed coverage of the released intervals, per route (issue 13).

Every released number carries an interval (``cursor.privacy.intervals(p)``, the same numbers the
shell, the demo and ``fetchdf()`` show; :mod:`provsql_dp.privacy.intervals`) that holds, with
probability ≥ p, the statistic its ``covers`` text names: the true answer, or for a SUM with
declared bounds the sum of the clamped values. This script releases each configuration
``--releases`` times (≥ 200), counts how often the interval holds that statistic, and prints
stated vs observed coverage. Routes:

* demo data (``provsql_dp.interfaces.example_data``): Laplace COUNT and bounded SUM on the
  row-per-person ``employees``, a Laplace GROUP BY through the public ``departments`` (one
  release per group), the recursive LPs on a self-join (pairs of colleagues) and on the karate
  club's friendship triangles (node privacy);
* everyday tables: the single-owner recursive closed form on people ⋈ visits, Blowfish
  histograms under a line policy (linear strategy: honest) — and a cumulative count whose
  isotonic consistency makes its interval *noise only* (shown, flagged, not claimed);
* paper graphs (``/work/shared/data/graphs``, skipped when absent): triangles with node
  privacy through ``provsql_dp.graph.count`` on 1138_bus and netscience.

Intervals are read after post-processing (COUNTs as nonnegative integers, the interval clipped
the same way): what a user sees. ``exact`` is the coverage computed from the discrete Laplace law
where it is a closed form (Laplace routes: ``Pr[|K| ≤ k]``; recursive routes: the lower bound
``Pr[K ≤ k]``, which holds whatever the truncation). ``ok`` is "yes" when observed ≥ stated, and
"within noise" when observed is below stated by less than 2.33 binomial standard errors (a
one-sided 1 % test: with n = 200 and p = 0.95 one standard error is 1.5 points); anything else is
a bug to fix.

Usage::

    python benchmarks/coverage.py                 # 200 releases per configuration, p = 0.95
    python benchmarks/coverage.py --releases 400 --graphs ""
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # this checkout's provsql_dp, not an installed one
    sys.path.insert(0, str(ROOT))

import provsql_dp  # noqa: E402
from provsql_dp.interfaces import example_data  # noqa: E402
from provsql_dp.privacy.intervals import covers as covers_of  # noqa: E402
from provsql_dp.privacy.intervals import interval_of  # noqa: E402

GRAPHS = Path("/work/shared/data/graphs")


def dlap_within(noise_units, k: int, two_sided: bool) -> float:
    """``Pr[|K| ≤ k]`` (or ``Pr[K ≤ k]``) for ``K ~ DLap(λ)``: exact closed forms."""
    a = math.exp(-1.0 / float(noise_units))
    upper_tail = a ** (k + 1) / (1 + a)  # Pr[K > k]
    return 1 - 2 * upper_tail if two_sided else 1 - upper_tail


def inside(iv, truth) -> bool:
    lo, hi = iv
    return (lo is None or lo <= truth + 1e-9 * max(1.0, abs(truth))) and \
           (hi is None or truth <= hi + 1e-9 * max(1.0, abs(truth)))


def sql_config(con, sql: str, truths: list, n: int, p: float):
    """Run ``sql`` until ``n`` releases (one per group); the fraction whose interval holds."""
    hits = total = 0
    covers = ""
    t = time.perf_counter()
    while total < n:
        cur = con.execute(sql)
        cur.fetchall()
        ivs = cur.privacy.intervals(p)
        covers = cur.privacy.covers()[0]
        for (iv,), truth in zip(ivs, truths):
            hits += inside(iv, truth)
            total += 1
    return hits, total, covers, time.perf_counter() - t, cur.privacy.releases[0]


def exact_coverage(release, p: float):
    """The exact coverage from the discrete law (see the module docstring), or None."""
    rel = getattr(release, "release", release)  # a post-processed COUNT: its raw release
    mech = getattr(rel, "mechanism", "")
    if mech == "laplace":
        plan = rel.plan
        b = rel.noise_bound(p)
        k = int(round((b - (max(plan.grid - 1, 0) if rel.integer else plan.grid)) / plan.grid))
        return dlap_within(plan.noise_units, k, True)
    if mech == "recursive" and not rel.parts:
        plan = rel.plan
        lo, _ = rel.interval(p)
        k = int(round((rel.value - lo) / plan.grid))
        return dlap_within(plan.noise_units, k, False)
    return None


def demo_configs(n: int, p: float, seed: int):
    con = provsql_dp.connect(":memory:")
    con._rng = np.random.default_rng(seed)
    example_data.load(con)
    con.execute("PROTECT TABLE employees; PROTECT TABLE friendship BY (src, dst) AS member")
    con.execute("SET BOUNDS ON employees (salary) BETWEEN 0 AND 300000")
    con.execute("SET PRIVACY BUDGET 1000000")
    eps = 0.5
    truth = lambda sql: [r[-1] for r in con.execute(sql).fetchall()]  # noqa: E731
    q_count = "SELECT COUNT(*) FROM employees WHERE salary > 100000"
    q_sum = "SELECT SUM(salary) FROM employees"
    clamped = "SELECT SUM(LEAST(GREATEST(salary, 0), 300000)) FROM employees"
    q_group = ("SELECT d.name, COUNT(*) FROM employees e JOIN departments d ON e.dept_id = d.id "
               "GROUP BY d.name")
    groups = con.execute(f"{q_group} WITH EPSILON 1").fetchall()  # the public list of groups
    true_groups = dict(con.execute(q_group).fetchall())
    q_pairs = ("SELECT COUNT(*) FROM employees a JOIN employees b ON a.dept_id = b.dept_id "
               "AND a.id < b.id")
    from provsql_dp.interfaces.demo import TRIANGLES  # noqa: PLC0415
    yield "demo", "laplace COUNT", sql_config(con, f"{q_count} WITH EPSILON {eps}", truth(q_count), n, p)
    yield "demo", "laplace bounded SUM", sql_config(con, f"{q_sum} WITH EPSILON {eps}", truth(clamped), n, p)
    yield "demo", "laplace GROUP BY (per group)", sql_config(
        con, f"{q_group} WITH EPSILON {eps}", [true_groups.get(g[0], 0) for g in groups], n, p)
    yield "demo", "recursive LPs: colleague pairs", sql_config(
        con, f"{q_pairs} WITH EPSILON {eps}", truth(q_pairs), n, p)
    yield "demo", "recursive LPs: karate triangles (node)", sql_config(
        con, f"{TRIANGLES} WITH EPSILON {eps}", truth(TRIANGLES), n, p)


def everyday_configs(n: int, p: float, seed: int):
    con = provsql_dp.connect(":memory:")
    con._rng = np.random.default_rng(seed)
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, age INT, city VARCHAR)")
    con.execute("INSERT INTO people SELECT range, (hash(range) % 60)::INT, 'c' || (range % 7) "
                "FROM range(2000)")
    con.execute("CREATE TABLE visits(pid INT, place INT)")
    con.execute("INSERT INTO visits SELECT hash(range) % 2000, range % 13 FROM range(6000)")
    con.execute("PROTECT TABLE people; PROTECT TABLE visits BY (pid)")
    con.execute("SET PRIVACY BUDGET 1000000")
    q_visits = "SELECT COUNT(*) FROM visits WHERE place < 5"
    yield "everyday", "single-owner recursive COUNT", sql_config(
        con, f"{q_visits} WITH EPSILON 0.5", [con.execute(q_visits).fetchone()[0]], n, p)
    con.execute("CREATE POLICY age_line ON people (age) AS LINE DOMAIN [0, 60) WIDTH 10")
    q_hist = "SELECT age, COUNT(*) FROM people GROUP BY age"
    truth = np.bincount(np.array([r[0] for r in con.execute("SELECT age FROM people").fetchall()])
                        // 10, minlength=6).tolist()
    yield "everyday", "blowfish histogram (line policy)", sql_config(
        con, f"{q_hist} WITH EPSILON 0.5", truth, n, p)
    q_range = "SELECT COUNT(*) FROM people WHERE age BETWEEN 10 AND 39"
    yield "everyday", "blowfish range (line policy)", sql_config(
        con, f"{q_range} WITH EPSILON 0.5", [con.execute(q_range).fetchone()[0]], n, p)


def graph_configs(n: int, p: float, seed: int, names: list[str]):
    import networkx as nx  # noqa: PLC0415

    from provsql_dp import graph  # noqa: PLC0415
    from provsql_dp.graph.load import read_edge_list  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    for name in names:
        path = GRAPHS / f"{name}.edges"
        if not path.exists():
            print(f"(skipped {name}: {path} is absent)")
            continue
        src, dst, _ = read_edge_list(path)
        G = nx.Graph()
        G.add_edges_from(zip(src.tolist(), dst.tolist()))
        G.remove_edges_from(list(nx.selfloop_edges(G)))
        tri = sum(nx.triangles(G).values()) // 3
        hits, t = 0, time.perf_counter()
        for _ in range(n):
            rel = graph.count(G, "triangle", privacy="node", epsilon=1.0, rng=rng, progress=False)
            hits += inside(interval_of(rel, p), tri)
        yield "graph", f"{name} triangles (node, recursive)", (
            hits, n, covers_of(rel), time.perf_counter() - t, rel)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--releases", type=int, default=200)
    ap.add_argument("--coverage", type=float, default=0.95)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--graphs", default="1138_bus,netscience",
                    help="comma-separated graph names under /work/shared/data/graphs ('' for none)")
    args = ap.parse_args(argv)
    n, p = max(200, args.releases), args.coverage
    print(f"coverage of the released {p:.0%} intervals, {n} releases per configuration "
          f"(seed {args.seed}; the machine is shared, times are indicative)")
    head = f"{'data':<9} {'route':<40} {'stated':>6} {'exact':>6} {'observed':>8} {'n':>5} {'ok':>12} {'time s':>7}  covers"
    print(head)
    print("-" * len(head))
    names = [g for g in args.graphs.split(",") if g]
    bad = []
    for source in (demo_configs(n, p, args.seed), everyday_configs(n, p, args.seed),
                   graph_configs(n, p, args.seed, names)):
        for data, route, (hits, total, covers, secs, rel) in source:
            obs = hits / total
            ex = exact_coverage(rel, p)
            se = math.sqrt(p * (1 - p) / total)
            noise_only = covers.startswith("noise only") or covers.startswith("nothing")
            ok = ("n/a (noise only)" if noise_only else "yes" if obs >= p
                  else "within noise" if obs >= p - 2.33 * se else "NO")
            if ok == "NO":
                bad.append(route)
            exs = "" if ex is None else f"{ex:.4f}"
            print(f"{data:<9} {route:<40} {p:>6.2f} {exs:>6} {obs:>8.4f} {total:>5} {ok:>12} "
                  f"{secs:>7.1f}  {covers[:60]}", flush=True)
    if bad:
        raise SystemExit(f"coverage below the stated level: {', '.join(bad)}")


if __name__ == "__main__":
    main()
