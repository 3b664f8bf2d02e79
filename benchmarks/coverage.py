"""Benchmark: stated vs observed coverage of the released intervals, per route (issue 13).

Every released number carries an interval (``cursor.privacy.intervals(p)``, the same numbers the
shell, the demo, the web explorer and ``fetchdf()`` show; :mod:`provsql_dp.privacy.intervals`)
that holds, with probability ≥ p, the statistic its ``covers`` text names: the true answer, or
for a SUM/AVG with declared bounds the statistic of the values clamped to them. This script
releases each configuration many times (≥ 200; more where a release is cheap), counts how often
the interval holds that statistic, and prints stated vs observed coverage with a one-sided
binomial test of "true coverage ≥ stated":

* ``CP upper`` — the one-sided 99 % Clopper–Pearson upper bound of the true coverage: below the
  stated level means the coverage is demonstrably too low;
* ``p-value`` — ``Pr[Binomial(n, stated) ≤ hits]``: the chance of seeing this few hits if the
  coverage were exactly the stated one. ``ok`` is "yes" when ``p ≥ 0.001`` (about 1 % over the
  twenty-odd configurations, Bonferroni), "NO" otherwise — a bug to fix, and the script exits
  non-zero. (An exact 95 % interval observed over 200 draws falls below 0.95 about half of the
  time: that alone is not a failure, which is why the test is printed.)

``exact`` is the coverage computed from the discrete Laplace law where it is a closed form
(Laplace routes: ``Pr[|K| ≤ k]``; recursive routes: the lower bound ``Pr[K ≤ k]``, which holds
whatever the truncation). Intervals are read after post-processing (COUNTs as nonnegative
integers, the interval clipped the same way): what a user sees. Where one release has several
rows (GROUP BY, COUNT RANGES, cumulative counts) every row is counted; rows of one Blowfish
release can be correlated, which makes the binomial test approximate there (their coverage is
far above the stated level anyway). ``COUNT CUMULATIVE`` also reports the fraction of releases
whose *every* prefix was covered: its bound holds for all of them at once.

Configurations:

* **demo** (the bundled example database, as ``python -m provsql_dp.interfaces.demo`` runs it,
  ε = 1): every query of the demo — Laplace COUNT and bounded SUM on ``employees``, the Laplace
  GROUP BY through the public ``departments``, the recursive LPs on the karate club (node privacy:
  friendships, triangles, 2-paths, cross-faction edges; edge privacy: triangles) and on employee
  self-joins; plus R2T on the triangles;
* **everyday** (generated tables, one row per person and a visits table several rows per
  person): Laplace COUNT, SUM, AVG and GROUP BY (declared group keys); the single-owner closed
  form for COUNT and SUM over visits; Blowfish histogram, range, ``COUNT RANGES`` and
  ``COUNT CUMULATIVE`` (the ordered strategy, isotonic consistency) under a line policy;
* **graph** (``/work/shared/data/graphs``, skipped when absent): triangles with node and edge
  privacy through ``provsql_dp.graph.count`` on 1138_bus and netscience.

Usage::

    python benchmarks/coverage.py                    # writes benchmarks/coverage_measured.md
    python benchmarks/coverage.py --releases 400 --graphs "" --out ""
    python benchmarks/coverage.py --smoke            # seconds: 3 releases each, no table written

``--smoke`` (CI) runs every configuration three times, the graph part on the bundled karate
club, writes no table and does not enforce the binomial test (it needs the full run's ≥ 200
releases to mean anything): it checks that every route still releases with an interval.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import beta as beta_dist
from scipy.stats import binom

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # this checkout's provsql_dp, not an installed one
    sys.path.insert(0, str(ROOT))

import provsql_dp  # noqa: E402
from provsql_dp.interfaces import demo, example_data  # noqa: E402
from provsql_dp.privacy.intervals import covers as covers_of  # noqa: E402
from provsql_dp.privacy.intervals import interval_of  # noqa: E402

GRAPHS = Path("/work/shared/data/graphs")
ALPHA_TEST = 0.001  # p-value below which a configuration is demonstrably below its stated coverage


def dlap_within(noise_units, k: int, two_sided: bool) -> float:
    """``Pr[|K| ≤ k]`` (or ``Pr[K ≤ k]``) for ``K ~ DLap(λ)``: exact closed forms."""
    a = math.exp(-1.0 / float(noise_units))
    upper_tail = a ** (k + 1) / (1 + a)  # Pr[K > k]
    return 1 - 2 * upper_tail if two_sided else 1 - upper_tail


def cp_upper(hits: int, n: int, level: float = 0.99) -> float:
    """One-sided Clopper–Pearson upper confidence bound of a binomial proportion."""
    return 1.0 if hits >= n else float(beta_dist.ppf(level, hits + 1, n - hits))


def inside(iv, truth) -> bool:
    lo, hi = iv
    tol = 1e-9 * max(1.0, abs(truth))
    return (lo is None or lo <= truth + tol) and (hi is None or truth <= hi + tol)


class Result:
    def __init__(self, hits, total, covers, secs, release, joint=None):
        self.hits, self.total, self.covers, self.secs, self.release = hits, total, covers, secs, release
        self.joint = joint  # (releases with every row covered, releases) or None


def sql_config(con, sql: str, truths, n: int, p: float, column: int = 0) -> Result:
    """Run ``sql`` until at least ``n`` releases (every row counted); the fraction of rows whose
    interval (value column ``column``) holds the matching truth."""
    hits = total = releases = joint = 0
    covers = ""
    t = time.perf_counter()
    while releases < n:
        cur = con.execute(sql)
        cur.fetchall()
        ivs = cur.privacy.intervals(p)
        covers = cur.privacy.covers()[column]
        ok = [inside(row[column], truth) for row, truth in zip(ivs, truths)]
        assert len(ok) == len(truths), (sql, len(ok), len(truths))
        hits += sum(ok)
        total += len(ok)
        joint += all(ok)
        releases += 1
    rel = cur.privacy.releases[0]
    rel = rel[column] if isinstance(rel, tuple) else rel
    return Result(hits, total, covers, time.perf_counter() - t, rel,
                  (joint, releases) if len(truths) > 1 else None)


def exact_coverage(release, p: float):
    """The exact coverage from the discrete law (see the module docstring), or None."""
    rel = getattr(release, "release", release)  # a post-processed COUNT: its raw release
    mech = getattr(rel, "mechanism", "")
    if mech == "laplace":
        plan = rel.plan
        b = rel.noise_bound(p)
        k = int(round((b - (max(plan.grid - 1, 0) if rel.integer else plan.grid)) / plan.grid))
        return dlap_within(plan.noise_units, k, True)
    if mech in ("recursive", "general") and not getattr(rel, "parts", ()):
        plan = rel.plan
        lo, _ = rel.interval(p)
        k = int(round((rel.value - lo) / plan.grid))
        return dlap_within(plan.noise_units, k, False)
    return None


def truth_of(con, sql):
    return [r[-1] if r[-1] is not None else 0 for r in con.execute(sql).fetchall()]


def demo_configs(n: int, cheap: int, p: float, seed: int):
    con = provsql_dp.connect(":memory:")
    con._rng = np.random.default_rng(seed)
    example_data.load(con)
    con.execute("PROTECT TABLE friendship BY (src, dst) AS member; PROTECT TABLE employees")
    con.execute("SET BOUNDS ON employees (salary) BETWEEN 0 AND 300000")
    con.execute("SET PRIVACY BUDGET 100000000")
    eps = 1.0
    clamped = "SELECT SUM(LEAST(GREATEST(salary, 0), 300000)) FROM employees"
    for title, sql, *options in demo.QUERIES:
        truth = truth_of(con, clamped if sql == "SELECT SUM(salary) FROM employees" else sql)
        privacy = "node" if "friendship" in sql else "row"
        text = f"{sql} WITH EPSILON {eps} {' '.join(options)}"
        yield "demo", f"{title[:34]} ({privacy})", \
            lambda text=text, truth=truth: sql_config(con, text, truth, cheap, p)
    title, sql = demo.GROUPED
    truth = truth_of(con, sql + " ORDER BY 1")
    yield "demo", f"{title} (row)", lambda: sql_config(
        con, f"{sql} ORDER BY 1 WITH EPSILON {eps}", truth, cheap, p)
    yield "demo", "friendship triangles, R2T (node)", lambda: sql_config(
        con, f"{demo.TRIANGLES} WITH EPSILON {eps} OPTIONS (mechanism = 'r2t')",
        truth_of(con, demo.TRIANGLES), cheap, p)
    con.execute("UNPROTECT TABLE friendship; PROTECT TABLE friendship")
    yield "demo", "friendship triangles (edge)", lambda: sql_config(
        con, f"{demo.TRIANGLES} WITH EPSILON {eps}", truth_of(con, demo.TRIANGLES), cheap, p)


def everyday_configs(n: int, cheap: int, p: float, seed: int):
    con = provsql_dp.connect(":memory:")
    con._rng = np.random.default_rng(seed)
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, age INT, city VARCHAR, income INT)")
    con.execute("INSERT INTO people SELECT range, (hash(range) % 60)::INT, 'c' || (range % 7), "
                "(hash(range * 7) % 120000)::INT FROM range(2000)")
    con.execute("CREATE TABLE visits(pid INT, place INT, spent INT)")
    con.execute("INSERT INTO visits SELECT hash(range) % 2000, range % 13, (hash(range) % 200)::INT "
                "FROM range(6000)")
    con.execute("PROTECT TABLE people; PROTECT TABLE visits BY (pid)")
    con.execute("SET BOUNDS ON people (income) BETWEEN 0 AND 100000")
    con.execute("SET BOUNDS ON visits (spent) BETWEEN 0 AND 150")
    con.execute("SET GROUP KEYS ON people (city) VALUES ('c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6')")
    con.execute("SET PRIVACY BUDGET 100000000")
    eps = 0.5
    clamp_income = "LEAST(GREATEST(income, 0), 100000)"
    cases = [
        ("laplace COUNT", "SELECT COUNT(*) FROM people WHERE age < 30", None, cheap),
        ("laplace SUM (bounded)", "SELECT SUM(income) FROM people",
         f"SELECT SUM({clamp_income}) FROM people", cheap),
        ("laplace AVG (bounded)", "SELECT AVG(income) FROM people",
         f"SELECT AVG({clamp_income}) FROM people", cheap),
        ("laplace GROUP BY city (declared keys)",
         "SELECT city, COUNT(*) FROM people GROUP BY city ORDER BY city", None, cheap),
        ("single-owner COUNT (visits)", "SELECT COUNT(*) FROM visits WHERE place < 5", None, cheap),
        ("single-owner SUM (visits, bounded)", "SELECT SUM(spent) FROM visits",
         "SELECT SUM(LEAST(GREATEST(spent, 0), 150)) FROM visits", cheap),
    ]
    for route, sql, truth_sql, reps in cases:
        truth = truth_of(con, truth_sql or sql)
        yield "everyday", route, lambda sql=sql, truth=truth, reps=reps: sql_config(
            con, f"{sql} WITH EPSILON {eps}", truth, reps, p)
    con.execute("CREATE POLICY age_line ON people (age) AS LINE DOMAIN [0, 60) WIDTH 10")
    ages = np.array(truth_of(con, "SELECT age FROM people"))
    hist = np.bincount(ages // 10, minlength=6)
    yield "everyday", "blowfish histogram (line policy)", lambda: sql_config(
        con, f"SELECT age, COUNT(*) FROM people GROUP BY age WITH EPSILON {eps}", hist.tolist(),
        n, p)
    q_range = "SELECT COUNT(*) FROM people WHERE age BETWEEN 10 AND 39"
    yield "everyday", "blowfish range (line policy)", lambda: sql_config(
        con, f"{q_range} WITH EPSILON {eps}", truth_of(con, q_range), n, p)
    ranges = ("age BETWEEN 0 AND 9", "age >= 30", "age BETWEEN 20 AND 49")
    yield "everyday", "blowfish COUNT RANGES (line policy)", lambda: sql_config(
        con, f"COUNT RANGES ({', '.join(ranges)}) FROM people WITH EPSILON {eps}",
        [truth_of(con, f"SELECT COUNT(*) FROM people WHERE {r}")[0] for r in ranges], n, p)
    con.execute("DROP POLICY age_line")
    con.execute("CREATE POLICY age_bounded ON people (age) AS LINE DOMAIN [0, 60) WIDTH 5 BOUNDED")
    cum = np.cumsum(np.bincount(ages // 5, minlength=12)).tolist()
    yield "everyday", "blowfish COUNT CUMULATIVE (ordered)", lambda: sql_config(
        con, f"COUNT CUMULATIVE age FROM people WITH EPSILON {eps}", cum, n, p)


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
        for privacy in ("node", "edge"):
            def run(G=G, tri=tri, privacy=privacy):
                hits, t = 0, time.perf_counter()
                for _ in range(n):
                    rel = graph.count(G, "triangle", privacy=privacy, epsilon=1.0, rng=rng,
                                      progress=False)
                    hits += inside(interval_of(rel, p), tri)
                return Result(hits, n, covers_of(rel), time.perf_counter() - t, rel)
            yield "graph", f"{name} triangles ({privacy}, recursive)", run


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--releases", type=int, default=200,
                    help="releases per configuration (at least 200)")
    ap.add_argument("--cheap", type=int, default=1000,
                    help="releases for the configurations that take milliseconds (≥ --releases)")
    ap.add_argument("--coverage", type=float, default=0.95)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--graphs", default="1138_bus,netscience",
                    help="comma-separated graph names under /work/shared/data/graphs ('' for none)")
    ap.add_argument("--match", default="",
                    help="run only the configurations whose route contains one of these "
                         "comma-separated texts")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "coverage_measured.md"),
                    help="markdown file for the table ('' for none)")
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: 3 releases per configuration, the karate club as the graph, "
                         "no table, the test not enforced (CI)")
    args = ap.parse_args(argv)
    n, p = max(200, args.releases), args.coverage
    if args.smoke:
        import _smoke

        global GRAPHS
        GRAPHS, args.graphs, args.out = _smoke.graphs_dir(), _smoke.GRAPH, ""
        n = args.cheap = 3
    cheap = max(n, args.cheap)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    intro = (f"coverage of the released {p:.0%} intervals: {n} releases per configuration, {cheap} "
             f"where a release takes milliseconds (seed {args.seed}; {platform.machine()}, "
             f"{os.cpu_count()} cores, load {load:.1f} at start: times are indicative)")
    print(intro)
    cols = ("data", "route", "stated", "exact", "observed", "n", "CP upper", "p-value", "ok",
            "time s", "covers")
    fmt = "{:<9} {:<40} {:>6} {:>6} {:>8} {:>6} {:>8} {:>8} {:>4} {:>7}  {}"
    print(fmt.format(*cols))
    print("-" * 130)
    names = [g for g in args.graphs.split(",") if g]
    bad, md = [], []
    t0 = time.perf_counter()
    for source in (demo_configs(n, cheap, p, args.seed), everyday_configs(n, cheap, p, args.seed),
                   graph_configs(n, p, args.seed, names)):
        for data, route, job in source:
            if args.match and not any(m in route for m in args.match.split(",")):
                continue
            res = job()
            obs = res.hits / res.total
            ex = exact_coverage(res.release, p)
            noise_only = res.covers.startswith("noise only") or res.covers.startswith("nothing")
            up = cp_upper(res.hits, res.total)
            pval = float(binom.cdf(res.hits, res.total, p))
            ok = "n/a" if noise_only else ("yes" if pval >= ALPHA_TEST else "NO")
            if ok == "NO":
                bad.append(route)
            exs = "" if ex is None else f"{ex:.4f}"
            covers = res.covers
            if res.joint is not None:
                covers += f" [every row at once: {res.joint[0] / res.joint[1]:.3f}]"
            row = (data, route, f"{p:.2f}", exs, f"{obs:.4f}", res.total, f"{up:.4f}",
                   f"{pval:.3g}", ok, f"{res.secs:.1f}", covers)
            print(fmt.format(*row), flush=True)
            md.append(row)
    total = time.perf_counter() - t0
    print(f"total {total:.0f} s")
    if args.out:
        lines = ["# Coverage of the released intervals (measured)", "",
                 "Produced by `python benchmarks/coverage.py` (issue 13); see its docstring for the",
                 "configurations and the test. " + intro + f"; total {total:.0f} s.", "",
                 "`observed` pools every released row; `CP upper` is the one-sided 99 % "
                 "Clopper–Pearson upper bound of the true coverage; `p-value` is "
                 "Pr[Binomial(n, stated) ≤ hits] (ok: ≥ 0.001, i.e. not demonstrably below the "
                 "stated coverage); `exact` is the coverage from the discrete Laplace law where "
                 "it is a closed form (for the one-sided recursive intervals a lower bound that "
                 "holds whatever the truncation).", "",
                 "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(str(x).replace("|", "\\|") for x in r) + " |" for r in md]
        lines += ["", "Result: " + ("every configuration's observed coverage is consistent with "
                                    "(mostly above) the stated one." if not bad else
                                    "BELOW the stated coverage: " + ", ".join(bad))]
        Path(args.out).write_text("\n".join(lines) + "\n")
        print(f"written to {args.out}")
    if bad and not args.smoke:
        raise SystemExit(f"coverage demonstrably below the stated level: {', '.join(bad)}")


if __name__ == "__main__":
    main()
