"""Query patterns for subgraph counting: names → small connected networkx graphs.

A *pattern* is a small, simple, undirected, connected graph with at least one edge. Its nodes are
relabelled ``0 … n-1``; column ``n{i}`` of the compiled SQL is the graph node matched to pattern
node ``i``. Named patterns (Chen & Zhou §6.1):

=================  =====================================================  ============
name               graph                                                  needs ``k``
=================  =====================================================  ============
``"edge"``         one edge ``0–1``                                       no
``"triangle"``     ``0–1–2–0``                                            no
``"k-star"``       centre ``0`` joined to leaves ``1 … k``                yes, k ≥ 1
``"k-triangle"``   base edge ``0–1`` and apexes ``2 … k+1``, each joined  yes, k ≥ 1
                   to ``0`` and ``1`` (k triangles sharing one edge)
``"path"``         ``0–1–…–k`` (k edges)                                  yes, k ≥ 1
``"cycle"``        ``0–1–…–(k-1)–0`` (k edges)                            yes, k ≥ 3
=================  =====================================================  ============

``k`` may also be written into the name: ``"2-star"``, ``"3-triangle"``, ``"4-cycle"``,
``"3-path"``; ``"star"``, ``"path"`` and ``"cycle"`` then take ``k`` from the keyword.

Examples
--------
>>> p = resolve_pattern("2-triangle")
>>> p.name, p.n_nodes, p.n_edges
('2-triangle', 4, 5)
>>> sorted(resolve_pattern("k-star", k=3).graph.edges())
[(0, 1), (0, 2), (0, 3)]
>>> import networkx as nx
>>> resolve_pattern(nx.path_graph(["a", "b", "c"])).labels
('a', 'b', 'c')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import networkx as nx

from ..errors import InterfaceError

__all__ = ["Pattern", "resolve_pattern", "PATTERN_NAMES", "MAX_PATTERN_NODES"]

#: The names :func:`resolve_pattern` understands (``k`` given separately or as a prefix).
PATTERN_NAMES = ("edge", "triangle", "k-star", "k-triangle", "path", "cycle")

#: A pattern compiles to one self-join alias per edge; beyond this many nodes the SQL stops being
#: a sensible thing to ask DuckDB for, and the number of occurrences explodes anyway.
MAX_PATTERN_NODES = 16


@dataclass(frozen=True, eq=False)
class Pattern:
    """A resolved query pattern.

    Attributes
    ----------
    name : str
        A readable name (``"triangle"``, ``"3-star"``, ``"custom"`` …).
    graph : networkx.Graph
        The pattern with nodes ``0 … n-1``.
    labels : tuple
        ``labels[i]`` is the caller's label of pattern node ``i`` (``i`` for named patterns).
    """

    name: str
    graph: nx.Graph
    labels: tuple

    @property
    def n_nodes(self) -> int:
        return self.graph.number_of_nodes()

    @property
    def n_edges(self) -> int:
        return self.graph.number_of_edges()

    def __repr__(self) -> str:
        return f"Pattern({self.name!r}, {self.n_nodes} nodes, {self.n_edges} edges)"


_PREFIXED = re.compile(r"^\s*(\d+)\s*-\s*(star|triangle|path|cycle)\s*$")


def _need_k(kind: str, k, minimum: int) -> int:
    if k is None:
        raise InterfaceError(f"pattern {kind!r} needs k (e.g. pattern='{kind}', k={max(minimum, 2)})")
    if isinstance(k, bool) or not isinstance(k, int) or k < minimum:
        raise InterfaceError(f"pattern {kind!r} needs an integer k >= {minimum}, got {k!r}")
    return k


def _named(kind: str, k) -> tuple[str, nx.Graph]:
    if kind == "edge":
        return "edge", nx.path_graph(2)
    if kind == "triangle":
        return "triangle", nx.cycle_graph(3)
    if kind in ("star", "k-star"):
        k = _need_k("k-star", k, 1)
        return f"{k}-star", nx.star_graph(k)
    if kind in ("k-triangle",):
        k = _need_k("k-triangle", k, 1)
        g = nx.Graph([(0, 1)])
        for apex in range(2, k + 2):
            g.add_edges_from([(0, apex), (1, apex)])
        return f"{k}-triangle", g
    if kind in ("path", "k-path"):
        k = _need_k("path", k, 1)
        return f"{k}-path", nx.path_graph(k + 1)
    if kind in ("cycle", "k-cycle"):
        k = _need_k("cycle", k, 3)
        return f"{k}-cycle", nx.cycle_graph(k)
    raise InterfaceError(
        f"unknown pattern {kind!r}: use one of {', '.join(PATTERN_NAMES)} "
        "(k as a keyword or a prefix such as '2-star'), or pass a networkx graph"
    )


def resolve_pattern(pattern, k: int | None = None) -> Pattern:
    """Turn a pattern name or a networkx graph into a :class:`Pattern`.

    Parameters
    ----------
    pattern : str or networkx.Graph or Pattern
        A name from :data:`PATTERN_NAMES` (``k`` may be a prefix: ``"2-star"``) or a small,
        simple, undirected, connected graph with at least one edge.
    k : int, optional
        The size parameter of ``"k-star"``, ``"k-triangle"``, ``"path"`` and ``"cycle"``.

    Returns
    -------
    Pattern

    Raises
    ------
    provsql_dp.errors.InterfaceError
        For an unknown name, a missing or bad ``k``, or a graph that is directed, a multigraph,
        disconnected, edgeless, has self-loops or more than :data:`MAX_PATTERN_NODES` nodes.

    Examples
    --------
    >>> resolve_pattern("4-cycle")
    Pattern('4-cycle', 4 nodes, 4 edges)
    >>> resolve_pattern("cycle", k=2)
    Traceback (most recent call last):
    ...
    provsql_dp.errors.InterfaceError: pattern 'cycle' needs an integer k >= 3, got 2
    """
    if isinstance(pattern, Pattern):
        return pattern
    if isinstance(pattern, str):
        m = _PREFIXED.match(pattern)
        if m:
            prefix_k = int(m.group(1))
            if k is not None and k != prefix_k:
                raise InterfaceError(f"pattern {pattern!r} already fixes k={prefix_k}; got k={k}")
            kind = {"star": "k-star", "triangle": "k-triangle"}.get(m.group(2), m.group(2))
            name, g = _named(kind, prefix_k)
        else:
            name, g = _named(pattern.strip().lower(), k)
        return Pattern(name=name, graph=g, labels=tuple(range(g.number_of_nodes())))
    if isinstance(pattern, nx.Graph):
        return _from_graph(pattern)
    raise InterfaceError(
        f"pattern must be a name or a networkx.Graph, got {type(pattern).__name__}"
    )


def _from_graph(g: nx.Graph) -> Pattern:
    if g.is_directed():
        raise InterfaceError("a pattern must be an undirected graph (got a directed one)")
    if g.is_multigraph():
        raise InterfaceError("a pattern must be a simple graph (got a multigraph)")
    if g.number_of_edges() == 0:
        raise InterfaceError("a pattern needs at least one edge")
    if nx.number_of_selfloops(g):
        raise InterfaceError("a pattern must not have self-loops")
    if not nx.is_connected(g):
        raise InterfaceError("a pattern must be connected (count the components separately)")
    if g.number_of_nodes() > MAX_PATTERN_NODES:
        raise InterfaceError(
            f"a pattern may have at most {MAX_PATTERN_NODES} nodes, got {g.number_of_nodes()}"
        )
    labels = tuple(g.nodes())
    index = {v: i for i, v in enumerate(labels)}
    h = nx.Graph()
    h.add_nodes_from(range(len(labels)))
    h.add_edges_from((index[u], index[v]) for u, v in g.edges())
    return Pattern(name="custom", graph=h, labels=labels)
