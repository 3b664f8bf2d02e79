"""The arithmetic rules of total evaluation: exact integer and decimal arithmetic computed in a
type that cannot overflow and brought back with TRY_CAST, ``//`` and ``%`` by zero as NULL, and
date arithmetic kept inside DuckDB's range. A mixin of :class:`provsql_dp.sql.total._Rewriter`.
"""

from __future__ import annotations

import duckdb
from sqlglot import exp

from ..errors import ProgrammingError
from ._typing import (
    _BINDER,
    _case,
    _double,
    _num,
    _p,
    _parse_type,
    _result_range,
    _try_cast,
    _Type,
)
from .functions import (
    _MARGIN,
    _MAX_DAYS,
    _MAX_INTERVAL_SECONDS,
    _YEARS,
    _is_constant,
    _literal_int,
    _unsupported,
    function_name,
)

# ------------------------------------------------------------------------------- the rewrite
_TEMPORAL_BOUNDS = {
    "date": ("DATE", f"-{_YEARS}-01-01", f"{_YEARS}-12-31"),
    "timestamp": ("TIMESTAMP", f"-{_YEARS}-01-01 00:00:00", f"{_YEARS}-12-31 23:59:59.999999"),
    "timestamptz": ("TIMESTAMPTZ", f"-{_YEARS}-01-01 00:00:00+00", f"{_YEARS}-12-31 23:59:59.999999+00"),
}
_MATH_FUNCTIONS = {"sqrt", "cbrt", "ln", "log", "exp", "power", "sin", "cos", "tan", "asin",
                   "acos", "atan", "atan2", "degrees", "radians"}
_TEMPORAL_UNARY = {"year", "month", "day", "quarter", "dayofweek", "dayofyear", "week",
                   "weekofyear", "isodow", "yearweek", "hour", "minute", "second", "era",
                   "century", "decade", "millennium", "dayname", "monthname", "last_day",
                   "epoch", "epoch_ms", "epoch_us", "strftime"}
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ)
_SMALL_INTS = {"TINYINT", "SMALLINT", "INTEGER", "UTINYINT", "USMALLINT"}


class _ArithmeticRules:
    """Rules for arithmetic, division and temporal arithmetic (see the module docstring)."""

    def arith(self, node: exp.Expression) -> exp.Expression:
        self.literal_operands(node)
        t = self.ty(node)
        a, b = node.this, node.expression
        ta, tb = self.ty(a), self.ty(b)
        if t.family in ("float", "null"):
            return node
        if t.temporal or t.family == "interval" or ta.temporal or tb.temporal:
            return self.temporal_arith(node, t, ta, tb)
        if t.family == "int":
            return self.int_arith(node, t, ta, tb)
        if t.family == "decimal":
            return self.dec_arith(node, t, ta, tb)
        raise _unsupported(f"arithmetic on {t.text} ({node.sql(dialect='duckdb')})")

    def int_arith(self, node, t: _Type, ta: _Type, tb: _Type) -> exp.Expression:
        op = type(node)
        a, b = node.this, node.expression
        lo, hi = _result_range(op, ta, tb)
        for wide in ("BIGINT", "HUGEINT", "UHUGEINT"):
            w = _parse_type(wide)
            if w.lo <= lo and hi <= w.hi:  # exact in the wide type: no overflow possible there
                body = op(this=_try_cast(a, wide), expression=_try_cast(b, wide))
                if t.lo <= lo and hi <= t.hi and t.text == wide:
                    return self.put(node, body)
                return self.put(node, _try_cast(body, t.text))
        a2, b2 = self.to_type(a, t), self.to_type(b, t)
        if t.signed:
            limit = float(2**127) * _MARGIN
            check = exp.LT(this=exp.Abs(this=_p(op(this=_double(a2.copy()), expression=_double(b2.copy())))),
                           expression=_num(limit))
        elif op is exp.Sub:
            check = exp.GTE(this=_p(a2.copy()), expression=_p(b2.copy()))
        else:
            limit = float(2**128) * _MARGIN
            check = exp.LT(this=_p(op(this=_double(a2.copy()), expression=_double(b2.copy()))),
                           expression=_num(limit))
        return self.put(node, _case(check, op(this=_p(a2), expression=_p(b2))))

    @staticmethod
    def _digits_scale(t: _Type) -> tuple[int, int]:
        if t.family == "int":
            return t.digits, 0
        if t.family == "decimal":
            return t.digits, t.scale
        return 0, 0

    def dec_arith(self, node, t: _Type, ta: _Type, tb: _Type) -> exp.Expression:
        op = type(node)
        a, b = node.this, node.expression
        (ia, sa), (ib, sb) = self._digits_scale(ta), self._digits_scale(tb)
        if op is exp.Mul:
            wa, wb = f"DECIMAL(38,{sa})", f"DECIMAL(38,{sb})"
            exact = ia + sa + ib + sb <= 38
            result_scale = sa + sb
        else:
            s = max(sa, sb)
            wa = wb = f"DECIMAL(38,{s})"
            exact = max(ia, ib) + 1 + s <= 38
            result_scale = s
        if result_scale > 38:
            raise _unsupported(f"{node.sql(dialect='duckdb')}: the product needs more than 38 decimals")
        a2, b2 = _try_cast(a, wa), _try_cast(b, wb)
        if exact:
            return self.put(node, _try_cast(op(this=a2, expression=b2), t.text))
        limit = 10.0 ** (38 - result_scale) * _MARGIN
        check = exp.LT(this=exp.Abs(this=_p(op(this=_double(a2.copy()), expression=_double(b2.copy())))),
                       expression=_num(limit))
        return self.put(node, _case(check, _try_cast(op(this=a2, expression=b2), t.text)))

    def divmod(self, node: exp.Expression) -> exp.Expression:
        self.literal_operands(node)
        op = type(node)
        t = self.ty(node)
        a, b = node.this, node.expression

        v = _literal_int(b)
        constant_nonzero = v is not None and v != 0

        def nonzero(d: exp.Expression) -> exp.Expression:
            if constant_nonzero:
                return d
            return exp.Nullif(this=d, expression=exp.Literal.number(0))

        if t.family in ("float", "null"):
            return self.put(node, op(this=_p(a), expression=nonzero(b)))
        if t.family == "int" and t.bits <= 64:
            wide = "BIGINT" if t.bits <= 32 else "HUGEINT"  # MIN // -1 fits the wider type
            body = op(this=_try_cast(a, wide), expression=nonzero(_try_cast(b, wide)))
            return self.put(node, _try_cast(body, t.text))
        if t.family == "int":
            a2, b2 = self.to_type(a, t), self.to_type(b, t)
            body = op(this=_p(a2), expression=nonzero(b2))
            if not t.signed:
                return self.put(node, body)
            # HUGEINT: MIN // -1 overflows (NULL); MIN % -1 too, but is 0 (as in HUGEINT above)
            minus_one = exp.EQ(this=_p(b2.copy()), expression=_num(-1))
            if op is exp.Mod:
                zero = exp.Sub(this=_p(a2.copy()), expression=_p(a2.copy()))
                return self.put(node, exp.Case(ifs=[exp.If(this=minus_one, true=zero)], default=body))
            edge = exp.And(this=minus_one,
                           expression=exp.LT(this=_p(a2.copy()), expression=_num(-(2**127) + 1)))
            return self.put(node, exp.Case(ifs=[exp.If(this=edge, true=exp.Null())], default=body))
        if t.family == "decimal":
            a2, b2 = _try_cast(a, t.text), _try_cast(b, t.text)
            return self.put(node, _try_cast(op(this=a2, expression=nonzero(b2)), t.text))
        raise _unsupported(f"{function_name(node)} on {t.text}")

    def negate(self, node: exp.Expression, op) -> exp.Expression:
        t = self.ty(node)
        a = node.this
        if isinstance(a, exp.Literal) and not a.is_string and op is exp.Neg:
            return node
        if t.family in ("float", "decimal", "null"):
            return node
        if t.family == "interval" and _is_constant(node):
            return node
        if t.family != "int":
            raise _unsupported(f"{function_name(node)} of {t.text}")
        if t.bits <= 64:
            wide = "BIGINT" if t.bits <= 32 else "HUGEINT"
            return self.put(node, _try_cast(op(this=_try_cast(a, wide)), t.text))
        if t.signed:  # HUGEINT: the minimum has no negation
            check = exp.GTE(this=_p(a.copy()), expression=_num(-(2**127) + 1))
            return self.put(node, _case(check, op(this=_p(a))))
        if op is exp.Abs:
            return node
        return self.put(node, _case(exp.EQ(this=_p(a.copy()), expression=_num(0)), a))

    def temporal_arith(self, node, t: _Type, ta: _Type, tb: _Type) -> exp.Expression:
        op = type(node)
        a, b = node.this, node.expression
        if t.family == "interval" and _is_constant(node):
            return node
        if ta.family == "interval" or tb.family == "interval":  # temporal ± constant interval
            iv, tv = (a, b) if ta.family == "interval" else (b, a)
            if not _is_constant(iv) or not self.ty(tv).temporal:
                raise _unsupported(f"{node.sql(dialect='duckdb')}",
                                   "only a date or timestamp plus or minus a constant interval")
            self.check_interval(iv)
            self.rewrite_child(tv, self.window)
            return node
        if ta.temporal and tb.temporal and op is exp.Sub:
            if ta.family == "date" and tb.family == "date":
                return node  # a number of days: never raises
            if ta.text != tb.text:
                self.unify([a, b], f"the difference {node.sql(dialect='duckdb')}")
            self.rewrite_child(node.this, self.window)
            self.rewrite_child(node.expression, self.window)
            return node
        if t.family == "date" and op in (exp.Add, exp.Sub):  # date ± days
            dv, nv = (a, b) if ta.temporal else (b, a)
            if self.ty(nv).family != "int":
                raise _unsupported(f"{node.sql(dialect='duckdb')}")
            self.rewrite_child(dv, self.window)

            def bounded(n: exp.Expression) -> exp.Expression:
                v = _literal_int(n)
                if v is not None and abs(v) <= _MAX_DAYS:
                    return n
                cond = exp.Between(this=_p(n.copy()), low=_num(-_MAX_DAYS), high=_num(_MAX_DAYS))
                return self.put(n, _case(cond, n))

            self.rewrite_child(nv, bounded)
            return node
        raise _unsupported(f"the arithmetic {node.sql(dialect='duckdb')} on {ta.text} and {tb.text}")

    def check_interval(self, iv: exp.Expression) -> None:
        sql = iv.sql(dialect="duckdb")
        if isinstance(iv, exp.Literal) and iv.is_string:
            self.rewrite_child(iv, lambda o: self.literal_as(o, _parse_type("INTERVAL")))
        try:
            (seconds,), = _BINDER.run(f"SELECT abs(epoch(({sql})::INTERVAL))")
        except duckdb.Error as err:
            raise ProgrammingError(f"the interval {sql} is not valid: {err}") from err
        if seconds is not None and seconds > _MAX_INTERVAL_SECONDS:
            raise _unsupported(f"the interval {sql}", f"intervals are limited to {_YEARS} years")

    def interval(self, node: exp.Interval) -> exp.Expression:
        if isinstance(node.parent, (exp.Add, exp.Sub)):
            return node  # checked by the arithmetic around it
        if not _is_constant(node):
            raise _unsupported("an INTERVAL computed from a column")
        self.check_interval(node)
        return node

    # -- conditionals
