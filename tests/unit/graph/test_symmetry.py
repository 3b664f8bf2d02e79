"""Symmetry breaking: exactly one embedding per occurrence, for every small connected pattern."""

import networkx as nx
import pytest
from graph_brute import brute_automorphisms
from networkx.algorithms.isomorphism import GraphMatcher

from provsql_dp.graph import resolve_pattern
from provsql_dp.graph._symmetry import (
    automorphism_count,
    implied_order,
    symmetry_conditions,
)


def _atlas_patterns(max_nodes=5):
    out = []
    for g in nx.graph_atlas_g()[1:]:
        if 2 <= g.number_of_nodes() <= max_nodes and nx.is_connected(g):
            out.append(g)
    return out


ATLAS = _atlas_patterns(5)  # 2 + 2 + 6 + 21 connected graphs with 2..5 nodes (+ 1 of 1 node skipped)


def test_atlas_size():
    assert len(ATLAS) == 1 + 2 + 6 + 21


@pytest.mark.parametrize("idx", range(len(ATLAS)))
def test_automorphism_count_matches_enumeration(idx):
    g = ATLAS[idx]
    assert automorphism_count(g) == brute_automorphisms(g)


@pytest.mark.parametrize("idx", range(len(ATLAS)))
def test_conditions_keep_exactly_one_automorphic_image(idx):
    """For a labelling φ of the pattern by distinct numbers, exactly one φ∘g (g ∈ Aut) passes."""
    g = ATLAS[idx]
    conds = symmetry_conditions(g)
    autos = list(GraphMatcher(g, g).isomorphisms_iter())
    nodes = sorted(g.nodes())
    # several labellings φ (values of the embedding), including reversed and shuffled orders
    import random

    rnd = random.Random(idx)
    for _ in range(6):
        values = rnd.sample(range(100), len(nodes))
        phi = dict(zip(nodes, values))
        passing = 0
        for a in autos:  # φ∘a maps pattern node v to φ(a(v))
            if all(phi[a[x]] < phi[a[y]] for x, y in conds):
                passing += 1
        assert passing == 1


@pytest.mark.parametrize(
    "name, k",
    [("k-star", 6), ("k-triangle", 4), ("cycle", 6), ("path", 5)],
)
def test_named_pattern_group_orders(name, k):
    import math

    p = resolve_pattern(name, k)
    expected = {
        "k-star": math.factorial(k),
        "k-triangle": 2 * math.factorial(k),
        "cycle": 2 * k,
        "path": 2,
    }[name]
    assert automorphism_count(p.graph) == expected


def test_large_star_is_fast_enough_to_compile():
    # |Aut| = 12! would be far too many maps to enumerate; the orbit chain needs O(k²) checks.
    assert automorphism_count(nx.star_graph(12)) == 479001600


def test_implied_order_is_transitive_closure():
    assert implied_order(4, [(0, 1), (1, 2), (2, 3)]) == {
        (0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)
    }
    assert implied_order(3, []) == set()
