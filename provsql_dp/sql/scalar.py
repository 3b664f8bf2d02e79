"""Scalar expressions of a private query (WHERE, join conditions, GROUP BY keys, aggregate
arguments): refuse what positive relational algebra cannot track, and rewrite column references
to plan ids.

>>> from sqlglot import exp, parse_one
>>> from provsql_dp.sql.scope import Scope, Source
>>> sc = Scope()
>>> sc.add(Source("t", ("a", "b"), ("v0", "v1")))
>>> scalar_expression(parse_one("a + b > 1"), sc, "WHERE").sql()
'v0 + v1 > 1'
"""

from __future__ import annotations

from sqlglot import exp

from .scope import NON_MONOTONE, NOT_YET, Scope, refuse

__all__ = ["scalar_expression"]

#: where a subquery is planned (sql.semijoin): a semi-join, never a join (a join multiplies rows)
_WHERE_ONLY = ("IN (subquery) and EXISTS (subquery) are answered as conditions of WHERE, joined "
               "to the others by AND")

_NONDETERMINISTIC = {
    "RAND", "RANDOM", "UUID", "GEN_RANDOM_UUID", "UUIDV4", "UUIDV7", "NEXTVAL", "CURRVAL",
    "SETSEED",
}


def scalar_expression(e: exp.Expression, scope: Scope, where: str) -> exp.Expression:
    """Check a scalar expression and rewrite its column references to plan ids."""
    for node in e.walk():
        if isinstance(node, (exp.Subquery, exp.Select)) or (
            isinstance(node, exp.In) and node.args.get("query") is not None
        ):
            neg = _negated(node)
            if isinstance(node, exp.In):
                raise refuse(f"NOT IN (subquery) in {where}" if neg else f"IN (subquery) in {where}",
                             NON_MONOTONE if neg else NOT_YET, None if neg else _WHERE_ONLY)
            raise refuse(f"a subquery in {where}", NOT_YET, _WHERE_ONLY)
        if isinstance(node, exp.Exists):
            neg = _negated(node)
            raise refuse(f"NOT EXISTS (subquery) in {where}" if neg
                         else f"EXISTS (subquery) in {where}",
                         NON_MONOTONE if neg else NOT_YET, None if neg else _WHERE_ONLY)
        if isinstance(node, exp.Window):
            raise refuse("window functions", NON_MONOTONE)
        if isinstance(node, exp.AggFunc):
            raise refuse(f"the aggregate {node.sql(dialect='duckdb')} in {where}", NON_MONOTONE)
        if isinstance(node, (exp.Rand, exp.Uuid)) or (
            isinstance(node, exp.Func) and _func_name(node) in _NONDETERMINISTIC
        ):
            raise refuse(f"the non-deterministic function {_func_name(node).lower()}()",
                         "its value differs between runs, so provenance cannot be tracked")
        if isinstance(node, exp.Placeholder) or isinstance(node, exp.Parameter):
            raise refuse("query parameters in a private query", NOT_YET)
        if isinstance(node, exp.Star) and not isinstance(node.parent, (exp.Count,)):
            raise refuse(f"* inside {where}")

    def rewrite(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column):
            if isinstance(n.this, exp.Star):
                raise refuse(f"{n.sql(dialect='duckdb')} inside {where}")
            return exp.column(scope.resolve(n))
        return n

    return e.copy().transform(rewrite, copy=False)


def _negated(node: exp.Expression) -> bool:
    parent = node.parent
    while isinstance(parent, exp.Paren):
        parent = parent.parent
    return isinstance(parent, exp.Not)


def _func_name(node: exp.Expression) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.this).upper()
    return node.sql_name().upper() if hasattr(node, "sql_name") else type(node).__name__.upper()
