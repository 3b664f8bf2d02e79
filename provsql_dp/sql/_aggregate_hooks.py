"""Small planner hooks for the aggregates of issue 28 (kept out of ``planner.py``, at its line
cap): an aggregate's ``FILTER (WHERE …)`` clause, the range a SUM's argument provably lies in
(:mod:`provsql_dp.sql.expr_range`), and the bounds of a column computed in a derived table
(:func:`column_bounds`: TPC-H Q8's ``volume = l_extendedprice * (1 - l_discount)``).

``COUNT(*) FILTER (WHERE c)``, ``SUM(x) FILTER (WHERE c)``, ``AVG(x) FILTER (WHERE c)`` are the
aggregate over the rows where ``c`` holds (NULL or a failing row: not selected, as in WHERE):
the planner puts a :class:`~provsql_dp.sql.plan.Filter` under that aggregate alone, so several
filtered aggregates of one select list are separate parts, each with its share of ε
(sequential composition, as any select list of several aggregates).

>>> import sqlglot
>>> agg, cond = split_filter(sqlglot.parse_one("COUNT(*) FILTER (WHERE x > 1)", read="duckdb"))
>>> agg.sql(dialect="duckdb"), cond.sql(dialect="duckdb")
('COUNT(*)', 'x > 1')
>>> split_filter(sqlglot.parse_one("SUM(x)", read="duckdb"))[1] is None
True
"""

from __future__ import annotations

from sqlglot import exp

from .column_declarations import declared_bounds
from .expr_range import bounded_argument, expression_range
from .plan import Distinct, Filter, Join, Node, Project, SemiJoin, AntiJoin

__all__ = ["split_filter", "bounded_argument", "column_bounds"]


def column_bounds(catalog, node: Node, cid: str) -> tuple[float, float] | None:
    """The bounds of output column ``cid`` of ``node``: its base column's declared bounds
    (:func:`~provsql_dp.sql.column_declarations.declared_bounds`), or, for a column a
    projection computes (a derived table's ``x * (1 - y)``), the finite range
    :func:`~provsql_dp.sql.expr_range.expression_range` proves for its expression from the
    bounds of the columns it reads (recursively), else None. From the plan and the
    declarations only. Sound as a SUM's bounds because every route clamps the SUM's weight to
    its bounds: a row whose base values lie outside their declared bounds is clamped there."""
    found = declared_bounds(catalog, node, cid)
    if found is not None:
        return found
    where = _defining(node, cid)
    if where is None:
        return None
    child, e = where
    if isinstance(e, exp.Column) and not e.table:
        return column_bounds(catalog, child, e.name)
    r = expression_range(e, lambda c: column_bounds(catalog, child, c))
    if r is None or r.lo > r.hi or not r.finite or r.nan:  # bounds are never NaN
        return None
    return float(r.lo), float(r.hi)


def _defining(node: Node, cid: str):
    """``(projection's child, expression)`` of the projection that computes ``cid`` below
    ``node`` (through filters, DISTINCT, joins and semi-joins, as ``base_column`` walks), or None."""
    if isinstance(node, Project):
        return (node.child, node.exprs[node.ids.index(cid)]) if cid in node.ids else None
    if isinstance(node, (Filter, Distinct)):
        return _defining(node.child, cid)
    if isinstance(node, (SemiJoin, AntiJoin)):
        return _defining(node.left, cid)
    if isinstance(node, Join):
        return _defining(node.left, cid) or _defining(node.right, cid)
    return None


def split_filter(agg: exp.Expression) -> tuple[exp.Expression, exp.Expression | None]:
    """``(aggregate, condition)`` of ``agg FILTER (WHERE condition)``; ``(agg, None)`` without
    a FILTER clause."""
    if isinstance(agg, exp.Filter):
        where = agg.expression
        return agg.this, (where.this if isinstance(where, exp.Where) else where)
    return agg, None
