"""The merge keys of R2T's reduced LP (:mod:`provsql_dp.mechanisms.r2t._reduce`): the fast path
for monomials of one size (graph patterns) partitions the columns exactly as the general path,
and the merged LP on such K-relations equals the plain LP."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from provsql_dp.mechanisms.r2t._reduce import class_keys
from provsql_dp.mechanisms.r2t.truncation import R2TModel
from provsql_dp.provenance.krelation import KRelation


def triangles(seed: int, n: int, p: float, node: bool) -> KRelation:
    """The triangles of a random graph, node-private ({a, b, c}) or edge-private (3 edges)."""
    rng = np.random.default_rng(seed)
    adj = np.triu(rng.random((n, n)) < p, 1)
    adj = adj | adj.T
    tri = [t for t in itertools.combinations(range(n), 3)
           if adj[t[0], t[1]] and adj[t[1], t[2]] and adj[t[0], t[2]]]
    if node:
        ann = [[{("v", a), ("v", b), ("v", c)}] for a, b, c in tri]
    else:
        ann = [[{("e", a * n + b), ("e", b * n + c), ("e", a * n + c)}] for a, b, c in tri]
    return KRelation.from_annotations(rows=tri, annotations=ann,
                                      weights=rng.integers(1, 3, len(tri)).astype(float))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(6, 14), st.floats(0.3, 0.9), st.booleans(),
       st.floats(0.05, 1.0))
def test_uniform_keys_partition_as_the_general_ones(seed, n, p, node, frac):
    kr = triangles(seed, n, p, node)
    if kr.n_tuples < 2:
        return
    m = R2TModel(kr)
    assert m._uniform_k == 3
    rows = m.load > frac * m.max_load
    ms = np.flatnonzero(m.maxload > frac * m.max_load)
    if len(ms) < 2:
        return
    fast = class_keys(m, ms, rows)
    m._uniform_k = 0  # the general path (lexsort over the entries)
    slow = class_keys(m, ms, rows)
    _, inv_fast = np.unique(fast, return_inverse=True)
    _, inv_slow = np.unique(slow, return_inverse=True)
    assert np.array_equal(inv_fast, inv_slow)
    m._uniform_k = 3
    tau = frac * m.max_load
    assert m.value(tau) == pytest.approx(m.plain_value(tau), abs=1e-6)
