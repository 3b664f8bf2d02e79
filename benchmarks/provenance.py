"""Benchmark: provenance capture of the triangle-listing K-relation vs plain DuckDB.

For each graph and privacy model (node: ``PROTECT TABLE edge BY (src, dst) AS node``; edge:
``PROTECT TABLE edge``), one subprocess loads the edge table, then alternates ``repeats`` times
between plain DuckDB running the same three-way self-join and returning the same rows (fetched as
numpy arrays) and ``con.provenance`` (the K-relation: rows, weights, annotations). It reports the
medians, their ratio (measured in the same process, interleaved), and the subprocess's peak RSS.

Usage::

    python benchmarks/provenance.py                      # ca-GrQc, ca-HepTh, ca-HepPh
    python benchmarks/provenance.py --graphs ca-GrQc --repeats 3
    python benchmarks/provenance.py --smoke              # seconds: the bundled karate club (CI)
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "graphs"
if not DATA.exists():  # run from a worktree (/work/wt/<name>): the shared data
    DATA = Path("/work/shared/data/graphs")

TRIANGLES = (
    "SELECT e1.src AS a, e1.dst AS b, e2.dst AS c "
    "FROM edge e1 JOIN edge e2 ON e1.dst = e2.src "
    "JOIN edge e3 ON e1.src = e3.src AND e2.dst = e3.dst "
    "WHERE e1.src < e1.dst AND e2.src < e2.dst"
)


def run_one(graph: str, privacy: str, repeats: int, data: Path = DATA) -> dict:
    import provsql_dp
    from provsql_dp.graph import load_edges

    con = provsql_dp.connect(":memory:")
    t0 = time.perf_counter()
    load_edges(con, Path(data) / f"{graph}.edges", table="edge")
    load_s = time.perf_counter() - t0
    if privacy == "node":
        con.execute("PROTECT TABLE edge BY (src, dst) AS node")
    else:
        con.execute("PROTECT TABLE edge")
    duck = con._duck
    plain, ours = [], []
    n = None
    for _ in range(repeats):
        t = time.perf_counter()
        res = duck.execute(TRIANGLES).fetchnumpy()
        plain.append(time.perf_counter() - t)
        t = time.perf_counter()
        kr = con.provenance(TRIANGLES)
        ours.append(time.perf_counter() - t)
        n = len(kr)
        assert len(res["a"]) == n
        del kr, res
    return {
        "graph": graph,
        "privacy": privacy,
        "triangles": n,
        "load_s": load_s,
        "plain_s": statistics.median(plain),
        "capture_s": statistics.median(ours),
        "ratio": statistics.median(ours) / statistics.median(plain),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", nargs="+", default=["ca-GrQc", "ca-HepTh", "ca-HepPh"])
    ap.add_argument("--privacy", nargs="+", default=["node", "edge"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--data", default=str(DATA), help="directory of the <graph>.edges files")
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: the bundled karate club, one repeat (CI)")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.smoke:
        import _smoke

        args.graphs, args.data, args.repeats = [_smoke.GRAPH], str(_smoke.graphs_dir()), 1
    if args.child:
        graph, privacy, repeats = args.child
        print(json.dumps(run_one(graph, privacy, int(repeats), args.data)))
        return
    header = f"{'graph':<10} {'privacy':<7} {'triangles':>10} {'plain s':>8} {'capture s':>9} {'ratio':>6} {'peak MB':>8}"
    print(header)
    print("-" * len(header))
    for graph in args.graphs:
        for privacy in args.privacy:
            out = subprocess.run(
                [sys.executable, __file__, "--child", graph, privacy, str(args.repeats),
                 "--data", args.data],
                capture_output=True, text=True, check=True,
            )
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(
                f"{r['graph']:<10} {r['privacy']:<7} {r['triangles']:>10} {r['plain_s']:>8.3f} "
                f"{r['capture_s']:>9.3f} {r['ratio']:>6.2f} {r['peak_rss_mb']:>8.0f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
