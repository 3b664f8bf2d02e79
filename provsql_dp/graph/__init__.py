"""Private subgraph counting with node- or edge-differential privacy (Chen & Zhou §6.1).

Count the occurrences of a small pattern — ``"edge"``, ``"triangle"``, ``"k-star"``,
``"k-triangle"``, ``"path"``, ``"cycle"`` or any small connected networkx graph — in an undirected
graph and release the count with the recursive mechanism. Each occurrence is a tuple of the
sensitive K-relation annotated with the conjunction of its nodes (node privacy: a participant is a
node with all its edges) or of its edges (edge privacy: a participant is one edge).

* :func:`count` — the one-liner on a networkx graph (or an edge-list file); returns the mechanism's
  ``Release``.
* :func:`pattern_sql` — the self-join SQL a pattern compiles to, for use over an edge table from
  SQL (``PROTECT TABLE edge BY (src, dst) AS node`` or ``PROTECT TABLE edge``).
* :func:`load_edges` — bulk-load a networkx graph or an edge-list file into DuckDB.
* :func:`true_count` — the exact count (curator only: it is not private).
* :func:`relation` — the sensitive K-relation a count is released from.

**Edge-table format.** One row per undirected edge with ``src < dst`` (``load_edges`` writes
this); a table holding both directions must be reduced first with
``SELECT DISTINCT LEAST(src, dst) AS src, GREATEST(src, dst) AS dst … WHERE src <> dst``.

**Constraints.** ``node_filter`` and ``edge_filter`` are SQL boolean expressions, written with
unqualified column names, over the node table's columns (networkx node attributes) and the edge
table's columns (networkx edge attributes). Every node, respectively every edge, of a counted
occurrence must satisfy them: ``node_filter="age > 30"`` counts the triangles whose three nodes
are all older than 30. They must be row-local (no subqueries, aggregates or window functions):
a predicate that looks at the graph's structure (a node's degree, say) would let one participant
change which *other* occurrences pass, and the privacy argument — the K-relation of a neighbouring
graph is this one with the participant set to False — would no longer hold. Attribute values
themselves are treated as public under edge privacy, and as the node's own data under node
privacy (removing a node removes every occurrence it is in, whatever its attributes).

**k-stars: the degree construction.** A k-star count (``"k-star"``, ``"2-star"``, ``"2-path"``
or a networkx star, k ≥ 2) is released by :mod:`provsql_dp.mechanisms.subgraph.kstar` by default
(``construction="auto"``): the recursive mechanism on H and G built over node degrees, LPs with
O(|V| + |E|) columns whatever k, instead of one K-relation tuple per star (the paper's footnote 2
announces such a construction without giving it; this one is ours and its proofs are in that
module). No size guard applies: 3-stars on ca-GrQc (2.5 M stars) take seconds under edge privacy.
``construction="enumerate"`` keeps the K-relation path below. k-triangles (``"k-triangle"``,
k ≥ 2) likewise go to :mod:`provsql_dp.mechanisms.subgraph.ktriangle` (edge privacy) or
:mod:`provsql_dp.mechanisms.subgraph.ktriangle_node` (node privacy): LPs of one column per node, edge and
triangle, whatever k.

**Size limit (other patterns).** The K-relation has one tuple per occurrence, so the LPs of the
recursive mechanism grow with the count, each tuple with |V(P)| (node) or |E(P)| (edge)
participants. Merging equal node sets (node privacy) is exact and applied. :func:`count` measures
the count with one cheap ``COUNT(*)`` in DuckDB first and refuses with
:class:`~provsql_dp.errors.UnsupportedQueryError` when occurrences × pattern size exceeds
``max_entries`` (default :data:`DEFAULT_MAX_ENTRIES` = 2,000,000), before any budget or noise is
used. The guard bounds memory; the LP time also grows with the relation (a 2-star count with
~50,000 tuples takes about half a minute per release under edge privacy on the enumerated path),
so pass the mechanism's ``time_limit`` (seconds per LP, raising
:class:`~provsql_dp.errors.SolverError`) when a bound on the wait matters. Note that whether a
count is refused depends on the data (one bit: is the count above the limit?); a deployment that
lets untrusted analysts call :func:`count` should set ``max_entries`` from public knowledge or
leave the guard to a trusted curator.

Examples
--------
>>> import networkx as nx
>>> G = nx.karate_club_graph()
>>> true_count(G, "triangle"), true_count(G, "k-star", k=2)
(45, 528)
>>> print(pattern_sql("2-star"))
SELECT e0.src AS n0, e0.dst AS n1, e1.dst AS n2
FROM (SELECT src, dst FROM edge UNION ALL SELECT dst, src FROM edge) AS e0
JOIN (SELECT src, dst FROM edge UNION ALL SELECT dst, src FROM edge) AS e1 ON e1.src = e0.src
WHERE e0.dst < e1.dst
"""

from __future__ import annotations

import numbers

import duckdb
import networkx as nx

from ..errors import InterfaceError
from ..provenance.krelation import KRelation
from ._compile import CompiledPattern, _table, compile_pattern, qualify_predicate
from ._kstar import count_kstar, degree_shape
from ._progress import PHASES, Progress
from ._relation import (
    DEFAULT_MAX_ENTRIES,
    check_size,
    direct_relation,
    merge_equal_annotations,
)
from ._symmetry import automorphism_count, symmetry_conditions
from .load import LoadedGraph, duck_of, load_edges, read_edge_list
from .patterns import PATTERN_NAMES, Pattern, resolve_pattern

__all__ = [
    "count",
    "relation",
    "pattern_sql",
    "true_count",
    "load_edges",
    "read_edge_list",
    "resolve_pattern",
    "symmetry_conditions",
    "automorphism_count",
    "Pattern",
    "LoadedGraph",
    "PATTERN_NAMES",
    "DEFAULT_MAX_ENTRIES",
]

_PRIVACY = ("node", "edge")


def pattern_sql(
    pattern,
    k: int | None = None,
    *,
    table: str = "edge",
    node_table: str = "node",
    node_filter: str | None = None,
    edge_filter: str | None = None,
    count: bool = False,
) -> str:
    """The SQL that finds (or counts) the occurrences of ``pattern`` in an edge table.

    Parameters
    ----------
    pattern : str or networkx.Graph
        A pattern name (see :data:`PATTERN_NAMES`) or a small connected graph.
    k : int, optional
        Size parameter of ``"k-star"``, ``"k-triangle"``, ``"path"``, ``"cycle"``.
    table : str
        The edge table: columns ``src``, ``dst``, one row per undirected edge with ``src < dst``.
    node_table : str
        The node table (key column ``id``) that ``node_filter`` refers to.
    node_filter, edge_filter : str, optional
        Row-local SQL predicates every matched node / edge must satisfy.
    count : bool
        ``SELECT COUNT(*) AS occurrences`` instead of one row ``(n0, n1, …)`` per occurrence.

    Returns
    -------
    str
        A DuckDB query. Run under ``PROTECT TABLE edge BY (src, dst) AS node`` (node privacy) or
        ``PROTECT TABLE edge`` (edge privacy), ``SELECT COUNT(*) FROM (<this>)`` is the private
        count.

    Examples
    --------
    >>> print(pattern_sql("triangle", count=True))
    SELECT COUNT(*) AS occurrences
    FROM edge AS e0
    JOIN edge AS e1 ON e1.src = e0.src
    JOIN edge AS e2 ON e2.src = e0.dst AND e2.dst = e1.dst
    >>> "u.age > 30" in pattern_sql("edge", node_filter="age > 30")
    True
    """
    c = compile_pattern(
        pattern,
        k,
        table=table,
        node_table=node_table,
        node_filter=node_filter,
        edge_filter=edge_filter,
    )
    return c.count_sql if count else c.sql


def _check_privacy(privacy) -> str:
    if privacy not in _PRIVACY:
        raise InterfaceError(f"privacy must be 'node' or 'edge', got {privacy!r}")
    return privacy


def _is_connection(obj) -> bool:
    return isinstance(obj, duckdb.DuckDBPyConnection) or hasattr(obj, "_duck")


def _load_filtered(con, source, node_filter, edge_filter, table: str = "edge") -> LoadedGraph:
    """Load ``source`` into ``table``; with constraints, keep only the edges whose both ends pass
    ``node_filter`` and which pass ``edge_filter`` (row-local, hence per-participant)."""
    duck = duck_of(con)
    if node_filter is None and edge_filter is None:
        return load_edges(con, source, table)
    if not isinstance(source, nx.Graph):
        raise InterfaceError(
            "node_filter/edge_filter need attributes: pass a networkx graph, or load the tables "
            "yourself and use pattern_sql(..., node_filter=..., edge_filter=...)"
        )
    raw = "__graph_raw_edge"
    nodes = "__graph_node"
    info = load_edges(
        con,
        source,
        raw,
        node_table=nodes,
        node_attributes=True if node_filter is not None else None,
        edge_attributes=True if edge_filter is not None else None,
    )
    where = []
    joins = ""
    if edge_filter is not None:
        where.append(f"({qualify_predicate(edge_filter, 'e', what='edge_filter')})")
    if node_filter is not None:
        joins = f" JOIN {nodes} AS u ON u.id = e.src JOIN {nodes} AS v ON v.id = e.dst"
        where.append(f"({qualify_predicate(node_filter, 'u', what='node_filter')})")
        where.append(f"({qualify_predicate(node_filter, 'v', what='node_filter')})")
    try:
        duck.execute(
            f"CREATE OR REPLACE TABLE {_table(table)} AS SELECT e.src, e.dst FROM {raw} AS e"
            f"{joins} WHERE {' AND '.join(where)}"
        )
        duck.execute(f"ALTER TABLE {_table(table)} ADD PRIMARY KEY (src, dst)")
    except duckdb.Error as err:
        raise InterfaceError(f"a constraint could not be evaluated: {err}") from None
    finally:
        duck.execute(f"DROP TABLE IF EXISTS {raw}")
        duck.execute(f"DROP TABLE IF EXISTS {nodes}")
    n_edges = duck.execute(f"SELECT COUNT(*) FROM {_table(table)}").fetchone()[0]
    return LoadedGraph(table, None, info.n_nodes, int(n_edges), info.labels)


def true_count(
    source,
    pattern,
    k: int | None = None,
    *,
    table: str = "edge",
    node_table: str = "node",
    node_filter: str | None = None,
    edge_filter: str | None = None,
) -> int:
    """The exact number of occurrences (curator only: this value is not private).

    Parameters
    ----------
    source : networkx.Graph, path, or connection
        A graph or edge-list file (loaded into a scratch DuckDB), or a provsql_dp / DuckDB
        connection that already holds ``table`` (and ``node_table`` for ``node_filter``).
    pattern, k, table, node_table, node_filter, edge_filter
        As for :func:`pattern_sql`.

    Returns
    -------
    int

    Examples
    --------
    >>> import networkx as nx
    >>> true_count(nx.complete_graph(5), "4-cycle"), true_count(nx.complete_graph(5), "2-triangle")
    (15, 30)
    >>> G = nx.Graph([(1, 2), (2, 3), (1, 3), (3, 4), (2, 4)])
    >>> nx.set_node_attributes(G, {1: 50, 2: 40, 3: 35, 4: 20}, "age")
    >>> true_count(G, "triangle"), true_count(G, "triangle", node_filter="age > 30")
    (2, 1)
    """
    if _is_connection(source):
        duck = duck_of(source)
        sql = pattern_sql(
            pattern,
            k,
            table=table,
            node_table=node_table,
            node_filter=node_filter,
            edge_filter=edge_filter,
            count=True,
        )
        return int(duck.execute(sql).fetchone()[0])
    duck = duckdb.connect()
    try:
        _load_filtered(duck, source, node_filter, edge_filter)
        return int(duck.execute(pattern_sql(pattern, k, count=True)).fetchone()[0])
    finally:
        duck.close()


def _provsql_connect():
    """provsql_dp.connect if the SQL core provides provenance capture, else None."""
    from ..interfaces.dbapi.connection import connect

    return connect


def relation(
    source,
    pattern,
    k: int | None = None,
    *,
    privacy: str = "node",
    node_filter: str | None = None,
    edge_filter: str | None = None,
    max_entries: int | None = DEFAULT_MAX_ENTRIES,
    merge: bool = True,
    capture: str = "auto",
    columns=None,
    _progress: Progress | None = None,
) -> KRelation:
    """The sensitive K-relation whose total weight is the pattern count (curator only).

    Parameters
    ----------
    source : networkx.Graph or path
        An undirected simple graph, or an edge-list file.
    pattern, k, node_filter, edge_filter
        As for :func:`pattern_sql`.
    privacy : {"node", "edge"}
        Participants are nodes (each tuple annotated with the conjunction of its nodes) or edges.
    max_entries : int or None
        Refuse above this many participant entries (see the module docstring); None: no guard.
    merge : bool
        Under node privacy, merge occurrences with the same node set into one weighted tuple
        (exact for the recursive mechanism; see :mod:`provsql_dp.graph._relation`).
    capture : {"auto", "sql", "direct"}
        ``"sql"``: declare the edge table protected and capture the pattern query through
        ``provsql_dp.connect(...).provenance``; ``"direct"``: build the same relation from the
        occurrence rows with numpy; ``"auto"``: ``"sql"`` when the SQL core is available.
    columns : sequence of str or None
        The pattern's node columns the relation keeps (:attr:`KRelation.values`): None, every
        one; ``()``, none — what a release reads (:func:`count`): the same weights and
        annotations without one Python object per node per occurrence.

    Returns
    -------
    provsql_dp.provenance.krelation.KRelation

    Examples
    --------
    >>> import networkx as nx
    >>> kr = relation(nx.complete_graph(4), "triangle", privacy="edge", capture="direct")
    >>> len(kr), kr.true_answer(), len(kr.participants)
    (4, 4.0, 6)
    >>> sorted(map(sorted, kr.annotation(0)))
    [[('edge', (0, 1)), ('edge', (0, 2)), ('edge', (1, 2))]]
    """
    privacy = _check_privacy(privacy)
    if capture not in ("auto", "sql", "direct"):
        raise InterfaceError(f"capture must be 'auto', 'sql' or 'direct', got {capture!r}")
    if isinstance(source, nx.Graph):
        _graph_checks(source)
    compiled = compile_pattern(pattern, k)
    connect = _provsql_connect()
    if capture == "sql" and connect is None:
        raise InterfaceError("capture='sql' needs provsql_dp.connect (the SQL core)")
    use_sql = capture == "sql" or (capture == "auto" and connect is not None)
    if use_sql:
        con = connect(":memory:")
        duck = duck_of(con)
    else:
        con = duck = duckdb.connect()
    step = _progress.phase if _progress is not None else (lambda *a, **k: None)
    try:
        step(PHASES[0])
        loaded = _load_filtered(con, source, node_filter, edge_filter)
        step(PHASES[1], nodes=loaded.n_nodes, edges=loaded.n_edges)
        n_occ = int(duck.execute(compiled.count_sql).fetchone()[0])
        width = compiled.pattern.n_nodes if privacy == "node" else compiled.pattern.n_edges
        check_size(n_occ, width, max_entries, compiled.pattern.name)
        step(PHASES[2], occurrences=n_occ)
        if use_sql:
            if privacy == "node":
                con.execute("PROTECT TABLE edge BY (src, dst) AS node")
            else:
                con.execute("PROTECT TABLE edge")
            kr = con.provenance(compiled.sql, columns=columns)
        else:
            kr = direct_relation(duck, compiled, privacy, "edge", columns=columns)
    finally:
        con.close()
    if merge and privacy == "node":
        kr = merge_equal_annotations(kr)
    return kr


def _graph_checks(G) -> None:
    if not isinstance(G, nx.Graph):
        raise InterfaceError(f"expected a networkx graph, got {type(G).__name__}")
    if G.is_directed():
        raise InterfaceError(
            "subgraph counting needs an undirected graph; convert with G.to_undirected()"
        )
    if G.is_multigraph():
        raise InterfaceError(
            "subgraph counting needs a simple graph; collapse parallel edges with nx.Graph(G)"
        )


def count(
    G,
    pattern,
    *,
    privacy: str = "node",
    epsilon: float,
    k: int | None = None,
    node_filter: str | None = None,
    edge_filter: str | None = None,
    rng=None,
    max_entries: int | None = DEFAULT_MAX_ENTRIES,
    capture: str = "auto",
    budget=None,
    progress: bool | None = None,
    mechanism: str = "recursive",
    construction: str = "auto",
    **mechanism_options,
):
    """Release the number of occurrences of ``pattern`` in ``G`` with ε-differential privacy.

    Parameters
    ----------
    G : networkx.Graph or path
        An undirected simple graph (a directed graph or a multigraph is refused), or an
        edge-list file in the format of ``shared/data/graphs/*.edges``.
    pattern : str or networkx.Graph
        ``"edge"``, ``"triangle"``, ``"k-star"``, ``"k-triangle"``, ``"path"``, ``"cycle"``
        (``k`` as a keyword or a prefix: ``"2-star"``), or any small connected graph.
    privacy : {"node", "edge"}
        Node privacy hides one node with all its edges; edge privacy hides one edge.
    epsilon : float
        The privacy budget of this release.
    k : int, optional
        Size parameter of the named patterns that need one.
    node_filter, edge_filter : str, optional
        Row-local SQL predicates over node / edge attributes that every node / edge of a counted
        occurrence must satisfy, e.g. ``node_filter="age > 30"``.
    rng : numpy.random.Generator, optional
        Tests only; by default noise comes from the operating system's entropy.
    max_entries : int or None
        Size guard on the K-relation (see the module docstring).
    capture : {"auto", "sql", "direct"}
        How the K-relation is built (see :func:`relation`).
    budget : provsql_dp.Connection, optional
        A connection whose privacy budget pays for this release: ε is charged to its user in
        its ledger before any noise is drawn (refused, spending nothing, when it does not
        fit). Without it, no ledger records the release: accounting for ε is the caller's job.
    progress : bool or None
        Show the phase, its counts and the LPs solved on standard error (a ``tqdm`` bar; see
        :mod:`provsql_dp.graph._progress`). None (default): only when standard error is a
        terminal; True: always; False: never.
    mechanism : {"recursive", "r2t"}
        The recursive mechanism (default), or R2T (:mod:`provsql_dp.mechanisms.r2t.race`): faster on
        large graphs, at an accuracy cost.
    construction : {"auto", "degree", "enumerate"}
        For k-stars (k ≥ 2) with the recursive mechanism, ``"auto"`` and ``"degree"`` use the
        degree construction (:mod:`provsql_dp.mechanisms.subgraph.kstar`: no size limit, options
        ``theta``, ``beta``, ``mu``, ``eps1``, ``eps2``), and for k-triangles (k ≥ 2) the
        triangle construction (:mod:`provsql_dp.mechanisms.subgraph.ktriangle` under edge privacy,
        :mod:`provsql_dp.mechanisms.subgraph.ktriangle_node` under node privacy, LPs of
        one column per edge and triangle); ``"enumerate"`` builds the K-relation of one tuple per
        occurrence. Other patterns always enumerate (``"degree"`` is refused).
    **mechanism_options
        Passed to :func:`provsql_dp.mechanisms.recursive.efficient.release` (``theta``, ``beta``, ``mu``…;
        the paper's settings are its defaults) or, for R2T, to
        :func:`provsql_dp.mechanisms.r2t.race.release` (``max_contribution``, ``beta``, ``lp_gap``).

    Interrupting (Ctrl-C, ``KeyboardInterrupt``) before the budget is charged costs nothing;
    after it — during the release's LPs, the long phase — the ε stays charged to ``budget``'s
    ledger and nothing is released (an interrupted release is still a spent one: its LPs read
    the data). The connection and the bar are left in order either way.

    Returns
    -------
    Release
        The recursive mechanism's release: ``.value``, ``.delta_hat``, ``.epsilon`` …

    Raises
    ------
    provsql_dp.errors.InterfaceError
        Bad graph, pattern, privacy or constraint.
    provsql_dp.errors.UnsupportedQueryError
        The K-relation would exceed ``max_entries``; nothing was spent.

    Examples
    --------
    >>> import networkx as nx, numpy as np
    >>> G = nx.karate_club_graph()
    >>> rel = count(G, "triangle", privacy="edge", epsilon=0.5, rng=np.random.default_rng(0))
    >>> rel.epsilon, rel.params["mu"], rel.params["beta"]
    (0.5, 0.5, 0.1)
    >>> abs(rel.value - 45) < 45
    True
    """
    if not isinstance(epsilon, numbers.Real) or not epsilon > 0:
        raise InterfaceError(f"epsilon must be a positive number, got {epsilon!r}")
    if mechanism not in ("recursive", "r2t"):
        raise InterfaceError(f"mechanism must be 'recursive' or 'r2t', got {mechanism!r}")
    if mechanism == "r2t":
        from ..mechanisms.r2t import race as r2t

        extra = sorted(set(mechanism_options) - {"max_contribution", "beta", "lp_gap"})
        if extra:
            raise InterfaceError(f"option {extra[0]!r} does not apply to R2T; its options are "
                                 "max_contribution, beta and lp_gap")
        try:
            r2t.plan(epsilon, mechanism_options.get("max_contribution", r2t.DEFAULT_MAX_CONTRIBUTION),
                     mechanism_options.get("beta", r2t.DEFAULT_BETA),
                     mechanism_options.get("lp_gap", r2t.DEFAULT_LP_GAP))
        except ValueError as e:
            raise InterfaceError(str(e)) from e
    elif any(mechanism_options.get(k) is not None for k in ("beta", "mu")):  # before anything
        from ..mechanisms.recursive._framework import check_beta, check_mu, resolve_params

        try:  # is read or charged: β ≤ BETA_CAP, μ ≤ mu_cap(ε₁, β)
            if mechanism_options.get("beta") is not None:
                check_beta(mechanism_options["beta"])
            if mechanism_options.get("mu") is not None:
                check_mu(resolve_params(float(epsilon), None, **{
                    k: mechanism_options[k] for k in ("theta", "beta", "mu", "eps1", "eps2")
                    if mechanism_options.get(k) is not None}))
        except (ValueError, TypeError) as e:
            raise InterfaceError(str(e)) from e
    shape = degree_shape(pattern, k, _check_privacy(privacy), mechanism, construction)
    if shape is not None:  # k-stars, k-triangles: sizes independent of k
        return count_kstar(G, shape, privacy, epsilon, node_filter, edge_filter, rng, budget,
                           progress, mechanism_options, load=_load_filtered, checks=_graph_checks)
    from ..mechanisms.recursive import efficient as rm
    from ..mechanisms.lp._highs import LPStats

    name = pattern if isinstance(pattern, str) else f"graph with {pattern.number_of_nodes()} nodes"
    with Progress(f"count {name}", enabled=progress) as bar:
        kr = relation(
            G,
            pattern,
            k,
            privacy=privacy,
            node_filter=node_filter,
            edge_filter=edge_filter,
            max_entries=max_entries,
            capture=capture,
            columns=(),  # the release reads weights and annotations only
            _progress=bar,
        )
        bar.phase(PHASES[3], tuples=len(kr), participants=kr.n_participants)
        if budget is not None:
            budget.ledger.charge(
                budget.user, epsilon, f"graph.count({name!r}, privacy={privacy!r})", mechanism
            )
        bar.phase(PHASES[4])
        if mechanism == "r2t":
            return r2t.release(kr, epsilon, rng=rng, **mechanism_options)
        stats = mechanism_options.pop("stats", None) or LPStats()
        bar.watch(stats)
        return rm.release(kr, epsilon=epsilon, privacy=privacy, rng=rng, stats=stats,
                          **mechanism_options)

