"""Whether a SUM's argument is never negative, from the statement and the schema (never data).

A SUM whose terms may be negative is released in two parts (positive and negative), each at
ε/2, with no interval; a SUM of nonnegative terms is one part at the full ε with a one-sided
interval. Bounds decide it when there are any (``SET BOUNDS``, ``OPTIONS (lower, upper)``).
Without bounds, the argument is nonnegative when the schema or the statement says so:

* an unsigned integer column (``UTINYINT`` … ``UHUGEINT``): ``[0, ∞)`` by its type;
* a column with a ``CHECK`` constraint ``c >= k`` or ``c > k`` (``k ≥ 0``; also written
  ``k <= c``, or one conjunct of an ``AND``): DuckDB accepts a CHECK only in ``CREATE TABLE``
  and enforces it on every insert and update, so every row satisfies it — a fact of the schema.
  On an integer column ``c > k`` is ``c >= ⌊k⌋ + 1`` and ``c >= k`` is ``c >= ⌈k⌉``, so
  ``CHECK (i > -1)`` proves ``i ≥ 0`` (:func:`_integer_lower`, confirmed by DuckDB); on a
  DECIMAL or DOUBLE it does not (``-0.5 > -1``);
* an expression whose range :func:`~provsql_dp.sql.expr_range.expression_range` proves to start
  at or above 0 from those (``GREATEST(x, 0)``, sums, positive multiples and ``CASE`` of such
  terms), where moreover ``abs(e)`` and a product ``e * e`` of an expression with itself are
  ``≥ 0`` whatever ``e`` is, and so is a product ``a * b`` of two factors each proved ``≥ 0``
  (:func:`_sign_form`).

*Why* ``a * b ≥ 0`` *(or NULL, NaN, +∞) when both factors are.* A factor proved ``≥ 0`` holds
a number ``≥ 0`` (``-0.0`` too), NULL, NaN or +∞. DOUBLE: the product of two such is ``≥ 0``
(rounding to nearest never crosses 0; ``-0.0 · x`` is ``-0.0``, which adds 0; an underflow
gives ``±0`` or a positive subnormal), NaN (``0 · ∞``, NaN times anything) or +∞ (overflow,
``∞ · x``): the clamp drops the last two (below). Integers and DECIMALs never wrap around:
:func:`~provsql_dp.sql.total.make_total` computes the product in a type it cannot overflow
(``INTEGER · INTEGER`` in HUGEINT) and brings it back with ``TRY_CAST``, or pre-checks it in
DOUBLE where no wider type exists (HUGEINT, UHUGEINT, 38-digit DECIMALs): an overflow is NULL,
never an error after the charge (UHUGEINT · HUGEINT is a DOUBLE in DuckDB). A NULL factor makes
the product NULL. ``tests/system/test_nonnegative_products.py`` plants each of these values in
one participant and checks both neighbours answer alike.

*Why* ``abs(e) ≥ 0`` *and* ``e * e ≥ 0`` *(or NULL, NaN, +∞) on every row.* Mathematically
``|v| ≥ 0`` and ``v·v ≥ 0``. DuckDB computes ``abs`` exactly (``abs(-0.0)`` is ``0.0``); a
product of a value with itself is exact or rounded, and rounding to nearest never crosses 0 (0
is representable, an underflow gives +0 or a positive subnormal). Integer and DECIMAL
arithmetic never wraps around in DuckDB: it raises, and :func:`~provsql_dp.sql.total.make_total`
computes ``abs``, ``*`` in a wider type and brings it back with ``TRY_CAST`` (NULL on overflow;
``abs(INT_MIN)`` too). The two factors are the same value on a row because they are the same
expression and every function an analyst may call is deterministic (the allow-list has no
``random``). A NaN stays NaN through every operation the range rules accept, or becomes a
comparison's 0/1, and the clamp drops it (below). These rules live here, not in
:func:`~provsql_dp.sql.expr_range.expression_range`, whose ranges are also a SUM's bounds and
the keys of :mod:`~provsql_dp.sql.key_domain`, where ``abs(u / u)`` (NaN at ``u = 0``) has no
finite range.

*NaN rows are handled, not refused.* ``NaN >= 0`` holds in DuckDB (NaN sorts above every
number), so a CHECKed DOUBLE may hold NaN or +∞ (its range says ``nan``), and ``GREATEST(NaN, 0)``
or ``GREATEST(0, u / u)`` is NaN: a range proved ``≥ 0`` here may be NaN (``Range.nan``), and is
taken all the same, because every route clamps a SUM's weight with
:func:`provsql_dp.provenance.clamp.clamp_sql`, which turns every non-finite value into NULL
(added by no one, as a NULL weight). A finite weight proved ``≥ 0`` stays ``≥ 0`` under the
clamp.

>>> import duckdb, sqlglot
>>> from provsql_dp.sql.catalog import Catalog
>>> from provsql_dp.sql.planner import plan_query
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE t(a DOUBLE CHECK (a >= 0), b UINTEGER, c DOUBLE, "
...                 "d DOUBLE CHECK (d > -1 AND d < 9))")
>>> cat = Catalog(con)
>>> def nonneg(arg):
...     return nonnegative_weight(cat, plan_query(sqlglot.parse_one(f"SELECT SUM({arg}) FROM t",
...                                                                  read="duckdb"), cat))
>>> [nonneg(x) for x in ("a", "b", "c", "d", "GREATEST(c, 0)", "GREATEST(c, 0) * 2", "a + b",
...                      "a - b")]
[True, True, False, False, True, True, True, False]
>>> [nonneg(x) for x in ("abs(c)", "c * c", "(c - 1) * (c - 1)", "abs(c) + a", "c * d",
...                      "-abs(c)", "abs(c) - 1", "c * c * c")]
[True, True, True, True, False, False, False, False]
>>> [nonneg(x) for x in ("a * b", "(a + 1) * b * abs(c)", "a * c", "a * (b - 1)", "-(a * b)")]
[True, True, False, False, False]
>>> _ = con.execute("CREATE TABLE n(i INTEGER CHECK (i > -1), x DECIMAL(9, 2) CHECK (x > -1))")
>>> cat = Catalog(con)
>>> [nonnegative_weight(cat, plan_query(sqlglot.parse_one(f"SELECT SUM({c}) FROM n"), cat))
...  for c in ("i", "x")]
[True, False]
"""

from __future__ import annotations

import math
from fractions import Fraction

import duckdb
import sqlglot
from sqlglot import exp

from .._numbers import literal_fraction
from ._aggregate_hooks import _defining
from .catalog import _INTEGER_TYPES
from .column_declarations import base_column
from .expr_range import Range, expression_range

__all__ = ["nonnegative_weight"]

_UNSIGNED = {"UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT"}


def nonnegative_weight(catalog, plan) -> bool:
    """Whether every value of SUM ``plan``'s weight is ≥ 0 (or NULL), proved from the statement
    and the schema (see the module docstring); False for a COUNT or when nothing is proved."""
    if plan.kind != "sum" or not isinstance(plan.weight, exp.Column):
        return False
    where = _defining(plan.child, plan.weight.name)
    if where is None:
        return False
    node, e = where
    r = _sign_range(catalog, node, e)
    return r is not None and r.lo <= r.hi and r.lo >= 0


#: the placeholder :func:`_sign_form` puts for a subexpression that is ≥ 0 whatever it reads
_NONNEG = "__nonneg__"  # no planner id starts with "__" (they are v0, v1, …)


def _sign_form(e: exp.Expression, proved=lambda factor: False) -> exp.Expression:
    """A copy of ``e`` with every ``abs(·)``, every product of an expression with itself and
    every product of two factors ``proved(·)`` ``≥ 0`` replaced by a placeholder column known to
    be ``≥ 0`` (module docstring: why). Innermost first (the reverse of a pre-order walk puts
    every node after its descendants), so a factor is seen with its own products replaced and
    each node is looked at once: ``a * b * c * …`` costs one range per factor, not one per
    enclosing product."""
    out = e.copy()
    for node in reversed(list(out.find_all(exp.Abs, exp.Mul, bfs=False))):
        if isinstance(node, exp.Mul) and node.this.unnest() != node.expression.unnest() and not (
                proved(node.this) and proved(node.expression)):
            continue
        if node is out:
            return exp.column(_NONNEG)
        node.replace(exp.column(_NONNEG))
    return out


def _sign_range(catalog, node, e):
    """The range of ``e`` over the output columns of ``node`` for the sign proof."""
    seen: dict = {}  # each column's range looked up once (a product's factors share them)

    def columns(c):
        if c not in seen:
            seen[c] = (Range(0.0, math.inf, True, True) if c == _NONNEG
                       else _sign_bounds(catalog, node, c))
        return seen[c]

    def proved(factor) -> bool:  # its own products are placeholders already (_sign_form)
        r = expression_range(factor, columns)
        return r is not None and r.lo >= 0  # (lo > hi: always NULL, and so is the product)

    return expression_range(_sign_form(e, proved), columns)


def _sign_bounds(catalog, node, cid: str) -> Range | tuple[float, float] | None:
    """A range of output column ``cid`` of ``node`` that may be half-open: ``[k, ∞)`` from its
    base column's type or CHECK, else the range of the expression a projection computes it by.

    Never a column's *declared* bounds (``SET BOUNDS``, :func:`column_bounds`): they are a
    declaration, not a constraint — they hold only where the planner clamps the column to them,
    and a SUM released unsigned without bounds has no clamp at 0 (``SUM(c + a)`` with ``c``
    declared in ``[0, 10]`` and holding -10⁹ made the release fail after its charge: red team
    h63attack, finding 1)."""
    base = base_column(node, cid)
    if base is not None:
        scan, column = base
        return _schema_lower(catalog, scan, column)
    where = _defining(node, cid)
    if where is None:
        return None
    child, e = where
    r = _sign_range(catalog, child, e)
    return None if r is None or r.lo > r.hi else r


def _schema_lower(catalog, scan, column: str) -> Range | None:
    """``[k, ∞]`` when the schema says ``column ≥ k`` (unsigned type, CHECK), else None; NaN
    too unless the column is an integer or a DECIMAL (a CHECKed DOUBLE may hold NaN)."""
    types = dict(zip((c.lower() for c in scan.columns), scan.types))
    ctype = str(types.get(column.lower(), "")).upper()
    if ctype in _UNSIGNED:
        return Range(0.0, math.inf)
    info = catalog.find_table([p for p in (scan.catalog, scan.schema, scan.table) if p])
    if info is None or info.view_sql is not None or info.frame:
        return None
    lows = catalog.cached(("check lower", info.catalog, info.schema, info.name),
                          lambda: _check_lower_bounds(catalog, info))
    k = lows.get(column.lower())
    exact = ctype in _INTEGER_TYPES or ctype.startswith("DECIMAL")
    return None if k is None else Range(k, math.inf, True, not exact)


def _check_lower_bounds(catalog, info) -> dict[str, float]:
    """Per column, the largest ``k`` of its CHECK constraints' conjuncts ``c >= k`` / ``c > k``
    (read from ``duckdb_constraints()``; a constraint that does not parse says nothing)."""
    rows = catalog.con.execute(
        """SELECT expression FROM duckdb_constraints()
            WHERE database_name = ? AND schema_name = ? AND table_name = ?
              AND constraint_type = 'CHECK'""",
        [info.catalog, info.schema, info.name]).fetchall()
    types = {c.lower(): str(t).upper() for c, t in zip(info.columns, info.types)}
    out: dict[str, float] = {}
    for (text,) in rows:
        try:
            tree = sqlglot.parse_one(text, read="duckdb")
        except sqlglot.errors.SqlglotError:
            continue
        for c in _conjuncts(tree):
            found = _lower(c, info.name)
            if found is not None:
                col, k = found
                if types.get(col) in _INTEGER_TYPES:
                    k = _integer_lower(catalog, c, col, k, types[col])
                out[col] = max(k, out.get(col, -math.inf))
    return out


def _integer_lower(catalog, c, col: str, k: float, ctype: str) -> float:
    """The least integer an integer column's conjunct ``c`` (``col > k``, ``col >= k`` or their
    mirrors) admits, when it is above ``k``: ``CHECK (i > -1)`` is ``i >= 0`` for an integer
    ``i`` (never for a DECIMAL or DOUBLE: ``-0.5 > -1``). The candidate ``L`` comes from the
    literal's exact value (``⌊k⌋ + 1`` for ``>``, ``⌈k⌉`` for ``>=``) and is checked by DuckDB
    itself, which evaluates ``c`` at ``L − 1``: the comparison is monotone in the column, so
    when ``L − 1`` fails it every stored value (each passed ``c``) is ``≥ L``. That holds
    however DuckDB types the literal (``-1e-400`` is DOUBLE ``-0.0``, ``-0.5`` a DECIMAL);
    anything else (``L − 1`` outside the type, an error) keeps ``k``.

    >>> import duckdb
    >>> from provsql_dp.sql.catalog import Catalog
    >>> cat = Catalog(duckdb.connect())
    >>> conj = sqlglot.parse_one("i > -1", read="duckdb")
    >>> _integer_lower(cat, conj, "i", -1.0, "INTEGER")
    0.0
    >>> _integer_lower(cat, sqlglot.parse_one("i >= -128", read="duckdb"), "i", -128.0, "TINYINT")
    -128.0
    """
    strict = isinstance(c, (exp.GT, exp.LT))
    lit = c.expression if isinstance(c, (exp.GT, exp.GTE)) else c.this
    neg = isinstance(lit, exp.Neg)
    try:
        exact = literal_fraction((lit.this if neg else lit).this)
    except (ValueError, ZeroDivisionError, TypeError):
        return k
    exact = -exact if neg else exact
    low = math.floor(exact) + 1 if strict else math.ceil(exact)
    if not low > k:
        return k
    probe = c.copy()
    for node in list(probe.find_all(exp.Column)):
        node.replace(exp.TryCast(this=exp.Literal.number(low - 1), to=exp.DataType.build(ctype)))
    try:
        fails = catalog.con.execute(f"SELECT NOT ({probe.sql(dialect='duckdb')})").fetchone()[0]
    except duckdb.Error:
        return k
    return float(low) if fails is True else k


def _conjuncts(e):
    e = e.this if isinstance(e, exp.Paren) else e
    if isinstance(e, exp.And):
        yield from _conjuncts(e.this)
        yield from _conjuncts(e.expression)
    else:
        yield e


def _lower(c, table: str) -> tuple[str, float] | None:
    """``(column, k)`` of ``column >= k``, ``column > k``, ``k <= column`` or ``k < column``
    with a finite numeric literal ``k``, else None. ``column`` is unqualified or qualified by
    the table's own name (as DuckDB binds it): ``s.a`` in a CHECK is field ``a`` of a STRUCT
    column ``s``, not column ``a`` (red team h63attack, finding 2)."""
    if isinstance(c, (exp.GTE, exp.GT)):
        col, lit = c.this, c.expression
    elif isinstance(c, (exp.LTE, exp.LT)):
        col, lit = c.expression, c.this
    else:
        return None
    neg = isinstance(lit, exp.Neg)
    lit = lit.this if neg else lit
    if not (isinstance(col, exp.Column) and isinstance(lit, exp.Literal)) or lit.is_string:
        return None
    if col.table and (col.db or col.table.lower() != table.lower()):
        return None
    k = -float(lit.this) if neg else float(lit.this)
    return (col.name.lower(), k) if math.isfinite(k) else None
