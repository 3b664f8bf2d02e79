"""Benchmark: R2T beside the recursive mechanism, triangle counting, node and edge privacy.

For each (graph, privacy) one subprocess loads the edge table and protects it as
``benchmarks/recursive.py`` does, then per release captures the triangle K-relation through SQL
(``con.provenance``) and releases it at ε = 0.5: R2T with ``GS = 2**20`` (the default
``max_contribution``; the paper uses 10^6 for graphs), β = 0.1, and — unless ``--no-recursive`` —
the recursive mechanism with the paper's parameters, stopped after ``--recursive-seconds``. It
prints the true count and, per mechanism, the median wall time of one release (capture included;
the capture's and R2T's LPs' medians apart), the median relative error over the releases, how
many releases fell back to the data-independent release (an LP over ``--time-limit``, as the SQL
path does), and the subprocess's peak RSS. ``--gap`` sets R2T's ``lp_gap`` (one row per value). Large graphs run
one at a time (one subprocess each).

Usage::

    python benchmarks/r2t.py --graphs ca-GrQc netscience --releases 10
    python benchmarks/r2t.py --graphs ca-HepPh --privacy node --no-recursive
    # R2T's public LP tolerance: exact LPs and γ = 1/16 side by side
    python benchmarks/r2t.py --graphs ca-GrQc --no-recursive --gap 0 0.0625
    python benchmarks/r2t.py --smoke     # seconds: the bundled karate club, 2 releases, a failure
                                         # exits 1 (CI)
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

_HERE = __import__("pathlib").Path(__file__).resolve().parent
sys.path[:0] = [str(_HERE.parent), str(_HERE)]  # this checkout's provsql_dp, then recursive.py
import os  # noqa: E402

from recursive import DATA, GRAPHS, capture_sql  # noqa: E402

# a git worktree sits beside, not inside, the checkout recursive.py expects: GRAPH_DATA overrides
DATA = __import__("pathlib").Path(os.environ.get("GRAPH_DATA", DATA))


def run_one(graph: str, privacy: str, releases: int, recursive: bool, recursive_seconds: float,
            eps: float = 0.5, gap: float = 0.0625, time_limit: float | None = None,
            max_seconds: float = 0.0) -> dict:
    from provsql_dp.errors import SolverError
    from provsql_dp.mechanisms.r2t import race as r2t
    from provsql_dp.mechanisms.recursive import efficient as rm
    from provsql_dp.mechanisms.lp._highs import LPStats

    con, sql = capture_sql(DATA / f"{graph}.edges", privacy)
    out = {"graph": graph, "privacy": privacy}
    times, errs, lp, capture_s = [], [], [], []
    true = None
    failed = 0
    start = time.perf_counter()
    for k in range(releases):
        if max_seconds and k >= 3 and time.perf_counter() - start > max_seconds:
            break
        t0 = time.perf_counter()
        kr = con.provenance(sql)
        capture_s.append(time.perf_counter() - t0)
        stats = LPStats()
        kw = {"lp_gap": gap}  # always: the package default changed from 0 to 1/16
        try:
            rel = r2t.release(kr, eps, stats=stats, time_limit=time_limit, **kw)
        except SolverError:  # what the SQL path does: the data-independent fallback
            failed += 1
            rel = r2t.fallback(eps, **kw)
        times.append(time.perf_counter() - t0)
        lp.append(stats.lp_seconds)
        true = float(kr.weights.sum())
        out["lp_rows_cols"] = r2t.R2TModel(kr).shape if len(times) == 1 else out["lp_rows_cols"]
        errs.append(abs(rel.value - true) / true if true else float("nan"))
        del kr
    out.update(triangles=int(true), r2t_s=statistics.median(times), r2t_lp_s=statistics.median(lp),
               r2t_err=statistics.median(errs), r2t_releases=len(times), gap=gap,
               capture_s=statistics.median(capture_s), fallbacks=failed, r2t_max_s=max(times))
    if recursive:
        times, errs = [], []
        start = time.perf_counter()
        for _ in range(releases):
            if times and time.perf_counter() - start > recursive_seconds:
                break
            t0 = time.perf_counter()
            kr = con.provenance(sql)
            rel = rm.release(kr, epsilon=eps, privacy=privacy)
            times.append(time.perf_counter() - t0)
            errs.append(abs(rel.value - true) / true if true else float("nan"))
            del kr
        out.update(rec_s=statistics.median(times), rec_err=statistics.median(errs),
                   rec_releases=len(times))
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def fmt(r: dict) -> str:
    rec = (f"{r['rec_s']:8.2f} {r['rec_err']:9.4f} {r['rec_releases']:4d}" if "rec_s" in r
           else f"{'—':>8} {'—':>9} {'—':>4}")
    ratio = f"{r['r2t_err'] / r['rec_err']:6.2f}" if r.get("rec_err") else f"{'—':>6}"
    return (f"{r['graph']:<11} {r['privacy']:<5} {r['triangles']:>10,} {r['gap']:6.3g} "
            f"{r['capture_s']:8.2f} {r['r2t_lp_s']:8.2f} "
            f"{r['r2t_s']:8.2f} {r.get('r2t_max_s', float('nan')):8.2f} {r['r2t_err']:9.4f} {r['r2t_releases']:4d} {r['fallbacks']:3d} "
            f"{rec} {ratio} {r['peak_rss_mb']:8.0f}")


HEADER = (f"{'graph':<11} {'priv':<5} {'triangles':>10} {'lp_gap':>6} {'capt. s':>8} "
          f"{'LP s':>8} {'R2T s':>8} {'max s':>8} {'R2T err':>9} {'rel':>4} {'fb':>3} "
          f"{'rec s':>8} {'rec err':>9} {'rel':>4} {'ratio':>6} {'RSS MB':>8}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", nargs="+", default=GRAPHS)
    ap.add_argument("--privacy", nargs="+", default=["node", "edge"])
    ap.add_argument("--releases", type=int, default=10)
    ap.add_argument("--no-recursive", action="store_true")
    ap.add_argument("--recursive-seconds", type=float, default=120.0)
    ap.add_argument("--gap", type=float, nargs="+", default=[0.0625],
                    help="R2T's lp_gap (γ; default 1/16, the package's; 0 = exact); several "
                    "values: one row each")
    ap.add_argument("--time-limit", type=float, default=120.0,
                    help="seconds per LP before the fallback (the SQL path's 120 s)")
    ap.add_argument("--max-seconds", type=float, default=0.0,
                    help="stop a row's releases after this many seconds (at least 3 releases)")
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: the bundled karate club, 2 releases (CI)")
    ap.add_argument("--child", nargs=8, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.smoke:
        import _smoke

        os.environ["GRAPH_DATA"] = str(_smoke.graphs_dir())  # read by the children
        a.graphs, a.releases = [_smoke.GRAPH], 2
    failures = 0
    if a.child:
        g, p, n, rec, secs, gap, tl, ms = a.child
        print(json.dumps(run_one(g, p, int(n), rec == "1", float(secs), gap=float(gap),
                                 time_limit=float(tl), max_seconds=float(ms))))
        return
    print(HEADER, flush=True)
    for g in a.graphs:
        for p in a.privacy:
            for gap in a.gap:
                cmd = [sys.executable, __file__, "--child", g, p, str(a.releases),
                       "0" if a.no_recursive else "1", str(a.recursive_seconds), str(gap),
                       str(a.time_limit), str(a.max_seconds)]
                res = subprocess.run(cmd, capture_output=True, text=True)
                if res.returncode:
                    print(f"{g:<11} {p:<5} failed: {res.stderr.strip().splitlines()[-1:]}",
                          flush=True)
                    failures += 1
                    continue
                print(fmt(json.loads(res.stdout.strip().splitlines()[-1])), flush=True)
    if a.smoke and failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
