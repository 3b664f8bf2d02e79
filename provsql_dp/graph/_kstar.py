"""Route k-star counts to the degree construction (:mod:`provsql_dp.mechanisms.subgraph.kstar`), and
k-triangle counts to the triangle construction (:mod:`provsql_dp.mechanisms.subgraph.ktriangle` under edge
privacy, :mod:`provsql_dp.mechanisms.subgraph.ktriangle_node` under node privacy).

A k-star count's K-relation has Σ_v C(d_v, k) tuples (2.5 M 3-stars on ca-GrQc), which the
enumerated path refuses above ``max_entries``. The degree construction needs only the edge list:
its LPs have O(|V| + |E|) columns whatever k, so no size guard applies. :func:`star_leaves`
recognises a k-star pattern (named or given as a networkx star), :func:`kstar_structure` loads the
(filtered) graph through DuckDB exactly as the enumerated path does and builds the structure.

>>> import networkx as nx
>>> star_leaves("3-star"), star_leaves(nx.star_graph(4)), star_leaves("triangle")
(3, 4, None)
>>> ks = kstar_structure(nx.star_graph(5), 2, "edge")
>>> ks.true_answer, ks.n_participants
(10.0, 5)
"""

from __future__ import annotations

import duckdb
import numpy as np

from ..errors import InterfaceError
from ..mechanisms.subgraph.kstar import KStarCount
from ..mechanisms.subgraph.ktriangle import KTriangleCount
from ..mechanisms.subgraph.ktriangle_node import NodeKTriangleCount
from .load import duck_of, load_edges
from .patterns import resolve_pattern

__all__ = ["star_leaves", "triangle_pages", "degree_shape", "kstar_structure", "count_kstar",
           "CONSTRUCTIONS"]

#: ``construction=`` values of :func:`provsql_dp.graph.count`
CONSTRUCTIONS = ("auto", "degree", "enumerate")


def star_leaves(pattern, k: int | None = None) -> int | None:
    """``k`` when ``pattern`` is a star with k ≥ 2 leaves (``"k-star"``, ``"2-star"``, a networkx
    star, ``"2-path"`` — the 2-star), else None."""
    p = resolve_pattern(pattern, k)
    g = p.graph
    n = g.number_of_nodes()
    if n < 3 or g.number_of_edges() != n - 1:
        return None
    degrees = sorted(d for _, d in g.degree())
    if degrees[-1] == n - 1 and degrees[0] == 1 and degrees[-2] == 1:
        return n - 1
    return None


def triangle_pages(pattern, k: int | None = None) -> int | None:
    """``k`` when ``pattern`` is a k-triangle with k ≥ 2 (k triangles sharing an edge: an edge
    whose two ends are both joined to k other nodes), else None.

    >>> triangle_pages("2-triangle"), triangle_pages("k-triangle", 3), triangle_pages("4-cycle")
    (2, 3, None)
    """
    import networkx as nx

    g = resolve_pattern(pattern, k).graph
    pages = g.number_of_nodes() - 2
    if pages < 2 or g.number_of_edges() != 2 * pages + 1:
        return None
    book = nx.complete_multipartite_graph(2, pages)  # hubs 0, 1 joined to every page …
    book.add_edge(0, 1)                              # … and to each other
    return pages if nx.is_isomorphic(g, book) else None


def degree_shape(pattern, k, privacy: str, mechanism: str, construction: str):
    """``("star", k)``, ``("triangle", k)`` or None: the construction :func:`count` uses
    (see :func:`provsql_dp.graph.count`'s ``construction``)."""
    if construction not in CONSTRUCTIONS:
        raise InterfaceError(f"construction must be one of {', '.join(CONSTRUCTIONS)}, "
                             f"got {construction!r}")
    if mechanism != "recursive" or construction == "enumerate":
        return None
    leaves = star_leaves(pattern, k)
    if leaves is not None:
        return ("star", leaves)
    pages = triangle_pages(pattern, k)
    if pages is not None:
        return ("triangle", pages)
    if construction == "degree":
        raise InterfaceError("construction='degree' applies to k-stars (k >= 2) and k-triangles "
                             "(k >= 2), released with the recursive mechanism; use 'enumerate' "
                             "or 'auto' for this pattern")
    return None


def kstar_structure(source, k: int, privacy: str, *, node_filter=None, edge_filter=None,
                    progress=None, load=None, kind: str = "star") -> KStarCount:
    """Load ``source`` (constraints applied to the edge table by ``load``, the package's
    ``_load_filtered``, as for the enumerated path) and build the degree construction
    (``kind="triangle"``: the k-triangle one, :class:`KTriangleCount` under edge privacy,
    :class:`NodeKTriangleCount` under node privacy)."""
    if load is None:
        def load(con, source, node_filter, edge_filter):
            if node_filter is not None or edge_filter is not None:
                raise ValueError("constraints need the package loader: use graph.count")
            return load_edges(con, source)

    con = duckdb.connect()
    try:
        loaded = load(con, source, node_filter, edge_filter)
        if progress is not None:
            progress("load", nodes=loaded.n_nodes, edges=loaded.n_edges)
        res = duck_of(con).execute("SELECT src, dst FROM edge ORDER BY src, dst").fetchnumpy()
    finally:
        con.close()
    src = np.asarray(res["src"], dtype=np.int64)
    dst = np.asarray(res["dst"], dtype=np.int64)
    if kind == "triangle" and privacy == "edge":
        return KTriangleCount(src, dst, k, privacy)
    n_nodes = None
    if privacy == "node":
        ends = len(np.unique(np.concatenate([src, dst]))) if len(src) else 0
        n_nodes = max(int(loaded.n_nodes or 0), ends)
    if kind == "triangle":
        return NodeKTriangleCount(src, dst, k, n_nodes=n_nodes)
    return KStarCount(src, dst, k, privacy, n_nodes=n_nodes)


def count_kstar(G, shape, privacy, epsilon, node_filter, edge_filter, rng, budget, progress,
                options, *, load, checks):
    """:func:`count` for a k-star (``shape = ("star", k)``) or a k-triangle (``("triangle", k)``)
    with its construction (see the module docstring)."""
    import networkx as nx

    from ..mechanisms.recursive._framework import resolve_params
    from ._progress import PHASES, Progress

    extra = sorted(set(options) - {"theta", "beta", "mu", "eps1", "eps2"})
    if extra:
        raise InterfaceError(f"option {extra[0]!r} does not apply to the k-{shape[0]} "
                             "construction; its options are theta, beta, mu, eps1, eps2 "
                             "(or pass construction='enumerate')")
    try:
        resolve_params(epsilon, privacy, **options)
    except ValueError as e:
        raise InterfaceError(str(e)) from e
    if isinstance(G, nx.Graph):
        checks(G)
    kind, k = shape
    name = f"{k}-{kind}"
    with Progress(f"count {name}", enabled=progress) as bar:
        bar.phase(PHASES[0])
        ks = kstar_structure(G, k, privacy, node_filter=node_filter, edge_filter=edge_filter,
                             load=load, kind=kind)
        bar.phase(PHASES[2], participants=ks.n_participants)
        if budget is not None:
            budget.ledger.charge(
                budget.user, epsilon, f"graph.count({name!r}, privacy={privacy!r})", "recursive"
            )
        bar.phase(PHASES[4])
        bar.watch(ks.stats)
        return ks.release(epsilon, rng=rng, **options)
