"""Karwa et al.'s k-star / k-triangle baselines (mechanisms/subgraph/smooth.py): their sensitivity
formulas against brute force over all graphs within a few edge changes of small random graphs."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest

from provsql_dp.mechanisms.subgraph import smooth as gs


def arrays(g):
    e = np.array(list(g.edges()), dtype=np.int64).reshape(-1, 2)
    return e[:, 0], e[:, 1]


def stars(g, k):
    return sum(math.comb(d, k) for _, d in g.degree())


def ktri(g, k):
    return sum(math.comb(len(set(g[i]) & set(g[j])), k) for i, j in g.edges())


def toggled(g, pair):
    h = g.copy()
    if h.has_edge(*pair):
        h.remove_edge(*pair)
    else:
        h.add_edge(*pair)
    return h


def local(g, f):
    pairs = itertools.combinations(sorted(g.nodes()), 2)
    return max((abs(f(toggled(g, p)) - f(g)) for p in pairs), default=0)


def within(g, s):
    """Every graph on g's nodes at edge distance <= s."""
    pairs = list(itertools.combinations(sorted(g.nodes()), 2))
    for r in range(s + 1):
        for flips in itertools.combinations(pairs, r):
            h = g
            for p in flips:
                h = toggled(h, p)
            yield h


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("seed", range(8))
def test_kstar_local_sensitivity_at_distance_s_is_exact(seed, k):
    n = 5 + seed % 2
    g = nx.gnp_random_graph(n, 0.3 + 0.08 * (seed % 5), seed=seed)
    u, v = arrays(g)
    assert gs.kstar_count(u, v, n, k) == stars(g, k)
    for s in range(3):
        brute = max(local(h, lambda x: stars(x, k)) for h in within(g, s))
        assert gs.kstar_local_sensitivity(u, v, n, k, s) == brute, s


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("seed", range(8))
def test_ktriangle_bound_covers_the_local_sensitivity_at_distance_s(seed, k):
    n = 5 + seed % 2
    g = nx.gnp_random_graph(n, 0.4 + 0.07 * (seed % 5), seed=seed)
    u, v = arrays(g)
    assert gs.ktriangle_count(u, v, n, k) == ktri(g, k)
    a = gs._a_max(u, v, n)
    for s in range(3):
        brute = max(local(h, lambda x: ktri(x, k)) for h in within(g, s))
        assert gs.ktriangle_local_bound(a + s, n, k) >= brute, s


@pytest.mark.parametrize("which", ["kstar", "ktriangle"])
def test_smooth_bounds_are_smooth_over_neighbours(which):
    """S(G) <= e^β S(G') for every neighbour G' (the dilation condition) and S >= LS."""
    beta = 0.3
    g = nx.gnp_random_graph(6, 0.5, seed=11)
    fn = gs.kstar_smooth_sensitivity if which == "kstar" else gs.ktriangle_smooth_sensitivity
    count = stars if which == "kstar" else ktri
    s0 = fn(*arrays(g), 6, 2, beta)
    assert s0 >= local(g, lambda x: count(x, 2)) - 1e-9
    for p in itertools.combinations(range(6), 2):
        h = toggled(g, p)
        assert s0 <= math.exp(beta) * fn(*arrays(h), 6, 2, beta) + 1e-9


def test_releases_are_integers_from_the_exact_sampler():
    g = nx.karate_club_graph()
    u, v = arrays(g)
    r1 = gs.kstar_release(u, v, 34, 2, epsilon=0.5, delta=0.1, rng=np.random.default_rng(0))
    r2 = gs.kstar_release(u, v, 34, 2, epsilon=0.5, delta=0.1, rng=np.random.default_rng(0))
    assert r1 == r2 and float(r1).is_integer()
    t = gs.ktriangle_release(u, v, 34, 2, epsilon=0.5, delta=0.1, rng=np.random.default_rng(1))
    assert float(t).is_integer()
    with pytest.raises(ValueError, match="delta"):
        gs.kstar_release(u, v, 34, 2, epsilon=0.5, delta=0)
    with pytest.raises(ValueError, match="k >= 2"):
        gs.ktriangle_release(u, v, 34, 1, epsilon=0.5, delta=0.1)
