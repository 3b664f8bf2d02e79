"""Types for total evaluation: DuckDB types parsed enough for the rewrite, a private empty
in-memory DuckDB that binds expressions (no data involved), and the sqlglot node builders the
rewrite uses (:mod:`provsql_dp.sql.total`).

>>> import sqlglot
>>> expression_types([sqlglot.parse_one("a * 2 + 0.5", read="duckdb")], {"a": "INTEGER"})
('DECIMAL(12,1)',)
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

import duckdb
from sqlglot import exp

from ..errors import InternalError, ProgrammingError

__all__ = ["expression_types", "finite_or_null", "finite_predicate", "coerce"]

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

    def run_in_zone(self, sql: str, zone: str) -> list:
        """:meth:`run` under the session time zone ``zone`` (what a TIMESTAMPTZ's calendar
        fields and a zoneless literal cast to one depend on), restored afterwards."""
        with self._lock:
            con = self._cursor()
            con.execute("SET TimeZone = '" + zone.replace("'", "''") + "'")
            try:
                return con.execute(sql).fetchall()
            finally:
                con.execute("RESET TimeZone")


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


def finite_predicate(weight: exp.Expression) -> exp.Expression:
    """True exactly where the DOUBLE ``weight`` is a finite number (false for NaN, which DuckDB
    orders above every number, for ±∞ and for NULL): the rows an AVG's COUNT counts, the rows
    whose value :func:`provsql_dp.provenance.clamp.clamped_sum_sql` adds.

    >>> print(finite_predicate(exp.column("w")).sql(dialect="duckdb"))
    w > CAST('-inf' AS DOUBLE) AND w < CAST('inf' AS DOUBLE)
    """
    def bound(text):
        return exp.cast(exp.Literal.string(text), exp.DataType.build("DOUBLE"))
    return exp.and_(exp.GT(this=weight.copy(), expression=bound("-inf")),
                    exp.LT(this=weight.copy(), expression=bound("inf")))


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
