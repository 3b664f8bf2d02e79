"""A cursor's result as an Arrow table, a pandas DataFrame or numpy arrays (``fetch_arrow_table``,
``fetchdf``, ``fetchnumpy`` on :class:`~provsql_dp.Cursor`, as DuckDB's cursor has them).

The rows not yet fetched are converted column by column, each to the Arrow type DuckDB itself
gives its column type (so a DECIMAL stays a decimal, a DATE a date). For a private answer every
released value column ``<col>`` is followed by ``<col>_low`` and ``<col>_high``: the interval of
:meth:`provsql_dp.PrivacyInfo.intervals` at the coverage asked for (0.95 by default), the same
numbers as ``cursor.privacy.intervals()``. Needs pandas and pyarrow
(``pip install 'provsql_dp[pandas]'``).

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE t(id INT PRIMARY KEY, city VARCHAR)")
>>> _ = con.execute("INSERT INTO t SELECT range, 'c' || (range % 3) FROM range(300)")
>>> _ = con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 5")
>>> _ = con.execute("SET GROUP KEYS ON t (city) VALUES ('c0', 'c1', 'c2')")
>>> df = con.execute("SELECT city, COUNT(*) AS n FROM t GROUP BY city WITH EPSILON 1").fetchdf()
>>> list(df.columns)
['city', 'n', 'n_low', 'n_high']
>>> bool((df.n_low <= df.n).all() and (df.n <= df.n_high).all())
True
>>> b = con.execute("SELECT 1 AS a, NULL::INT AS b").fetchnumpy()["b"]
>>> b.dtype, b.mask.tolist()
(dtype('int32'), [True])
"""

from __future__ import annotations

import importlib
import warnings
from functools import lru_cache

import duckdb

from ...errors import InterfaceError, ProgrammingError

__all__ = ["arrow_table", "data_frame", "numpy_columns"]


def _require(module: str):
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise InterfaceError(
            f"{module} is needed for this: pip install 'provsql_dp[pandas]' (pandas and pyarrow)"
        ) from e


_SCRATCH: list = []


def _scratch() -> duckdb.DuckDBPyConnection:
    """A cursor on a private in-memory DuckDB (never the user's database): DuckDB's own
    conversions of an Arrow table to pandas and numpy, and its Arrow types."""
    if not _SCRATCH:
        _SCRATCH.append(duckdb.connect(":memory:"))
    return _SCRATCH[0].cursor()


def _to_arrow(relation):
    to_arrow = getattr(relation, "to_arrow_table", None) or relation.arrow
    return to_arrow()


@lru_cache(maxsize=256)
def _arrow_type(type_name: str):
    """The Arrow type DuckDB produces for a column of this DuckDB type (None if unknown)."""
    scratch = _scratch()
    try:
        return _to_arrow(scratch.sql(f"SELECT NULL::{type_name} AS c LIMIT 0")).schema[0].type
    except duckdb.Error:
        return None
    finally:
        scratch.close()


def _column(pa, values: list, type_name: str, name: str):
    want = _arrow_type(type_name)
    if want is not None:
        try:
            return pa.array(values, type=want)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError,
                ValueError, OverflowError):
            pass  # a value Arrow does not take as that type: let it choose
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError,
            ValueError, OverflowError) as e:
        raise ProgrammingError(f"column {name!r} ({type_name}) cannot be converted to Arrow: {e}") from e


def arrow_table(description, rows: list[tuple], privacy=None, coverage: float = 0.95,
                start: int = 0):
    """The rows as a ``pyarrow.Table`` named and typed by ``description`` (PEP 249 style), with
    the interval columns of ``privacy`` (a :class:`PrivacyInfo`) after each released value;
    ``rows`` are the result's rows from index ``start`` on."""
    pa = _require("pyarrow")
    if description is None:
        raise ProgrammingError("the last statement produced no result set to fetch")
    names = [c[0] for c in description]
    columns = list(zip(*rows)) if rows else [() for _ in names]
    arrays = [_column(pa, list(col), str(c[1]), c[0]) for col, c in zip(columns, description)]
    if privacy is not None:
        arrays, names = _with_intervals(pa, arrays, names, privacy, start, len(rows), coverage)
    return pa.Table.from_arrays(arrays, names=_unique(names))


def _with_intervals(pa, arrays, names, privacy, start: int, n_rows: int, coverage: float):
    intervals = privacy.intervals(coverage)[start:start + n_rows]
    k = len(privacy.interval_names())
    first = len(names) - k
    out_a, out_n = arrays[:first], names[:first]
    for j, (lo_name, hi_name) in enumerate(privacy.interval_names()):
        out_a.append(arrays[first + j])
        out_n.append(names[first + j])
        if j in privacy.public_columns:  # a GROUP BY key among the values: no interval
            continue
        out_a.append(pa.array([row[j][0] for row in intervals], type=pa.float64()))
        out_a.append(pa.array([row[j][1] for row in intervals], type=pa.float64()))
        out_n += [lo_name, hi_name]
    return out_a, out_n


def _unique(names: list[str]) -> list[str]:
    """Column names made unique the way DuckDB does it (``a``, ``a_1``, …)."""
    seen, out = set(), []
    for n in names:
        m, i = n, 0
        while m in seen:
            i += 1
            m = f"{n}_{i}"
        seen.add(m)
        out.append(m)
    return out


def data_frame(description, rows, privacy=None, coverage: float = 0.95, start: int = 0):
    """The rows as a pandas DataFrame, with DuckDB's own dtypes (its ``fetchdf`` of the
    :func:`arrow_table`: a DATE is ``datetime64``, an INTEGER column with NULLs ``Int32``)."""
    _require("pandas")
    return through_duckdb(arrow_table(description, rows, privacy, coverage, start), "df")


def through_duckdb(table, how: str):
    """DuckDB's own conversion of an Arrow table: ``"df"`` (pandas), ``"numpy"`` or ``"rows"``."""
    scratch = _scratch()
    try:
        rel = scratch.from_arrow(table)
        if how == "df":
            return rel.df()
        return rel.fetchnumpy() if how == "numpy" else rel.fetchall()
    finally:
        scratch.close()


def numpy_columns(description, rows, privacy=None, coverage: float = 0.95, start: int = 0) -> dict:
    """The rows as ``{column: numpy array}`` as DuckDB's ``fetchnumpy`` gives them (a column
    with NULLs is a masked array)."""
    return through_duckdb(arrow_table(description, rows, privacy, coverage, start), "numpy")


#: DuckDB types whose values come back from DuckDB → Arrow → DuckDB exactly as DuckDB's
#: ``fetchall`` gives them (checked by tests/system/test_dbapi_pandas.py, infinities included);
#: a result with any other column type is fetched as rows
_ROUND_TRIP = {"BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT",
               "UINTEGER", "UBIGINT", "FLOAT", "DOUBLE", "VARCHAR", "DATE", "TIME", "TIMESTAMP",
               "BLOB"}


#: results with fewer rows than this are fetched as tuples only (DuckDB's fetchall, the fastest
#: for small results); from this many on, the rest is kept as DuckDB's Arrow table
HEAD = 10_000


def can_be_columnar(description) -> bool:
    """Whether every column type round-trips exactly (:data:`_ROUND_TRIP`, DECIMALs too) and
    pyarrow is installed."""
    for c in description:
        t = str(c[1]).upper()
        if t not in _ROUND_TRIP and not (t.startswith("DECIMAL(") and t.endswith(")")):
            return False
    try:
        importlib.import_module("pyarrow")
    except ImportError:
        return False
    return True


def columnar(res, head: list[tuple]):
    """A large plain query's result as ``(table, rest)``: ``head`` (its first :data:`HEAD`
    rows, already fetched as tuples) and the rest of ``res`` as one Arrow table, and the rest
    alone (whose tuples :func:`rows_of` makes). Kept columnar, ``fetchdf`` costs what DuckDB's
    does. None when ``head`` does not convert to the rest's Arrow types (values Python cannot
    hold exactly, such as infinite dates): the caller then keeps tuples."""
    pa = importlib.import_module("pyarrow")
    with warnings.catch_warnings():  # DuckDB notes the copy Arrow output makes: wanted here
        warnings.simplefilter("ignore", UserWarning)
        rest = _to_arrow(res)
    try:
        cols = list(zip(*head))
        arrays = [pa.array(list(col), type=f.type) for col, f in zip(cols, rest.schema)]
        first = pa.Table.from_arrays(arrays, schema=rest.schema)
        return pa.concat_tables([first, rest]), rest
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError,
            ValueError, OverflowError):
        return None, rest


def rows_of(table) -> list[tuple]:
    """The rows of an Arrow table made by :func:`columnar`, as DuckDB's ``fetchall`` gives them."""
    return through_duckdb(table, "rows")
