"""The unbounded SUM's release step and its exact sampler, for two checkouts of provsql_dp.

An unbounded ``SUM`` over a table protected row by row (issue 28) releases, per statement and
per part (a signed SUM has two), ``ĵ`` (discrete Laplace at λ = 1/ε₁, 4 at ε = 1) and ``X``
(λ ≈ 2^20·Δ̂/(γε₂), a few million grid units): four scalar draws. Printed per checkout (medians
of the rounds' medians, each round one child process per checkout, the order alternating):

* ``draw λ=…`` — one ``_dlap._draw(t, s, 1, generator)``: the exact sampler on a test generator
  (what a seeded test sees; µs per call and draws per second), at the SUM's two scales, and
  ``n = 10^4`` values at once (µs per call, values per second);
* ``release_buckets`` — the whole release of a signed SUM from its buckets (10^5 totals) with
  OS entropy, as a statement makes it (µs): the Δ searches, the clamped sums and the draws.

Usage::

    python benchmarks/sum_release_draws.py --before /path/to/other/checkout [--rounds 3]
    python benchmarks/sum_release_draws.py --smoke     # this checkout against itself, quickly
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CASES = [("draw λ=4 (ĵ)", (4, 1, 1)), ("draw λ=5·10^6 (X)", (5_000_000, 1, 1)),
         ("draw λ=5·10^6, n=10^4", (5_000_000, 1, 10_000))]


def _child(repeats: int) -> dict:
    import numpy as np

    from provsql_dp.mechanisms.noise import _dlap
    from provsql_dp.mechanisms.recursive import buckets

    out = {}
    for name, (t, s, n) in CASES:
        rng = np.random.Generator(np.random.Philox(key=1))
        reps = repeats if n == 1 else max(3, repeats // 50)
        times = []
        for _ in range(reps):
            start = time.perf_counter()
            _dlap._draw(t, s, n, rng)
            times.append(time.perf_counter() - start)
        out[name] = statistics.median(times)
    c = np.random.default_rng(0).integers(0, 120_000, 100_000).astype(float)
    params = buckets.params_for(1.0, 2, "edge")
    parts = [buckets.Buckets.from_totals(x, params["theta"], params["beta"], params["mu"])
             for x in (c, np.zeros(0))]
    for _ in range(20):
        buckets.release_buckets(parts, 1.0, "edge")
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        buckets.release_buckets(parts, 1.0, "edge")
        times.append(time.perf_counter() - start)
    out["release_buckets"] = statistics.median(times)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, help="the other checkout (default with --smoke: this one)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=400)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.repeats)))
        return
    if args.smoke:
        args.rounds, args.repeats = 1, 3
        args.before = args.before or REPO
    if args.before is None:
        ap.error("--before is required (the checkout to compare with)")
    codes = {"before": args.before.resolve(), "after": REPO}
    got = {c: [] for c in codes}
    loads = {c: [] for c in codes}
    for r in range(args.rounds):
        for c in (["before", "after"] if r % 2 == 0 else ["after", "before"]):
            loads[c].append(os.getloadavg()[0])
            env = {**os.environ, "PYTHONPATH": str(codes[c])}
            proc = subprocess.run([sys.executable, __file__, "--child", "--repeats",
                                   str(args.repeats)], capture_output=True, text=True, env=env,
                                  cwd="/")
            if proc.returncode != 0:
                raise SystemExit(f"{codes[c]} failed:\n{proc.stderr[-2000:]}")
            got[c].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    print(f"\n## The unbounded SUM's release step: before ({codes['before']}) and after ({REPO}),"
          f" {args.rounds} rounds × median of {args.repeats}\n")
    print("| step | before | after | before / after |")
    print("|---|---|---|---|")
    for name in [n for n, _ in CASES] + ["release_buckets"]:
        m = {c: statistics.median(x[name] for x in got[c]) for c in codes}
        n = dict(CASES).get(name, (0, 0, 1))[2]
        rate = {c: f" ({n / m[c]:,.0f}/s)" if name.startswith("draw") else "" for c in codes}
        print(f"| {name} | {m['before'] * 1e6:.1f} µs{rate['before']} | "
              f"{m['after'] * 1e6:.1f} µs{rate['after']} | {m['before'] / m['after']:.2f}× |")
    print(f"\n(1-minute load average when the children started: before "
          f"{statistics.median(loads['before']):.1f}, after {statistics.median(loads['after']):.1f}"
          f", on {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
