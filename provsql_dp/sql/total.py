"""Total evaluation: analyst expressions that DuckDB cannot make fail on any row.

The side-channel rule (README, "No side channels") says that once a private statement is accepted, what the analyst
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
    HUGEINT meeting a DECIMAL, a far DATE meeting a TIMESTAMP — in comparisons, ``IN``,
    ``BETWEEN``, ``CASE``/``COALESCE``/``NULLIF``/``GREATEST``/``LEAST`` and function arguments)
    are made explicit ``TRY_CAST``\\ s to the common type, or refused when there is none; a string
    literal that must become another type is checked at plan time (the branches of set
    operations are typed by the planner the same way: :mod:`provsql_dp.sql._set_types`);
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

:func:`make_total` also bounds the rewritten expression's cost per row with
:mod:`provsql_dp.sql.size_model` (output growth beyond its caps is refused before ε).

:func:`total_weight` prepares a SUM argument: a DOUBLE (or NULL) that the clamp makes finite and bounded.

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

from collections.abc import Mapping

import duckdb
from sqlglot import exp

from ..errors import InternalError, ProgrammingError, UnsupportedQueryError
from ._arith import (
    _COMPARISONS,
    _MATH_FUNCTIONS,
    _SMALL_INTS,
    _TEMPORAL_BOUNDS,
    _TEMPORAL_UNARY,
    _ArithmeticRules,
)
from ._typing import (
    _BINDER,
    _case,
    _double,
    _lookup_types,
    _num,
    _p,
    _parse_type,
    _safe_cast,
    _source,
    _try_cast,
    _Type,
    _typed,
    coerce,  # noqa: E402,F401  (re-exported)
    expression_types,
    finite_or_null,
)
from .size_model import RowBudget, check_size
from .functions import (
    _MARGIN,
    ALLOWED_FUNCTIONS,  # noqa: E402,F401  (re-exported)
    MAX_NODES,
    _is_constant,
    _literal_int,
    _part,
    _unsupported,
    check_functions,
    function_name,
)

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


class _Rewriter(_ArithmeticRules):
    def __init__(self, root: exp.Expression, columns: Mapping[str, str]):
        self.root = root
        self.columns = dict(columns)
        self.source = _source(self.columns, self.columns)
        self.types: dict[int, _Type] = {}

    # -- types
    def bind(self) -> None:
        # AND / OR / NOT are BOOLEAN whatever their operands (DuckDB casts each operand to
        # BOOLEAN, which :meth:`boolean` makes explicit): typed without asking DuckDB, since the
        # text of each node of a chain holds the whole chain below it, so asking for every one
        # made planning quadratic in the statement (400 ORs: 6 s; a 64 KiB statement: minutes)
        nodes = []
        for n in self.root.walk():
            if isinstance(n, (exp.And, exp.Or, exp.Not)):
                self.types[id(n)] = _BOOLEAN
            elif _typed(n):
                nodes.append(n)
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
    expression: exp.Expression, types: Mapping[str, str], *, predicate: bool = False,
    budget: RowBudget | None = None,
) -> exp.Expression:
    """A copy of ``expression`` that DuckDB evaluates without raising on any row.

    ``expression`` is a scalar expression over unqualified columns; ``types`` maps each column name
    to its DuckDB type (``"INTEGER"``, ``"DECIMAL(18,3)"``, ``"VARCHAR"``…, as ``duckdb_columns()``
    spells them). With ``predicate=True`` the result is BOOLEAN (a WHERE or ON condition: NULL
    counts as false). A row on which a subexpression would fail makes that subexpression NULL; see
    the module docstring for the rules.

    The result's cost per row is bounded by :mod:`provsql_dp.sql.size_model` (refused when a node
    can grow beyond its caps); ``budget`` (a statement's :class:`~provsql_dp.sql.size_model.RowBudget`)
    adds it to the statement's total.

    Raises :class:`~provsql_dp.errors.UnsupportedQueryError` for a function not on the allow-list,
    a construct that cannot be made total or output that can grow beyond the size model's caps,
    :class:`~provsql_dp.errors.ProgrammingError` when the
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
    # sizes first: binding folds constants, so a constant that grows to gigabytes must be refused
    # before DuckDB sees it (the rewritten expression is checked again below, with its guards)
    check_size(tree, columns)
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
    check_size(result, columns, budget)
    _final_check(result, rw.source)
    return result


_BOOLEAN = _parse_type("BOOLEAN")


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


def total_weight(expression: exp.Expression, types: Mapping[str, str],
                 budget: RowBudget | None = None) -> exp.Expression:
    """A SUM argument as a DOUBLE (or NULL): :func:`make_total`, then ``TRY_CAST`` to DOUBLE
    (total for every numeric type: HUGEINT/UHUGEINT/DECIMAL are below 3.5·10³⁸; left as it is
    when already DOUBLE). Refuses a non-numeric argument (DuckDB would convert each string).

    The value may still be NaN or ±∞: every consumer of a SUM's weight clamps it with
    :func:`provsql_dp.provenance.clamp.clamp_sql`, which maps non-finite values to NULL in the
    same CASE that clamps (one pass instead of two; :func:`finite_or_null` is that rule alone).

    >>> import sqlglot
    >>> print(total_weight(sqlglot.parse_one("salary", read="duckdb"), {"salary": "DECIMAL(18,3)"}).sql(dialect="duckdb"))
    TRY_CAST(salary AS DOUBLE)
    >>> print(total_weight(sqlglot.parse_one("salary", read="duckdb"), {"salary": "DOUBLE"}).sql(dialect="duckdb"))
    salary
    """
    total = make_total(expression, types, budget=budget)
    cols = _lookup_types(expression, types)
    (t,) = expression_types([total], cols) if cols else expression_types([total], {})
    pt = _parse_type(t)
    if not (pt.numeric or pt.family in ("bool", "null")):
        raise _unsupported(f"SUM of a {t} value", "SUM needs a number; cast explicitly (TRY_CAST semantics)")
    return total if t.upper() == "DOUBLE" else _double(total)
