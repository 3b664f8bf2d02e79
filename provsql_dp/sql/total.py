"""Total evaluation: analyst expressions that DuckDB cannot make fail on any row.

The side-channel rule (DESIGN §8) says that once a private statement is accepted, what the analyst
sees depends on the data only through noise. A DuckDB error raised while evaluating an analyst's
expression breaks it twice: the error itself says that some row made the expression fail
(``1 // (salary - 50000)`` fails exactly when someone earns 50 000) and its text may quote the row
(``CAST(name AS INT)`` answers "Could not convert string 'Alice' to INT32"). This module makes
every scalar expression evaluated over protected rows *total*:

* :data:`ALLOWED_FUNCTIONS` is the reviewed allow-list of scalar functions and operators, each with
  the reason it is total or how it is made total. :func:`check_functions` refuses anything else
  (``error``, ``setseed``, ``random``, ``getenv``, ``current_setting``, table functions, macros…).
* :func:`make_total` rewrites an expression so that DuckDB cannot raise on any row: **a row on
  which an expression fails behaves as NULL does**. The rewrite is type-directed (the types of the
  subexpressions come from binding them in a private, empty, in-memory DuckDB) and uses only
  guards that cost the same on every row:

  - ``CAST`` becomes ``TRY_CAST``; implicit casts that can fail (a VARCHAR compared with a number, a
    HUGEINT meeting a DECIMAL, a far DATE meeting a TIMESTAMP) are made explicit ``TRY_CAST``\\ s to
    the common type; a string literal that must become another type is checked at plan time;
  - exact arithmetic (``+ - *``, unary ``-``, ``abs``, ``round`` to tens) is computed in a type
    wide enough that it cannot overflow there (BIGINT, HUGEINT or UHUGEINT, from the operands'
    ranges; DECIMAL(38, s) for decimals) and brought back with ``TRY_CAST`` (NULL on overflow);
    where no such type exists (HUGEINT/UHUGEINT operands, 38-digit DECIMALs) it is pre-checked in
    DOUBLE with a relative margin of 2⁻⁴⁰ (results within that margin of the type's limit are NULL);
  - ``//`` and ``%`` by zero are NULL (``NULLIF(divisor, 0)``), and so is ``MIN // -1``;
  - math functions (``sqrt``, ``ln``, ``pow``, …) are NULL where DuckDB would return NaN or ±inf;
  - temporal values entering date arithmetic or a date function are NULL outside years
    −100 000 … 100 000 (and ±infinity), day offsets beyond ±36 600 000 days are NULL, intervals
    must be constants of at most 100 000 years: together they keep every result inside DuckDB's
    TIMESTAMP range;
  - offsets of ``substring`` and ``left`` are ``TRY_CAST`` to INTEGER;
  - patterns (LIKE, SIMILAR TO, GLOB, regular expressions), escapes, date parts, formats, the
    replacement of ``replace`` and ``round``'s digits must be constants, checked at plan time.

``TRY(expr)`` is deliberately *not* used: DuckDB 2.0 implements it by re-running a vector that
failed row by row. Over 10 million rows, ``count(*) WHERE TRY(1 // (salary - 50000)) > 0`` takes
0.08 s when nobody earns 50 000 and 10 s when one row in 2 048 does (≈5 ms per failing vector);
``TRY(CAST(name AS INT))`` takes 195 s where ``TRY_CAST`` takes 1.5 s — a timing side channel
replacing the error one. The guards above never fail, so the vectorised path always runs and the
per-row cost does not depend on the values (the rewritten query above: 0.16 s either way).

:func:`finite_or_null` and :func:`total_weight` prepare a SUM argument: a finite DOUBLE or NULL.

>>> import sqlglot
>>> e = sqlglot.parse_one("1 // (salary - 50000) > 0", read="duckdb")
>>> print(make_total(e, {"salary": "INTEGER"}).sql(dialect="duckdb"))  # doctest: +NORMALIZE_WHITESPACE
TRY_CAST(TRY_CAST(1 AS BIGINT) // NULLIF(TRY_CAST((TRY_CAST(TRY_CAST(salary AS BIGINT) - TRY_CAST(50000
AS BIGINT) AS INT)) AS BIGINT), 0) AS INT) > 0
>>> check_functions(sqlglot.parse_one("error(name)", read="duckdb"))
Traceback (most recent call last):
...
provsql_dp.errors.UnsupportedQueryError: the function error() is not on the allow-list of functions a private query may use ...
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

import duckdb
from sqlglot import exp

from ..errors import InternalError, ProgrammingError, UnsupportedQueryError

__all__ = [
    "ALLOWED_FUNCTIONS",
    "MAX_NODES",
    "check_functions",
    "coerce",
    "expression_types",
    "finite_or_null",
    "function_name",
    "make_total",
    "total_weight",
]

# --------------------------------------------------------------------------------- the allow-list
_EXACT = (
    "exact numbers are computed in a wider type (HUGEINT, DECIMAL(38,s)) and brought back with "
    "TRY_CAST, or pre-checked in DOUBLE for HUGEINT/UHUGEINT/38-digit DECIMAL: NULL on overflow"
)
_UNIFY = (
    "operands of different types are brought to their common type with TRY_CAST (a string "
    "literal is checked at plan time); comparing never raises"
)
_MATH = "never raises in DuckDB (NaN/±inf); made NULL where the result is not finite"
_TEMPORAL = (
    "the DATE/TIMESTAMP argument is NULL outside years -100000..100000 (DuckDB raises on some "
    "functions near the ends of its range)"
)
_STRING = "total on every string; output at most linear in the input"
_PATTERN = "the pattern must be a constant, checked at plan time"

ALLOWED_FUNCTIONS: dict[str, str] = {
    # arithmetic
    "+": f"{_EXACT}; DOUBLE is IEEE (never raises); date + days and timestamp + constant interval "
         "have their operands narrowed so the result stays in range",
    "-": f"binary and unary: {_EXACT}; unary minus of the type's minimum is NULL; "
         "date - date never raises; timestamp - timestamp has its operands narrowed",
    "*": _EXACT,
    "/": "always DOUBLE in DuckDB: IEEE (x/0 is ±inf or NaN), never raises",
    "//": "the divisor 0 is replaced by NULL; integers are divided in HUGEINT so MIN // -1 is NULL",
    "%": "the divisor 0 is replaced by NULL; integers in HUGEINT so MIN % -1 is NULL",
    "abs": f"{_EXACT} (abs of the minimum is NULL)",
    "sign": "total",
    "round": "digits must be a constant; rounding an integer to tens is done in HUGEINT "
             "(or pre-checked in DOUBLE) and is NULL on overflow",
    "floor": "total (the result type is wide enough)",
    "ceil": "total (the result type is wide enough)",
    "trunc": "total (truncating never grows a value)",
    "sqrt": _MATH, "cbrt": _MATH, "ln": _MATH, "log": _MATH, "exp": _MATH, "power": _MATH,
    "sin": _MATH, "cos": _MATH, "tan": _MATH, "asin": _MATH, "acos": _MATH, "atan": _MATH,
    "atan2": _MATH, "degrees": _MATH, "radians": _MATH,
    "pi": "a constant",
    "isnan": "total", "isinf": "total", "isfinite": "total",
    # comparison and logic
    "=": _UNIFY, "<>": _UNIFY, "<": _UNIFY, "<=": _UNIFY, ">": _UNIFY, ">=": _UNIFY,
    "is distinct from": _UNIFY, "is not distinct from": _UNIFY,
    "between": _UNIFY, "in": f"with a list of values only: {_UNIFY}",
    "is": "IS [NOT] NULL never raises; IS TRUE/FALSE has its operand TRY_CAST to BOOLEAN",
    "and": "operands that are not BOOLEAN are TRY_CAST to BOOLEAN",
    "or": "operands that are not BOOLEAN are TRY_CAST to BOOLEAN",
    "not": "an operand that is not BOOLEAN is TRY_CAST to BOOLEAN",
    "case": "conditions are TRY_CAST to BOOLEAN, results TRY_CAST to the CASE's type where needed",
    "coalesce": _UNIFY, "nullif": _UNIFY, "greatest": _UNIFY, "least": _UNIFY,
    "cast": "rewritten to TRY_CAST (NULL where the conversion fails); a constant operand is checked "
            "at plan time; only scalar target types",
    "try_cast": "NULL where the conversion fails; only scalar target types",
    # strings
    "||": _STRING, "concat": _STRING, "concat_ws": _STRING,
    "lower": _STRING, "upper": _STRING, "length": _STRING, "strlen": _STRING, "reverse": _STRING,
    "trim": _STRING, "ltrim": _STRING, "rtrim": _STRING,
    "substring": f"{_STRING}; offsets are TRY_CAST to INTEGER (DuckDB raises beyond ±2^32)",
    "left": f"{_STRING}; the length is TRY_CAST to INTEGER",
    "right": _STRING,
    "split_part": _STRING,
    "starts_with": _STRING, "ends_with": _STRING, "prefix": _STRING, "suffix": _STRING,
    "contains": _STRING, "strpos": _STRING, "ascii": _STRING, "md5": _STRING,
    "hash": "total on every value",
    "replace": f"{_STRING} (the replacement must be a constant, so the output grows linearly)",
    "like": f"{_PATTERN}; an ESCAPE must be one constant character and the pattern must not end "
            "with it (DuckDB raises on that only when a row reaches the end of the pattern)",
    "ilike": f"{_PATTERN} (as LIKE)",
    "escape": "the ESCAPE clause of LIKE/ILIKE (see like)",
    "similar to": f"{_PATTERN} (RE2: linear time)",
    "glob": _PATTERN,
    "regexp_matches": f"{_PATTERN}, options too (RE2: linear time, no backtracking)",
    "regexp_full_match": f"{_PATTERN}, options too (RE2)",
    "regexp_extract": f"{_PATTERN}, group and options too (RE2)",
    "regexp_replace": f"{_PATTERN}, replacement and options too (RE2; output linear in the input)",
    # dates and times
    "year": _TEMPORAL, "month": _TEMPORAL, "day": _TEMPORAL, "quarter": _TEMPORAL,
    "dayofweek": _TEMPORAL, "dayofyear": _TEMPORAL, "week": _TEMPORAL, "weekofyear": _TEMPORAL,
    "isodow": _TEMPORAL, "yearweek": _TEMPORAL, "hour": _TEMPORAL, "minute": _TEMPORAL,
    "second": _TEMPORAL, "era": _TEMPORAL, "century": _TEMPORAL, "decade": _TEMPORAL,
    "millennium": _TEMPORAL, "dayname": _TEMPORAL, "monthname": _TEMPORAL, "last_day": _TEMPORAL,
    "epoch": _TEMPORAL, "epoch_ms": f"{_TEMPORAL}; only of a DATE/TIMESTAMP",
    "epoch_us": f"{_TEMPORAL}; only of a DATE/TIMESTAMP",
    "extract": f"{_TEMPORAL}; the part must be a known constant",
    "date_part": f"{_TEMPORAL}; the part must be a known constant",
    "date_trunc": f"{_TEMPORAL}; the part must be a known constant",
    "date_diff": f"{_TEMPORAL}; the part must be a known constant (at most microseconds)",
    "date_sub": f"{_TEMPORAL}; the part must be a known constant (at most microseconds)",
    "strftime": f"{_TEMPORAL}; the format must be a constant (checked by DuckDB's binder)",
    "strptime": "rewritten to try_strptime (NULL where the string does not parse); constant format",
    "try_strptime": "NULL where the string does not parse; constant format",
    "interval": "a constant of at most 100000 years",
}

# sqlglot classes that stand for an operator, by their DuckDB spelling
_OPERATORS: dict[type, str] = {
    exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.IntDiv: "//", exp.Mod: "%",
    exp.Neg: "-", exp.DPipe: "||",
    exp.EQ: "=", exp.NEQ: "<>", exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<=",
    exp.NullSafeEQ: "is not distinct from", exp.NullSafeNEQ: "is distinct from",
    exp.And: "and", exp.Or: "or", exp.Not: "not", exp.Is: "is",
    exp.Between: "between", exp.In: "in", exp.Like: "like", exp.ILike: "ilike",
    exp.SimilarTo: "similar to", exp.Glob: "glob", exp.Escape: "escape",
    exp.Case: "case", exp.If: "case", exp.Cast: "cast", exp.TryCast: "try_cast",
    exp.Interval: "interval",
}

# function classes sqlglot parses DuckDB calls into, which the rewrite below knows; their DuckDB
# name is read from the SQL they generate (Trim → trim/ltrim/rtrim, Log → log, …)
_FUNCTION_CLASSES: frozenset[type] = frozenset({
    exp.Abs, exp.Sign, exp.Round, exp.Floor, exp.Ceil, exp.Trunc, exp.Sqrt, exp.Cbrt, exp.Ln,
    exp.Log, exp.Exp, exp.Pow, exp.Pi, exp.Sin, exp.Cos, exp.Tan, exp.Asin, exp.Acos, exp.Atan,
    exp.Atan2, exp.Degrees, exp.Radians, exp.IsNan, exp.IsInf,
    exp.Coalesce, exp.Nullif, exp.Greatest, exp.Least,
    exp.Upper, exp.Lower, exp.Length, exp.Reverse, exp.Trim, exp.Concat, exp.ConcatWs,
    exp.Substring, exp.Left, exp.Right, exp.StartsWith, exp.EndsWith, exp.Contains,
    exp.StrPosition, exp.Replace, exp.SplitPart, exp.Ascii, exp.MD5,
    exp.RegexpLike, exp.RegexpFullMatch, exp.RegexpReplace, exp.RegexpExtract,
    exp.Year, exp.Month, exp.Day, exp.Quarter, exp.DayOfWeek, exp.DayOfYear, exp.Week,
    exp.WeekOfYear, exp.DayOfWeekIso, exp.Hour, exp.Minute, exp.Second, exp.Dayname,
    exp.Monthname, exp.LastDay, exp.Extract, exp.TimestampTrunc, exp.DateTrunc, exp.DateDiff,
    exp.TimeToUnix, exp.UnixToTime, exp.TimeToStr, exp.StrToTime,
})

# leaves and syntax that are not functions (checked where they appear)
_LEAVES = (exp.Column, exp.Literal, exp.Null, exp.Boolean, exp.Paren, exp.Identifier,
           exp.DataType, exp.DataTypeParam, exp.Var, exp.Star)
# statement structure and aggregates: the planner's business, skipped by check_functions
_STRUCTURE = (exp.Query, exp.Subquery, exp.From, exp.Join, exp.Where, exp.Group, exp.Having,
              exp.Qualify, exp.Order, exp.Ordered, exp.Limit, exp.Offset, exp.With, exp.CTE,
              exp.Table, exp.TableAlias, exp.Alias, exp.Distinct, exp.Schema, exp.AggFunc,
              exp.Window, exp.WindowSpec, exp.Filter, exp.Tuple)

_CAST_TARGETS = {
    exp.DataType.Type.BOOLEAN, exp.DataType.Type.TINYINT, exp.DataType.Type.SMALLINT,
    exp.DataType.Type.INT, exp.DataType.Type.BIGINT, exp.DataType.Type.INT128,
    exp.DataType.Type.UTINYINT, exp.DataType.Type.USMALLINT, exp.DataType.Type.UINT,
    exp.DataType.Type.UBIGINT, exp.DataType.Type.UINT128, exp.DataType.Type.DECIMAL,
    exp.DataType.Type.FLOAT, exp.DataType.Type.DOUBLE, exp.DataType.Type.VARCHAR,
    exp.DataType.Type.TEXT, exp.DataType.Type.CHAR, exp.DataType.Type.DATE,
    exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPNTZ, exp.DataType.Type.TIMESTAMPTZ,
    exp.DataType.Type.DATETIME,
}

_DATE_PARTS = {
    "year", "years", "month", "months", "day", "days", "decade", "decades", "century",
    "centuries", "millennium", "millennia", "quarter", "quarters", "dow", "dayofweek", "isodow",
    "doy", "dayofyear", "week", "weeks", "weekofyear", "yearweek", "isoyear", "era", "epoch",
    "hour", "hours", "minute", "minutes", "second", "seconds", "millisecond", "milliseconds",
    "microsecond", "microseconds",
}
_TRUNC_PARTS = {
    "year", "quarter", "month", "week", "day", "hour", "minute", "second", "millisecond",
    "microsecond", "decade", "century", "millennium", "isoyear",
}
_DIFF_PARTS = {
    "year", "years", "quarter", "quarters", "month", "months", "week", "weeks", "day", "days",
    "hour", "hours", "minute", "minutes", "second", "seconds", "millisecond", "milliseconds",
    "microsecond", "microseconds", "decade", "decades", "century", "centuries", "millennium",
    "millennia", "isoyear",
}

#: the largest rewritten expression accepted (sqlglot nodes); guards copy operands, so an
#: expression nesting many overflow-checked operations grows — refused beyond this
MAX_NODES = 20_000

_YEARS = 100_000  # temporal values are kept within ±_YEARS years
_MAX_DAYS = 36_600_000  # > 100 000 years of days
_MAX_INTERVAL_SECONDS = 3.16e12  # 100 000 years
_MARGIN = 1.0 - 2.0**-40  # relative margin of DOUBLE pre-checks


def _refuse(name: str) -> UnsupportedQueryError:
    return UnsupportedQueryError(
        f"the function {name}() is not on the allow-list of functions a private query may use "
        "(provsql_dp.sql.total.ALLOWED_FUNCTIONS: each is total, or made total, so that no row "
        "can make the query fail)"
    )


def _unsupported(what: str, hint: str | None = None) -> UnsupportedQueryError:
    msg = f"{what} is not supported in a private query"
    if hint:
        msg += f": {hint}"
    return UnsupportedQueryError(msg)


_NAME = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def function_name(node: exp.Expression) -> str:
    """The DuckDB name of the function or operator a sqlglot node stands for (lower case).

    >>> import sqlglot
    >>> [function_name(sqlglot.parse_one(s, read="duckdb")) for s in ("a // b", "log2(x)", "ltrim(s)", "f(x)")]
    ['//', 'log', 'ltrim', 'f']
    """
    name = _OPERATORS.get(type(node))
    if name is not None:
        return name
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    if isinstance(node, exp.Func):
        m = _NAME.match(node.sql(dialect="duckdb"))
        if m:
            return m.group(1).lower()
    return node.key.lower()


# ------------------------------------------------------------------------------------ checking
def _literal_text(e: exp.Expression | None) -> str | None:
    """The text of a constant string (or part name) argument, None if it is not one."""
    if e is None:
        return None
    while isinstance(e, exp.Paren):
        e = e.this
    if isinstance(e, exp.Literal) and e.is_string:
        return e.this
    if isinstance(e, exp.Var):
        return e.name
    return None


def _literal_int(e: exp.Expression | None) -> int | None:
    if e is None:
        return None
    while isinstance(e, exp.Paren):
        e = e.this
    sign = 1
    if isinstance(e, exp.Neg):
        sign, e = -1, e.this
    if isinstance(e, exp.Literal) and not e.is_string:
        try:
            return sign * int(e.this)
        except ValueError:
            return None
    return None


def _is_constant(e: exp.Expression) -> bool:
    return not any(isinstance(n, exp.Column) for n in e.walk())


def _const_string(node: exp.Expression, arg: exp.Expression | None, what: str, name: str) -> None:
    if arg is None or isinstance(arg, exp.Null):
        return
    if _literal_text(arg) is None:
        raise _unsupported(f"a {what} of {name}() that is not a constant string",
                           f"write the {what} as a string literal")


def _check_like(node: exp.Expression, escape: exp.Expression | None) -> None:
    name = function_name(node)
    _const_string(node, node.args.get("expression"), "pattern", name)
    if escape is None or isinstance(escape, exp.Null):
        return
    esc = _literal_text(escape)
    if esc is None:
        raise _unsupported(f"an ESCAPE of {name.upper()} that is not a constant string")
    if len(esc) > 1:
        raise ProgrammingError(f"the ESCAPE of {name.upper()} must be one character, not {esc!r}")
    pattern = _literal_text(node.args.get("expression"))
    if esc and pattern is not None:
        i = 0
        while i < len(pattern):
            if pattern[i] == esc:
                if i + 1 == len(pattern):
                    raise ProgrammingError(
                        f"the {name.upper()} pattern {pattern!r} ends with its escape character {esc!r}"
                    )
                i += 2
            else:
                i += 1


def _part(node: exp.Expression) -> tuple[exp.Expression | None, list[exp.Expression]]:
    """(the part argument, the temporal arguments) of a date function."""
    if isinstance(node, exp.Extract):
        return node.this, [node.expression]
    if isinstance(node, (exp.TimestampTrunc, exp.DateTrunc)):
        return node.args.get("unit"), [node.this]
    if isinstance(node, exp.DateDiff):
        return node.args.get("unit"), [node.this, node.expression]
    if isinstance(node, exp.Anonymous):  # date_part(part, x), date_sub(part, a, b)
        args = list(node.expressions)
        return (args[0] if args else None), args[1:]
    raise InternalError(f"no part argument in {type(node).__name__}")


def _check_node(node: exp.Expression) -> None:
    """Refuse one node unless it is on the allow-list with the constants it needs."""
    if isinstance(node, _LEAVES):
        if isinstance(node, exp.Column) and isinstance(node.this, exp.Star):
            raise _unsupported(f"{node.sql(dialect='duckdb')} inside an expression")
        return
    if isinstance(node, _STRUCTURE):
        return
    name = function_name(node)
    if not (type(node) in _OPERATORS or type(node) in _FUNCTION_CLASSES
            or isinstance(node, exp.Anonymous)) or name not in ALLOWED_FUNCTIONS:
        raise _refuse(name)
    if isinstance(node, exp.Interval):
        if not _is_constant(node):
            raise _unsupported("an INTERVAL computed from a column",
                               "intervals must be constants (date + days: write d + n)")
    elif isinstance(node, exp.In):
        if any(node.args.get(k) is not None for k in ("query", "unnest", "field")):
            raise _unsupported("IN with a subquery or UNNEST", "list the values")
    elif isinstance(node, (exp.Like, exp.ILike)):
        esc = node.parent.expression if isinstance(node.parent, exp.Escape) else None
        _check_like(node, esc)
    elif isinstance(node, exp.Escape):
        if not isinstance(node.this, (exp.Like, exp.ILike)):
            raise _unsupported("ESCAPE outside LIKE/ILIKE")
    elif isinstance(node, (exp.SimilarTo, exp.Glob)):
        _const_string(node, node.expression, "pattern", name)
        if node.args.get("escape") is not None:
            raise _unsupported(f"{name.upper()} … ESCAPE")
    elif isinstance(node, (exp.RegexpLike, exp.RegexpFullMatch, exp.RegexpExtract, exp.RegexpReplace)):
        for key in ("expression", "flag", "modifiers", "replacement", "parameters"):
            _const_string(node, node.args.get(key), "pattern" if key == "expression" else key, name)
        if node.args.get("group") is not None and _literal_int(node.args["group"]) is None:
            raise _unsupported(f"a group of {name}() that is not a constant integer")
    elif isinstance(node, exp.Replace):
        _const_string(node, node.args.get("replacement"), "replacement", name)
    elif isinstance(node, (exp.Round, exp.Trunc)):
        d = node.args.get("decimals")
        if d is not None and _literal_int(d) is None:
            raise _unsupported(f"{name}() with digits that are not a constant integer")
    elif isinstance(node, (exp.Cast, exp.TryCast)):
        to = node.args.get("to")
        if not isinstance(to, exp.DataType) or to.this not in _CAST_TARGETS:
            raise _unsupported(f"{name.upper()} to {to.sql(dialect='duckdb') if to else '?'}",
                               "cast to a number, string, BOOLEAN, DATE or TIMESTAMP")
    elif name in ("extract", "date_part", "date_trunc", "date_diff", "date_sub"):
        part, _ = _part(node)
        text = _literal_text(part)
        allowed = _TRUNC_PARTS if name == "date_trunc" else (
            _DIFF_PARTS if name in ("date_diff", "date_sub") else _DATE_PARTS)
        if text is None or text.lower() not in allowed:
            raise _unsupported(f"{name}() with the part {part.sql(dialect='duckdb') if part else '?'}",
                               f"use a constant among {', '.join(sorted(allowed))}")
    elif name in ("strftime", "strptime", "try_strptime"):
        fmt = node.args.get("format") if not isinstance(node, exp.Anonymous) else (
            node.expressions[1] if len(node.expressions) > 1 else None)
        if fmt is None or _literal_text(fmt) is None:
            raise _unsupported(f"{name}() with a format that is not a constant string")


def check_functions(tree: exp.Expression) -> None:
    """Refuse every scalar function or operator of ``tree`` that is not on the allow-list.

    ``tree`` may be a scalar expression or a whole statement: statement structure (SELECT, FROM,
    joins, aliases) and aggregates are skipped — they are the planner's business — so a table
    function in FROM is refused too. Constant arguments that the rewrite relies on (patterns,
    date parts, formats, intervals, ``round``'s digits) are checked here.

    >>> import sqlglot
    >>> check_functions(sqlglot.parse_one("SELECT COUNT(*) FROM t WHERE upper(name) LIKE 'A%'", read="duckdb"))
    >>> check_functions(sqlglot.parse_one("SELECT * FROM read_csv('x.csv')", read="duckdb"))
    Traceback (most recent call last):
    ...
    provsql_dp.errors.UnsupportedQueryError: the function read_csv() is not on the allow-list of functions a private query may use ...
    """
    for node in tree.walk():
        _check_node(node)


# ------------------------------------------------------------------------------------ types
_SIGNED = {"TINYINT": 8, "SMALLINT": 16, "INTEGER": 32, "BIGINT": 64, "HUGEINT": 128}
_UNSIGNED = {"UTINYINT": 8, "USMALLINT": 16, "UINTEGER": 32, "UBIGINT": 64, "UHUGEINT": 128}


@dataclass(frozen=True)
class _Type:
    """A DuckDB type, parsed enough for the rewrite."""

    text: str
    family: str  # bool int decimal float string enum date timestamp timestamptz interval null other
    bits: int = 0
    signed: bool = True
    width: int = 0
    scale: int = 0

    @property
    def lo(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def hi(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    @property
    def digits(self) -> int:
        """Digits before the decimal point."""
        if self.family == "int":
            return len(str(max(abs(self.lo), self.hi)))
        return self.width - self.scale

    @property
    def numeric(self) -> bool:
        return self.family in ("int", "decimal", "float")

    @property
    def temporal(self) -> bool:
        return self.family in ("date", "timestamp", "timestamptz")


@lru_cache(maxsize=1024)
def _parse_type(text: str) -> _Type:
    t = text.strip()
    u = t.upper()
    if u in _SIGNED:
        return _Type(t, "int", bits=_SIGNED[u], signed=True)
    if u in _UNSIGNED:
        return _Type(t, "int", bits=_UNSIGNED[u], signed=False)
    m = re.fullmatch(r"DECIMAL\((\d+),\s*(\d+)\)", u)
    if m:
        return _Type(t, "decimal", width=int(m.group(1)), scale=int(m.group(2)))
    if u in ("FLOAT", "DOUBLE", "REAL"):
        return _Type(t, "float")
    if u == "BOOLEAN":
        return _Type(t, "bool")
    if u == "VARCHAR":
        return _Type(t, "string")
    if u.startswith("ENUM("):
        return _Type(t, "enum")
    if u == "DATE":
        return _Type(t, "date")
    if u == "TIMESTAMP":
        return _Type(t, "timestamp")
    if u in ("TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ"):
        return _Type(t, "timestamptz")
    if u == "INTERVAL":
        return _Type(t, "interval")
    if u in ('"NULL"', "NULL"):
        return _Type(t, "null")
    return _Type(t, "other")


def _result_range(op: type, ta: _Type, tb: _Type) -> tuple[int, int]:
    """The range of exact results of ``a op b`` for integer (or NULL) operand types."""
    def rng(t: _Type) -> tuple[int, int]:
        return (t.lo, t.hi) if t.family == "int" else (0, 0)

    (la, ha), (lb, hb) = rng(ta), rng(tb)
    if op is exp.Add:
        return la + lb, ha + hb
    if op is exp.Sub:
        return la - hb, ha - lb
    corners = [la * lb, la * hb, ha * lb, ha * hb]
    return min(corners), max(corners)


def _safe_cast(src: _Type, dst: _Type) -> bool:
    """Whether DuckDB's cast from ``src`` to ``dst`` can never fail."""
    if src.text == dst.text or src.family == "null":
        return True
    if dst.family == "string":
        return src.family in ("int", "decimal", "float", "bool", "string", "enum", "date",
                              "timestamp", "timestamptz", "interval")
    if src.family == "int" and dst.family == "int":
        return dst.lo <= src.lo and src.hi <= dst.hi
    if src.family in ("int", "decimal") and dst.family == "float":
        return True
    if src.family == "float" and dst.family == "float":
        return dst.text.upper() == "DOUBLE"
    if src.family == "int" and dst.family == "decimal":
        return src.digits <= dst.digits
    if src.family == "decimal" and dst.family == "decimal":
        return src.digits <= dst.digits and src.scale <= dst.scale
    return False


# ------------------------------------------------------------------------- the private binder
class _Binder:
    """An empty in-memory DuckDB, used only to type expressions and check constants at plan time
    (no data ever reaches it, so its messages can be shown)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._con: duckdb.DuckDBPyConnection | None = None

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            self._con = duckdb.connect(":memory:")
        return self._con

    def types(self, sqls: list[str], source: str) -> list[str]:
        if not sqls:
            return []
        cols = ", ".join(f"({s}) AS \"c{i}\"" for i, s in enumerate(sqls))
        with self._lock:
            rel = self._cursor().sql(f"SELECT {cols} FROM {source}")
            return [str(t) for t in rel.types]

    def run(self, sql: str) -> list:
        with self._lock:
            return self._cursor().execute(sql).fetchall()


_BINDER = _Binder()


def _source(types: Mapping[str, str], names: Iterable[str]) -> str:
    cols = [f"NULL::{types[n]} AS \"{n.replace(chr(34), chr(34) * 2)}\"" for n in sorted(set(names))]
    return f"(SELECT {', '.join(cols) or '1 AS __none'}) AS __total_src"


def _lookup_types(expression: exp.Expression, types: Mapping[str, str]) -> dict[str, str]:
    """The types of the columns ``expression`` reads, by the name it uses."""
    lower = {k.lower(): v for k, v in types.items()}
    out = {}
    for col in expression.find_all(exp.Column):
        if col.table:
            raise InternalError(
                f"make_total expects unqualified column references, got {col.sql(dialect='duckdb')}"
            )
        t = lower.get(col.name.lower())
        if t is None:
            raise InternalError(f"no type known for column {col.name!r}")
        out[col.name] = t
    return out


def _typed(node: exp.Expression) -> bool:
    """Whether a node is a value whose type the rewrite may ask for."""
    if isinstance(node, (exp.DataType, exp.DataTypeParam, exp.Identifier, exp.Var, exp.Star)):
        return False
    if isinstance(node, exp.If) and isinstance(node.parent, exp.Case):
        return False
    return not isinstance(node.parent, exp.Interval)


def expression_types(expressions: Iterable[exp.Expression], types: Mapping[str, str]) -> tuple[str, ...]:
    """The DuckDB types of expressions over columns of the given types (bound in the private
    binder; no data involved). The planner uses it to know the types of the columns a Project
    computes, which :func:`make_total` needs above it.

    >>> import sqlglot
    >>> expression_types([sqlglot.parse_one("a * 2 + 0.5", read="duckdb")], {"a": "INTEGER"})
    ('DECIMAL(12,1)',)
    """
    exprs = list(expressions)
    cols: dict[str, str] = {}
    for e in exprs:
        cols.update(_lookup_types(e, types))
    try:
        return tuple(_BINDER.types([e.sql(dialect="duckdb") for e in exprs], _source(cols, cols)))
    except duckdb.Error as err:
        raise ProgrammingError(f"cannot type {', '.join(e.sql(dialect='duckdb') for e in exprs)}: {err}") from err


# ------------------------------------------------------------------------------ node builders
@lru_cache(maxsize=256)
def _datatype(text: str) -> exp.DataType:
    return exp.DataType.build(text, dialect="duckdb", udt=True)


def _try_cast(e: exp.Expression, text: str) -> exp.TryCast:
    return exp.TryCast(this=e, to=_datatype(text).copy())


def _p(e: exp.Expression) -> exp.Expression:
    """``e`` in parentheses unless it delimits itself."""
    if isinstance(e, (exp.Column, exp.Literal, exp.Null, exp.Boolean, exp.Paren, exp.Func, exp.Case)):
        return e
    return exp.Paren(this=e)


def _case(cond: exp.Expression, then: exp.Expression) -> exp.Case:
    return exp.Case(ifs=[exp.If(this=cond, true=then)])


def _num(v: float) -> exp.Expression:
    if isinstance(v, float):
        lit = exp.Literal.number(repr(v))
    else:
        lit = exp.Literal.number(str(abs(v)))
    return exp.Neg(this=lit) if v < 0 else lit


def _double(e: exp.Expression) -> exp.Expression:
    return _try_cast(e, "DOUBLE")


def finite_or_null(expression: exp.Expression) -> exp.Expression:
    """``expression`` where it is finite, NULL where it is NaN or ±inf.

    For a DOUBLE, FLOAT, DECIMAL, HUGEINT or integer value (``isfinite`` is true for every exact
    number). The value appears twice: apply it to a column, or in a select list (where DuckDB
    evaluates common subexpressions once). HUGEINT, UHUGEINT and DECIMAL values become DOUBLE
    totally with ``TRY_CAST(x AS DOUBLE)`` (at most 3.4·10³⁸, far below DOUBLE's range): see
    :func:`total_weight`.

    >>> print(finite_or_null(exp.column("w")).sql(dialect="duckdb"))
    CASE WHEN ISFINITE(w) THEN w END
    """
    return _case(exp.Anonymous(this="isfinite", expressions=[expression.copy()]), expression.copy())


def coerce(expression: exp.Expression, source: str, target: str) -> exp.Expression:
    """``expression`` of type ``source`` as a ``target`` value: unchanged if DuckDB's implicit
    cast cannot fail, else ``TRY_CAST`` (for UNION branches of different types, DATE meeting
    TIMESTAMP, …).

    >>> print(coerce(exp.column("d"), "DATE", "TIMESTAMP").sql(dialect="duckdb"))
    TRY_CAST(d AS TIMESTAMP)
    >>> print(coerce(exp.column("i"), "INTEGER", "BIGINT").sql(dialect="duckdb"))
    i
    """
    if _safe_cast(_parse_type(source), _parse_type(target)):
        return expression
    return _try_cast(expression, target)


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


class _Rewriter:
    def __init__(self, root: exp.Expression, columns: Mapping[str, str]):
        self.root = root
        self.columns = dict(columns)
        self.source = _source(self.columns, self.columns)
        self.types: dict[int, _Type] = {}

    # -- types
    def bind(self) -> None:
        nodes = [n for n in self.root.walk() if _typed(n)]
        try:
            found = _BINDER.types([n.sql(dialect="duckdb") for n in nodes], self.source)
        except duckdb.Error as err:
            raise ProgrammingError(
                f"the expression {self.root.sql(dialect='duckdb')} cannot be evaluated: {err}"
            ) from err
        for n, t in zip(nodes, found):
            self.types[id(n)] = _parse_type(t)

    def ty(self, node: exp.Expression) -> _Type:
        while isinstance(node, exp.Paren) and id(node) not in self.types:
            node = node.this
        t = self.types.get(id(node))
        if t is None:
            raise InternalError(f"no type for {node.sql(dialect='duckdb')}")
        return t

    def common_type(self, ops: list[exp.Expression], what: str) -> _Type:
        ts = [self.ty(o) for o in ops]
        if any(t.family == "enum" for t in ts) and all(t.family in ("enum", "string", "null") for t in ts):
            return _parse_type("VARCHAR")
        sql = f"COALESCE({', '.join(o.sql(dialect='duckdb') for o in ops)})"
        try:
            return _parse_type(_BINDER.types([sql], self.source)[0])
        except duckdb.Error as err:
            names = " and ".join(sorted({t.text for t in ts if t.family != "null"}))
            raise UnsupportedQueryError(
                f"{what} mixes {names}; DuckDB would convert each row's value at run time, which "
                "can fail on a row. Cast one side explicitly (CAST is evaluated as TRY_CAST: NULL "
                "where a value does not convert)"
            ) from err

    # -- plumbing
    def put(self, old: exp.Expression, new: exp.Expression, t: _Type | None = None) -> exp.Expression:
        """Record ``new``'s type (``old``'s unless given)."""
        self.types[id(new)] = t if t is not None else self.ty(old)
        return new

    def rewrite_child(self, child: exp.Expression | None, build) -> None:
        """Replace ``child`` in its parent by ``build(child)``."""
        if child is None:
            return
        parent, key, index = child.parent, child.arg_key, child.index
        new = build(child)
        if new is not child:
            if parent is None:
                self.root = new
            else:
                parent.set(key, new, index)

    def literal_as(self, lit: exp.Expression, t: _Type) -> exp.Expression:
        """A string literal that DuckDB would convert to ``t``: checked now, TRY_CAST then."""
        sql = f"SELECT CAST({lit.sql(dialect='duckdb')} AS {t.text})"
        try:
            _BINDER.run(sql)
        except duckdb.Error as err:
            raise ProgrammingError(f"{lit.sql(dialect='duckdb')} is not a valid {t.text}: {err}") from err
        return self.put(lit, _try_cast(lit, t.text), t)

    def to_type(self, op: exp.Expression, t: _Type) -> exp.Expression:
        """``op`` as a ``t`` value with no cast that can fail left implicit."""
        src = self.ty(op)
        if src.text == t.text or src.family == "null":
            return op
        if isinstance(op, exp.Literal) and op.is_string and t.family != "string":
            return self.literal_as(op, t)
        if _safe_cast(src, t):
            return op
        return self.put(op, _try_cast(op, t.text), t)

    def unify(self, ops: list[exp.Expression], what: str, t: _Type | None = None) -> None:
        ops = [o for o in ops if o is not None]
        ts = [self.ty(o) for o in ops]
        if t is None:
            distinct = {x.text for x in ts if x.family != "null"}
            if len(distinct) <= 1:
                return
            t = self.common_type(ops, what)
        for o in ops:
            self.rewrite_child(o, lambda o: self.to_type(o, t))

    def boolean(self, op: exp.Expression | None) -> None:
        if op is None:
            return
        t = self.ty(op)
        if t.family in ("bool", "null"):
            return
        b = _parse_type("BOOLEAN")
        if isinstance(op, exp.Literal) and op.is_string:
            self.rewrite_child(op, lambda o: self.literal_as(o, b))
        else:
            self.rewrite_child(op, lambda o: self.put(o, _try_cast(o, "BOOLEAN"), b))

    def window(self, op: exp.Expression) -> exp.Expression:
        """A temporal value, NULL outside ±100 000 years (and ±infinity)."""
        t = self.ty(op)
        if not t.temporal:
            return op
        name, lo, hi = _TEMPORAL_BOUNDS[t.family]
        cond = exp.Between(this=_p(op.copy()), low=_try_cast(exp.Literal.string(lo), name),
                           high=_try_cast(exp.Literal.string(hi), name))
        return self.put(op, _case(cond, op), t)

    # -- the driver
    def run(self) -> exp.Expression:
        for node in reversed(list(self.root.dfs())):
            if not _typed(node) or isinstance(node, exp.Paren):
                continue
            parent, key, index = node.parent, node.arg_key, node.index
            new = self.node(node)
            if new is not node:
                if parent is None:
                    self.root = new
                else:
                    parent.set(key, new, index)
        return self.root

    def node(self, node: exp.Expression) -> exp.Expression:
        if isinstance(node, (exp.Column, exp.Literal, exp.Null, exp.Boolean)):
            return node
        if isinstance(node, exp.Interval):
            return self.interval(node)
        if isinstance(node, (exp.Add, exp.Sub, exp.Mul)):
            return self.arith(node)
        if isinstance(node, (exp.IntDiv, exp.Mod)):
            return self.divmod(node)
        if isinstance(node, exp.Div):
            self.literal_operands(node)
            return node
        if isinstance(node, exp.Neg):
            return self.negate(node, exp.Neg)
        if isinstance(node, exp.Abs):
            return self.negate(node, exp.Abs)
        if isinstance(node, _COMPARISONS):
            self.unify([node.this, node.expression], f"the comparison {node.sql(dialect='duckdb')}")
            return node
        if isinstance(node, exp.Between):
            self.unify([node.this, node.args.get("low"), node.args.get("high")],
                       f"BETWEEN in {node.sql(dialect='duckdb')}")
            return node
        if isinstance(node, exp.In):
            self.unify([node.this, *node.expressions], f"IN in {node.sql(dialect='duckdb')}")
            return node
        if isinstance(node, exp.Nullif):
            self.unify([node.this, node.expression], f"NULLIF in {node.sql(dialect='duckdb')}")
            return node
        if isinstance(node, (exp.Coalesce, exp.Greatest, exp.Least)):
            self.unify([node.this, *node.expressions], function_name(node), self.ty(node))
            return node
        if isinstance(node, exp.Case):
            return self.case(node)
        if isinstance(node, exp.If):
            self.boolean(node.this)
            self.unify([node.args.get("true"), node.args.get("false")], "IF", self.ty(node))
            return node
        if isinstance(node, (exp.And, exp.Or)):
            self.boolean(node.this)
            self.boolean(node.expression)
            return node
        if isinstance(node, exp.Not):
            self.boolean(node.this)
            return node
        if isinstance(node, exp.Is):
            if isinstance(node.expression, exp.Boolean):
                self.boolean(node.this)
            return node
        if isinstance(node, exp.Cast) and not isinstance(node, exp.TryCast):
            if _is_constant(node.this):
                try:
                    _BINDER.run(f"SELECT {node.sql(dialect='duckdb')}")
                except duckdb.Error as err:
                    raise ProgrammingError(f"{node.sql(dialect='duckdb')} fails: {err}") from err
            return self.put(node, exp.TryCast(this=node.this, to=node.args["to"]))
        if isinstance(node, exp.TryCast):
            return node
        return self.function(node)

    # -- arithmetic
    def literal_operands(self, node: exp.Expression) -> None:
        """A string literal operand becomes the other operand's type, checked now."""
        a, b = node.this, node.expression
        for lit, other in ((a, b), (b, a)):
            if isinstance(lit, exp.Literal) and lit.is_string:
                t = self.ty(other)
                if t.family in ("null", "string"):
                    continue
                self.rewrite_child(lit, lambda o, t=t: self.literal_as(o, t))

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
    def case(self, node: exp.Case) -> exp.Expression:
        ifs = node.args.get("ifs") or []
        if node.this is not None:
            self.unify([node.this, *[i.this for i in ifs]], "the simple CASE")
        else:
            for i in ifs:
                self.boolean(i.this)
        self.unify([*[i.args.get("true") for i in ifs], node.args.get("default")], "CASE", self.ty(node))
        return node

    # -- functions
    def function(self, node: exp.Expression) -> exp.Expression:
        name = function_name(node)
        if name in _MATH_FUNCTIONS:
            for arg in list(node.iter_expressions()):
                if isinstance(arg, exp.Literal) and arg.is_string:
                    self.rewrite_child(arg, lambda o: self.literal_as(o, _parse_type("DOUBLE")))
            return self.put(node, finite_or_null(node))
        if name == "round":
            return self.round(node)
        if name in ("substring", "left"):  # DuckDB raises on offsets beyond ±2^32
            for key in ("start", "length", "expression"):
                self.rewrite_child(node.args.get(key), self.small_int)
            return node
        if name in _TEMPORAL_UNARY:
            arg = node.expressions[0] if isinstance(node, exp.Anonymous) else node.this
            if not (self.ty(arg).temporal or self.ty(arg).family == "null"):
                raise _unsupported(f"{name}() of {self.ty(arg).text}",
                                   "pass a DATE or TIMESTAMP (cast a string with CAST(… AS DATE))")
            self.rewrite_child(arg, self.window)
            return node
        if name in ("extract", "date_part", "date_trunc", "date_diff", "date_sub"):
            _, args = _part(node)
            for arg in args:
                t = self.ty(arg)
                if not (t.temporal or t.family == "null" or (isinstance(arg, exp.Literal) and arg.is_string)):
                    raise _unsupported(f"{name}() of {t.text}", "pass a DATE or TIMESTAMP")
            if len(args) > 1:
                self.unify(args, f"{name}()")
            for arg in _part(node)[1]:
                t = self.ty(arg)
                if not (t.temporal or t.family == "null"):
                    raise _unsupported(f"{name}() of {t.text}", "pass a DATE or TIMESTAMP")
                self.rewrite_child(arg, self.window)
            return node
        if name == "strptime":
            return self.put(node, exp.Anonymous(this="try_strptime", expressions=[node.this, node.args["format"]]))
        return node  # total as it is (strings, hash, sign, floor, ceil, trunc, is*)

    def small_int(self, arg: exp.Expression) -> exp.Expression:
        """An offset or length of substring/left: TRY_CAST to INTEGER unless it surely fits."""
        t = self.ty(arg)
        if isinstance(arg, exp.Literal) and arg.is_string:
            return self.literal_as(arg, _parse_type("INTEGER"))
        v = _literal_int(arg)
        if v is not None and -(2**31) <= v < 2**31:
            return arg
        if t.family == "int" and t.text.upper() not in _SMALL_INTS:
            return self.put(arg, _try_cast(arg, "INTEGER"), _parse_type("INTEGER"))
        return arg

    def round(self, node: exp.Round) -> exp.Expression:
        t = self.ty(node)
        n = _literal_int(node.args.get("decimals")) or 0
        x = node.this
        if n >= 0 or t.family in ("float", "null"):
            return node
        if t.family == "int" and t.bits <= 64:
            body = exp.Round(this=_try_cast(x, "BIGINT" if t.bits <= 32 else "HUGEINT"), decimals=_num(n))
            return self.put(node, _try_cast(body, t.text))
        if t.family == "int" or (t.family == "decimal" and t.width >= 38):
            top = float(t.hi) if t.family == "int" else 10.0 ** t.digits
            limit = top * _MARGIN - 10.0 ** (-n)
            if limit <= 0:
                return self.put(node, _try_cast(exp.Null(), t.text))
            check = exp.LT(this=exp.Abs(this=_double(x.copy())), expression=_num(limit))
            return self.put(node, _case(check, node))
        return node


def _size(e: exp.Expression) -> int:
    return sum(1 for _ in e.walk())


def make_total(
    expression: exp.Expression, types: Mapping[str, str], *, predicate: bool = False
) -> exp.Expression:
    """A copy of ``expression`` that DuckDB evaluates without raising on any row.

    ``expression`` is a scalar expression over unqualified columns; ``types`` maps each column name
    to its DuckDB type (``"INTEGER"``, ``"DECIMAL(18,3)"``, ``"VARCHAR"``…, as ``duckdb_columns()``
    spells them). With ``predicate=True`` the result is BOOLEAN (a WHERE or ON condition: NULL
    counts as false). A row on which a subexpression would fail makes that subexpression NULL; see
    the module docstring for the rules.

    Raises :class:`~provsql_dp.errors.UnsupportedQueryError` for a function not on the allow-list
    or a construct that cannot be made total, :class:`~provsql_dp.errors.ProgrammingError` when the
    expression does not type-check or a constant in it is invalid — both decided from the statement
    and the column types alone.

    >>> import sqlglot
    >>> e = sqlglot.parse_one("CAST(name AS INT) > 0", read="duckdb")
    >>> print(make_total(e, {"name": "VARCHAR"}).sql(dialect="duckdb"))
    TRY_CAST(name AS INT) > 0
    """
    tree = expression.copy()
    check_functions(tree)
    columns = _lookup_types(tree, types)
    rw = _Rewriter(tree, columns)
    rw.bind()
    result = rw.run()
    if predicate:
        t = rw.ty(result)
        if t.family not in ("bool", "null"):
            if isinstance(result, exp.Literal) and result.is_string:
                result = rw.literal_as(result, _parse_type("BOOLEAN"))
            else:
                result = rw.put(result, _try_cast(result, "BOOLEAN"), _parse_type("BOOLEAN"))
    if _size(result) > MAX_NODES:
        raise _unsupported(
            "an expression this large once made total",
            f"{_size(result)} nodes after adding overflow and range guards (at most {MAX_NODES}); "
            "split the computation or use DOUBLE arithmetic",
        )
    _final_check(result, rw.source)
    return result


def _final_check(result: exp.Expression, source: str) -> None:
    """Bind and run the rewritten expression on one row of NULLs, and every constant part of it
    on its own: invalid constants (a regular expression, a format) fail here, at plan time."""
    sql = result.sql(dialect="duckdb")
    constants = [
        n.sql(dialect="duckdb") for n in result.walk()
        if n.parent is not None and _typed(n)
        and not isinstance(n, (exp.Literal, exp.Null, exp.Boolean, exp.Paren, exp.Column))
        and _is_constant(n) and not _is_constant(n.parent)
    ]
    try:
        _BINDER.run(f"SELECT ({sql}) FROM {source}")
        if constants:
            _BINDER.run(f"SELECT {', '.join(f'({c})' for c in constants)}")
    except duckdb.Error as err:
        raise ProgrammingError(f"the expression {sql} cannot be evaluated: {err}") from err


def total_weight(expression: exp.Expression, types: Mapping[str, str]) -> exp.Expression:
    """A SUM argument as a finite DOUBLE or NULL: :func:`make_total`, then ``TRY_CAST`` to DOUBLE
    (total for every numeric type: HUGEINT/UHUGEINT/DECIMAL are below 3.5·10³⁸), then
    :func:`finite_or_null`. Refuses a non-numeric argument (DuckDB would convert each string).

    >>> import sqlglot
    >>> print(total_weight(sqlglot.parse_one("salary", read="duckdb"), {"salary": "DECIMAL(18,3)"}).sql(dialect="duckdb"))
    CASE WHEN ISFINITE(TRY_CAST(salary AS DOUBLE)) THEN TRY_CAST(salary AS DOUBLE) END
    """
    total = make_total(expression, types)
    cols = _lookup_types(expression, types)
    (t,) = expression_types([total], cols) if cols else expression_types([total], {})
    pt = _parse_type(t)
    if not (pt.numeric or pt.family in ("bool", "null")):
        raise _unsupported(f"SUM of a {t} value", "SUM needs a number; cast explicitly (TRY_CAST semantics)")
    return finite_or_null(_double(total))
