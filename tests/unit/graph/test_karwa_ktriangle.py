"""Karwa et al.'s k-triangle mechanism (Algorithm 1): Lemma 4.1's local sensitivity against brute
force over every pair flip, Lemma 4.2's bound B against the brute-force change of LS, and the
release's structure (the released bound is ≥ LS but with probability ≤ δ, Theorem 4.3's ε range)."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest

from provsql_dp.graph.karwa_ktriangle import (
    MAX_EPSILON,
    karwa_b,
    karwa_ktriangle_release,
    ktriangle_local_sensitivity,
)
from provsql_dp.mechanisms.subgraph.smooth import ktriangle_count


def _edges(g):
    return np.array(list(g.edges()), dtype=np.int64).reshape(-1, 2)


def _count(g, n, k):
    e = _edges(g)
    return ktriangle_count(e[:, 0], e[:, 1], n, k)


def _flips(g, n):
    for i, j in itertools.combinations(range(n), 2):
        h = g.copy()
        if h.has_edge(i, j):
            h.remove_edge(i, j)
        else:
            h.add_edge(i, j)
        yield h


def _brute_ls(g, n, k):
    base = _count(g, n, k)
    return max((abs(_count(h, n, k) - base) for h in _flips(g, n)), default=0)


def _ls(g, n, k):
    e = _edges(g)
    return ktriangle_local_sensitivity(e[:, 0], e[:, 1], n, k)


def _random_graph(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 9))
    g = nx.gnp_random_graph(n, float(rng.random()), seed=seed)
    g.add_nodes_from(range(n))
    return g, n


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("k", [2, 3])
def test_local_sensitivity_is_lemma_4_1_by_brute_force(seed, k):
    g, n = _random_graph(seed)
    assert _ls(g, n, k) == _brute_ls(g, n, k)


@pytest.mark.parametrize("seed", range(12))
def test_b_bounds_the_change_of_ls_over_one_flip(seed):
    """Lemma 4.2 (used by the release's privacy): |LS(G) − LS(G')| ≤ B(a_max(G)) for neighbours."""
    g, n = _random_graph(100 + seed)
    for k in (2, 3):
        ls = _ls(g, n, k)
        a_max = max((len(set(g[i]) & set(g[j])) for i, j in itertools.combinations(range(n), 2)),
                    default=0)
        for h in _flips(g, n):
            assert abs(_ls(h, n, k) - ls) <= karwa_b(a_max, k)


def test_b_is_nondecreasing_and_never_below_the_paper_at_integers():
    for k in (2, 3, 4):
        vals = [karwa_b(a / 4, k) for a in range(-8, 200)]
        assert all(x <= y for x, y in zip(vals, vals[1:]))
        for a in range(0, 40):
            assert karwa_b(a, k) == 3 * math.comb(a, k - 1) + a * math.comb(a, k - 2)


@pytest.mark.slow  # a rate check, ~11 s loaded: CI's second step
def test_release_bound_is_above_ls_but_with_probability_at_most_delta():
    g = nx.gnp_random_graph(30, 0.3, seed=4)
    e = _edges(g)
    stats_ls = ktriangle_local_sensitivity(e[:, 0], e[:, 1], 30, 2)
    rng = np.random.default_rng(9)
    below, values = 0, []
    for _ in range(600):
        v, bound = karwa_ktriangle_release(e[:, 0], e[:, 1], 30, 2, epsilon=0.5, delta=0.1, rng=rng)
        below += bound < stats_ls
        values.append(v)
    assert below / 600 <= 0.1
    err = np.array(values) - ktriangle_count(e[:, 0], e[:, 1], 30, 2)
    assert abs(np.median(err)) < 0.2 * np.median(np.abs(err))  # symmetric noise around the count


def test_release_refuses_what_theorem_4_3_does_not_cover():
    src, dst = np.array([0, 0, 1]), np.array([1, 2, 2])
    with pytest.raises(ValueError, match="Theorem 4.3"):
        karwa_ktriangle_release(src, dst, 3, 2, epsilon=MAX_EPSILON * 1.01, delta=0.1)
    with pytest.raises(ValueError, match="delta"):
        karwa_ktriangle_release(src, dst, 3, 2, epsilon=0.5, delta=1.0)
    with pytest.raises(ValueError, match="k >= 2"):
        karwa_ktriangle_release(src, dst, 3, 1, epsilon=0.5, delta=0.1)
    v, bound = karwa_ktriangle_release(np.array([0]), np.array([1]), 3, 2, epsilon=0.5,
                                       delta=0.1, rng=np.random.default_rng(0))
    assert np.isfinite(v) and bound >= 1  # no common neighbour anywhere: still a valid release
