"""Shared helpers for the graph tests: brute-force counts independent of the SQL compiler."""

from __future__ import annotations

import networkx as nx
from networkx.algorithms.isomorphism import GraphMatcher


def brute_automorphisms(p: nx.Graph) -> int:
    return sum(1 for _ in GraphMatcher(p, p).isomorphisms_iter())


def brute_occurrences(g: nx.Graph, p: nx.Graph) -> set[frozenset]:
    """Occurrences of ``p`` in ``g`` as edge sets (non-induced subgraphs isomorphic to p)."""
    out = set()
    for mapping in GraphMatcher(g, p).subgraph_monomorphisms_iter():
        inv = {pv: gv for gv, pv in mapping.items()}
        out.add(frozenset(frozenset((inv[a], inv[b])) for a, b in p.edges()))
    return out


def brute_embeddings(g: nx.Graph, p: nx.Graph) -> int:
    return sum(1 for _ in GraphMatcher(g, p).subgraph_monomorphisms_iter())
