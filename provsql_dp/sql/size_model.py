"""A size model of every allow-listed expression: a bound on the bytes each node produces per
row, decided at plan time, so that an accepted statement's running time depends on the data only
through its size, within a stated factor (the side-channel rule, README, "No side channels").

The attack it closes: ``replace`` grows a string ten times per level, so
``CASE WHEN <predicate on one person> THEN replace(replace(…)) ELSE '' END`` costs 0.1 s when
nobody matches and 20 s when someone does — a timing oracle on one person. Totality
(:mod:`provsql_dp.sql.total`) removes the *error* channel; this module removes the *cost* channel
of output growth.

The model
---------
Each node's output is bounded by ``per_input · L + constant`` bytes, where ``L`` is the length in
bytes of the longest value the row reads (a VARCHAR column's own value), optionally also by a
``ceiling`` that does not depend on ``L`` (``left(s, n)`` is at most ``4n`` bytes, whatever
``s``). Per node:

* a VARCHAR (BLOB, ENUM, …) column is ``1 · L``; a string literal is its length; NULL is 0;
* a value of a fixed-width type (numbers, BOOLEAN, DATE, TIMESTAMP, INTERVAL) is
  :data:`FIXED_BYTES`; its text (``CAST(x AS VARCHAR)``) is at most :data:`FIXED_TEXT_BYTES`;
* ``||``, ``concat``, ``concat_ws`` add their arguments (and separators);
* ``upper``/``lower`` are ``× 3/2`` (DuckDB's simple case mappings take a 2-byte code point to at
  most 3 bytes; measured over every code point); ``reverse``, ``trim``, ``split_part``,
  ``regexp_extract`` are at most their input; ``substring``/``left``/``right`` with a constant
  length ``n ≥ 0`` are also at most ``4n`` bytes;
* ``replace(s, from, to)`` (``to`` is a constant) is ``× max(1, |to| / |from|)``, with
  ``|from| = 1`` when ``from`` is not a constant (an empty ``from`` changes nothing);
* ``regexp_replace(s, p, r[, 'g'])`` with ``r`` holding ``k`` literal bytes and ``q``
  back-references: ``(1 + q)·L + k`` once, ``(1 + k + q)·L + k`` with ``'g'`` (a pattern that
  matches the empty string matches at each of the ``L + 1`` positions);
* ``md5`` is 32 bytes, ``dayname``/``monthname`` 16, ``strftime`` at most 64 bytes per character
  of its (constant) format;
* ``CASE``/``COALESCE``/``NULLIF``/``GREATEST``/``LEAST`` are the largest of their values.

A node no rule covers is refused (fail closed): a new string function needs a rule here first.

The caps (refused, never truncated)
-----------------------------------
* every node: growth at most :data:`MAX_GROWTH` (16) bytes per byte read, and at most
  :data:`MAX_CONSTANT_BYTES` (64 KiB) of constant bytes — unless its ceiling is within 64 KiB;
* a whole statement (every expression the planner makes total, added): the row's total work is at
  most :data:`MAX_ROW_GROWTH` (256) bytes per byte read plus :data:`MAX_ROW_BYTES` (1 MiB).

An expression beyond a cap is **refused before ε**, with a message naming it; it is not capped
silently, because a silent ``left(…, L)`` would change answers in a way the analyst cannot see.
The analyst caps explicitly instead: ``left(x, n)`` with a constant ``n`` bounds ``x`` to ``4n``
bytes whatever it reads, so ``replace(left(name, 100), 'x', 'xxxxxxxxxx')`` is accepted. Capping
must happen at each growing step: the argument of ``left`` is computed in full first, so
``left(replace(replace(…)), 10)`` is still refused.

A column's own length
---------------------
A VARCHAR column has no declared length, and none is imposed: ``L`` is the unit of the model. A cap
on what is read would change answers silently, and a declaration would have to be enforced by that
same truncation; reading a value is already work in proportion to the data's size, which the rule
allows ("depends on the data only through its size"). What an *expression* controls is the factor
between the bytes it reads and the bytes it produces, so that factor is what is bounded: an
accepted statement does at most ``MAX_ROW_GROWTH · L + MAX_ROW_BYTES`` bytes of work per row.

Not modelled: the work of a pattern match beyond reading its input (RE2 is linear in the input
for a fixed pattern; DuckDB 2.0's LIKE/GLOB matched linearly on every pattern tried, including
``'%_a%_a%_c%'`` against 10³ characters) — patterns are constants, so their size is the
statement's.

API (for any expression tree: the private planner, and the analyst compiler on public statements)
-------------------------------------------------------------------------------------------------
:func:`output_size` (one value's bound), :func:`row_cost` (the sum over every node: the work per
row), :func:`check_size` (both caps, raising :class:`~provsql_dp.errors.UnsupportedQueryError`), and
:class:`RowBudget` (a statement's running total, checked as each expression is added). ``types``
maps column names to DuckDB type names; a column it does not name counts as a string read. Call
:func:`check_size` **before DuckDB binds the expression**: DuckDB folds constants while binding, so
ten nested ``replace`` of a literal would make it build 10¹¹ bytes at plan time.

>>> import sqlglot
>>> e = sqlglot.parse_one("replace(name, 'x', 'xxxxxxxxxx')", read="duckdb")
>>> output_size(e, {"name": "VARCHAR"})
Size(per_input=Fraction(10, 1), constant=0, ceiling=None)
>>> deep = sqlglot.parse_one("replace(replace(name, 'x', 'xxxxxxxxxx'), 'x', 'xxxxxxxxxx')", read="duckdb")
>>> check_size(deep, {"name": "VARCHAR"})
Traceback (most recent call last):
...
provsql_dp.errors.UnsupportedQueryError: the expression REPLACE(REPLACE(name, 'x', 'xxxxxxxxxx'), 'x', 'xxxxxxxxxx') can produce up to 100 bytes per byte it reads (at most 16 are accepted, so that a statement's running time cannot depend on one person's values); cap each growing step with left(…, n) for a constant n
>>> check_size(sqlglot.parse_one("upper(name) || '!'", read="duckdb"), {"name": "VARCHAR"})
Size(per_input=Fraction(4, 1), constant=2, ceiling=None)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from sqlglot import exp

from ..errors import UnsupportedQueryError
from .functions import _FUNCTION_CLASSES, _OPERATORS, ALLOWED_FUNCTIONS, _literal_int, _literal_text

__all__ = [
    "ChainGrowth",
    "FIXED_BYTES",
    "FIXED_TEXT_BYTES",
    "MAX_CONSTANT_BYTES",
    "MAX_GROWTH",
    "MAX_ROW_BYTES",
    "MAX_ROW_GROWTH",
    "RowBudget",
    "Size",
    "check_size",
    "output_size",
    "row_cost",
]

#: bytes per byte read that one node may produce
MAX_GROWTH = 16
#: constant bytes one node may produce (also: a ceiling within this makes any growth acceptable)
MAX_CONSTANT_BYTES = 64 * 1024
#: a statement's work per row: bytes per byte read, summed over every node of every expression
MAX_ROW_GROWTH = 256
#: a statement's constant work per row, summed over every node of every expression
MAX_ROW_BYTES = 1024 * 1024
#: bytes of a fixed-width value (the widest: HUGEINT, INTERVAL, UUID are 16)
FIXED_BYTES = 16
#: bytes of a fixed-width value's text (a HUGEINT or DECIMAL(38, s) is 41 characters, a
#: TIMESTAMP WITH TIME ZONE or an INTERVAL at most ~60)
FIXED_TEXT_BYTES = 96

_CASE_FACTOR = Fraction(3, 2)  # upper/lower: 2-byte code points become at most 3 bytes
_BYTES_PER_CHAR = 4  # UTF-8
_FORMAT_BYTES = 64  # strftime: bytes per character of the format
_FIXED_TYPES = re.compile(
    r"^(BOOLEAN|TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|"
    r"UHUGEINT|FLOAT|REAL|DOUBLE|DECIMAL\(\d+,\s*\d+\)|DATE|TIME|TIMESTAMP.*|TIME WITH TIME ZONE|"
    r"INTERVAL|UUID|\"?NULL\"?)$", re.IGNORECASE)
_STRING_TYPES = {exp.DataType.Type.VARCHAR, exp.DataType.Type.TEXT, exp.DataType.Type.CHAR,
                 exp.DataType.Type.NCHAR, exp.DataType.Type.NVARCHAR, exp.DataType.Type.BLOB}


@dataclass(frozen=True)
class Size:
    """At most ``per_input · L + constant`` bytes, and at most ``ceiling`` when it is set
    (``L``: the length in bytes of the longest value the row reads).

    >>> Size(Fraction(2), 3) + Size(Fraction(1), 1, ceiling=10)
    Size(per_input=Fraction(3, 1), constant=4, ceiling=None)
    >>> Size(Fraction(2), 3).bound(100)
    203
    """

    per_input: Fraction
    constant: int
    ceiling: int | None = None

    def __add__(self, other: Size) -> Size:
        ceiling = None if self.ceiling is None or other.ceiling is None else self.ceiling + other.ceiling
        return Size(self.per_input + other.per_input, self.constant + other.constant, ceiling)

    def scaled(self, k: Fraction) -> Size:
        """This size times ``k`` (constants rounded up: a bound stays a bound)."""
        return Size(self.per_input * k, int(-(-self.constant * k // 1)),
                    None if self.ceiling is None else int(-(-self.ceiling * k // 1)))

    def at_most(self, ceiling: int) -> Size:
        """This size, also bounded by ``ceiling`` bytes."""
        c = ceiling if self.ceiling is None else min(self.ceiling, ceiling)
        return Size(self.per_input, self.constant, c)

    def bound(self, length: int) -> int:
        """The bound in bytes when the longest value read is ``length`` bytes."""
        b = int(self.per_input * length) + self.constant
        return b if self.ceiling is None else min(b, self.ceiling)

    def flat(self, limit: int) -> Size:
        """The same bound, as a constant when its ceiling is within ``limit`` (for sums)."""
        if self.ceiling is not None and self.ceiling <= limit:
            return Size(Fraction(0), self.ceiling, self.ceiling)
        return self

    def within(self, growth: int, constant: int) -> bool:
        if self.ceiling is not None and self.ceiling <= constant:
            return True
        return self.per_input <= growth and self.constant <= constant


ZERO = Size(Fraction(0), 0, 0)
_FIXED = Size(Fraction(0), FIXED_BYTES, FIXED_BYTES)
_FIXED_TEXT = Size(Fraction(0), FIXED_TEXT_BYTES, FIXED_TEXT_BYTES)
_READ = Size(Fraction(1), 0)


def _max(sizes: list[Size]) -> Size:
    if not sizes:
        return ZERO
    ceilings = [s.ceiling for s in sizes]
    return Size(max(s.per_input for s in sizes), max(s.constant for s in sizes),
                None if None in ceilings else max(ceilings))


def _const(n: int) -> Size:
    return Size(Fraction(0), n, n)


def _bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def _is_string_type(text: str) -> bool:
    return not _FIXED_TYPES.match(text.strip())


# string functions: node class → rule(node, sizes of its arguments by key) → Size
def _arg(node: exp.Expression, sizes: dict[int, Size], key: str = "this") -> Size:
    a = node.args.get(key)
    return sizes[id(a)] if a is not None else ZERO


def _sum_all(node, sizes) -> Size:
    total = ZERO
    for a in node.iter_expressions():
        total = total + sizes[id(a)]
    return total


def _concat_ws(node, sizes) -> Size:
    args = list(node.expressions)
    if not args:
        return ZERO
    sep = sizes[id(args[0])]
    total = ZERO
    for a in args[1:]:
        total = total + sizes[id(a)]
    return total + sep.scaled(Fraction(max(len(args) - 2, 0)))


def _slice(node, sizes, length_key: str) -> Size:
    s = _arg(node, sizes)
    n = _literal_int(node.args.get(length_key))
    return s.at_most(_BYTES_PER_CHAR * n) if n is not None and n >= 0 else s


def _replace(node, sizes) -> Size:
    s = _arg(node, sizes)
    to = _literal_text(node.args.get("replacement"))
    frm = _literal_text(node.expression)
    if to is None:  # NULL replacement (a non-constant one is refused by the allow-list)
        return s
    t = _bytes(to)
    if frm is not None and _bytes(frm) == 0:
        return s  # replace(s, '', t) returns s
    p = _bytes(frm) if frm is not None else 1
    return s.scaled(max(Fraction(1), Fraction(t, p)))


_BACKREF = re.compile(r"\\[0-9]")


def _regexp_replace(node, sizes) -> Size:
    s = _arg(node, sizes)
    repl = _literal_text(node.args.get("replacement")) or ""
    q = len(_BACKREF.findall(repl))
    k = _bytes(_BACKREF.sub("", repl))
    flags = _literal_text(node.args.get("modifiers")) or ""
    many = "g" in flags
    per = Fraction(1 + q + (k if many else 0))
    ceiling = None if s.ceiling is None else s.ceiling * int(per) + k
    return Size(s.per_input * per, s.constant * int(per) + k, ceiling)


def _strftime(node, sizes) -> Size:
    fmt = _literal_text(node.args.get("format"))
    return _const(_FORMAT_BYTES * (len(fmt) if fmt is not None else 64) + FIXED_TEXT_BYTES)


_STRING_RULES = {
    exp.DPipe: _sum_all, exp.Concat: _sum_all, exp.ConcatWs: _concat_ws,
    exp.Upper: lambda n, s: _arg(n, s).scaled(_CASE_FACTOR),
    exp.Lower: lambda n, s: _arg(n, s).scaled(_CASE_FACTOR),
    exp.Reverse: lambda n, s: _arg(n, s), exp.Trim: lambda n, s: _arg(n, s),
    exp.SplitPart: lambda n, s: _arg(n, s), exp.RegexpExtract: lambda n, s: _arg(n, s),
    exp.Substring: lambda n, s: _slice(n, s, "length"),
    exp.Left: lambda n, s: _slice(n, s, "expression"),
    exp.Right: lambda n, s: _slice(n, s, "expression"),
    exp.Replace: _replace, exp.RegexpReplace: _regexp_replace,
    exp.MD5: lambda n, s: _const(32),
    exp.Dayname: lambda n, s: _const(16), exp.Monthname: lambda n, s: _const(16),
    exp.TimeToStr: _strftime,
}
# their value is one of their arguments: the largest
_CHOICE = (exp.Case, exp.If, exp.Coalesce, exp.Nullif, exp.Greatest, exp.Least, exp.Paren)
# string functions sqlglot parses as Anonymous (none on today's allow-list: a function added there
# that returns a string and has no sqlglot class gets its rule here, name → rule)
_ANONYMOUS_STRING: dict[str, object] = {}
# structure inside an expression that is no value of its own
_NO_VALUE = (exp.DataType, exp.DataTypeParam, exp.Identifier, exp.Var, exp.Star)


def _choices(node: exp.Expression) -> list[exp.Expression]:
    """The arguments whose value a CASE, COALESCE, … can return."""
    if isinstance(node, exp.Case):
        values = [i.args.get("true") for i in node.args.get("ifs") or []] + [node.args.get("default")]
    elif isinstance(node, exp.If):
        values = [node.args.get("true"), node.args.get("false")]
    elif isinstance(node, exp.Nullif):
        values = [node.this]
    elif isinstance(node, exp.Paren):
        values = [node.this]
    else:
        values = [node.this, *node.expressions]
    return [v for v in values if v is not None]


def _node_size(node: exp.Expression, sizes: dict[int, Size], fixed: set[int],
               types: Mapping[str, str]) -> Size | None:
    """``node``'s bound, or None for a fixed-width value."""
    if isinstance(node, exp.Column):
        t = types.get(node.name) or types.get(node.name.lower())
        if t is None:
            lower = {k.lower(): v for k, v in types.items()}
            t = lower.get(node.name.lower())
        return _READ if t is None or _is_string_type(t) else None
    if isinstance(node, exp.Literal):
        return _const(_bytes(node.this)) if node.is_string else None
    if isinstance(node, (exp.Null, exp.Boolean)):
        return None
    if isinstance(node, (exp.Cast, exp.TryCast)):
        to = node.args.get("to")
        return sizes[id(node.this)] if isinstance(to, exp.DataType) and to.this in _STRING_TYPES else None
    rule = _STRING_RULES.get(type(node))
    if rule is not None:
        return rule(node, sizes)
    if isinstance(node, _CHOICE):
        values = _choices(node)
        if all(id(v) in fixed for v in values):
            return None
        return _max([sizes[id(v)] for v in values])
    if isinstance(node, exp.Anonymous) and str(node.name).lower() in _ANONYMOUS_STRING:
        return _ANONYMOUS_STRING[str(node.name).lower()](node, sizes)
    if _fixed_result(node):
        return None
    raise UnsupportedQueryError(
        f"{node.sql(dialect='duckdb')} has no size model (provsql_dp.sql.size_model), so its "
        "cost per row cannot be bounded at plan time; use the functions of the allow-list")


def _fixed_result(node: exp.Expression) -> bool:
    """Whether ``node`` is an allow-listed function or operator of a fixed-width result."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower() in ALLOWED_FUNCTIONS
    return (type(node) in _OPERATORS or type(node) in _FUNCTION_CLASSES
            or isinstance(node, (exp.If, exp.Interval, exp.Escape, exp.Is, exp.Tuple)))


def _sizes(expression: exp.Expression, types: Mapping[str, str]) -> tuple[dict[int, Size], set[int]]:
    """Every node's bound (a fixed-width value's as its text, the larger: it is what a string
    function reading it sees) and the ids of the fixed-width ones."""
    sizes: dict[int, Size] = {}
    fixed: set[int] = set()
    for node in reversed(list(expression.dfs())):
        if isinstance(node, _NO_VALUE) or (isinstance(node, exp.If) and isinstance(node.parent, exp.Case)):
            sizes[id(node)] = ZERO
            continue
        s = _node_size(node, sizes, fixed, types)
        if s is None:
            fixed.add(id(node))
            s = _FIXED_TEXT
        sizes[id(node)] = s
    return sizes, fixed


def output_size(expression: exp.Expression, types: Mapping[str, str]) -> Size:
    """The bound on the bytes of ``expression``'s value per row.

    ``types`` maps column names to DuckDB type names (as :func:`provsql_dp.sql.total.make_total`
    takes them); a column it does not name is taken as a string read (``1 · L``).

    >>> import sqlglot
    >>> output_size(sqlglot.parse_one("left(name || name, 10)", read="duckdb"), {"name": "VARCHAR"})
    Size(per_input=Fraction(2, 1), constant=0, ceiling=40)
    >>> output_size(sqlglot.parse_one("CAST(salary AS VARCHAR)", read="duckdb"), {"salary": "BIGINT"})
    Size(per_input=Fraction(0, 1), constant=96, ceiling=96)
    """
    sizes, fixed = _sizes(expression, types)
    return _FIXED if id(expression) in fixed else sizes[id(expression)]


def row_cost(expression: exp.Expression, types: Mapping[str, str]) -> Size:
    """The work per row of evaluating ``expression``: the sum of every node's output bound (each
    node writes its value once; reading a child's value costs no more than writing it).

    >>> import sqlglot
    >>> row_cost(sqlglot.parse_one("lower(name) = 'a'", read="duckdb"), {"name": "VARCHAR"})
    Size(per_input=Fraction(5, 2), constant=17, ceiling=None)
    """
    return _cost(*_sizes(expression, types))


def _cost(sizes: dict[int, Size], fixed: set[int]) -> Size:
    total = ZERO
    for key, s in sizes.items():
        total = total + (_FIXED if key in fixed else s.flat(MAX_CONSTANT_BYTES))
    return total


def _describe(s: Size) -> str:
    if s.per_input > MAX_GROWTH:
        return f"up to {_fmt(s.per_input)} bytes per byte it reads (at most {MAX_GROWTH} are accepted"
    return f"up to {s.constant} bytes whatever it reads (at most {MAX_CONSTANT_BYTES} are accepted"


def _fmt(f: Fraction) -> str:
    return str(f.numerator) if f.denominator == 1 else f"{float(f):.4g}"


def check_size(expression: exp.Expression, types: Mapping[str, str],
               budget: RowBudget | None = None) -> Size:
    """Refuse ``expression`` if one of its nodes can produce more than the caps allow; return its
    :func:`row_cost` (added to ``budget`` when given, which refuses a statement whose expressions
    together exceed the per-row caps).

    Raises :class:`~provsql_dp.errors.UnsupportedQueryError` naming the first node (innermost
    first) beyond a cap — decided from the statement and the column types alone, before ε.
    """
    sizes, fixed = _sizes(expression, types)
    for node in reversed(list(expression.dfs())):  # innermost first
        s = sizes[id(node)]
        if not s.within(MAX_GROWTH, MAX_CONSTANT_BYTES):
            raise UnsupportedQueryError(
                f"the expression {node.sql(dialect='duckdb')} can produce {_describe(s)}, so that a "
                "statement's running time cannot depend on one person's values); cap each growing "
                "step with left(…, n) for a constant n")
    total = _cost(sizes, fixed)
    if budget is not None:
        budget.add(total, expression)
    elif not total.within(MAX_ROW_GROWTH, MAX_ROW_BYTES):
        raise _over_row(total, expression.sql(dialect="duckdb"))
    return total


def _over_row(total: Size, what: str) -> UnsupportedQueryError:
    return UnsupportedQueryError(
        f"the statement does too much work per row at {what}: {_fmt(total.per_input)} bytes per "
        f"byte read plus {total.constant} bytes (at most {MAX_ROW_GROWTH} and {MAX_ROW_BYTES} are "
        "accepted, so that its running time depends on the data only through its size); "
        "simplify the expressions or cap strings with left(…, n)")


class RowBudget:
    """A statement's work per row, added expression by expression (the planner keeps one per
    statement); :meth:`add` refuses once the total exceeds :data:`MAX_ROW_GROWTH` bytes per byte
    read or :data:`MAX_ROW_BYTES` constant bytes.

    >>> b = RowBudget()
    >>> b.add(Size(Fraction(200), 10))
    >>> b.add(Size(Fraction(100), 10))
    Traceback (most recent call last):
    ...
    provsql_dp.errors.UnsupportedQueryError: the statement does too much work per row at an expression: 300 bytes per byte read plus 20 bytes (at most 256 and 1048576 are accepted, so that its running time depends on the data only through its size); simplify the expressions or cap strings with left(…, n)
    """

    def __init__(self) -> None:
        self.total = ZERO

    def add(self, cost: Size, expression: exp.Expression | None = None) -> None:
        total = self.total + cost.flat(MAX_ROW_BYTES)
        if not total.within(MAX_ROW_GROWTH, MAX_ROW_BYTES):
            what = expression.sql(dialect="duckdb") if expression is not None else "an expression"
            raise _over_row(total, what)
        self.total = total


class ChainGrowth:
    """The growth of values along a statement's chain of relations: a relation (a CTE, a
    subquery, a view) whose select list grows what it reads ``g`` times hands values ``g`` times
    longer to the relation that reads it, which the per-node caps count as ``L`` again. The
    product of every select list's largest growth is the most any value of the statement can
    hold per byte read, and it is capped at :data:`MAX_GROWTH`, as one node is: without it four
    CTEs of ``s || s || s || s`` reached DuckDB's 4 GiB string limit from a 16-byte value, an
    internal error that invalidated the server's database for every session (red team h143).
    Counted per select list, so parallel branches (UNION) count as if chained: conservative.

    >>> import sqlglot
    >>> c = ChainGrowth()
    >>> c.add([sqlglot.parse_one("s || s", read="duckdb")], {})
    >>> c.add([sqlglot.parse_one("left(s || s || s, 10)", read="duckdb")], {})  # a ceiling
    >>> c.add([sqlglot.parse_one("s || s || s || s", read="duckdb")], {})
    >>> c.add([sqlglot.parse_one("s || s || s", read="duckdb")], {})
    Traceback (most recent call last):
    ...
    provsql_dp.errors.UnsupportedQueryError: the select list of s || s || s reads values that relations before it already grew 8 times: values of this statement can reach 24 bytes per byte read (at most 16 are accepted, ...
    """

    def __init__(self) -> None:
        self.product = Fraction(1)

    def add(self, expressions, types: Mapping[str, str], names=None) -> None:
        """Count one select list's ``expressions`` (their column ``names``, when the expressions
        are the planner's, for the message); refuse once the product is beyond the cap."""
        growths = [(_growth(e, types), i) for i, e in enumerate(expressions)]
        g, i = max(growths, key=lambda x: x[0], default=(Fraction(0), 0))
        if g <= 1:
            return
        if self.product * g > MAX_GROWTH:
            what = (f"the column {names[i]}" if names else
                    f"the select list of {expressions[i].sql(dialect='duckdb')[:200]}")
            raise UnsupportedQueryError(
                f"{what} reads values that relations before it already grew "
                f"{_fmt(self.product)} times: values of this statement can reach "
                f"{_fmt(self.product * g)} bytes per byte read (at most {MAX_GROWTH} are accepted, "
                "the cap of one expression, as the chain hands each relation values the one "
                "before it grew); grow strings in one relation, or cap each growing step with "
                "left(…, n) for a constant n")
        self.product *= g


def _growth(expression: exp.Expression, types: Mapping[str, str]) -> Fraction:
    """The bytes per byte read of ``expression``'s value as a relation reading it sees it: 0 for
    a fixed-width value or one whose ceiling is within :data:`MAX_CONSTANT_BYTES`."""
    sizes, fixed = _sizes(expression, types)
    s = sizes[id(expression)]
    if id(expression) in fixed or s.ceiling is not None and s.ceiling <= MAX_CONSTANT_BYTES:
        return Fraction(0)
    return s.per_input
