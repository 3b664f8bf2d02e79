"""PostgreSQL's ordered-set quantiles in a private statement, read as DuckDB's: ``percentile_cont(q)
WITHIN GROUP (ORDER BY c)`` is ``QUANTILE_CONT(c, q)`` and ``percentile_disc(q) WITHIN GROUP (ORDER
BY c)`` is ``QUANTILE_DISC(c, q)`` — the form psql and JDBC users write, which the quantile route
releases (:mod:`provsql_dp.privacy.quantile_route`). ``ORDER BY c DESC`` reads the order from the
top: ``percentile_cont(q)`` of it is exactly ``QUANTILE_CONT(c, 1 − q)`` (the interpolation is
symmetric); a ``percentile_disc`` of it is not ``QUANTILE_DISC(c, 1 − q)`` at a tie between two
ranks, and is refused with the ascending form to write instead. Applied by
:func:`~.post_split.split_post` to every private statement before anything reads it.

>>> from provsql_dp.sql.dialect import parse_one
>>> as_quantiles(parse_one(
...     "SELECT percentile_cont(0.25) WITHIN GROUP (ORDER BY x DESC) AS q FROM t")).sql("duckdb")
'SELECT QUANTILE_CONT(x, 0.75) AS q FROM t'
>>> as_quantiles(parse_one("SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x) FROM t")).sql("duckdb")
'SELECT QUANTILE_DISC(x, 0.5) FROM t'
"""

from __future__ import annotations

from sqlglot import exp

from .._numbers import literal_fraction
from ..errors import UnsupportedQueryError

__all__ = ["as_quantiles"]


def as_quantiles(tree: exp.Expression) -> exp.Expression:
    """``tree`` with each ``percentile_cont/disc(q) WITHIN GROUP (ORDER BY c)`` replaced (in
    place) by the two-argument quantile of ``c`` (module docstring); other trees unchanged."""
    for node in list(tree.find_all(exp.WithinGroup)):
        agg, order = node.this, node.expression
        if not isinstance(agg, (exp.PercentileCont, exp.PercentileDisc)):
            continue
        name = "percentile_cont" if isinstance(agg, exp.PercentileCont) else "percentile_disc"
        keys = order.expressions if isinstance(order, exp.Order) else []
        if len(keys) != 1 or agg.expression is not None:
            raise UnsupportedQueryError(
                f"{name}(q) WITHIN GROUP takes one ORDER BY column and one fraction q: write "
                f"{name}(0.5) WITHIN GROUP (ORDER BY c)")
        q = agg.this
        if keys[0].args.get("desc"):
            if isinstance(agg, exp.PercentileDisc) or not (
                    isinstance(q, exp.Literal) and not q.is_string):
                raise UnsupportedQueryError(
                    f"{name}(q) WITHIN GROUP (ORDER BY c DESC) is not supported here: write it "
                    f"ascending, {name}(1 - q) WITHIN GROUP (ORDER BY c)"
                    + ("" if isinstance(agg, exp.PercentileCont) else
                       " (the same value but at a tie between two ranks)"))
            try:
                exact = literal_fraction(q.this)  # (Fraction("1e9999999") took 28 s: h147)
            except ValueError:
                exact = None
            if exact is None or not 0 <= exact <= 1:
                raise UnsupportedQueryError(
                    f"{name}(q) WITHIN GROUP takes a fraction q between 0 and 1, got {q.sql()[:40]}")
            q = exp.Literal.number(repr(float(1 - exact)))
        node.replace(type(agg)(this=keys[0].this.copy(), expression=q.copy()))
    return tree
