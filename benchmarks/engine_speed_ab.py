"""Before and after in one run: the unbounded ``SUM`` and ``COUNT`` of
``benchmarks/_analyst_engine_speed.py`` (issue 28, item 7) measured with two checkouts of
provsql_dp, alternating, on the same loaded machine.

Each round runs, per query, one child process of ``_analyst_engine_speed.py --child`` with
``PROVSQL_DP_CODE=<before>`` and one with this repository (the order alternates between rounds),
each building its tables and timing ``repeats`` interleaved rounds of plain DuckDB and
provsql_dp. The table gives per query and code the medians over the rounds of the children's
medians: plain DuckDB, provsql_dp, the wall ratio (the target's figure), the CPU ratio (the
process's CPU seconds, which a loaded machine moves less) and the 1-minute load average when
each child started; the last column is after / before of provsql_dp's time.

With ``--native``, the two codes are this checkout with the SQL bucket pass ("sql": the
children see an empty ``PROVSQL_DP_NATIVE_DIR``, so ``pdp_buckets`` is not loaded) and with the
native one ("native": ``provsql-dp build-native`` must have been run; the children refuse to
measure without it).

Usage::

    python benchmarks/engine_speed_ab.py --before /path/to/other/checkout \\
        [--queries count_where,sum_rows] [--rows 10000000] [--repeats 7] [--rounds 3]
    python benchmarks/engine_speed_ab.py --native --queries sum_rows   # SQL pass vs native
    python benchmarks/engine_speed_ab.py --smoke     # 10^5 rows, this checkout against itself
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SECTION = REPO / "benchmarks" / "_analyst_engine_speed.py"


def child(code: Path, key: str, rows: int, repeats: int, env_extra=None) -> dict:
    """One measurement of one query with the provsql_dp of ``code`` (``env_extra``: more
    environment variables of the child)."""
    load = os.getloadavg()[0]
    env = {**os.environ, "PROVSQL_DP_CODE": str(code), **(env_extra or {})}
    proc = subprocess.run([sys.executable, str(SECTION), "--child", key, str(rows),
                           str(repeats)], capture_output=True, text=True, env=env, cwd=REPO)
    if proc.returncode != 0:
        raise SystemExit(f"{key} with {code} failed:\n{proc.stderr[-2000:]}")
    return {**json.loads(proc.stdout.strip().splitlines()[-1]), "load": load}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, help="the other checkout (default with --smoke: "
                    "this one)")
    ap.add_argument("--queries", default="count_where,sum_rows")
    ap.add_argument("--rows", type=int, default=10**7)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--native", action="store_true", help="the SQL bucket pass against the "
                    "native one (privacy.native), both of this checkout")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args(argv)
    if args.smoke:
        args.rows, args.repeats, args.rounds = 10**5, 2, 1
        args.before = args.before or REPO
    envs = {"before": {}, "after": {}}
    if args.native:
        sys.path.insert(0, str(REPO))
        from provsql_dp.privacy.native import built_path

        if built_path() is None and not args.smoke:
            ap.error("--native: the native pass is not built (provsql-dp build-native)")
        args.before = REPO
        empty = Path(tempfile.mkdtemp(prefix="provsql_dp_no_native_"))
        envs["before"] = {"PROVSQL_DP_NATIVE_DIR": str(empty)}
        if not args.smoke:  # a child whose connection did not load it stops
            envs["after"] = {"PROVSQL_DP_BENCH_NATIVE": "1"}
    if args.before is None:
        ap.error("give --before <checkout> (or --smoke, or --native)")
    codes = {"before": args.before.resolve(), "after": REPO}
    keys = args.queries.split(",")
    got = {(k, c): [] for k in keys for c in codes}
    for r in range(args.rounds):
        for key in keys:
            order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
            for c in order:
                got[key, c].append(child(codes[c], key, args.rows, args.repeats, envs[c]))
    names = {"before": "SQL pass", "after": "native"} if args.native else {}
    what = ("the SQL bucket pass and the native one (pdp_buckets)" if args.native else
            f"Before ({codes['before']}) and after ({REPO})")
    print(f"\n## {what}: {args.rows:,} rows, ε = 1, "
          f"{args.rounds} rounds × median of {args.repeats}\n")
    print("| query | code | plain DuckDB | provsql_dp | ratio | CPU plain | CPU provsql_dp | "
          "CPU ratio | load | after / before |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key in keys:
        med = {}
        for c in codes:
            rs = got[key, c]
            m = {f: statistics.median(x[f] for x in rs)
                 for f in ("plain", "private", "plain_cpu", "private_cpu", "load")}
            med[c] = m
            change = (f"{m['private'] / med['before']['private']:.2f}× wall, "
                      f"{m['private_cpu'] / med['before']['private_cpu']:.2f}× CPU"
                      if c == "after" else "")
            print(f"| {rs[0]['label'] if c == 'before' else ''} | {names.get(c, c)} | "
                  f"{m['plain'] * 1e3:.1f} ms | {m['private'] * 1e3:.1f} ms | "
                  f"{m['private'] / m['plain']:.2f}× | {m['plain_cpu'] * 1e3:.1f} ms | "
                  f"{m['private_cpu'] * 1e3:.1f} ms | {m['private_cpu'] / m['plain_cpu']:.2f}× | "
                  f"{m['load']:.1f} | {change} |")
    print(f"\n(1-minute load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} "
          "CPUs)")


if __name__ == "__main__":
    main()
