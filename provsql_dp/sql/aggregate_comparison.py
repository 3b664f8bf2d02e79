"""The refusal of a row condition that compares with an aggregate subquery.

TPC-H Q20 keeps a ``partsupp`` row when ``ps_availqty > (SELECT 0.5 * SUM(l_quantity) FROM
lineitem WHERE l_partkey = ps_partkey AND …)``: a correlated scalar aggregate over the line
items of many customers. Whether the row passes depends on all of them together, in both
directions — one customer leaving lowers the SUM and can *add* a row to the answer — so the
condition is not monotone in the participants and no positive provenance formula (the basis of
every sensitivity bound here) states it. :func:`aggregate_comparison_refusal` names it in one
sentence, with what to do instead; the planner raises it for such a WHERE conjunct.

R2T's authors (Dong, Fang, Yi, Tao, Machanavajjhala, SIGMOD 2022) evaluate a "Q20" that drops the
subquery altogether (a COUNT of ``supplier ⋈ nation ⋈ partsupp ⋈ lineitem``): a different query,
not this one.

>>> import sqlglot
>>> e = sqlglot.parse_one("x > (SELECT 0.5 * SUM(q) FROM l WHERE l.k = t.k)", read="duckdb")
>>> print(aggregate_comparison_refusal(e))
comparing with an aggregate subquery (x > (SELECT 0.5 * SUM(q) FROM l WHERE l.k = t.k)) is not supported in a private query: the aggregate reads the rows of many participants, so one participant leaving can change it and add rows to the answer (it is not monotone). Release the aggregate in a statement of its own and compare the released value yourself
>>> aggregate_comparison_refusal(sqlglot.parse_one("x IN (SELECT y FROM s)", read="duckdb")) is None
True
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import UnsupportedQueryError
from .scope import refuse

__all__ = ["aggregate_comparison_refusal"]

_COMPARISONS = (exp.GT, exp.GTE, exp.LT, exp.LTE, exp.EQ, exp.NEQ)


def aggregate_comparison_refusal(conj: exp.Expression) -> UnsupportedQueryError | None:
    """The refusal of ``conj`` when it compares with a subquery that computes an aggregate."""
    inner = conj.unnest() if isinstance(conj, exp.Paren) else conj
    if not isinstance(inner, _COMPARISONS):
        return None
    for side in (inner.this, inner.expression):
        side = side.unnest() if isinstance(side, exp.Paren) else side
        sub = side if isinstance(side, exp.Subquery) else None
        if sub is not None and any(a.find_ancestor(exp.Subquery) is sub
                                   for a in sub.find_all(exp.AggFunc)):
            return refuse(
                f"comparing with an aggregate subquery ({conj.sql(dialect='duckdb')})",
                "the aggregate reads the rows of many participants, so one participant leaving "
                "can change it and add rows to the answer (it is not monotone)",
                "release the aggregate in a statement of its own and compare the released value "
                "yourself")
    return None
