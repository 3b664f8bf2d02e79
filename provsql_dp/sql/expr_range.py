"""Interval arithmetic over sqlglot expressions: the range a SUM's argument provably lies in,
read from the statement itself (constants, CASE branches, booleans, ``LEAST``/``GREATEST``
clamps, products of bounded terms) and from the columns' declared bounds.

Why: ``SUM(CASE WHEN sex = 'male' THEN 1 ELSE 0 END)`` adds terms in ``[0, 1]`` — the statement
says so. Treated as a SUM bounded by ``[0, 1]`` it takes the Laplace route with sensitivity 1,
like ``COUNT(*) … WHERE sex = 'male'``, instead of the recursive mechanism's unbounded route.

:func:`expression_range` returns a :class:`Range` ``[lo, hi]`` (endpoints may be ±∞) that
contains every non-NULL value the expression takes on any row, or None when nothing is known.
NULLs do not matter: SUM skips them. :func:`bounded_argument` is the planner's hook: for a SUM
argument that is not a bare column, it substitutes every column that has declared bounds by its
clamp ``LEAST(GREATEST(col, lo), hi)``, NULL when the value is not finite (declared bounds are a
declaration, not a constraint on the data: the clamp is what makes the proved range hold on
every row) and returns the rewritten argument with its range when that range is finite.

Soundness rules (each also checked by a property test that evaluates random expressions in
DuckDB over random rows, ``tests/unit/sql/test_expr_range.py``):

* every arithmetic result is widened outwards by one ulp on each side (DuckDB computes in
  floating point; one correctly-rounded operation is within half an ulp of the exact result);
* ``LEAST``/``GREATEST`` ignore NULL arguments in DuckDB, so an upper end of ``LEAST`` comes only
  from arguments that are never NULL (constants and expressions of constants);
* a division whose divisor's range holds 0 is ``[-∞, ∞]`` and may be NaN (DuckDB 2.0: ``1/0`` is
  ``inf``, ``0/0`` is ``NaN``); casts to integer round (``[⌊lo⌋, ⌈hi⌉]``; NaN or ±∞ fail, and a
  failing cast is NULL in the planner's total form); predicates and booleans are ``[0, 1]``.

*NaN.* A :class:`Range` says whether the expression may be NaN (``nan``): ``0·∞``, ``∞ − ∞``,
``∞/∞``, a division by a range holding 0, and anything unknown (``sqrt``/``ln`` of a negative)
make it, and every operation but a comparison keeps it. DuckDB orders NaN above every number, so
``GREATEST(0, NaN)`` is NaN while ``LEAST(NaN, 5)`` is 5: ``LEAST`` with one argument that is never
NULL nor NaN is never NaN (``GREATEST(0, u/u)`` may be NaN; ``LEAST(GREATEST(u/u, 0), 1)`` is in
``[0, 1]`` and never NaN). ``lo``/``hi`` bound the values that are not NaN. A column's bounds
are taken as NaN-free (a clamped column: NaN is NULL), unless ``column_bounds`` returns a
:class:`Range` saying otherwise. What consumes a range decides what NaN means for it:
:func:`bounded_argument` (a SUM's bounds) and :mod:`~provsql_dp.sql.key_domain` refuse a range that
may be NaN; the nonnegative route (:mod:`~provsql_dp.sql._nonnegative`) takes ``lo ≥ 0`` with NaN
because the SUM's clamp (:func:`~provsql_dp.provenance.clamp.clamp_sql`) turns NaN into NULL.

>>> import sqlglot
>>> def r(sql, bounds=None):
...     return expression_range(sqlglot.parse_one(sql, read="duckdb"),
...                             lambda c: (bounds or {}).get(c))
>>> r("CASE WHEN sex = 'male' THEN 1 ELSE 0 END")
Range(lo=0.0, hi=1.0)
>>> r("LEAST(GREATEST(x, 0), 100)")
Range(lo=0.0, hi=100.0)
>>> r("CAST(a > 3 AS INT) * 5")
Range(lo=0.0, hi=5.0)
>>> r("x * y", {"x": (0, 10), "y": (-1, 2)}).lo <= -10, r("x * y", {"x": (0, 10), "y": (-1, 2)}).hi >= 20
(True, True)
>>> r("x + 1") is None
True
>>> r("GREATEST(0, u / u)").nan, r("LEAST(GREATEST(u / u, 0), 1)")
(True, Range(lo=0.0, hi=1.0))
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from sqlglot import exp

__all__ = ["Range", "expression_range", "bounded_argument", "clamp_columns"]

_INF = math.inf


@dataclass(frozen=True)
class Range:
    """A closed interval ``[lo, hi]`` of numbers (endpoints may be ±∞) holding every value that
    is not NaN, whether the expression can be NULL (``nullable``: LEAST/GREATEST need it) and
    whether it can be NaN (``nan``)."""

    lo: float
    hi: float
    nullable: bool = True
    nan: bool = False

    def __repr__(self) -> str:
        return f"Range(lo={self.lo!r}, hi={self.hi!r}{', nan=True' if self.nan else ''})"

    @property
    def finite(self) -> bool:
        return math.isfinite(self.lo) and math.isfinite(self.hi)


#: anything: a value of unknown range that may be NULL or NaN
_ANY = Range(-_INF, _INF, True, True)


def _out(lo: float, hi: float, nullable: bool, nan: bool = False) -> Range:
    """``[lo, hi]`` widened by one ulp each side (an arithmetic result; not when both ends are
    integers below 2**53, which every operation of integers computes exactly); an end that is
    NaN (``∞ − ∞``) makes ``[-∞, ∞]`` that may be NaN."""
    if math.isnan(lo) or math.isnan(hi):
        return Range(-_INF, _INF, nullable, True)
    lo, hi = float(lo), float(hi)
    if all(math.isfinite(v) and v.is_integer() and abs(v) < 2 ** 53 for v in (lo, hi)):
        return Range(lo, hi, nullable, nan)
    # an end at 0 stays there: rounding (to any type, DuckDB's DECIMAL too) is monotone and
    # keeps the sign, so a result whose exact range starts at 0 is never below 0 (the sign
    # decides whether a SUM is released in two signed halves, each at ε/2)
    return Range(0.0 if lo == 0 else math.nextafter(lo, -_INF),
                 0.0 if hi == 0 else math.nextafter(hi, _INF), nullable, nan)


def _meet(lo: float, hi: float) -> bool:
    """Whether a value ``−∞`` (a range's lower end ``lo``) may be added to ``+∞`` (another's
    upper end ``hi``): their sum is NaN."""
    return lo == -_INF and hi == _INF


def _mul(a: float, b: float) -> float:
    if (a == 0 and math.isinf(b)) or (b == 0 and math.isinf(a)):
        return math.nan
    return a * b


_PREDICATES = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.And, exp.Or, exp.Not,
               exp.Is, exp.In, exp.Like, exp.ILike, exp.Between, exp.Boolean, exp.NullSafeEQ,
               exp.NullSafeNEQ, exp.Exists)
_INTEGER = {"TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT", "HUGEINT", "INT128", "UINT128",
            "UTINYINT", "USMALLINT",
            "UINTEGER", "UBIGINT", "UHUGEINT", "INT1", "INT2", "INT4", "INT8", "LONG", "SHORT"}
_FLOAT = {"FLOAT", "REAL", "DOUBLE", "FLOAT4", "FLOAT8", "DOUBLE PRECISION"}


def expression_range(e: exp.Expression, column_bounds: Callable[[str], tuple | None],
                     column_type: Callable[[str], str | None] = lambda _: None) -> Range | None:
    """The :class:`Range` of ``e`` (see the module docstring), or None when unknown.

    ``column_bounds(name)`` gives a column's declared ``(lo, hi)`` (never NaN), a :class:`Range`
    or None; ``column_type(name)`` its DuckDB type (a BOOLEAN column is ``[0, 1]``) or None."""
    def go(n):
        return expression_range(n, column_bounds, column_type)

    if isinstance(e, (exp.Paren, exp.Alias)):
        return go(e.this)
    if isinstance(e, exp.Null):
        return Range(_INF, -_INF, True)  # empty: only NULL
    if isinstance(e, exp.Literal):
        if e.is_string:
            return None
        v = float(e.this)
        return Range(v, v, False) if math.isfinite(v) else None
    if isinstance(e, _PREDICATES):
        return Range(0.0, 1.0, not isinstance(e, exp.Boolean))
    if isinstance(e, exp.Column):
        b = column_bounds(e.name)
        if isinstance(b, Range):
            return Range(b.lo, b.hi, True, b.nan)
        if b is not None:
            return Range(float(b[0]), float(b[1]), True)
        if (column_type(e.name) or "").upper() == "BOOLEAN":
            return Range(0.0, 1.0, True)
        return None
    if isinstance(e, exp.Neg):
        a = go(e.this)
        return None if a is None else Range(-a.hi, -a.lo, a.nullable, a.nan)
    if isinstance(e, (exp.Cast, exp.TryCast)):
        return _cast(go(e.this), e.to)
    if isinstance(e, (exp.Add, exp.Sub, exp.Mul, exp.Div)):
        a, b = go(e.this), go(e.expression)
        if a is None or b is None:
            return None
        if a.lo > a.hi or b.lo > b.hi:  # an operand is always NULL: so is the result
            return Range(_INF, -_INF, True)
        nullable, nan = a.nullable or b.nullable, a.nan or b.nan
        if isinstance(e, exp.Add):  # ∞ + (−∞) is NaN
            nan = nan or _meet(a.lo, b.hi) or _meet(b.lo, a.hi)
            return _out(a.lo + b.lo, a.hi + b.hi, nullable, nan)
        if isinstance(e, exp.Sub):  # ∞ − ∞ is NaN
            nan = nan or _meet(a.lo, -b.lo) or _meet(-b.hi, a.hi)
            return _out(a.lo - b.hi, a.hi - b.lo, nullable, nan)
        if isinstance(e, exp.Div):
            if b.lo <= 0 <= b.hi:  # x/0 is ±∞ or NaN in DuckDB 2.0 (DOUBLE division)
                return _ANY
            nan = nan or (math.isinf(max(abs(a.lo), abs(a.hi)))
                          and math.isinf(max(abs(b.lo), abs(b.hi))))  # ∞/∞
            b = Range(1 / b.hi, 1 / b.lo)  # exact enough: widened again below
            b = Range(math.nextafter(b.lo, -_INF), math.nextafter(b.hi, _INF))
        else:  # 0·∞ is NaN: a 0 inside one range, an infinite end of the other
            nan = nan or (a.lo <= 0 <= a.hi and not b.finite) or (b.lo <= 0 <= b.hi
                                                                   and not a.finite)
        prods = [_mul(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
        if any(math.isnan(p) for p in prods):  # 0·∞
            return _ANY
        return _out(min(prods), max(prods), True if isinstance(e, exp.Div) else nullable, nan)
    if isinstance(e, exp.Abs):
        a = go(e.this)
        if a is None or a.lo > a.hi:
            return a
        lo = 0.0 if a.lo <= 0 <= a.hi else min(abs(a.lo), abs(a.hi))
        return Range(lo, max(abs(a.lo), abs(a.hi)), a.nullable, a.nan)
    if isinstance(e, (exp.Case, exp.If)):
        if isinstance(e, exp.Case):
            branches = [i.args.get("true") for i in e.args.get("ifs") or []]
            branches.append(e.args.get("default"))
        else:  # IF(c, a, b): sqlglot names the else branch "false"
            branches = [e.args.get("true"), e.args.get("false")]
        return _union([exp.Null() if b is None else b for b in branches], go, any)
    if isinstance(e, exp.Coalesce):  # NULL only when every argument is
        return _union([e.this] + list(e.expressions), go, all)
    if isinstance(e, (exp.Least, exp.Greatest)):
        return _extreme([e.this] + list(e.expressions), go, isinstance(e, exp.Least))
    if isinstance(e, (exp.Floor, exp.Ceil)):
        a = go(e.this)
        if a is None or a.lo > a.hi or e.args.get("decimals") is not None:
            return None if a is None or e.args.get("decimals") is not None else a
        return Range(float(math.floor(a.lo)) if math.isfinite(a.lo) else a.lo,
                     float(math.ceil(a.hi)) if math.isfinite(a.hi) else a.hi, a.nullable, a.nan)
    return None


def _cast(a: Range | None, to: exp.DataType) -> Range | None:
    """A cast to a numeric type keeps the range (an integer or DECIMAL target rounds, so the
    range widens to integers); any other target is unknown. A failing cast is NULL (totality)."""
    if a is None:
        return None
    name = to.sql(dialect="duckdb").upper()
    base = name.split("(")[0].strip()
    if a.lo > a.hi:
        return a
    if base in _FLOAT:
        return Range(a.lo, a.hi, True, a.nan)
    if base in _INTEGER or base in ("DECIMAL", "NUMERIC"):  # NaN fails the cast: NULL
        lo = math.floor(a.lo) if math.isfinite(a.lo) else a.lo
        hi = math.ceil(a.hi) if math.isfinite(a.hi) else a.hi
        return Range(float(lo), float(hi), True)
    return None


def _union(parts, go, nullable) -> Range | None:
    """The hull of the ranges of ``parts`` (a CASE's branches, a COALESCE's arguments), NULL
    when ``nullable`` (any, all) of them may be."""
    rs = [go(p) for p in parts]
    if any(r is None for r in rs):
        return None
    return Range(min(r.lo for r in rs), max(r.hi for r in rs), nullable(r.nullable for r in rs),
                 any(r.nan for r in rs))


def _extreme(parts, go, least: bool) -> Range | None:
    """LEAST (``least``) or GREATEST of ``parts``: DuckDB skips NULL arguments, so the bound on
    the far side comes from the arguments that are never NULL (if none, the hull). NaN is above
    every number: GREATEST is NaN when an argument is, and LEAST only when every argument that
    is not NULL is, so its upper bound comes from arguments never NULL nor NaN. An unknown
    argument may be anything (NULL, NaN, ±∞)."""
    rs = [_ANY if r is None else r for r in (go(p) for p in parts)]
    if all(r is _ANY for r in rs):
        return None
    rs = [r for r in rs if r.lo <= r.hi]  # always-NULL arguments are skipped
    if not rs:
        return Range(_INF, -_INF, True)
    sure = [r for r in rs if not r.nullable]
    nullable = not sure
    if least:
        sure = [r for r in sure if not r.nan]
        hi = min(r.hi for r in sure) if sure else max(r.hi for r in rs)
        return Range(min(r.lo for r in rs), hi, nullable, not sure and any(r.nan for r in rs))
    lo = max(r.lo for r in sure) if sure else min(r.lo for r in rs)
    return Range(lo, max(r.hi for r in rs), nullable, any(r.nan for r in rs))


def bounded_argument(arg: exp.Expression, column_bounds: Callable[[str], tuple | None],
                     column_type: Callable[[str], str | None] = lambda _: None
                     ) -> tuple[exp.Expression, tuple[float, float] | None]:
    """A SUM's argument and the bounds the statement proves for it: ``(arg', (lo, hi))`` with
    every declared-bounds column of ``arg`` replaced by its clamp, or ``(arg, None)`` when no
    finite range is proved (or ``arg`` is a bare column: its declared bounds are the planner's
    own rule, and the SUM clamps it). ``lo < hi`` always (a constant SUM gets a unit-wide
    range around it: the sensitivity must be positive).

    >>> import sqlglot
    >>> a, b = bounded_argument(sqlglot.parse_one("x * 2", read="duckdb"),
    ...                         lambda c: (0, 5) if c == "x" else None)
    >>> print(a.sql(dialect="duckdb")), b[0] <= 0 and b[1] >= 10
    CASE WHEN x > CAST('-inf' AS DOUBLE) AND x < CAST('inf' AS DOUBLE) THEN LEAST(GREATEST(x, 0), 5) END * 2
    (None, True)
    """
    if isinstance(arg, exp.Column):
        return arg, None
    r = expression_range(arg, column_bounds, column_type)
    if r is None or r.lo > r.hi or not r.finite or r.nan:  # a SUM's bounds are never NaN
        return arg, None
    out = clamp_columns(arg, column_bounds)
    lo, hi = float(r.lo), float(r.hi)
    if not hi > lo:
        lo, hi = lo - 0.5, hi + 0.5
    return out, (lo, hi)


def clamp_columns(e: exp.Expression, column_bounds: Callable[[str], tuple | None]
                  ) -> exp.Expression:
    """A copy of ``e`` with every column that has declared bounds replaced by its clamp
    ``CASE WHEN col > -inf AND col < inf THEN LEAST(GREATEST(col, lo), hi) END``: a non-finite
    value (NaN, ±∞) is NULL and adds nothing, as in a bare column's bounded SUM."""
    out = e.copy()
    for col in list(out.find_all(exp.Column)):
        b = column_bounds(col.name)
        if b is not None:
            lo, hi = (exp.Literal.number(_num(v)) for v in b)
            inf = [exp.cast(exp.Literal.string(t), exp.DataType.build("DOUBLE"))
                   for t in ("-inf", "inf")]
            finite = exp.and_(exp.GT(this=col.copy(), expression=inf[0]),
                              exp.LT(this=col.copy(), expression=inf[1]))
            clamp = exp.Case(ifs=[exp.If(this=finite, true=exp.Least(
                this=exp.Greatest(this=col.copy(), expressions=[lo], ignore_nulls=True),
                expressions=[hi], ignore_nulls=True))])
            if col is out:
                return clamp
            col.replace(clamp)
    return out


def _num(v) -> str:
    v = float(v)
    return str(int(v)) if v.is_integer() and abs(v) < 2 ** 53 else repr(v)
