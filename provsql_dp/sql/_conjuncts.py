"""The conjuncts of a condition, the one splitter every planner pass and route uses.

>>> from sqlglot import parse_one
>>> [c.sql() for c in conjuncts(parse_one("a = 1 AND ((b > 2) AND (c OR d))"))]
['a = 1', 'b > 2', 'c OR d']
>>> conjuncts(None)
[]
"""

from __future__ import annotations

from sqlglot import exp

__all__ = ["conjuncts"]


def conjuncts(e: exp.Expression | None) -> list[exp.Expression]:
    """``a AND (b AND c)`` → ``[a, b, c]`` (parentheses around a conjunct dropped; none → [])."""
    if e is None:
        return []
    while isinstance(e, exp.Paren):
        e = e.this
    if isinstance(e, exp.And):
        return conjuncts(e.this) + conjuncts(e.expression)
    return [e]
