"""Benchmark: the k-triangle LPs before and after (issue 15 item 4), in one run.

For each graph and k, the same releases (ε = 0.5, library defaults, the same seed) by
``KTriangleCount(..., formulation="plain")`` — the direct epigraph LPs over every edge — and by
the default ``"segments"`` formulation solved on its quotient by the coarsest equitable partition
(``mechanisms/ktriangle.py``, ``mechanisms/_lp_quotient.py``). Printed per formulation: the first
release (the cold Δ search, X and H) and the median of the later ones, wall and CPU seconds
(this process; HiGHS runs single-threaded in it), the LP count and the largest LP, and whether
the released values agree (same H, G, X ⇒ same Δ, same noise draws ⇒ same values, up to the
LPs' tolerance moving a value across the noise grid).

Usage::

    PYTHONPATH=. python benchmarks/ktriangle_lp.py                       # ca-HepTh, k = 2
    PYTHONPATH=. python benchmarks/ktriangle_lp.py --graphs ca-GrQc --ks 2,3 --no-plain

``--privacy node`` does the same for the node-private construction
(``mechanisms/ktriangle_node.py``): ``formulation="plain"`` against the default ``"quotient"``
(``mechanisms/_ktriangle_node_lp.py``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from provsql_dp.graph import read_edge_list  # noqa: E402
from provsql_dp.mechanisms.subgraph.ktriangle import KTriangleCount  # noqa: E402
from provsql_dp.mechanisms.subgraph.ktriangle_node import NodeKTriangleCount  # noqa: E402

DATA = Path("/work/shared/data/graphs")


def run(e: np.ndarray, k: int, formulation: str, releases: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    w0, c0 = time.perf_counter(), time.process_time()
    cls = KTriangleCount if formulation in ("plain", "segments") else NodeKTriangleCount
    formulation = formulation.removeprefix("node-")
    kt = cls(e[:, 0], e[:, 1], k, formulation=formulation)
    walls, cpus, values = [], [], []
    for _ in range(releases):
        values.append(kt.release(0.5, rng=rng).value)
        w1, c1 = time.perf_counter(), time.process_time()
        walls.append(w1 - w0)
        cpus.append(c1 - c0)
        w0, c0 = w1, c1
    big = max(kt.stats.log, key=lambda r: r[2] * r[3]) if kt.stats.log else None
    return {"walls": walls, "cpus": cpus, "values": values, "lps": kt.stats.n_lps,
            "largest": f"{big[2]}×{big[3]}" if big else "–", "truth": kt.true_answer}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default="ca-HepTh")
    ap.add_argument("--ks", default="2")
    ap.add_argument("--releases", type=int, default=5)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--no-plain", action="store_true", help="only the new formulation")
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--privacy", choices=("edge", "node"), default="edge")
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: the bundled karate club, two releases (CI)")
    args = ap.parse_args(argv)
    if args.smoke:
        import _smoke

        args.data, args.graphs, args.releases = str(_smoke.graphs_dir()), _smoke.GRAPH, 2
    old, new = (("plain", "segments") if args.privacy == "edge"
                else ("node-plain", "node-quotient"))
    print("| graph | k | formulation | first release s wall / CPU | later median s wall / CPU | LPs solved "
          "| largest LP (rows×cols) | values |")
    print("|---|---|---|---|---|---|---|---|")
    for name in [x for x in args.graphs.split(",") if x]:
        u, v, _ = read_edge_list(Path(args.data) / f"{name}.edges")
        keep = u != v  # as benchmarks/subgraph.py: a simple undirected graph
        lo, hi = np.minimum(u[keep], v[keep]), np.maximum(u[keep], v[keep])
        e = np.unique(np.stack([lo, hi], axis=1), axis=0)
        for k in [int(x) for x in args.ks.split(",") if x]:
            res = {}
            for form in ((new,) if args.no_plain else (old, new)):
                r = res[form] = run(e, k, form, args.releases, args.seed)
                later_w = statistics.median(r["walls"][1:]) if len(r["walls"]) > 1 else float("nan")
                later_c = statistics.median(r["cpus"][1:]) if len(r["cpus"]) > 1 else float("nan")
                same = ""
                if form == new and old in res:
                    diff = max(abs(a - b) for a, b in zip(res[old]["values"], r["values"]))
                    same = f"max |Δ| vs plain {diff:.3g}"
                print(f"| {name} | {k} | {form} | {r['walls'][0]:.1f} / {r['cpus'][0]:.1f} | "
                      f"{later_w:.2f} / {later_c:.2f} | {r['lps']} | {r['largest']} | {same} |",
                      flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
