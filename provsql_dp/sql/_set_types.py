"""Types of set operations at plan time: the branches of ``UNION``/``UNION ALL``/``INTERSECT`` are
brought to one type per column by the planner, never by DuckDB at run time.

DuckDB unifies the branches of a set operation with an implicit cast, evaluated on every row that
reaches it — and that cast can fail (``INTEGER`` to ``DATE`` is unimplemented, a far ``DATE`` does
not fit a ``TIMESTAMP``, a ``HUGEINT`` does not fit a ``DECIMAL(38,10)``). It fails only when a row
passes the branch's ``WHERE``, so value vs error answered a predicate on one person for ε = 0.001
(issue 26). The rule here:

1. the common type of a column is DuckDB's own (its rule for ``UNION`` of the branch types,
   asked of the private binder at plan time: the schema decides it, never the data);
2. a branch whose type is not the common type is wrapped in a projection that converts it with
   ``TRY_CAST`` (NULL where a value does not convert; explicit even where the conversion cannot
   fail, so that an ``INTERSECT``'s comparison of the branches compares equal types);
3. there is no common type when DuckDB has none, or when it would convert no value at all
   (``INTEGER`` to ``DATE``: DuckDB picks ``DATE`` and then fails on every row): the statement is
   refused before ε, with a message naming both types and how to fix it.

>>> common_type("INTEGER", "BIGINT"), common_type("DATE", "TIMESTAMP"), common_type("INTEGER", "VARCHAR")
('BIGINT', 'TIMESTAMP', 'VARCHAR')
>>> common_type("INTEGER", "DATE")
Traceback (most recent call last):
...
provsql_dp.errors.UnsupportedQueryError: a set operation's column mixes INTEGER and DATE, and DuckDB converts no INTEGER value to DATE; cast one branch explicitly (CAST is evaluated as TRY_CAST: NULL where a value does not convert)
"""

from __future__ import annotations

from functools import lru_cache

import duckdb
from sqlglot import exp

from ..errors import UnsupportedQueryError
from ._typing import _BINDER, _parse_type, _try_cast

__all__ = ["common_type", "unify_branches"]

#: a value of each family, to tell an unimplemented conversion from one that fails on some values
_SAMPLES = {
    "int": "0", "decimal": "0", "float": "0", "bool": "true", "string": "''",
    "date": "DATE '2000-01-01'", "timestamp": "TIMESTAMP '2000-01-01'",
    "timestamptz": "TIMESTAMPTZ '2000-01-01 00:00:00+00'", "interval": "INTERVAL 1 DAY",
}


def _mixes(a: str, b: str, why: str) -> UnsupportedQueryError:
    return UnsupportedQueryError(
        f"a set operation's column mixes {a} and {b}, and {why}; cast one branch explicitly "
        "(CAST is evaluated as TRY_CAST: NULL where a value does not convert)")


@lru_cache(maxsize=512)
def common_type(a: str, b: str) -> str:
    """DuckDB's type for a ``UNION`` of an ``a`` column and a ``b`` column (decided by its binder
    on NULLs: no data involved); refused when there is none, or when one side converts to it for
    no value at all."""
    if a == b:
        return a
    try:
        (t,) = _BINDER.types([f"(SELECT CAST(NULL AS {a}) UNION ALL SELECT CAST(NULL AS {b}))"],
                             "(SELECT 1) AS __u")
    except duckdb.Error as err:
        raise _mixes(a, b, "DuckDB has no common type for them") from err
    for src in (a, b):
        sample = _SAMPLES.get(_parse_type(src).family)
        if src == t or sample is None:
            continue
        try:
            _BINDER.run(f"SELECT CAST(CAST({sample} AS {src}) AS {t})")
        except duckdb.Error as err:
            if "Unimplemented" in str(err) or "No function" in str(err):
                raise _mixes(a, b, f"DuckDB converts no {src} value to {t}") from err
    return t


def unify_branches(planner, branches: list, what: str) -> tuple[list, tuple[str, ...]]:
    """The branches of a set operation with one type per column: each branch whose type differs
    from the common type gets a projection converting it with ``TRY_CAST``. Returns the branches and the column types."""
    width = len(branches[0].ids)
    types = []
    for k in range(width):
        t = planner.types.get(branches[0].ids[k], '"NULL"')
        for b in branches[1:]:
            t = _common(t, planner.types.get(b.ids[k], '"NULL"'))
        types.append(t)
    out = []
    for b in branches:
        src = [planner.types.get(i, '"NULL"') for i in b.ids]
        if src == types:
            out.append(b)
            continue
        # explicit even where the conversion cannot fail: an INTERSECT compares the columns, and
        # DuckDB would compare a BIGINT with a VARCHAR by converting the VARCHAR
        exprs = [_try_cast(exp.column(i), t) if s != t else exp.column(i)
                 for i, s, t in zip(b.ids, src, types)]
        ids = tuple(planner.new_id() for _ in b.ids)
        out.append(planner._project(b, exprs, ids, b.names))
    return out, tuple(types)


def _common(a: str, b: str) -> str:
    if _parse_type(a).family == "null":
        return b
    if _parse_type(b).family == "null":
        return a
    return common_type(a, b)
