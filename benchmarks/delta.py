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

Usage: ``python benchmarks/delta.py [--quick] [--part 1|2] [--reps R] [--samples N]``; tables on
stdout, plots (and the tables as Markdown) in ``benchmarks/out/``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from provsql_dp.delta import (
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
from provsql_dp.delta.allocation import solve_batch, window_matrix

DATA = "/work/shared/data/hist1d/twitter_256_256.npy"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")


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


def part1(args):
    t0 = time.time()
    pts = twitter_points()
    print(f"Part 1: Twitter points n = {len(pts):,} (jittered, seed fixed), ε = {args.eps}, "
          f"{args.queries} queries per size, {args.runs} noise draw(s)")
    rng = np.random.default_rng(7)
    sizes = (0.01, 0.1, 0.2)
    Q = {s: queries(s, args.queries, rng) for s in sizes}
    T = {s: true_counts(pts, *Q[s]) for s in sizes}
    noise = np.random.default_rng(11)

    def mse(release_fn):
        errs = {s: [] for s in sizes}
        for _ in range(args.runs):
            rel = release_fn()
            for s in sizes:
                est = rel.range_count(*Q[s])
                errs[s].append(np.mean((est - T[s]) ** 2))
        return {s: float(np.mean(errs[s])) for s in sizes}

    pol0 = Policy(0.001, dims=2)
    widths = np.round(np.arange(0.0025, 0.04001, 0.0025), 4)
    base = {}
    for w in widths:
        base[w] = mse(lambda w=w: equiwidth_histogram(pts, pol0, args.eps, w, rng=noise))
    print("\nEqui-width baseline, MSE by bin width (paper Table 5 columns k = 0.005 … 0.02):")
    print("  width  " + "".join(f"{s:>12}" for s in sizes))
    for w in widths:
        print(f"  {w:<6} " + "".join(f"{base[w][s]:>12.1f}" for s in sizes))
    best = {s: min(widths, key=lambda w: base[w][s]) for s in sizes}

    res = {}
    shift_widths = {0.001: (0.002, 0.003, 0.004, 0.005, 0.01, 0.02),
                    0.0001: (0.0015, 0.0025, 0.003, 0.004, 0.005, 0.01, 0.02)}
    for d in (0.001, 0.0001):
        pol = Policy(d, dims=2)
        dw = default_bin_width(pol, args.eps)
        res[(d, "default")] = (dw, mse(lambda: shifted_histograms(pts, pol, args.eps, rng=noise)))
        for w in shift_widths[d]:
            res[(d, w)] = (w, mse(lambda w=w: shifted_histograms(pts, pol, args.eps, bin_width=w,
                                                                  rng=noise)))
    lines = ["| query size | baseline best width | baseline MSE | shifted δ=0.001 (default w) | "
             "shifted δ=0.0001 (default w) |", "|---|---|---|---|---|"]
    for s in sizes:
        lines.append(f"| {s} | {best[s]} | {base[best[s]][s]:.1f} | "
                     f"{res[(0.001, 'default')][1][s]:.1f} | {res[(0.0001, 'default')][1][s]:.1f} |")
    print("\nTable: MSE of range queries, Twitter (paper Table 5 / Fig. 4: at size 0.1 baseline "
          "6726, δ=0.001 → 543, δ=0.0001 → 109)")
    print(f"  default widths: δ=0.001 → {res[(0.001, 'default')][0]:g}, "
          f"δ=0.0001 → {res[(0.0001, 'default')][0]:g}")
    print("\n".join(lines))
    lines2 = ["| δ | bin width | " + " | ".join(f"MSE s={s}" for s in sizes) + " |",
              "|---|---|" + "---|" * len(sizes)]
    for (d, key), (w, m) in sorted(res.items(), key=lambda kv: (-kv[0][0], str(kv[0][1]))):
        lines2.append(f"| {d} | {w:g}{' (default)' if key == 'default' else ''} | "
                      + " | ".join(f"{m[s]:.1f}" for s in sizes) + " |")
    print("\nShifted histograms by bin width:")
    print("\n".join(lines2))
    print(f"(part 1: {time.time() - t0:.0f} s)")
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "delta_part1.md"), "w") as f:
        f.write("\n".join(lines) + "\n\n" + "\n".join(lines2) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(1, 3, figsize=(13, 3.8))
        for a, s in zip(ax, sizes):
            a.semilogy(widths, [base[w][s] for w in widths], "o-", label="equi-width (ε-DP)")
            for d, mk in ((0.001, "s--"), (0.0001, "^--")):
                ws = sorted(w for (dd, k), (w, _) in res.items() if dd == d and k != "default")
                a.semilogy(ws, [res[(d, w)][1][s] for w in ws], mk, label=f"shifted δ={d}")
                dw, m = res[(d, "default")]
                a.semilogy([dw], [m[s]], "k*", ms=10)
            a.set_title(f"query size {s}")
            a.set_xlabel("bin width")
        ax[0].set_ylabel("MSE")
        ax[0].legend(fontsize=7)
        fig.suptitle("Twitter: range-query MSE (★ = data-independent default width)")
        fig.tight_layout()
        fig.savefig(os.path.join(OUT, "delta_ranges.png"), dpi=120)
    except ImportError:  # pragma: no cover
        pass


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
    ap.add_argument("--part", type=int, choices=(1, 2))
    ap.add_argument("--quick", action="store_true", help="small settings (smoke run)")
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--online-reps", type=int, default=1000)
    ap.add_argument("--samples", type=int, default=20)
    args = ap.parse_args(argv)
    if args.quick:
        args.queries, args.runs, args.reps, args.online_reps, args.samples = 300, 1, 100, 10, 10
    if args.part in (None, 1):
        part1(args)
    if args.part in (None, 2):
        part2(args)


if __name__ == "__main__":
    sys.exit(main())
