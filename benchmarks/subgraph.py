"""Benchmark: private subgraph counting, reproducing papers/003 Fig. 4–7.

For every graph, pattern and privacy model the K-relation is built once (``provsql_dp.graph.
relation``, through the SQL capture path) and released ``--releases`` times with the recursive
mechanism (ε = 0.5, θ = 1, β = ε/5, μ = 1 node / 0.5 edge: the library defaults). Reported: the
median relative error |X̂ − T| / T, the median time per release, and the time to build the
K-relation. Side by side, with edge privacy: the Laplace mechanism with global sensitivity (any
pattern; triangles: |V| − 2) and, for triangles, smooth-sensitivity counting (Nissim,
Raskhodnikova & Smith 2007) both ε-DP (power-law noise, γ = 4) and (ε, δ = 0.1)-DP (Laplace noise:
the setting of Karwa et al. that the paper used), and for every pattern RHMS (Rastogi et al. PODS
2009 as stated by Karwa et al. 2011, Algorithm 2) — **(ε, γ = 0.1)-adversarial privacy, not
differential privacy**. See ``provsql_dp.graph.baselines``.

Graphs: G(n, p) with average degree 10 (p = 10/(n − 1)), |V| from 100 to 5,000 (Fig. 4–5), and the
seven real graphs of Fig. 6–7 from ``shared/data/graphs``.

Releases of one setting stop early once ``--budget`` seconds have been spent on it (after at least
``--min-releases``); the table says how many releases each median is over. Run time is dominated by
the mechanism's LPs, which grow with the count (2-stars at |V| = 5,000 are ~225,000 tuples).

**k-stars and k-triangles (issue 15, papers/003 Fig. 4's patterns with its baselines)**:
``--kstars`` runs only that part — for k-stars and k-triangles (k = 2, 3) on the real
graphs, our recursive mechanism (k-stars: the degree construction of
``provsql_dp.mechanisms.subgraph.kstar``; k-triangles: under edge privacy the triangle construction of
``provsql_dp.mechanisms.subgraph.ktriangle``, under node privacy the one of
``provsql_dp.mechanisms.subgraph.ktriangle_node``, and the enumerated K-relation, refused above
``--kt-max-entries``; ``--ktriangles-only`` skips the k-stars) under node and edge privacy beside Karwa et al.'s k-star and k-triangle
mechanisms ((ε, δ = 0.1)-DP, ``provsql_dp.mechanisms.subgraph.smooth``; k-stars also ε-DP with
Cauchy noise, ``provsql_dp.graph.baselines.kstar_pure_release``) and the Laplace mechanism
with global sensitivity, and RHMS ((ε, γ = 0.1)-adversarial privacy, NOT differential privacy:
Karwa et al.'s statement of it, ``provsql_dp.graph.baselines.rhms_release``), with a line per
deliberate deviation. ``--kt-ks`` and ``--kt-graphs`` limit the k-triangle rows. ``--rhms`` prints
only the RHMS rows (triangles, 2-/3-stars, 2-/3-triangles; seconds) to ``rhms.md``; ``--karwa-kt``
only the rows of Karwa et al.'s own k-triangle mechanism (their Algorithm 1,
``provsql_dp.graph.karwa_ktriangle``) to ``karwa_ktriangles.md``.

**Fig. 4 with the paper's baselines (issue 15)**: ``--fig4`` runs only that part
(``subgraph_fig4``): on G(n, 10/(n − 1)) for each of ``--sizes`` (``--graph-seeds`` graphs each,
seed 1000·n + s) and each of ``--fig4-patterns`` (triangle, 2-star, 3-star, 2-triangle,
3-triangle), ours under node and edge privacy (k-stars and k-triangles through the constructions
``graph.count`` uses, triangles through the enumerated K-relation) beside every baseline papers/003
compares against for that pattern — NRS triangles, Karwa et al.'s k-star and k-triangle
mechanisms, RHMS (marked (ε, γ)-adversarial, NOT DP) — and Laplace-GS; one summary table (median
relative error per |V|, and for ours the seconds of the first / median release), the per-setting
rows and a line per deliberate deviation, written to ``fig4.md``. Defaults there: 10 releases for
ours (baselines max(``--releases``, 20)), ``--budget`` 300 s per setting.

Usage::

    python benchmarks/subgraph.py --fig4 --seed 2013       # Fig. 4 table, |V| = 100 … 5,000
    python benchmarks/subgraph.py --fig4 --sizes 100,200 --graph-seeds 3 --fig4-patterns 2-star
    python benchmarks/subgraph.py --kstars                 # k-stars / k-triangles table
    python benchmarks/subgraph.py                          # everything, 20 releases (hours)
    python benchmarks/subgraph.py --quick                  # a few minutes
    python benchmarks/subgraph.py --sizes 100,500 --graphs netscience --releases 5 --budget 60
    python benchmarks/subgraph.py --no-synthetic --real-patterns triangle,2-star
    python benchmarks/subgraph.py --smoke [--kstars | --fig4 | --rhms | --karwa-kt]   # seconds (CI)

``--smoke`` runs the chosen mode at a tiny size: 2 releases, G(40, p) random graphs, the bundled
karate club as the real graph, files to a temporary directory.

Without a mode flag, writes ``benchmarks/out/subgraph/results.csv``, ``results.md`` and ``fig4_error.png``,
``fig5_time.png``, ``fig7_real.png`` (matplotlib), and prints the tables.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
import time
from pathlib import Path

import networkx as nx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from provsql_dp.errors import Error  # noqa: E402
from provsql_dp.graph import DEFAULT_MAX_ENTRIES, read_edge_list, relation  # noqa: E402
from provsql_dp.graph.baselines import (  # noqa: E402
    global_sensitivity,
    rhms_median_error_bounds,
    rhms_params,
    rhms_release,
    sample_power_law_noise,
    smooth_beta,
    triangle_smooth_sensitivity,
)
from provsql_dp.mechanisms.recursive import efficient as rm  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "graphs"
REAL = ["netscience", "power", "1138_bus", "bcspwr10", "gemat12", "ca-GrQc", "ca-HepTh"]
# papers/003 Fig. 6: triangles and running time (s) of the recursive mechanism, node / edge
PAPER_FIG6 = {
    "netscience": (3764, 8.924, 19.188),
    "power": (651, 0.468, 0.374),
    "1138_bus": (128, 0.078, 0.063),
    "bcspwr10": (721, 0.655, 0.406),
    "gemat12": (592, 0.640, 0.483),
    "ca-GrQc": (48260, 3940.552, 54236.462),
    "ca-HepTh": (28339, 788.160, 2104.818),
}
SIZES = [100, 200, 500, 1000, 2000, 5000]
PATTERNS = ["triangle", "2-star", "2-triangle", "4-cycle"]
OUT = ROOT / "benchmarks" / "out" / "subgraph"


def synthetic(n: int, seed: int) -> nx.Graph:
    return nx.gnp_random_graph(n, 10 / (n - 1), seed=seed)


def real_graph(name: str) -> nx.Graph:
    return real_graph_at(DATA if DATA.exists() else Path("/work/shared/data/graphs"), name)


def real_graph_at(data: Path, name: str) -> nx.Graph:
    u, v, isolated = read_edge_list(data / f"{name}.edges")
    g = nx.Graph()
    g.add_nodes_from(isolated.tolist())
    g.add_edges_from(zip(u.tolist(), v.tolist()))
    g.remove_edges_from(list(nx.selfloop_edges(g)))
    return g


def median_rel(values, truth) -> float:
    return statistics.median(abs(x - truth) / truth for x in values) if truth else float("nan")


def run_recursive(g, pattern, privacy, args, rng) -> dict:
    t0 = time.perf_counter()
    try:
        kr = relation(g, pattern, privacy=privacy, max_entries=args.max_entries)
    except Error as err:
        return {"status": f"refused: {type(err).__name__}"}
    build = time.perf_counter() - t0
    truth = kr.true_answer()
    if truth == 0:
        return {"status": "no occurrences", "truth": 0, "tuples": len(kr), "build_s": build}
    values, times = [], []
    start = time.perf_counter()
    for _ in range(args.releases):
        t = time.perf_counter()
        rel = rm.release(kr, epsilon=args.epsilon, privacy=privacy, rng=rng)
        times.append(time.perf_counter() - t)
        values.append(rel.value)
        if len(values) >= args.min_releases and time.perf_counter() - start > args.budget:
            break
    return {
        "status": "ok",
        "truth": truth,
        "tuples": len(kr),
        "build_s": build,
        "releases": len(values),
        "median_rel_error": median_rel(values, truth),
        "median_release_s": statistics.median(times),
    }


def run_baselines(g, pattern, truth, args, rng) -> list[dict]:
    """Edge-privacy baselines for one graph and pattern."""
    n = g.number_of_nodes()
    r = max(args.releases, 20)
    out = []
    gs = global_sensitivity(pattern, n, "edge")
    noise = rng.laplace(0.0, gs / args.epsilon, size=r)
    out.append({"mechanism": "laplace-GS", "median_rel_error": median_rel(truth + noise, truth),
                "releases": r, "sensitivity": gs})
    if pattern == "triangle":
        for label, delta in (("smooth-NRS (eps-DP)", None), ("smooth-NRS (eps,delta=0.1)", 0.1)):
            beta = smooth_beta(args.epsilon, delta=delta)
            s = triangle_smooth_sensitivity(g, beta)
            if delta is None:
                alpha = args.epsilon / 8.0  # ε/(2γ), γ = 4
                z = sample_power_law_noise(4.0, size=r, rng=rng)
            else:
                alpha = args.epsilon / 2.0
                z = rng.laplace(0.0, 1.0, size=r)
            out.append({"mechanism": label, "median_rel_error": median_rel(truth + s / alpha * z, truth),
                        "releases": r, "sensitivity": s})
    out.append(run_rhms(pattern, n, truth, args, rng, r))
    return out


def run_rhms(pattern, n, truth, args, rng, r) -> dict:
    """RHMS (Karwa et al.'s Algorithm 2, γ = 0.1): (ε, γ)-ADVERSARIAL privacy, NOT DP."""
    row = {"mechanism": "RHMS (eps,gamma=0.1)-adversarial, NOT DP"}
    try:
        p = rhms_params(pattern, n, epsilon=args.epsilon, gamma=0.1)
    except Error as err:
        return {**row, "status": f"refused: {err}"}
    lo, hi = rhms_median_error_bounds(p)
    row.update(sensitivity=p.lam, claim51_rel_error=f"{lo / truth:.3g}-{hi / truth:.3g}")
    try:
        vals = [rhms_release(truth, pattern, n, epsilon=args.epsilon, rng=rng, params=p)
                for _ in range(r)]
    except ValueError:
        return {**row, "status": "no draws: Laplace scale beyond the exact sampler's 2**64"}
    return {**row, "median_rel_error": median_rel(vals, truth), "releases": r}


def true_count_nx(g, pattern):
    from provsql_dp.graph import true_count

    return true_count(g, pattern)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--releases", type=int, default=None,
                    help="releases per setting (default 20; --fig4: 10 for ours)")
    ap.add_argument("--min-releases", type=int, default=3)
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds per setting after which releases stop (default: none; "
                         "--fig4: 300)")
    ap.add_argument("--epsilon", type=float, default=0.5)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--patterns", default=",".join(PATTERNS))
    ap.add_argument("--privacy", default="node,edge")
    ap.add_argument("--graphs", default=",".join(REAL))
    ap.add_argument("--real-patterns", default="triangle")
    ap.add_argument("--graph-seeds", type=int, default=1, help="random graphs per size")
    ap.add_argument("--seed", type=int, default=None, help="noise seed (default: OS entropy)")
    ap.add_argument("--max-entries", type=int, default=DEFAULT_MAX_ENTRIES)
    ap.add_argument("--no-synthetic", action="store_true")
    ap.add_argument("--no-real", action="store_true")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--quick", action="store_true",
                    help="releases=5, sizes 100..1000, small real graphs, 60 s per setting")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--kstars", action="store_true",
                    help="only the k-star / k-triangle comparison (issue 15)")
    ap.add_argument("--ktriangles-only", action="store_true",
                    help="with --kstars: only the k-triangle rows (written to ktriangles.md)")
    ap.add_argument("--kt-ks", default="2,3",
                    help="with --kstars: the k of the k-triangle rows (default 2,3)")
    ap.add_argument("--kt-graphs", default=None,
                    help="with --kstars: graphs for the k-triangle rows (default: all of --graphs)")
    ap.add_argument("--kt-max-entries", type=int, default=300_000,
                    help="k-triangles: refuse the enumerated K-relation above this many entries")
    ap.add_argument("--rhms", action="store_true",
                    help="only the RHMS rows for the real graphs (adversarial privacy, not DP)")
    ap.add_argument("--karwa-kt", action="store_true",
                    help="only Karwa et al.'s Algorithm 1 k-triangle rows (--kt-ks) for the graphs")
    ap.add_argument("--fig4", action="store_true",
                    help="only papers/003 Fig. 4 on G(n, 10/(n-1)): ours beside the paper's "
                         "baselines (triangle, 2-/3-star, 2-/3-triangle), table in fig4.md")
    ap.add_argument("--fig4-patterns", default=None,
                    help="with --fig4: patterns (default triangle,2-star,3-star,2-triangle,"
                         "3-triangle)")
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: 2 releases, |V| = 40, the bundled karate club, files to a "
                         "temporary directory (CI); combines with the mode flags")
    args = ap.parse_args(argv)
    if args.smoke:
        import _smoke

        global DATA
        DATA = args.data = _smoke.graphs_dir()
        args.graphs, args.sizes, args.out = _smoke.GRAPH, "40", str(_smoke.out_dir())
        args.releases, args.min_releases, args.budget, args.seed = 2, 1, 10.0, 2013
        args.kt_ks = "2"
        args.patterns = "triangle,2-star"
    if args.fig4:
        from subgraph_fig4 import run_fig4

        args.releases = 10 if args.releases is None else args.releases
        args.budget = 300.0 if args.budget is None else args.budget
        return run_fig4(args)
    args.releases = 20 if args.releases is None else args.releases
    args.budget = float("inf") if args.budget is None else args.budget
    if args.karwa_kt:
        from subgraph_kstars import run_karwa_kt

        return run_karwa_kt(args, real_graph_at)
    if args.rhms:
        from subgraph_kstars import run_rhms as run_rhms_rows

        return run_rhms_rows(args, real_graph_at)
    if args.kstars:
        from subgraph_kstars import run_kstars

        if not DATA.exists():
            args.data = Path("/work/shared/data/graphs")
        elif not args.smoke:
            args.data = DATA
        return run_kstars(args, real_graph_at)
    if args.quick:
        args.releases, args.budget = 5, min(args.budget, 60.0)
        args.sizes = "100,200,500,1000"
        args.graphs = "1138_bus,power,bcspwr10,gemat12,netscience"
    rng = np.random.default_rng(args.seed)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    privacies = [p for p in args.privacy.split(",") if p]

    def record(kind, graph, n, m, pattern, mechanism, res):
        row = {"kind": kind, "graph": graph, "V": n, "E": m, "pattern": pattern,
               "mechanism": mechanism, **res}
        rows.append(row)
        err = row.get("median_rel_error")
        print(f"{kind:9s} {graph:12s} |V|={n:<6d} {pattern:10s} {mechanism:28s} "
              f"T={row.get('truth', ''):<9} err={'' if err is None else f'{err:.4g}':10s} "
              f"rel_s={row.get('median_release_s', float('nan')):.3g} "
              f"n={row.get('releases', '')} {row.get('status', '')}", flush=True)

    def bench(kind, name, g, patterns):
        n, m = g.number_of_nodes(), g.number_of_edges()
        for pattern in patterns:
            truth = None
            for privacy in privacies:
                res = run_recursive(g, pattern, privacy, args, rng)
                truth = res.get("truth", truth)
                record(kind, name, n, m, pattern, f"recursive-{privacy}", res)
            if truth is None:
                truth = true_count_nx(g, pattern)
            if truth:
                for b in run_baselines(g, pattern, truth, args, rng):
                    mech = b.pop("mechanism")
                    record(kind, name, n, m, pattern, mech, {"status": "ok", "truth": truth, **b})

    if not args.no_synthetic:
        for n in [int(x) for x in args.sizes.split(",") if x]:
            for s in range(args.graph_seeds):
                bench("synthetic", f"gnp{n}-s{s}", synthetic(n, seed=1000 * n + s),
                      [p for p in args.patterns.split(",") if p])
    if not args.no_real:
        for name in [x for x in args.graphs.split(",") if x]:
            bench("real", name, real_graph(name), [p for p in args.real_patterns.split(",") if p])

    write_outputs(rows, out_dir, args)
    return 0


def _fmt(x, digits=3):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


def write_outputs(rows, out_dir: Path, args) -> None:
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k not in (
        "kind", "graph", "V", "E", "pattern", "mechanism"), k))
    with open(out_dir / "results.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    lines = [f"# Subgraph counting benchmark (ε = {args.epsilon}, up to {args.releases} releases)", ""]
    lines += ["| kind | graph | V | E | pattern | mechanism | true | tuples | median rel. error | "
              "release s | build s | releases | status |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| " + " | ".join(_fmt(r.get(k)) for k in (
            "kind", "graph", "V", "E", "pattern", "mechanism", "truth", "tuples", "median_rel_error",
            "median_release_s", "build_s", "releases", "status")) + " |")
    real = [r for r in rows if r["kind"] == "real" and r["pattern"] == "triangle"
            and r["mechanism"].startswith("recursive")]
    if real:
        lines += ["", "## Fig. 6: triangles and time per release (s), ours vs the paper", "",
                  "| graph | triangles | ours node | paper node | ours edge | paper edge |",
                  "|---|---|---|---|---|---|"]
        for name in dict.fromkeys(r["graph"] for r in real):
            mine = {r["mechanism"]: r for r in real if r["graph"] == name}
            paper = PAPER_FIG6.get(name, (None, None, None))
            lines.append(f"| {name} | {_fmt(mine.get('recursive-node', mine.get('recursive-edge', {})).get('truth'))} | "
                         f"{_fmt(mine.get('recursive-node', {}).get('median_release_s'))} | {_fmt(paper[1])} | "
                         f"{_fmt(mine.get('recursive-edge', {}).get('median_release_s'))} | {_fmt(paper[2])} |")
    text = "\n".join(lines) + "\n"
    (out_dir / "results.md").write_text(text)
    print()
    print(text)
    if not args.no_plots:
        try:
            plot(rows, out_dir)
        except ImportError:
            print("matplotlib not installed: no plots")


def plot(rows, out_dir: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    syn = [r for r in rows if r["kind"] == "synthetic" and r.get("median_rel_error") is not None]
    patterns = list(dict.fromkeys(r["pattern"] for r in syn))
    if syn:
        fig, axes = plt.subplots(1, len(patterns), figsize=(4 * len(patterns), 3.6), squeeze=False)
        for ax, pattern in zip(axes[0], patterns):
            for mech in dict.fromkeys(r["mechanism"] for r in syn if r["pattern"] == pattern):
                pts = sorted((r["V"], r["median_rel_error"]) for r in syn
                             if r["pattern"] == pattern and r["mechanism"] == mech)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=mech)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{pattern} (avg degree 10)")
            ax.set_xlabel("|V|")
            ax.set_ylabel("median relative error")
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out_dir / "fig4_error.png", dpi=120)
        plt.close(fig)
        fig, ax = plt.subplots(figsize=(5, 3.6))
        for pattern in patterns:
            for privacy in ("node", "edge"):
                pts = sorted((r["V"], r["median_release_s"]) for r in syn
                             if r["pattern"] == pattern and r["mechanism"] == f"recursive-{privacy}"
                             and r.get("median_release_s") is not None)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                            label=f"{pattern} {privacy}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("|V|")
        ax.set_ylabel("seconds per release")
        ax.set_title("recursive mechanism, avg degree 10")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out_dir / "fig5_time.png", dpi=120)
        plt.close(fig)
    real = [r for r in rows if r["kind"] == "real" and r["pattern"] == "triangle"
            and r.get("median_rel_error") is not None]
    if real:
        graphs = list(dict.fromkeys(r["graph"] for r in real))
        mechs = list(dict.fromkeys(r["mechanism"] for r in real))
        fig, ax = plt.subplots(figsize=(1.4 * len(graphs) + 3, 3.8))
        width = 0.8 / len(mechs)
        for i, mech in enumerate(mechs):
            ys = [next((r["median_rel_error"] for r in real if r["graph"] == g and r["mechanism"] == mech),
                       np.nan) for g in graphs]
            ax.bar(np.arange(len(graphs)) + i * width, ys, width, label=mech)
        ax.set_xticks(np.arange(len(graphs)) + 0.4 - width / 2)
        ax.set_xticklabels(graphs, rotation=20)
        ax.set_yscale("log")
        ax.set_ylabel("median relative error")
        ax.set_title("triangle counting on real graphs (ε = 0.5)")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out_dir / "fig7_real.png", dpi=120)
        plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
