"""``graph.count`` captures only what its release reads: the weights and annotations, none of
the pattern's node columns (``relation(columns=())``); ``graph.relation`` keeps every column by
default for its other callers. Both capture paths give the same tuples, weights and annotations
either way, so the release is the same, draw for draw."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import provsql_dp.graph as graph


def _same_relation(a, b):
    assert len(a) == len(b) and a.participant_list == b.participant_list
    assert np.array_equal(a.weights, b.weights)
    assert np.array_equal(a.mono_part, b.mono_part) and np.array_equal(a.mono_ptr, b.mono_ptr)


@pytest.mark.parametrize("capture", ["sql", "direct"])
@pytest.mark.parametrize("privacy", ["node", "edge"])
@pytest.mark.parametrize("pattern", ["triangle", "2-star", "path"])
def test_no_columns_same_relation(capture, privacy, pattern):
    g = nx.gnp_random_graph(14, 0.35, seed=4)
    k = 3 if pattern == "path" else None
    full = graph.relation(g, pattern, k, privacy=privacy, capture=capture)
    bare = graph.relation(g, pattern, k, privacy=privacy, capture=capture, columns=())
    assert len(full.columns) >= 3 and len(full.values) == len(full.columns)
    assert bare.columns == () and bare.values == ()
    _same_relation(full, bare)
    one = graph.relation(g, pattern, k, privacy=privacy, capture=capture, columns=("a0",)
                         if "a0" in full.columns else full.columns[:1])
    assert len(one.columns) == 1
    _same_relation(full, one)


def test_count_captures_no_column(monkeypatch):
    g = nx.gnp_random_graph(12, 0.4, seed=2)
    seen = []
    real = graph.relation

    def spy(*a, **kw):
        kr = real(*a, **kw)
        seen.append((kw.get("columns"), kr))
        return kr

    monkeypatch.setattr(graph, "relation", spy)
    rel = graph.count(g, "triangle", epsilon=1.0, privacy="edge", rng=np.random.default_rng(3))
    ((columns, kr),) = seen
    assert columns == () and kr.values == ()
    from provsql_dp.mechanisms.recursive import efficient as rm

    full = real(g, "triangle", privacy="edge")  # every column, as graph.count captured before
    before = rm.release(full, epsilon=1.0, privacy="edge", rng=np.random.default_rng(3))
    assert (rel.value, rel.delta_hat) == (before.value, before.delta_hat)
