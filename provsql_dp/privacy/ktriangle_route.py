"""k-triangle counts written in SQL, released with the triangle construction (issue 15).

A *k-triangle* is k triangles sharing one edge, its *base*; the count is ``Σ_e C(t_e, k)`` with
``t_e`` the triangles on ``e``. Enumerated, its K-relation has one tuple per k-triangle (2 M
2-triangles on ca-GrQc); :func:`triangle_shape` recognises such a query and the release goes to
:class:`~provsql_dp.mechanisms.subgraph.ktriangle.KTriangleCount`, whose LPs have one column per edge and
per triangle whatever k — the same recursive mechanism (ε, θ, β, μ, split, grid, fallback) as
any recursive release, with H and G built over triangles (proofs in
:mod:`provsql_dp.mechanisms.subgraph.ktriangle`). Everything here reuses the k-star route's plan walk
(:mod:`provsql_dp.privacy.kstar_route`).

**What is recognised** — decided from the plan and the declarations only, never from the data.
``COUNT(*)`` without ``GROUP BY``/``DISTINCT`` over ``1 + 2k`` instances (``k ≥ 2``, joined by
``JOIN … ON`` or ``WHERE``, any order) of one protected table ``T`` with two columns ``X, Y``:

* one *base*: ``T`` itself (each row an undirected edge ``{X, Y}``);
* ``2k`` *apex arcs*: ``A = (SELECT X, Y FROM T UNION ALL SELECT Y, X FROM T)`` (each edge in
  both directions), in k pairs, one per apex;

and nothing in the conditions but

* equalities putting the base's ``X`` and one end of k arcs in one class, the base's ``Y`` and one
  end of the k other arcs in a second class, and the other ends of the two arcs of each pair in a
  class of their own (the apex, adjacent to both ends of the base);
* strict ``<``/``>`` between apex columns whose transitive closure orders all k apexes.

That is :func:`provsql_dp.graph.pattern_sql` of ``"k-triangle"``. The declarations must make the
count the construction's: ``PROTECT TABLE T`` (edge privacy: a participant is a row, released by
:class:`~provsql_dp.mechanisms.subgraph.ktriangle.KTriangleCount`) or ``PROTECT TABLE T BY (X, Y)`` (node
privacy: a participant is a node value with its rows, released by
:class:`~provsql_dp.mechanisms.subgraph.ktriangle_node.NodeKTriangleCount`), a ``PRIMARY KEY``/``UNIQUE``
key within ``{X, Y}`` and ``CHECK (X < Y)`` (or ``X > Y``): each edge stored once, no self-loop,
so every apex differs from both ends of the base and every arc of ``A`` occurs once. Rows with a
NULL end join nothing and are left out. A ``<=`` between apexes, a missing key or CHECK, another
predicate — anything else — goes the general path with its usual semantics;
``OPTIONS (mechanism = 'r2t')`` keeps R2T.

>>> import provsql_dp, numpy as np, sqlglot
>>> from provsql_dp.graph import pattern_sql
>>> from provsql_dp.sql.planner import plan_query
>>> con = provsql_dp.connect()
>>> con._rng = np.random.default_rng(0)
>>> _ = con.execute("CREATE TABLE edge(src INT, dst INT, PRIMARY KEY (src, dst), CHECK (src < dst))")
>>> _ = con.execute("INSERT INTO edge VALUES (1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)")
>>> _ = con.execute("PROTECT TABLE edge; SET PRIVACY BUDGET 5")
>>> sql = f"SELECT COUNT(*) FROM ({pattern_sql('2-triangle')})"
>>> triangle_shape(con, plan_query(sqlglot.parse_one(sql, read="duckdb"), con._catalog)).describe()
'2-triangles: undirected edges {src, dst} of edge, edge privacy, triangle construction'
>>> con.execute(sql + " WITH EPSILON 1").privacy.mechanism
'recursive-ktriangle'
"""

from __future__ import annotations

from dataclasses import dataclass

from ..mechanisms.subgraph.ktriangle import KTriangleCount
from ..mechanisms.subgraph.ktriangle_node import NodeKTriangleCount
from ..sql.plan import Aggregate, Scan
from .kstar_route import (
    _collect,
    _conditions,
    _declared,
    _NoMatch,
    _total_order,
    read_arcs,
)

__all__ = ["TriangleShape", "triangle_shape", "load_ktriangle"]


@dataclass(frozen=True)
class TriangleShape:
    """A recognised k-triangle count over the undirected edges ``{x, y}`` of ``scan``'s table,
    under ``privacy`` (the same interface as :class:`~.kstar_route.StarShape`)."""

    k: int
    scan: Scan
    x: str
    y: str
    privacy: str = "edge"

    mechanism = "recursive-ktriangle"
    how = "triangle construction for k-triangles, linear programs on HiGHS"
    lp_size = ("LPs with one column per node, edge and triangle whatever k, instead of one "
               "K-relation tuple per k-triangle")

    def describe(self) -> str:
        return (f"{self.k}-triangles: undirected edges {{{self.x}, {self.y}}} of "
                f"{self.scan.table}, {self.privacy} privacy, triangle construction")

    def load(self, con, *, time_limit: float | None = None):
        """The construction over the table's rows (private: reads protected rows)."""
        return load_ktriangle(con, self, time_limit=time_limit)

    @staticmethod
    def sizes(kt) -> str:
        """The curator's (private) sizes of a loaded construction."""
        return (f"edges={kt.m}, triangles={kt.n_triangles}, k-triangles={kt.true_answer:.0f}, "
                f"participants={kt.n_participants}")


def triangle_shape(con, plan) -> TriangleShape | None:
    """The :class:`TriangleShape` of ``plan`` when it is a k-triangle count the triangle
    construction releases with the same semantics (see the module doc), else None. Reads the
    plan and the declarations only."""
    if (not isinstance(plan, Aggregate) or plan.kind != "count" or plan.weight is not None
            or plan.group_by):
        return None
    try:
        return _match(con, plan.child)
    except _NoMatch:
        return None


def _match(con, root) -> TriangleShape:
    instances, resolve, conds = _collect(root)
    bases = [i for i, (kind, _, _) in enumerate(instances) if kind == "directed"]
    arcs = [i for i, (kind, _, _) in enumerate(instances) if kind == "undirected"]
    if len(bases) != 1 or len(arcs) < 4 or len(arcs) % 2:
        raise _NoMatch
    k, b = len(arcs) // 2, bases[0]
    if len({(s.catalog, s.schema, s.table) for _, s, _ in instances}) != 1:
        raise _NoMatch
    pairs = {frozenset(instances[i][2]) for i in arcs}
    if len(pairs) != 1:
        raise _NoMatch
    x, y = instances[arcs[0]][2]
    classes, order = _conditions(conds, resolve)
    home = {r: c for c, g in enumerate(classes) for r in g}
    if any(i == b and tag not in (x, y) for g in classes for i, tag in g):
        raise _NoMatch  # another base column joined
    cu, cv = home.get((b, x)), home.get((b, y))
    if cu is None or cv is None or cu == cv:
        raise _NoMatch
    side: dict[int, tuple[str, str]] = {}  # arc -> (end of the base, the arc's tag at it)
    for c, end in ((cu, "x"), (cv, "y")):
        members = classes[c] - {(b, x), (b, y)}
        if len(members) != k or len({i for i, _ in members}) != k:
            raise _NoMatch
        for i, tag in members:
            if i in side:
                raise _NoMatch
            side[i] = (end, tag)
    if set(side) != set(arcs):
        raise _NoMatch
    apexes = [g for c, g in enumerate(classes) if c not in (cu, cv)]
    if len(apexes) != k:
        raise _NoMatch
    apex_of: dict[tuple[int, str], int] = {}
    for j, g in enumerate(apexes):
        if len(g) != 2 or {side[i][0] for i, _ in g} != {"x", "y"}:
            raise _NoMatch
        for i, tag in g:
            if tag == side[i][1]:
                raise _NoMatch  # both ends of one arc
            apex_of[(i, tag)] = j
    if len({i for i, _ in apex_of}) != 2 * k:
        raise _NoMatch
    less = set()
    for lo, hi in order:
        if lo not in apex_of or hi not in apex_of or apex_of[lo] == apex_of[hi]:
            raise _NoMatch
        less.add((apex_of[lo], apex_of[hi]))
    _total_order(less, k)
    scan = instances[b][1]
    return TriangleShape(k, scan, x, y, _declared(con, scan, k, x, y, True).privacy)


def load_ktriangle(con, shape: TriangleShape, *, time_limit: float | None = None):
    """Read the edges of ``shape`` (private: reads protected rows) and build the construction
    (:class:`KTriangleCount` or, under node privacy, :class:`NodeKTriangleCount`; the
    participants are then the node values of the rows). Node values are replaced by their rank,
    so any column type works. The read honours ``max_capture_rows``
    (:func:`~.kstar_route.read_arcs`)."""
    src, dst = read_arcs(con, shape.scan, shape.x, shape.y)
    if shape.privacy == "node":
        return NodeKTriangleCount(src, dst, shape.k, time_limit=time_limit)
    return KTriangleCount(src, dst, shape.k, time_limit=time_limit)

