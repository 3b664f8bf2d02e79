"""Smoke test of ``benchmarks/subgraph.py --fig4`` (papers/003 Fig. 4 on G(n, p)): tiny graphs,
two releases — the table's shape, its true counts against networkx, and seed reproducibility."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

pytestmark = pytest.mark.slow  # .ci/run's second step: pytest tests -m 'slow or spark'

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "subgraph.py"
PATTERNS = ["triangle", "2-star", "3-star", "2-triangle", "3-triangle"]
EXPECTED = {
    "triangle": {"recursive-enum-node", "recursive-enum-edge", "nrs-triangle-pure", "nrs-triangle",
                 "rhms", "laplace-GS"},
    "star": {"recursive-degree-node", "recursive-degree-edge", "karwa-kstar-pure", "karwa-kstar",
             "rhms", "laplace-GS"},
    "triangles": {"recursive-triangle-node", "recursive-triangle-edge", "karwa-ktriangle-alg1",
                  "smooth-ktriangle", "rhms", "laplace-GS"},
}


def _run(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, str(SCRIPT), "--fig4", "--releases", "2",
                           "--min-releases", "1", "--out", str(tmp_path), *extra],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
                          check=False)


def _tables(text: str) -> tuple[list[list[str]], list[list[str]]]:
    """(summary rows, per-setting rows) of fig4.md, cells stripped, header lines dropped."""
    summary_part, rest = text.split("## Every setting", 1)
    setting_part = rest.split("## Deliberate deviations", 1)[0]

    def rows(part):
        lines = [ln for ln in part.splitlines() if ln.startswith("|")]
        return [[c.strip() for c in re.split(r"(?<!\\)\|", ln.strip("|"))] for ln in lines[2:]]

    return rows(summary_part), rows(setting_part)


def _networkx_count(g: nx.Graph, pattern: str) -> int:
    if pattern == "triangle":
        return sum(nx.triangles(g).values()) // 3
    k = int(pattern[0])
    if pattern.endswith("star"):
        return sum(math.comb(d, k) for _, d in g.degree())
    return sum(math.comb(len(set(g[u]) & set(g[v])), k) for u, v in g.edges())


@pytest.fixture(scope="module")
def fig4(tmp_path_factory):
    out = tmp_path_factory.mktemp("fig4")
    res = _run(out, "--sizes", "30,40", "--seed", "7")
    assert res.returncode == 0, res.stderr[-3000:]
    return (out / "fig4.md").read_text(), res.stdout


def test_summary_table_has_every_pattern_mechanism_and_size(fig4):
    text, stdout = fig4
    assert "| pattern | mechanism | guarantee | |V|=30 | |V|=40 |" in text
    summary, _ = _tables(text)
    assert all(len(r) == 5 for r in summary)
    for pattern in PATTERNS:
        mechs = {r[1].strip("*") for r in summary if r[0] == pattern}
        kind = "triangle" if pattern == "triangle" else pattern.split("-")[1] + (
            "s" if pattern.endswith("triangle") else "")
        assert mechs == EXPECTED[kind] | {"true count"}, pattern
    rhms = [r for r in summary if r[1] == "rhms"]
    assert rhms and all("NOT DP" in r[2] and "adversarial" in r[2] for r in rhms)
    # ours: error and the seconds of the first / median release
    ours = [r for r in summary if r[1].startswith("**recursive")]
    assert all(re.fullmatch(r"[0-9.e+-]+ · [0-9.e+-]+ / [0-9.e+-]+ s", c) for r in ours
               for c in r[3:])
    assert "## Deliberate deviations" in text and text.count("\n- ") >= 8
    assert "| pattern | mechanism |" in stdout  # the table is printed too


def test_truth_is_the_networkx_count_and_release_counts(fig4):
    text, _ = fig4
    _, settings = _tables(text)
    assert settings
    graphs = {}
    for graph, pattern, mech, guarantee, truth, err, _, _, n, note in settings:
        size, seed = map(int, re.fullmatch(r"G\((\d+)\) seed (\d+)", graph).groups())
        if graph not in graphs:
            graphs[graph] = nx.gnp_random_graph(size, 10 / (size - 1), seed=seed)
        assert int(truth) == _networkx_count(graphs[graph], pattern), (graph, pattern)
        if mech.startswith("recursive"):
            assert int(n) == 2 and float(err) >= 0, (graph, pattern, mech)
        elif note.startswith("refused"):
            assert mech == "rhms" and int(n) == 0
        elif mech != "(none)":
            assert int(n) == 20 and float(err) >= 0, (graph, pattern, mech)
    assert {g.split()[0] for g in graphs} == {"G(30)", "G(40)"}


def test_same_seed_same_errors(tmp_path, fig4):
    res = _run(tmp_path, "--sizes", "30", "--seed", "7", "--fig4-patterns", "triangle,2-star")
    assert res.returncode == 0, res.stderr[-3000:]
    _, again = _tables((tmp_path / "fig4.md").read_text())
    _, first = _tables(fig4[0])
    def pick(rows):  # graph, pattern, mechanism, truth, error
        return [(r[0], r[1], r[2], r[4], r[5]) for r in rows
                if r[0].startswith("G(30)") and r[1] in ("triangle", "2-star")]

    assert pick(again) == pick(first) and pick(first)


def test_unknown_pattern_is_a_clear_error(tmp_path):
    res = _run(tmp_path, "--sizes", "30", "--fig4-patterns", "triangle,4-cycle")
    assert res.returncode != 0
    assert "--fig4-patterns: unknown 4-cycle" in res.stderr
