"""Shared pieces of the benchmarks' ``--smoke`` runs (``tests/system/test_benchmarks_smoke.py``).

A smoke run takes the same code paths as the measured run at a tiny size, in seconds, so a
benchmark cannot rot unnoticed. It never reads ``/work/shared/data`` (absent on the CI machine)
and never writes beside the measured tables: inputs come from the package's bundled example data
(``provsql_dp/data``) or are generated with a fixed seed, and files go to a fresh temporary
directory.

>>> import sys; sys.path.insert(0, "benchmarks")
>>> import _smoke
>>> d = _smoke.graphs_dir()
>>> sorted(p.name for p in d.iterdir())
['karate.edges']
>>> from provsql_dp.graph import read_edge_list
>>> u, v, _ = read_edge_list(d / "karate.edges")
>>> len(u)                       # Zachary's karate club: 78 friendships
78
>>> h = _smoke.histogram(64, seed=1)
>>> h.shape, bool((h >= 0).all())
((64,), True)
"""

from __future__ import annotations

import csv
import functools
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ROOT / "provsql_dp" / "data"
#: the bundled graph every graph benchmark smoke-runs on (34 nodes, 78 edges, 45 triangles)
GRAPH = "karate"


@functools.lru_cache(maxsize=None)
def out_dir() -> Path:
    """A fresh temporary directory for the files a smoke run writes (tables, plots)."""
    return Path(tempfile.mkdtemp(prefix="provsql_dp_smoke_"))


@functools.lru_cache(maxsize=None)
def graphs_dir() -> Path:
    """A directory holding ``karate.edges`` (the bundled ``karate.csv`` as an edge list)."""
    d = out_dir() / "graphs"
    d.mkdir(exist_ok=True)
    with open(BUNDLED / "karate.csv") as f:
        rows = [r for r in csv.reader(line for line in f if not line.startswith("#"))][1:]
    (d / f"{GRAPH}.edges").write_text(
        "# Zachary's karate club (provsql_dp/data/karate.csv)\n"
        + "".join(f"{a} {b}\n" for a, b in rows))
    return d


def histogram(k: int, seed: int = 0, shape=None) -> np.ndarray:
    """A generated count histogram (k bins, or ``shape``): Poisson counts around a few bumps."""
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape)) if shape is not None else k
    base = rng.gamma(0.5, 4.0, size)
    x = rng.poisson(base).astype(float)
    return x.reshape(shape) if shape is not None else x
