"""Shared checks of the recursive mechanism's sequences for the size-independent constructions
(k-stars: mechanisms/subgraph/kstar.py, k-triangles: mechanisms/subgraph/ktriangle.py): Def. 17 (recursive) between
a structure and its neighbour, Def. 18 with g = 1 (G bounds H) or any g, and the shape of H and
G."""

from __future__ import annotations

import math

import numpy as np

TOL = 1e-6


def sequences(s) -> tuple[list[float], list[float]]:
    """``[H_0 … H_|P|]`` and ``[G_0 … G_|P|]`` of a construction."""
    n = s.n_participants
    return [s.h(i) for i in range(n + 1)], [s.g(i) for i in range(n + 1)]


def assert_recursive(big, small, *, seqs=None) -> None:
    """Def. 17 for ``P₁ = P₂ − p``: ``X_i(P₂) ≤ X_i(P₁) ≤ X_{i+1}(P₂)`` for X = H and G, every
    ``i < |P₂|`` (``seqs``: the big structure's sequences, when already computed)."""
    n2 = big.n_participants
    assert small.n_participants == n2 - 1
    hs, gs = seqs if seqs is not None else sequences(big)
    for i in range(n2):
        for name, a2, a1 in (("h", hs, small.h), ("g", gs, small.g)):
            v = a1(i)
            assert a2[i] <= v + TOL, (name, i)
            assert v <= a2[i + 1] + TOL, (name, i)


def assert_bounding(s) -> None:
    """Def. 18 with g = 1: ``H_j ≤ H_i + (|P| − i)·G_j`` for all ``i ≤ j``."""
    n = s.n_participants
    hs, gs = sequences(s)
    for j in range(n + 1):
        for i in range(j + 1):
            assert hs[j] <= hs[i] + (n - i) * gs[j] + TOL, (i, j)


def assert_g_bounding(s, g: int, factor: float = 1.0, *, seqs=None) -> None:
    """Def. 18 with any ``g ≥ 1`` for the sequence ``factor·G``: ``H_j ≤ H_i + (|P| −
    i)·factor·G_l`` for all ``i ≤ j``, ``l = |P| − ⌊(|P| − j)/g⌋`` (``g = 1``:
    :func:`assert_bounding`)."""
    n = s.n_participants
    hs, gs = seqs if seqs is not None else sequences(s)
    for j in range(n + 1):
        l = n - (n - j) // g
        for i in range(j + 1):
            assert hs[j] <= hs[i] + (n - i) * factor * gs[l] + TOL, (g, factor, i, j)


def assert_convex_nondecreasing(s) -> None:
    """H convex and nondecreasing, G nondecreasing."""
    hs, gs = sequences(s)
    d = np.diff(hs)
    assert np.all(d >= -TOL) and np.all(np.diff(d) >= -TOL) and np.all(np.diff(gs) >= -TOL)


def c_k(x: float, k: int) -> float:
    """``C_k``: the piecewise-linear interpolation of ``C(x, k)`` (written from the definition)."""
    m = math.floor(x)
    return math.comb(m, k) + (x - m) * math.comb(m, k - 1)


def c_k_left_slope(x: float, k: int) -> float:
    """``C_k'`` from the left: ``C(m, k − 1)`` on ``(m, m + 1]`` (0 at ``x ≤ 0``)."""
    return math.comb(math.ceil(x - 1e-9) - 1, k - 1) if x > 1e-9 else 0.0


def dense_graphs(max_nodes: int, max_dropped: int):
    """A hypothesis strategy: K4–K``max_nodes`` less up to ``max_dropped`` edges (networkx graphs
    dense enough for fractional points with ``x_e`` above ``k − 1``)."""
    import networkx as nx
    from hypothesis import strategies as st

    @st.composite
    def draw_graph(draw):
        n = draw(st.integers(4, max_nodes))
        pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
        drop = draw(st.sets(st.sampled_from(pairs), max_size=max_dropped))
        return nx.Graph([e for e in pairs if e not in drop])

    return draw_graph()
