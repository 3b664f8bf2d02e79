"""WHERE conditions of the policy route read as ranges over a policy's columns: a conjunction
of comparisons between one column and a constant becomes an interval of the column's domain bins.

>>> from sqlglot import parse_one
>>> [[(c, op.__name__, str(v)) for c, op, v in atoms(p)]
...  for p in conjuncts(parse_one("age BETWEEN 20 AND 39 AND 60 > age"))]
[[('age', 'GTE', '20'), ('age', 'LTE', '39')], [('age', 'LT', '60')]]
"""

from __future__ import annotations

import operator
from fractions import Fraction

import numpy as np
from sqlglot import exp

from .._numbers import literal_fraction
from ..errors import UnsupportedQueryError
from ..policies.blowfish.sql import ColumnDomain
from ..sql._conjuncts import conjuncts

__all__ = ["conjuncts", "atoms", "interval"]

_OPS = {exp.GT: operator.gt, exp.GTE: operator.ge, exp.LT: operator.lt, exp.LTE: operator.le,
        exp.EQ: operator.eq}
_FLIP = {exp.GT: exp.LT, exp.GTE: exp.LTE, exp.LT: exp.GT, exp.LTE: exp.GTE, exp.EQ: exp.EQ}


def _const(node):
    """A literal's Python value (numbers exactly), or raise KeyError."""
    try:
        if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
            return -literal_fraction(node.this.this)
        if isinstance(node, exp.Literal):
            return node.this if node.is_string else literal_fraction(node.this)
    except ValueError:  # past 10^±4096: not read (red team h147)
        raise KeyError from None
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    raise KeyError


def atoms(pred):
    """``pred`` as [(column name, op, value)] (BETWEEN is two atoms), or None."""
    if isinstance(pred, exp.Between) and isinstance(pred.this, exp.Column):
        try:
            return [(pred.this.name, exp.GTE, _const(pred.args["low"])),
                    (pred.this.name, exp.LTE, _const(pred.args["high"]))]
        except KeyError:
            return None
    for cls in _OPS:
        if type(pred) is cls:
            a, b = pred.this, pred.expression
            try:
                if isinstance(a, exp.Column):
                    return [(a.name, cls, _const(b))]
                if isinstance(b, exp.Column):
                    return [(b.name, _FLIP[cls], _const(a))]
            except KeyError:
                return None
    return None


def interval(dom: ColumnDomain, col_type: str, op, value, text):
    """The inclusive bin interval ``[i0, i1]`` of the values satisfying ``column op value``."""
    if dom.values is not None:
        ok = []
        for v in dom.values:
            try:
                vv = v if isinstance(v, str) or isinstance(v, bool) else Fraction(str(v))
                ok.append(bool(_OPS[op](vv, value)))
            except TypeError:
                raise UnsupportedQueryError(
                    f"the condition {text} compares the column with a value of another type than "
                    "its domain's values") from None
        idx = np.flatnonzero(ok)
        if idx.size == 0:
            return (1, 0)
        if idx[-1] - idx[0] + 1 != idx.size:
            raise UnsupportedQueryError(
                f"the condition {text} selects values that are not consecutive in the domain's "
                "order; a range must be an interval of the domain")
        return int(idx[0]), int(idx[-1])
    if isinstance(value, str):
        raise UnsupportedQueryError(f"the condition {text} compares a numeric domain with a string")
    integral = col_type.upper() in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
                                    "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT")
    lo, hi = None, None  # half-open [lo, hi) in values
    v = Fraction(value)
    if op is exp.GTE:
        lo = v
    elif op is exp.GT:
        lo = v + 1 if integral and v.denominator == 1 else None
    elif op is exp.LT:
        hi = v
    elif op is exp.LTE:
        hi = v + 1 if integral and v.denominator == 1 else None
    elif op is exp.EQ:
        lo, hi = (v, v + 1) if integral and v.denominator == 1 else (None, None)
    if lo is None and hi is None:
        raise UnsupportedQueryError(
            f"the condition {text} does not align with the policy's bins on a non-integer column; "
            "write ranges as c >= a AND c < b with bin edges a and b")
    i0, i1 = 0, dom.k - 1
    if lo is not None and lo > dom.low:
        j = (lo - dom.low) / dom.width
        if j.denominator != 1:
            raise UnsupportedQueryError(
                f"the condition {text} starts inside a bin of the policy's domain {dom.describe()};"
                " range bounds must be bin edges")
        i0 = int(j)
    if hi is not None:
        if hi <= dom.low:
            return (1, 0)
        if hi < dom.high:
            j = (hi - dom.low) / dom.width
            if j.denominator != 1:
                raise UnsupportedQueryError(
                    f"the condition {text} ends inside a bin of the policy's domain "
                    f"{dom.describe()}; range bounds must be bin edges")
            i1 = int(j) - 1
    return i0, i1
