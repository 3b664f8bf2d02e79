"""Symmetry breaking: from a pattern's automorphism group to ``<`` conditions on node ids.

Counting the occurrences of a pattern P in a graph G by a self-join enumerates *embeddings*
(injective maps φ : V(P) → V(G) that send edges to edges). Every occurrence (a subgraph of G
isomorphic to P) is hit by exactly ``|Aut(P)|`` embeddings, φ∘g for g in Aut(P). We add conditions
``φ(a) < φ(b)`` that exactly one embedding per occurrence satisfies, whatever the pattern, using
the stabiliser chain of Aut(P) (Grochow & Kellis, RECOMB 2007):

1. with the current group Γ (initially Aut(P)), pick a node v whose orbit O = Γ·v is largest;
2. require ``φ(v) < φ(w)`` for every other w in O;
3. replace Γ by the stabiliser of v in Γ and repeat until Γ is trivial.

Why exactly one: among the embeddings φ∘g (g ∈ Γ) the images of O are the same set φ(O), and the
conditions of step 2 hold iff g(v) is the node u* of O with the smallest image. The g with
g(v) = u* form one coset of Stab_Γ(v), so the survivors are one Stab_Γ(v)-orbit of embeddings,
and induction on the chain leaves one. By orbit–stabiliser, ``|Aut(P)|`` is the product of the
orbit sizes met on the way, which the tests check against a brute-force enumeration.

Orbits are found with VF2 (networkx) on the pattern coloured by the nodes fixed so far, one
existence check per candidate pair, so k-stars with a large k cost O(k²) checks, not k! maps.

Examples
--------
>>> import networkx as nx
>>> symmetry_conditions(nx.cycle_graph(3))
[(0, 1), (0, 2), (1, 2)]
>>> automorphism_count(nx.cycle_graph(4))
8
>>> symmetry_conditions(nx.star_graph(3))
[(1, 2), (1, 3), (2, 3)]
"""

from __future__ import annotations

from functools import lru_cache

import networkx as nx
from networkx.algorithms.isomorphism import GraphMatcher

__all__ = ["symmetry_conditions", "automorphism_count", "orbit_chain", "implied_order"]


def _maps_to(g: nx.Graph, fixed: tuple[int, ...], v: int, w: int) -> bool:
    """Is there an automorphism of ``g`` fixing every node of ``fixed`` and sending v to w?"""
    if v == w:
        return True
    if g.degree(v) != g.degree(w):
        return False
    g1 = g.copy()
    g2 = g.copy()
    for i, f in enumerate(fixed):
        g1.nodes[f]["c"] = ("fixed", i)
        g2.nodes[f]["c"] = ("fixed", i)
    g1.nodes[v]["c"] = "target"
    g2.nodes[w]["c"] = "target"
    matcher = GraphMatcher(g1, g2, node_match=lambda a, b: a.get("c") == b.get("c"))
    return matcher.is_isomorphic()


def orbit_chain(g: nx.Graph) -> list[tuple[int, tuple[int, ...]]]:
    """The stabiliser chain as a list of ``(v, orbit of v)``, orbits of size ≥ 2 only.

    Parameters
    ----------
    g : networkx.Graph
        A pattern with integer nodes.

    Returns
    -------
    list of (int, tuple of int)
        In the order the nodes are fixed; the orbit lists ``v`` first, then the others sorted.

    Examples
    --------
    >>> orbit_chain(nx.path_graph(3))
    [(0, (0, 2))]
    """
    return [(v, orbit) for v, orbit in _orbit_chain(_freeze(g))]


def _freeze(g: nx.Graph) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...]]:
    nodes = tuple(sorted(g.nodes()))
    edges = tuple(sorted((min(u, v), max(u, v)) for u, v in g.edges()))
    return nodes, edges


@lru_cache(maxsize=256)
def _orbit_chain(frozen) -> tuple[tuple[int, tuple[int, ...]], ...]:
    nodes, edges = frozen
    g = nx.Graph()
    g.add_nodes_from(nodes)
    g.add_edges_from(edges)
    fixed: tuple[int, ...] = ()
    chain = []
    while True:
        free = [v for v in nodes if v not in fixed]
        # Orbits of the current stabiliser, as a partition of the free nodes.
        seen: set[int] = set()
        orbits = []
        for v in free:
            if v in seen:
                continue
            orbit = [v] + [w for w in free if w != v and w not in seen and _maps_to(g, fixed, v, w)]
            seen.update(orbit)
            orbits.append(orbit)
        best = max(orbits, key=len)  # first of the largest: deterministic
        if len(best) < 2:
            return tuple(chain)
        v = best[0]
        chain.append((v, (v, *sorted(best[1:]))))
        fixed = fixed + (v,)


def symmetry_conditions(g: nx.Graph) -> list[tuple[int, int]]:
    """Pairs ``(a, b)`` meaning ``φ(a) < φ(b)``: one embedding per occurrence satisfies all.

    Parameters
    ----------
    g : networkx.Graph
        A pattern with integer nodes.

    Returns
    -------
    list of (int, int)

    Examples
    --------
    >>> symmetry_conditions(nx.path_graph(2))
    [(0, 1)]
    >>> symmetry_conditions(nx.Graph([(0, 1), (1, 2), (2, 3), (1, 3)]))  # a triangle with a tail
    [(2, 3)]
    """
    return [(v, w) for v, orbit in orbit_chain(g) for w in orbit[1:]]


def automorphism_count(g: nx.Graph) -> int:
    """``|Aut(g)|`` as the product of the orbit sizes of the stabiliser chain.

    Examples
    --------
    >>> automorphism_count(nx.star_graph(4)), automorphism_count(nx.complete_graph(4))
    (24, 24)
    """
    out = 1
    for _, orbit in orbit_chain(g):
        out *= len(orbit)
    return out


def implied_order(n: int, conditions: list[tuple[int, int]]) -> set[tuple[int, int]]:
    """All pairs ``(a, b)`` with ``φ(a) < φ(b)`` implied by ``conditions`` (transitive closure).

    Examples
    --------
    >>> sorted(implied_order(3, [(0, 1), (1, 2)]))
    [(0, 1), (0, 2), (1, 2)]
    """
    less = [set() for _ in range(n)]
    for a, b in conditions:
        less[a].add(b)
    changed = True
    while changed:
        changed = False
        for a in range(n):
            extra = set().union(*(less[b] for b in less[a])) - less[a] if less[a] else set()
            if extra:
                less[a] |= extra
                changed = True
    return {(a, b) for a in range(n) for b in less[a]}
