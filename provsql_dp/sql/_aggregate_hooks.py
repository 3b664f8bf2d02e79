"""Small planner hooks for the aggregates of issue 28 (kept out of ``planner.py``, at its line
cap): an aggregate's ``FILTER (WHERE …)`` clause, and the range a SUM's argument provably lies in
(:mod:`provsql_dp.sql.expr_range`).

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

from .expr_range import bounded_argument

__all__ = ["split_filter", "bounded_argument"]


def split_filter(agg: exp.Expression) -> tuple[exp.Expression, exp.Expression | None]:
    """``(aggregate, condition)`` of ``agg FILTER (WHERE condition)``; ``(agg, None)`` without
    a FILTER clause."""
    if isinstance(agg, exp.Filter):
        where = agg.expression
        return agg.this, (where.this if isinstance(where, exp.Where) else where)
    return agg, None
