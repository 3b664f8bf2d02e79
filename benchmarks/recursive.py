"""Benchmark: triangle counting with the recursive mechanism, node and edge privacy.

For each graph and privacy model one subprocess loads the edge table, captures the triangle
K-relation (SQL path: ``provsql_dp.connect`` + ``PROTECT TABLE`` + ``con.provenance``; or
``--direct``: built with numpy), then runs ``--releases`` releases at ε = 0.5 with the paper's
parameters (θ = 1, β = ε/5, μ = 1 node / 0.5 edge, ε₁ = ε₂ = ε/2). It reports the true count, the
median relative error |X̂ − true|/true, the median wall time of one release split into capture /
LPs / other, its minimum and maximum over the releases and the median CPU seconds of the
subprocess (the machine is shared: CPU time is what a release costs when wall time is inflated by
other jobs), the number of LPs per release and the subprocess's peak RSS. The time of a release
varies with the noisy Δ̂ (the X LPs depend on it): ``--per-release`` prints each release's Δ̂,
wall and CPU seconds, sorted by Δ̂. Each invocation is a
*run* named by ``--name``: its rows go to ``benchmarks/out/recursive/<name>.json`` and its plot to
``benchmarks/out/recursive/<name>.png`` (if matplotlib is available), so runs never overwrite each
other; ``--compare a b`` prints two saved runs side by side.

``--lp-log`` prints every LP of the first release (what, algorithm, rows, columns, non-zeros,
seconds); ``--time-limit`` sets the seconds per LP (the SQL path uses 120 and then releases the
data-independent fallback: such releases are counted in ``lp_failed``); ``--graphs scale`` runs
the scale graphs (ca-AstroPh, ca-HepPh: millions of triangles; run them alone, each needs a few GB).
The graphs are read from ``../shared/data/graphs`` or ``$PROVSQL_DP_GRAPHS``.

``--r2t GS`` also releases with R2T (``mechanisms.r2t``, ``max_contribution = GS``) on the same
captured K-relation and appends its median wall and CPU time, median relative error, release
count, LPs per release and failed releases (an LP over ``--time-limit``) to each row
(``--no-recursive``: R2T alone; ``--lp-gap γ``: R2T's public LP tolerance).

``--max-seconds`` caps the time spent per (graph, privacy): after at least ``--min-releases``
releases the loop stops once the budget is used, and the table's ``rel`` column says how many
releases the medians are over.

Usage::

    python benchmarks/recursive.py --name after           # the paper's 7 graphs + deezer-HU
    python benchmarks/recursive.py --graphs ca-GrQc --privacy node --releases 3 --name quick
    python benchmarks/recursive.py --compare before after
    # R2T beside the recursive mechanism (max_contribution 2**20, OPTIONS' default), 10 releases:
    python benchmarks/recursive.py --r2t 1048576 --releases 10 --max-seconds 120 --name side
    python benchmarks/recursive.py --graphs scale --releases 1 --lp-log --time-limit 120 --name scale
    # ca-HepPh node privacy, the spread of the release time over 10 Δ̂ draws (issue 29):
    python benchmarks/recursive.py --graphs ca-HepPh --privacy node --releases 10 --per-release
    # before/after in one run, interleaved (old code from a worktree of an older commit):
    git worktree add /tmp/before <commit>
    python benchmarks/recursive.py --name cmp --variant before=/tmp/before --variant after=
    python benchmarks/recursive.py --compare cmp-before cmp-after
    python benchmarks/recursive.py --smoke   # seconds: the bundled karate club, 2 releases, R2T too,
                                             # files to a temporary directory, a failure exits 1 (CI)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

DATA = Path(
    os.environ.get(
        "PROVSQL_DP_GRAPHS", Path(__file__).resolve().parents[2] / "shared" / "data" / "graphs"
    )
)
if not DATA.exists():  # run from a worktree (/work/wt/<name>): the shared data
    DATA = Path("/work/shared/data/graphs")
OUT = Path(__file__).resolve().parent / "out"
GRAPHS = ["netscience", "power", "1138_bus", "bcspwr10", "gemat12", "ca-GrQc", "ca-HepTh", "deezer-HU"]
#: the scale graphs of issue 12 (millions of triangles): ``--graphs scale``; run one at a time
SCALE = ["ca-AstroPh", "ca-HepPh"]

TRIANGLES = (
    "SELECT e1.src AS a, e1.dst AS b, e2.dst AS c "
    "FROM edge e1 JOIN edge e2 ON e1.dst = e2.src "
    "JOIN edge e3 ON e1.src = e3.src AND e2.dst = e3.dst "
    "WHERE e1.src < e1.dst AND e2.src < e2.dst"
)


def triangles_direct(path: Path, privacy: str):
    """The triangle K-relation built with numpy (node: monomial {a,b,c}; edge: 3 edge ids)."""
    import scipy.sparse as sp

    from provsql_dp.provenance.krelation import KRelation

    e = np.loadtxt(path, comments="#", dtype=np.int64).reshape(-1, 2)
    ids, inv = np.unique(e.ravel(), return_inverse=True)
    e = inv.reshape(-1, 2)
    u, v = e.min(1), e.max(1)
    n = len(ids)
    a = sp.csr_matrix((np.ones(len(u)), (u, v)), shape=(n, n))
    a.sum_duplicates()
    a.sort_indices()
    ptr, idx = a.indptr, a.indices
    tris = []
    for x, y in zip(*a.nonzero()):
        nx_, ny = idx[ptr[x] : ptr[x + 1]], idx[ptr[y] : ptr[y + 1]]
        c = np.intersect1d(nx_[nx_ > y], ny, assume_unique=True)
        if len(c):
            tris.append(np.column_stack([np.full(len(c), x), np.full(len(c), y), c]))
    t = np.vstack(tris) if tris else np.zeros((0, 3), dtype=np.int64)
    m = len(t)
    if privacy == "node":
        parts = t
        plist = tuple(("node", int(i)) for i in ids)
    else:
        eid = {(int(x), int(y)): k for k, (x, y) in enumerate(zip(*a.nonzero()))}
        parts = np.array(
            [[eid[(x, y)], eid[(x, z)], eid[(y, z)]] for x, y, z in t.tolist()], dtype=np.int64
        ).reshape(-1, 3)
        plist = tuple(("edge", k) for k in range(len(eid)))
    return KRelation(
        columns=(), values=(), weights=np.ones(m), tuple_ptr=np.arange(m + 1),
        mono_ptr=np.arange(m + 1) * 3, mono_part=np.sort(parts, axis=1).ravel(),
        participant_list=plist,
    )


def capture_sql(path: Path, privacy: str):
    import provsql_dp
    from provsql_dp.graph import load_edges

    con = provsql_dp.connect(":memory:")
    load_edges(con, path, table="edge")
    con.execute(
        "PROTECT TABLE edge BY (src, dst) AS node" if privacy == "node" else "PROTECT TABLE edge"
    )
    return con, TRIANGLES


def run_r2t(kr_of, releases: int, max_seconds: float, min_releases: int, gs: float,
            time_limit: float | None, lp_gap: float = 0.0625) -> dict:
    """R2T (``mechanisms.r2t``) on the same K-relation: median wall and CPU seconds (capture
    included) and median relative error over the releases, and the LPs solved per release.
    ``lp_gap`` is R2T's public LP tolerance γ, always passed (the package default was 0 before
    2026-11-23 and is 1/16 since), so a ``--variant`` checkout runs the same γ."""
    from provsql_dp.errors import SolverError
    from provsql_dp.mechanisms.r2t import race as r2t
    from provsql_dp.mechanisms.lp._highs import LPStats

    times, cpus, errs, n_lps, failed = [], [], [], [], 0
    kw = {"lp_gap": lp_gap}
    start = time.perf_counter()
    for k in range(releases):
        if max_seconds and k >= min_releases and time.perf_counter() - start > max_seconds:
            break
        t0, c0 = time.perf_counter(), time.process_time()
        kr = kr_of()
        stats = LPStats()
        try:
            rel = r2t.release(kr, 0.5, max_contribution=gs, stats=stats, time_limit=time_limit,
                              **kw)
        except SolverError:
            rel, failed = None, failed + 1
        times.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        n_lps.append(stats.n_lps)
        true = float(kr.weights.sum())
        if rel is not None:
            errs.append(abs(rel.value - true) / true if true else float("nan"))
        del kr
    return {"r2t_s": statistics.median(times), "r2t_releases": len(times),
            "r2t_err": statistics.median(errs) if errs else float("nan"), "r2t_failed": failed,
            "r2t_lps": statistics.median(n_lps), "r2t_gs": gs, "r2t_gap": lp_gap,
            "r2t_cpu_s": statistics.median(cpus)}


def run_one(graph: str, privacy: str, releases: int, direct: bool, max_seconds: float = 0.0,
            min_releases: int = 3, time_limit: float | None = None, r2t_gs: float = 0.0,
            recursive: bool = True, lp_gap: float = 0.0625) -> dict:
    from provsql_dp.errors import SolverError
    from provsql_dp.mechanisms.recursive import efficient as rm

    path = DATA / f"{graph}.edges"
    captures, lps, others, n_lps, errs, failed = [], [], [], [], [], 0
    cpus, dhats = [], []  # per release: CPU seconds of this process, the released Δ̂
    lp_log = None
    con = sql = None
    if not direct:
        con, sql = capture_sql(path, privacy)
    true = None
    start = time.perf_counter()
    done = 0
    for _ in range(releases if recursive else 0):
        if max_seconds and done >= min_releases and time.perf_counter() - start > max_seconds:
            break
        done += 1
        t0, c0 = time.perf_counter(), time.process_time()
        kr = triangles_direct(path, privacy) if direct else con.provenance(sql, columns=())
        t1 = time.perf_counter()
        stats = rm.LPStats()
        try:
            rel = rm.release(kr, epsilon=0.5, privacy=privacy, stats=stats, time_limit=time_limit)
        except SolverError:  # the SQL path would release the data-independent fallback
            rel, failed = None, failed + 1
        t2 = time.perf_counter()
        cpus.append(time.process_time() - c0)
        dhats.append(rel.delta_hat if rel is not None else float("nan"))
        print(f"  {graph} {privacy} release {done}: Δ̂ = {dhats[-1]:.1f}, {t2 - t0:.2f} s wall, "
              f"{cpus[-1]:.2f} s CPU", file=sys.stderr, flush=True)  # live (--per-release)
        if lp_log is None:  # per LP of the first release: (what, algorithm, rows, cols, nnz, s)
            lp_log = [list(x) for x in stats.log]
        true = float(kr.weights.sum())
        captures.append(t1 - t0)
        lps.append(stats.lp_seconds)
        others.append(t2 - t1 - stats.lp_seconds)
        n_lps.append(stats.n_lps)
        if rel is not None:
            errs.append(abs(rel.value - true) / true if true else float("nan"))
        del kr
    out = {}
    if r2t_gs:
        out = run_r2t(lambda: triangles_direct(path, privacy) if direct else con.provenance(sql),
                      releases, max_seconds, min_releases, r2t_gs, time_limit, lp_gap)
    if true is None:
        kr = triangles_direct(path, privacy) if direct else con.provenance(sql)
        true = float(kr.weights.sum())
        del kr
    nan = float("nan")
    totals = [a + b + c for a, b, c in zip(captures, lps, others)]
    return out | {
        "graph": graph, "privacy": privacy, "triangles": int(true), "releases": done,
        "median_rel_err": statistics.median(errs) if errs else float("nan"), "lp_failed": failed,
        "lp_log": lp_log, "capture_s": statistics.median(captures) if done else nan,
        "lp_s": statistics.median(lps) if done else nan,
        "other_s": statistics.median(others) if done else nan,
        "total_s": statistics.median(totals) if done else nan,
        "min_s": min(totals) if done else nan, "max_s": max(totals) if done else nan,
        "cpu_s": statistics.median(cpus) if done else nan,
        "per_release": [{"s": t, "cpu_s": c, "delta_hat": d}
                        for t, c, d in zip(totals, cpus, dhats)],
        "n_lps": statistics.median(n_lps) if done else nan,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def plot(rows: list[dict], name: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    (OUT / "recursive").mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for privacy, marker in (("node", "o"), ("edge", "s")):
        rs = [r for r in rows if r["privacy"] == privacy]
        if not rs:
            continue
        x = [r["triangles"] for r in rs]
        axes[0].loglog(x, [r["total_s"] for r in rs], marker, label=privacy)
        axes[1].loglog(x, [max(r["median_rel_err"], 1e-6) for r in rs], marker, label=privacy)
        for r in rs:
            axes[0].annotate(r["graph"], (r["triangles"], r["total_s"]), fontsize=7)
    axes[0].set(xlabel="triangles", ylabel="seconds per release", title=f"time (ε = 0.5), run {name}")
    axes[1].set(xlabel="triangles", ylabel="median relative error", title="accuracy (ε = 0.5)")
    for ax in axes:
        ax.legend()
    fig.tight_layout()
    fig.savefig(OUT / "recursive" / f"{name}.png", dpi=120)
    plt.close(fig)


HEADER = (
    f"{'graph':<11} {'privacy':<7} {'triangles':>9} {'rel':>3} {'med rel err':>11} {'capture s':>9} "
    f"{'LPs s':>8} {'other s':>8} {'total s':>8} {'min s':>7} {'max s':>7} {'CPU s':>7} "
    f"{'#LPs':>5} {'peak MB':>8}"
)


R2T_HEADER = f" | {'R2T s':>7} {'CPU s':>7} {'R2T err':>8} {'rel':>3} {'#LPs':>4} {'fail':>4}"


def fmt(r: dict) -> str:
    nan = float("nan")  # rows saved by older runs have no spread
    line = (
        f"{r['graph']:<11} {r['privacy']:<7} {r['triangles']:>9} {r['releases']:>3} "
        f"{r['median_rel_err']:>11.4f} {r['capture_s']:>9.3f} {r['lp_s']:>8.3f} {r['other_s']:>8.3f} "
        f"{r['total_s']:>8.3f} {r.get('min_s', nan):>7.2f} {r.get('max_s', nan):>7.2f} "
        f"{r.get('cpu_s', nan):>7.2f} {r['n_lps']:>5.0f} {r['peak_rss_mb']:>8.0f}"
    )
    if "r2t_s" in r:
        line += (f" | {r['r2t_s']:>7.3f} {r.get('r2t_cpu_s', float('nan')):>7.3f} "
                 f"{r['r2t_err']:>8.4f} {r['r2t_releases']:>3} {r['r2t_lps']:>4.0f} "
                 f"{r.get('r2t_failed', 0):>4}")
    return line


def fmt_releases(r: dict) -> str:
    """One line per release, by Δ̂: the time's spread across the noisy Δ̂ draws."""
    rs = sorted(r.get("per_release") or [],  # releases without Δ̂ (an LP failed) last
                key=lambda x: (x["delta_hat"] != x["delta_hat"], x["delta_hat"]))
    return "\n".join(f"    Δ̂ = {x['delta_hat']:>12.1f}   {x['s']:8.2f} s wall {x['cpu_s']:8.2f} s CPU"
                     for x in rs)


def fmt_lps(r: dict) -> str:
    """Per-LP lines of the first release (curator diagnostics)."""
    return "\n".join(
        f"    {what:<9} {alg:<7} rows={rows:>9} cols={cols:>9} nnz={nnz:>10} {sec:8.2f} s"
        for what, alg, rows, cols, nnz, sec in r.get("lp_log") or []
    )


def compare(a: str, b: str) -> None:
    ra = {(r["graph"], r["privacy"]): r for r in json.loads((OUT / "recursive" / f"{a}.json").read_text())}
    rb = {(r["graph"], r["privacy"]): r for r in json.loads((OUT / "recursive" / f"{b}.json").read_text())}
    print(f"{'graph':<11} {'privacy':<7} {a + ' s':>10} {b + ' s':>10} {'speed-up':>8} "
          f"{a + ' err':>10} {b + ' err':>10} {a + ' #LP':>8} {b + ' #LP':>8}")
    for key in [k for k in ra if k in rb]:
        x, y = ra[key], rb[key]
        print(f"{key[0]:<11} {key[1]:<7} {x['total_s']:>10.3f} {y['total_s']:>10.3f} "
              f"{x['total_s'] / y['total_s']:>8.1f} {x['median_rel_err']:>10.4f} "
              f"{y['median_rel_err']:>10.4f} {x['n_lps']:>8.0f} {y['n_lps']:>8.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", nargs="+", default=GRAPHS)
    ap.add_argument("--privacy", nargs="+", default=["node", "edge"])
    ap.add_argument("--releases", type=int, default=20)
    ap.add_argument("--direct", action="store_true", help="build the K-relation with numpy")
    ap.add_argument("--max-seconds", type=float, default=0.0,
                    help="time budget per (graph, privacy); 0 = run all releases")
    ap.add_argument("--min-releases", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=0.0,
                    help="seconds per LP (the SQL path uses 120); 0 = none")
    ap.add_argument("--lp-log", action="store_true", help="print every LP of the first release")
    ap.add_argument("--per-release", action="store_true",
                    help="print every release's Δ̂, wall and CPU seconds (the spread over Δ̂)")
    ap.add_argument("--name", default="main", help="run name for the saved rows and plot")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two saved runs")
    ap.add_argument(
        "--variant", action="append", default=[], metavar="NAME=SRC",
        help="also run the provsql_dp checkout at SRC (e.g. a git worktree of an older commit), "
        "interleaved with the others per (graph, privacy); its rows go to run <name>-NAME. "
        "'NAME=' is the installed package",
    )
    ap.add_argument("--r2t", type=float, default=0.0, metavar="GS",
                    help="also run R2T with max_contribution GS (public: e.g. 2**20, the "
                    "default of OPTIONS (mechanism = 'r2t')) beside the recursive mechanism")
    ap.add_argument("--no-recursive", action="store_true", help="with --r2t: R2T only")
    ap.add_argument("--lp-gap", type=float, default=0.0625, metavar="GAMMA",
                    help="with --r2t: R2T's public LP tolerance (OPTIONS (lp_gap = γ)); default "
                    "1/16, the package's; 0 = exact")
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: the bundled karate club, 2 releases, R2T beside (CI)")
    ap.add_argument("--child", nargs=10, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.smoke:
        import _smoke

        global OUT
        OUT = _smoke.out_dir()
        os.environ["PROVSQL_DP_GRAPHS"] = str(_smoke.graphs_dir())  # read by the children
        args.graphs, args.releases, args.r2t = [_smoke.GRAPH], 2, args.r2t or 2.0 ** 20
    if args.compare:
        compare(*args.compare)
        return
    if args.variant:
        variants = [tuple(v.split("=", 1)) for v in args.variant]
    else:
        variants = [("", "")]
    if args.child:
        graph, privacy, releases, direct, budget, min_rel, limit, gs, rec, gap = args.child
        print(json.dumps(run_one(graph, privacy, int(releases), direct == "1", float(budget),
                                 int(min_rel), float(limit) or None, float(gs), rec == "1",
                                 float(gap))))
        return
    args.graphs = [g for name in args.graphs for g in (SCALE if name == "scale" else [name])]
    header = HEADER + (R2T_HEADER if args.r2t else "")
    print(header)
    print("-" * len(header))
    if args.max_seconds:
        print(f"(each mechanism stops after {args.max_seconds:g} s per graph once it has "
              f"{args.min_releases} releases: 'rel' says how many the medians are over)")
    rows: dict[str, list] = {v: [] for v, _ in variants}
    failures = 0
    names = {v: f"{args.name}-{v}" if v else args.name for v, _ in variants}
    for graph in args.graphs:
        for privacy in args.privacy:
            for variant, src in variants:
                env = dict(os.environ)
                if src:
                    env["PYTHONPATH"] = os.pathsep.join(
                        [src] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
                    )
                out = subprocess.run(
                    [sys.executable, __file__, "--child", graph, privacy, str(args.releases),
                     "1" if args.direct else "0", str(args.max_seconds), str(args.min_releases),
                     str(args.time_limit), str(args.r2t), "0" if args.no_recursive else "1",
                     str(args.lp_gap)],
                    stdout=subprocess.PIPE, text=True, env=env,
                    stderr=None if args.per_release else subprocess.PIPE,  # live per release
                )
                tag = f" [{variant}]" if variant else ""
                if out.returncode:
                    last = ((out.stderr or "").strip().splitlines() or ["see above"])[-1]
                    print(f"{graph:<11} {privacy:<7} failed{tag}: {last}", flush=True)
                    failures += 1
                    continue
                r = json.loads(out.stdout.strip().splitlines()[-1])
                rows[variant].append(r)
                print(fmt(r) + tag, flush=True)
                if args.lp_log:
                    print(fmt_lps(r), flush=True)
                if args.per_release:
                    print(fmt_releases(r), flush=True)
                (OUT / "recursive").mkdir(parents=True, exist_ok=True)
                (OUT / "recursive" / f"{names[variant]}.json").write_text(
                    json.dumps(rows[variant], indent=1)
                )
    for variant, _ in variants:
        plot(rows[variant], names[variant])
    if args.smoke and failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
