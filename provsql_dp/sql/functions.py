"""The allow-list of scalar functions and operators a private query may use, and the check
that refuses everything else at plan time (the side-channel rule, README, "No side channels").

Every entry of :data:`ALLOWED_FUNCTIONS` says why the function is total or how
:mod:`provsql_dp.sql.total` makes it total. Anything else — ``error``, ``setseed``, ``random``,
``getenv``, ``current_setting``, table functions, user macros, unknown names — is refused with an
error naming it. The statement's clock (``CURRENT_DATE``, ``NOW()``, …) is not on the list: it
never reaches it, read once per statement into literals before planning
(:mod:`provsql_dp.sql.public_values`), so every read of a release sees the same public value.

>>> import sqlglot
>>> check_functions(sqlglot.parse_one("lower(name) LIKE 'a%' AND abs(x) > 1", read="duckdb"))
>>> check_functions(sqlglot.parse_one("error(name)", read="duckdb"))
Traceback (most recent call last):
...
provsql_dp.errors.UnsupportedQueryError: the function error() is not on the allow-list of functions a private query may use ...
"""

from __future__ import annotations

import re

from sqlglot import exp

from ..errors import InternalError, ProgrammingError, UnsupportedQueryError

__all__ = ["ALLOWED_FUNCTIONS", "MAX_NODES", "check_functions", "check_node", "function_name",
           "refuse_shadowed_builtins"]

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
_STRING = ("total on every string; output bounded by provsql_dp.sql.size_model (at most 16 bytes "
           "per byte read, refused beyond)")
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
    "replace": f"{_STRING} (the replacement must be a constant: the output grows by at most "
               "|replacement|/|pattern| per byte)",
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
        if any(isinstance(e, exp.Values) for e in node.expressions):  # not WHERE's (semijoin)
            raise _unsupported("IN (VALUES …) inside an expression", "it is answered as a "
                               "condition of WHERE joined to the others by AND; elsewhere list "
                               "the values: IN (1, 2)")
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


def check_node(node: exp.Expression) -> None:
    """Refuse one node of a tree (not its children) unless it is on the allow-list, with the
    constants it needs: the step :func:`check_functions` takes at every node, for callers that
    walk a tree themselves (the analyst compiler, :mod:`provsql_dp.sql.analyst`).

    >>> import sqlglot
    >>> check_node(sqlglot.parse_one("getenv('HOME')", read="duckdb"))
    Traceback (most recent call last):
    ...
    provsql_dp.errors.UnsupportedQueryError: the function getenv() is not on the allow-list of functions a private query may use ...
    """
    _check_node(node)


def refuse_shadowed_builtins(catalog) -> None:
    """Refuse a private query while a user macro or function has a DuckDB built-in's name
    (``catalog.shadowed_builtins()``): it would change what the analyst's expression and
    provsql_dp's own SQL compute, and could read protected rows outside the mechanism.

    >>> import duckdb
    >>> from provsql_dp.sql.catalog import Catalog
    >>> con = duckdb.connect()
    >>> refuse_shadowed_builtins(Catalog(con))
    >>> _ = con.execute("CREATE MACRO upper(x) AS x")
    >>> refuse_shadowed_builtins(Catalog(con))
    Traceback (most recent call last):
    ...
    provsql_dp.errors.UnsupportedQueryError: the database defines upper() as a user macro or function with the name of a DuckDB built-in, ...
    """
    shadowed = catalog.shadowed_builtins()
    if shadowed:
        raise UnsupportedQueryError(
            f"the database defines {', '.join(f'{n}()' for n in shadowed)} as a user macro or "
            "function with the name of a DuckDB built-in, which would change what the private "
            "query and provsql_dp's own SQL compute (and could read protected rows); no private "
            "query runs until the curator drops or renames it")
