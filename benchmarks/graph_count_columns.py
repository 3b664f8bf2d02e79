"""What ``graph.count`` captures: every pattern column (``relation(columns=None)``, as before)
or none (``columns=()``, what the release reads). Each capture runs in a child process of its
own; the table gives its wall time, the child's peak RSS, Python's peak allocation (tracemalloc)
and the K-relation's tuples and value columns.

    nice -n 19 python benchmarks/graph_count_columns.py [--graph ca-GrQc] [--pattern triangle]
    python benchmarks/graph_count_columns.py --smoke   # seconds: the bundled karate club
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

#: the graphs (``PROVSQL_DP_GRAPHS``, else the shared data folder beside the checkout)
DATA = Path(os.environ.get("PROVSQL_DP_GRAPHS",
                           Path(__file__).resolve().parents[2] / "shared" / "data" / "graphs"))
if not DATA.exists():  # run from a worktree (/work/wt/<name>): the shared data
    DATA = Path("/work/shared/data/graphs")


def child(graph: str, pattern: str, privacy: str, columns: str) -> None:
    import tracemalloc

    from provsql_dp.graph import relation

    tracemalloc.start()
    t0 = time.perf_counter()
    kr = relation(str(DATA / f"{graph}.edges"), pattern, privacy=privacy, max_entries=None,
                  columns=None if columns == "all" else ())
    seconds = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "rss_mb": rss, "py_peak_mb": peak / 2**20,
                      "tuples": len(kr), "value_columns": len(kr.values),
                      "answer": kr.true_answer()}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--graph", default="ca-GrQc")
    ap.add_argument("--pattern", default="triangle")
    ap.add_argument("--child", nargs=4)
    ap.add_argument("--smoke", action="store_true", help="the bundled karate club")
    args = ap.parse_args()
    if args.smoke:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import _smoke

        os.environ["PROVSQL_DP_GRAPHS"] = str(_smoke.graphs_dir())  # read by the children
        args.graph = _smoke.GRAPH
    if args.child:
        child(*args.child)
        return
    print(f"graph.count's capture on {args.graph}, pattern {args.pattern}")
    print("| privacy | columns | tuples | value columns | seconds | peak RSS MB | Python peak MB |")
    print("|---|---|---|---|---|---|---|")
    for privacy in ("node", "edge"):
        for columns in ("all", "none"):
            out = subprocess.run([sys.executable, __file__, "--child", args.graph, args.pattern,
                                  privacy, columns], capture_output=True, text=True, check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"| {privacy} | {columns} | {r['tuples']:,} | {r['value_columns']} | "
                  f"{r['seconds']:.2f} | {r['rss_mb']:.0f} | {r['py_peak_mb']:.1f} |")


if __name__ == "__main__":
    main()
