"""What the curator declares about single columns: the bounds of a numeric column's values and
the public set of group keys of a column, persisted beside the other declarations.

The schema ``_provsql_dp`` holds (each table created on the first declaration):

* ``column_bounds(schema_name, table_name, column_name, lower, upper)`` — ``SET BOUNDS ON t (c)
  BETWEEN lower AND upper``: one value of ``c`` lies in ``[lower, upper]``. A ``SUM`` (or
  ``AVG``) of the bare column ``c`` is clamped to those bounds without ``OPTIONS (lower, upper)``.
* ``group_keys(schema_name, table_name, column_name, key_values, source_schema, source_table,
  source_column)`` — ``SET GROUP KEYS ON t (c) VALUES (…)`` (the values, cast to ``c``'s type
  when declared and stored as text) or ``… FROM s (d)`` (the non-NULL values of a *public*
  table's column, read at query time). A private ``GROUP BY c`` then releases exactly those
  groups, each one, empty or not; rows whose key is not declared are dropped.

Declarations are public (an analyst may list them) and are read from the schema and the
catalog only — never from protected rows — so using them costs no privacy.

>>> import duckdb
>>> from provsql_dp.sql.catalog import Catalog
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE people(id INT, city VARCHAR, salary DOUBLE)")
>>> decl = ColumnDeclarations(Catalog(con))
>>> decl.set_bounds(["people"], "salary", 0, 100000).describe()
'people.salary BETWEEN 0 AND 100000'
>>> decl.bounds("main", "people", "SALARY")
(0.0, 100000.0)
>>> decl.set_group_keys(["people"], "city", values=["Oslo", "Lyon", "Oslo"]).values
('Oslo', 'Lyon')
>>> decl.key_values(decl.group_keys("main", "people", "city"), "VARCHAR")
['Lyon', 'Oslo']
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import duckdb
from sqlglot import exp

from ..errors import DeclarationError, OperationalError, ProgrammingError
from ._orphan_declarations import orphan_rows
from .catalog import _INTEGER_TYPES, SCHEMA, Catalog, TableInfo
from .plan import AntiJoin, Distinct, Filter, Join, Node, Project, Scan, SemiJoin

__all__ = ["ColumnDeclarations", "ColumnBounds", "GroupKeys", "base_column", "declared_bounds",
           "MAX_BOUND"]

#: the largest magnitude a declared bound may have (as for OPTIONS (lower, upper))
MAX_BOUND = 1e15

_DDL = {
    "column_bounds": f"""CREATE TABLE IF NOT EXISTS {SCHEMA}.column_bounds (
        schema_name VARCHAR NOT NULL, table_name VARCHAR NOT NULL, column_name VARCHAR NOT NULL,
        lower DOUBLE NOT NULL, upper DOUBLE NOT NULL, created TIMESTAMP DEFAULT current_timestamp,
        PRIMARY KEY (schema_name, table_name, column_name))""",
    "group_keys": f"""CREATE TABLE IF NOT EXISTS {SCHEMA}.group_keys (
        schema_name VARCHAR NOT NULL, table_name VARCHAR NOT NULL, column_name VARCHAR NOT NULL,
        key_values VARCHAR[], source_schema VARCHAR, source_table VARCHAR, source_column VARCHAR,
        created TIMESTAMP DEFAULT current_timestamp,
        PRIMARY KEY (schema_name, table_name, column_name))""",
}

_FLOAT_TYPES = {"FLOAT", "REAL", "FLOAT4", "DOUBLE", "FLOAT8"}


@dataclass(frozen=True)
class ColumnBounds:
    """``SET BOUNDS ON table (column) BETWEEN lower AND upper``."""

    schema: str
    table: str
    column: str
    lower: float
    upper: float

    def describe(self) -> str:
        return f"{self.table}.{self.column} BETWEEN {_num(self.lower)} AND {_num(self.upper)}"


@dataclass(frozen=True)
class GroupKeys:
    """``SET GROUP KEYS ON table (column) …``: explicit ``values`` (canonical text), or the
    column ``source_column`` of the public table ``source_schema.source_table``."""

    schema: str
    table: str
    column: str
    values: tuple[str, ...] | None = None
    source_schema: str | None = None
    source_table: str | None = None
    source_column: str | None = None

    def describe(self) -> str:
        if self.values is not None:
            return f"{len(self.values)} key(s) of {self.table}.{self.column}"
        return (f"the keys of {self.table}.{self.column}: {self.source_table} "
                f"({self.source_column}), read at query time")


class ColumnDeclarations:
    """Reads and writes the column declarations of a database (through its :class:`Catalog`)."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.con: duckdb.DuckDBPyConnection = catalog.con

    # ------------------------------------------------------------------ bounds
    def set_bounds(self, table: list[str], column: str, lower, upper) -> ColumnBounds:
        """Declare (or replace) the bounds of a numeric column; validated before anything is
        written."""
        info, col = self._column(table, column, "declare bounds on")
        kind = info.types[info.columns.index(col)].upper()
        if not (kind in _INTEGER_TYPES or kind in _FLOAT_TYPES or kind.startswith("DECIMAL")):
            raise DeclarationError(f"column {info.name}.{col} is not numeric ({kind}): only the "
                                   "values of a numeric column can be bounded")
        if max(abs(Fraction(lower)), abs(Fraction(upper))) > MAX_BOUND:
            raise DeclarationError(f"bounds must lie within ±{MAX_BOUND:g}")
        lo, hi = float(Fraction(lower)), float(Fraction(upper))
        if not lo < hi:
            raise DeclarationError(f"the lower bound must be below the upper bound, got "
                                   f"BETWEEN {_num(lo)} AND {_num(hi)}")
        self._write("column_bounds")
        self.con.execute(
            f"INSERT OR REPLACE INTO {SCHEMA}.column_bounds (schema_name, table_name, column_name, "
            "lower, upper) VALUES (?, ?, ?, ?, ?)", [info.schema, info.name, col, lo, hi])
        self.catalog.changed()
        return ColumnBounds(info.schema, info.name, col, lo, hi)

    def drop_bounds(self, table: list[str], column: str) -> ColumnBounds:
        found = self._find(self.list_bounds(), table, column)
        if found is None:
            raise DeclarationError(f"no bounds are declared on {'.'.join(table)} ({column}); "
                                   "SHOW BOUNDS lists them")
        self._write("column_bounds")
        self.con.execute(f"DELETE FROM {SCHEMA}.column_bounds WHERE schema_name = ? AND "
                         "table_name = ? AND column_name = ?", [found.schema, found.table, found.column])
        self.catalog.changed()
        return found

    def list_bounds(self, table: list[str] | None = None) -> list[ColumnBounds]:
        return self._on(list(self.catalog.cached(("column_bounds",), self._read_bounds)), table)

    def _read_bounds(self) -> tuple[ColumnBounds, ...]:
        if not self._exists("column_bounds"):
            return ()
        rows = self.con.execute(
            f"SELECT schema_name, table_name, column_name, lower, upper FROM {SCHEMA}.column_bounds "
            "ORDER BY schema_name, table_name, column_name").fetchall()
        return tuple(ColumnBounds(*r) for r in rows)

    def bounds(self, schema: str, table: str, column: str) -> tuple[float, float] | None:
        """The declared ``(lower, upper)`` of a column, or None."""
        found = self._find(self.list_bounds(), [schema, table], column)
        return (found.lower, found.upper) if found is not None else None

    # ------------------------------------------------------------------ group keys
    def set_group_keys(self, table: list[str], column: str, *, values: list | None = None,
                       source: list[str] | None = None, source_column: str | None = None) -> GroupKeys:
        """Declare (or replace) the public group keys of a column: ``values`` (str, bool, int,
        Decimal or Fraction, each cast to the column's type) or a public table's column."""
        info, col = self._column(table, column, "declare group keys on")
        kind = info.types[info.columns.index(col)]
        if values is not None:
            decl = GroupKeys(info.schema, info.name, col,
                             tuple(self._cast_all(values, kind, info.name, col)))
        else:
            sinfo, scol = self._column(source, source_column, "read group keys from")
            self._check_public(sinfo)
            try:  # the source is public: its values may be read now
                bad = self.con.execute(
                    f"SELECT {_q(scol)}::VARCHAR FROM {_qualified(sinfo)} WHERE {_q(scol)} IS NOT "
                    f"NULL AND TRY_CAST({_q(scol)} AS {kind}) IS NULL LIMIT 1").fetchall()
            except duckdb.Error as e:
                bad = [(str(e).splitlines()[0],)]
            if bad:
                raise DeclarationError(f"the values of {sinfo.name}.{scol} cannot be compared with "
                                       f"{info.name}.{col} ({kind}): {bad[0][0]!r} does not fit")
            if kind.upper() in _FLOAT_TYPES and self.con.execute(
                    f"SELECT count(*) FROM {_qualified(sinfo)} WHERE "
                    f"isnan(TRY_CAST({_q(scol)} AS {kind}))").fetchone()[0]:
                raise DeclarationError(_nan_key(f"a value of {sinfo.name}.{scol}", info.name, col,
                                                f"DELETE FROM {sinfo.name} WHERE isnan({scol})"))
            decl = GroupKeys(info.schema, info.name, col, None, sinfo.schema, sinfo.name, scol)
        self._write("group_keys")
        self.con.execute(
            f"INSERT OR REPLACE INTO {SCHEMA}.group_keys (schema_name, table_name, column_name, "
            "key_values, source_schema, source_table, source_column) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [decl.schema, decl.table, decl.column,
             list(decl.values) if decl.values is not None else None,
             decl.source_schema, decl.source_table, decl.source_column])
        self.catalog.changed()
        return decl

    def drop_group_keys(self, table: list[str], column: str) -> GroupKeys:
        found = self._find(self.list_group_keys(), table, column)
        if found is None:
            raise DeclarationError(f"no group keys are declared on {'.'.join(table)} ({column}); "
                                   "SHOW GROUP KEYS lists them")
        self._write("group_keys")
        self.con.execute(f"DELETE FROM {SCHEMA}.group_keys WHERE schema_name = ? AND table_name = ? "
                         "AND column_name = ?", [found.schema, found.table, found.column])
        self.catalog.changed()
        return found

    def list_group_keys(self, table: list[str] | None = None) -> list[GroupKeys]:
        return self._on(list(self.catalog.cached(("group_keys",), self._read_group_keys)), table)

    def _read_group_keys(self) -> tuple[GroupKeys, ...]:
        if not self._exists("group_keys"):
            return ()
        rows = self.con.execute(
            f"SELECT schema_name, table_name, column_name, key_values, source_schema, source_table, "
            f"source_column FROM {SCHEMA}.group_keys ORDER BY schema_name, table_name, column_name"
        ).fetchall()
        return tuple(GroupKeys(s, t, c, tuple(v) if v is not None else None, ss, st, sc)
                     for s, t, c, v, ss, st, sc in rows)

    def group_keys(self, schema: str, table: str, column: str) -> GroupKeys | None:
        return self._find(self.list_group_keys(), [schema, table], column)

    def key_values(self, decl: GroupKeys, column_type: str) -> list:
        """The declared keys as values of the column's type, in order (read at query time: a
        public source table is read now, and refused if it has become protected)."""
        try:
            if decl.values is not None:
                return [r[0] for r in self.con.execute(
                    f"SELECT DISTINCT CAST(v AS {column_type}) FROM unnest(?::VARCHAR[]) AS u(v) "
                    "ORDER BY 1", [list(decl.values)]).fetchall()]
            info = self.catalog.find_table([decl.source_schema, decl.source_table])
            if info is None or decl.source_column not in info.columns:
                raise ProgrammingError(
                    f"the group keys of {decl.table}.{decl.column} come from "
                    f"{decl.source_table} ({decl.source_column}), which no longer exists; "
                    f"declare them again (SET GROUP KEYS ON {decl.table} ({decl.column}) …)")
            self._check_public(info)
            col = _q(decl.source_column)
            out = [r[0] for r in self.con.execute(
                f"SELECT DISTINCT CAST({col} AS {column_type}) FROM {_qualified(info)} "
                f"WHERE {col} IS NOT NULL ORDER BY 1").fetchall()]
            if any(isinstance(v, float) and math.isnan(v) for v in out):  # added since declared
                raise ProgrammingError(_nan_key(
                    f"a value of {decl.source_table}.{decl.source_column}", decl.table,
                    decl.column, f"DELETE FROM {decl.source_table} WHERE "
                                 f"isnan({decl.source_column})") + "; nothing was charged")
            return out
        except duckdb.Error as e:
            raise ProgrammingError(
                f"the declared group keys of {decl.table}.{decl.column} no longer fit its type "
                f"({column_type}): {str(e).splitlines()[0]}; declare them again") from e

    # ------------------------------------------------------------------ helpers
    def _column(self, table: list[str], column: str, what: str) -> tuple[TableInfo, str]:
        info = self.catalog.find_table(table)
        name = ".".join(p for p in table if p)
        if info is None:
            raise DeclarationError(f"cannot {what} {name!r}: no such table")
        if info.view_sql is not None:
            raise DeclarationError(f"cannot {what} view {info.name!r}: name a base table")
        if info.schema == SCHEMA:
            raise DeclarationError("the provsql_dp catalog tables take no declarations")
        lower = {c.lower(): c for c in info.columns}
        if column.lower() not in lower:
            raise DeclarationError(f"table {info.name!r} has no column {column!r}; its columns "
                                   f"are {', '.join(info.columns)}")
        return info, lower[column.lower()]

    def _check_public(self, info: TableInfo) -> None:
        if info.view_sql is not None:  # declared on a table since replaced by a view (h57attack)
            raise DeclarationError(
                f"{info.name!r} is now a view, which may read protected tables: group keys must "
                "come from a public base table; declare them again (or with VALUES (…))")
        if self.catalog.protection(info.schema, info.name) is not None:
            raise DeclarationError(
                f"table {info.name!r} is protected: group keys must come from a public table "
                "(its values would otherwise reveal protected rows); list them with VALUES (…)")

    def _cast_all(self, values: list, kind: str, table: str, col: str) -> list[str]:
        out: dict[str, None] = {}
        for v in values:
            if isinstance(v, Fraction):
                v = v.numerator if v.denominator == 1 else Decimal(v.numerator) / v.denominator
            shown = f"'{v}'" if isinstance(v, str) else str(v).upper() if isinstance(v, bool) else v
            if isinstance(v, Decimal) and kind.upper() in _INTEGER_TYPES and v != v.to_integral():
                raise DeclarationError(f"the key {shown} does not fit column {col} ({kind}): "
                                       "not a whole number")
            try:
                text = self.con.execute(f"SELECT CAST(CAST(? AS {kind}) AS VARCHAR)", [v]).fetchone()[0]
            except duckdb.Error as e:
                raise DeclarationError(f"the key {shown} does not fit column {col} ({kind}): "
                                       f"{str(e).splitlines()[0]}") from e
            if kind.upper() in _FLOAT_TYPES and _is_nan(text):
                raise DeclarationError(_nan_key(f"the key {shown}", table, col,
                                                "out of VALUES (…)"))
            out[text] = None
        return list(out)

    def _write(self, name: str) -> None:
        if self.catalog.read_only:
            raise OperationalError("the database is open read-only; declarations cannot change")
        self.con.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
        self.con.execute(_DDL[name])

    def _exists(self, name: str) -> bool:
        row = self.con.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND "
                               "table_name = ?", [SCHEMA, name]).fetchone()
        return bool(row and row[0])

    def _on(self, rows: list, table: list[str] | None) -> list:
        if table is None:
            return rows
        info = self.catalog.find_table(table)
        mine = [] if info is None else [r for r in rows if (r.schema.lower(), r.table.lower())
                                        == (info.schema.lower(), info.name.lower())]
        # else a table gone outside provsql_dp (another schema's may have its name): by that name
        return mine or orphan_rows(self.catalog, rows, table)

    def _find(self, rows: list, table: list[str], column: str):
        for r in self._on(rows, table):
            if r.column.lower() == column.lower():
                return r
        return None


# ---------------------------------------------------------------------- for the planner
def base_column(node: Node, cid: str) -> tuple[Scan, str] | None:
    """The scan and base column whose value the output column ``cid`` of ``node`` carries
    unchanged (through filters, joins, DISTINCT and projections of a bare column), or None."""
    if isinstance(node, Scan):
        return (node, node.columns[node.ids.index(cid)]) if cid in node.ids else None
    if isinstance(node, Project):
        if cid not in node.ids:
            return None
        e = node.exprs[node.ids.index(cid)]
        return base_column(node.child, e.name) if isinstance(e, exp.Column) and not e.table else None
    if isinstance(node, (Filter, Distinct)):
        return base_column(node.child, cid)
    if isinstance(node, (SemiJoin, AntiJoin)):
        return base_column(node.left, cid)
    if isinstance(node, Join):
        return base_column(node.left, cid) or base_column(node.right, cid)
    return None  # a union's column may come from several columns


def declared_bounds(catalog: Catalog, node: Node, cid: str) -> tuple[float, float] | None:
    """The declared bounds of the base column behind ``cid`` (a SUM's bare argument), or None."""
    found = base_column(node, cid)
    if found is None:
        return None
    scan, column = found
    return ColumnDeclarations(catalog).bounds(scan.schema, scan.table, column)


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _qualified(info: TableInfo) -> str:
    return ".".join(_q(p) for p in (info.catalog, info.schema, info.name))


def _is_nan(text: str) -> bool:
    try:
        return math.isnan(float(text))
    except ValueError:
        return False


def _nan_key(what: str, table: str, col: str, fix: str) -> str:
    """Why a NaN group key is refused, and the way out."""
    return (f"{what} is NaN, which cannot be a group key of {table}.{col}: NaN = NaN is false "
            f"where the declared keys are compared with the rows', so its group "
            f"would always be released as empty while its rows are dropped. Leave NaN out "
            f"({fix}); rows whose key is NaN are then dropped from grouped releases, as rows of "
            f"any undeclared key are; to release them as a group, store them under a value of "
            f"their own (UPDATE {table} SET {col} = … WHERE isnan({col})) and declare it")


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))
