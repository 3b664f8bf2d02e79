"""Compile a pattern into a self-join over an edge table.

The edge table holds every undirected edge **once, with ``src < dst``** (what
:func:`provsql_dp.graph.load_edges` writes). One row per edge is what edge privacy needs
(``PROTECT TABLE edge`` makes each row a participant); node privacy
(``PROTECT TABLE edge BY (src, dst) AS node``) works on the same table.

The query has one alias ``e{j}`` per pattern edge and one output column ``n{i}`` per pattern node
(the graph node matched to pattern node ``i``). Occurrences are counted once each by the symmetry
conditions of :mod:`._symmetry`; injectivity is enforced by ``<>`` between non-adjacent pattern
nodes whose order is not already implied (adjacent nodes differ because ``src < dst``).

A pattern edge ``a–b`` whose orientation the conditions imply (``n_a < n_b``) joins the edge table
itself on ``src = n_a AND dst = n_b``; an edge whose orientation is open (e.g. centre–leaf of a
star) joins both directions, ``(SELECT src, dst FROM edge UNION ALL SELECT dst, src FROM edge)``.
Both halves of that union read the same row, so its annotation is that row's participants: the
union does not double any participant. Every match of the pattern therefore is exactly one row of
the join, annotated (node privacy) with its nodes, or (edge privacy) with its edges — Chen & Zhou
Fig. 2(a).

Constraints are SQL predicates. ``node_filter`` is a boolean expression over the columns of a node
table (key ``id``) that every matched node must satisfy, ``edge_filter`` one over the other columns
of the edge table that every matched edge must satisfy. They are applied to the edge relation
before the pattern join (an edge survives if it and both its ends pass), which is the same as
asking them of every node and edge of the match because every pattern node has an edge. Predicates
must be row-local: no subqueries, no aggregates, no window functions (they could read the graph's
structure, and then removing one participant could change which other occurrences pass — that
would break the privacy argument).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from ..errors import InterfaceError
from ._symmetry import implied_order, symmetry_conditions
from .patterns import Pattern, resolve_pattern

__all__ = ["CompiledPattern", "compile_pattern", "qualify_predicate"]


@dataclass(frozen=True)
class CompiledPattern:
    """The SQL of a pattern and what it is made of.

    Attributes
    ----------
    pattern : Pattern
    sql : str
        ``SELECT n0, n1, … FROM …``: one row per occurrence.
    count_sql : str
        ``SELECT COUNT(*) AS occurrences FROM …``: the true count.
    columns : tuple of str
        ``("n0", "n1", …)``.
    conditions : tuple of (int, int)
        The symmetry-breaking conditions ``n_a < n_b``.
    oriented : tuple of bool
        Per alias ``e{j}``: whether it reads the edge table directly (True) or both directions.
    edge_order : tuple of (int, int)
        Per alias ``e{j}``: the pattern edge ``(a, b)`` it matches, with ``e{j}.src``/``dst`` bound
        to ``n_a``/``n_b`` when oriented.
    """

    pattern: Pattern
    sql: str
    count_sql: str
    columns: tuple[str, ...]
    conditions: tuple[tuple[int, int], ...]
    oriented: tuple[bool, ...]
    edge_order: tuple[tuple[int, int], ...]


def _ident(name: str) -> str:
    if not isinstance(name, str) or not name:
        raise InterfaceError(f"a table or column name must be a non-empty string, got {name!r}")
    return exp.to_identifier(name).sql(dialect="duckdb")


def _table(name: str) -> str:
    """A possibly schema-qualified table name, quoted where needed."""
    if not isinstance(name, str) or not name.strip():
        raise InterfaceError(f"a table name must be a non-empty string, got {name!r}")
    return ".".join(_ident(part) for part in name.split("."))


_FORBIDDEN = (exp.Subquery, exp.Select, exp.AggFunc, exp.Window, exp.Query)


def qualify_predicate(predicate: str, alias: str, *, what: str) -> str:
    """Parse a row-local SQL predicate and qualify every column with ``alias``.

    Examples
    --------
    >>> qualify_predicate("age > 30 AND city = 'Paris'", "u", what="node_filter")
    "u.age > 30 AND u.city = 'Paris'"
    >>> qualify_predicate("(SELECT 1) = 1", "u", what="node_filter")
    Traceback (most recent call last):
    ...
    provsql_dp.errors.InterfaceError: node_filter must be a row-local predicate: no subqueries, aggregates or window functions
    """
    if not isinstance(predicate, str) or not predicate.strip():
        raise InterfaceError(f"{what} must be a non-empty SQL boolean expression, got {predicate!r}")
    try:
        tree = sqlglot.parse_one(predicate, read="duckdb")
    except sqlglot.errors.ParseError as err:
        raise InterfaceError(f"{what} is not a valid SQL expression: {err}") from None
    if isinstance(tree, _FORBIDDEN) or any(tree.find_all(*_FORBIDDEN)):
        raise InterfaceError(
            f"{what} must be a row-local predicate: no subqueries, aggregates or window functions"
        )
    for col in tree.find_all(exp.Column):
        if col.table:
            raise InterfaceError(
                f"{what}: write columns unqualified ({col.sql(dialect='duckdb')!r} names a table)"
            )
        col.set("table", exp.to_identifier(alias))
    return tree.sql(dialect="duckdb")


def _edge_order(pattern: Pattern) -> list[tuple[int, int]]:
    """Pattern edges in a join-friendly order: start at a node of highest degree, then BFS,
    adding every edge that closes a cycle as soon as both its ends are bound."""
    g = pattern.graph
    start = max(g.nodes(), key=lambda v: (g.degree(v), -v))
    bound = {start}
    used: set[frozenset] = set()
    order: list[tuple[int, int]] = []
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(g.neighbors(v)):
            key = frozenset((v, w))
            if key in used:
                continue
            used.add(key)
            order.append((v, w))
            if w not in bound:
                bound.add(w)
                queue.append(w)
                # close cycles through w right away
                for x in sorted(g.neighbors(w)):
                    k2 = frozenset((w, x))
                    if x in bound and x != v and k2 not in used:
                        used.add(k2)
                        order.append((x, w))
    return order


def compile_pattern(
    pattern,
    k: int | None = None,
    *,
    table: str = "edge",
    node_table: str = "node",
    node_filter: str | None = None,
    edge_filter: str | None = None,
) -> CompiledPattern:
    """Compile ``pattern`` into SQL over ``table`` (columns ``src < dst``).

    See :func:`provsql_dp.graph.pattern_sql` for the parameters.

    Examples
    --------
    >>> c = compile_pattern("triangle")
    >>> c.conditions, c.oriented
    (((0, 1), (0, 2), (1, 2)), (True, True, True))
    >>> print(c.sql)
    SELECT e0.src AS n0, e0.dst AS n1, e1.dst AS n2
    FROM edge AS e0
    JOIN edge AS e1 ON e1.src = e0.src
    JOIN edge AS e2 ON e2.src = e0.dst AND e2.dst = e1.dst

    (``n1 < n2`` is implied by ``e2.src < e2.dst``, so no ``WHERE`` is left.)
    """
    p = resolve_pattern(pattern, k)
    n = p.n_nodes
    conds = symmetry_conditions(p.graph)
    order_pairs = implied_order(n, conds)
    tbl = _table(table)

    # The edge relation, filtered by the constraints if any.
    if node_filter is None and edge_filter is None:
        base = tbl
        base_is_table = True
    else:
        where = []
        joins = ""
        if edge_filter is not None:
            where.append(f"({qualify_predicate(edge_filter, 'e', what='edge_filter')})")
        if node_filter is not None:
            nt = _table(node_table)
            joins = f" JOIN {nt} AS u ON u.id = e.src JOIN {nt} AS v ON v.id = e.dst"
            where.append(f"({qualify_predicate(node_filter, 'u', what='node_filter')})")
            where.append(f"({qualify_predicate(node_filter, 'v', what='node_filter')})")
        base = f"(SELECT e.src, e.dst FROM {tbl} AS e{joins} WHERE {' AND '.join(where)})"
        base_is_table = False
    both = (
        f"(SELECT src, dst FROM {tbl} UNION ALL SELECT dst, src FROM {tbl})"
        if base_is_table
        else f"(SELECT src, dst FROM {base} AS b UNION ALL SELECT dst, src FROM {base} AS b)"
    )

    node_expr: dict[int, str] = {}
    from_lines: list[str] = []
    oriented: list[bool] = []
    edge_order: list[tuple[int, int]] = []
    pending = list(conds)
    distinct = [
        (a, b)
        for a in range(n)
        for b in range(a + 1, n)
        if not p.graph.has_edge(a, b) and (a, b) not in order_pairs and (b, a) not in order_pairs
    ]
    where_terms: list[str] = []

    def ready(a: int, b: int) -> bool:
        return a in node_expr and b in node_expr

    for j, (a, b) in enumerate(_edge_order(p)):
        alias = f"e{j}"
        if (b, a) in order_pairs:
            a, b = b, a
        is_oriented = (a, b) in order_pairs
        oriented.append(is_oriented)
        edge_order.append((a, b))
        rel = base if is_oriented else both
        on = []
        for node, col in ((a, "src"), (b, "dst")):
            ref = f"{alias}.{col}"
            if node in node_expr:
                on.append(f"{ref} = {node_expr[node]}")
            else:
                node_expr[node] = ref
        if j == 0:
            from_lines.append(f"FROM {rel} AS {alias}")
        else:
            if not on:  # cannot happen for a connected pattern in BFS order
                raise AssertionError("pattern edge order is not connected")
            from_lines.append(f"JOIN {rel} AS {alias} ON {' AND '.join(on)}")
        # conditions whose both ends are now bound (WHERE keeps ON clauses to equalities)
        for cond in [c for c in pending if ready(*c)]:
            pending.remove(cond)
            x, y = cond
            where_terms.append(f"{node_expr[x]} < {node_expr[y]}")
    for a, b in distinct:
        where_terms.append(f"{node_expr[a]} <> {node_expr[b]}")
    # drop conditions that the orientation of an alias already enforces (src < dst by format)
    enforced = set()
    for j, (a, b) in enumerate(edge_order):
        if oriented[j]:
            enforced.add(f"{node_expr[a]} < {node_expr[b]}")
    where_terms = [t for t in where_terms if t not in enforced]

    columns = tuple(f"n{i}" for i in range(n))
    select = "SELECT " + ", ".join(f"{node_expr[i]} AS n{i}" for i in range(n))
    body = "\n".join(from_lines)
    if where_terms:
        body += "\nWHERE " + " AND ".join(where_terms)
    sql = f"{select}\n{body}"
    count_sql = f"SELECT COUNT(*) AS occurrences\n{body}"
    return CompiledPattern(
        pattern=p,
        sql=sql,
        count_sql=count_sql,
        columns=columns,
        conditions=tuple(conds),
        oriented=tuple(oriented),
        edge_order=tuple(edge_order),
    )
