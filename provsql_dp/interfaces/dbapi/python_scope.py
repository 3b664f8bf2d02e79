"""DataFrames and Arrow tables as tables: ``con.register(name, df)`` and, for a curator, a
DataFrame in the caller's scope queried by its variable name, as DuckDB does.

**What a registered object is.** A temporary view of the connection over the Python object
(DuckDB's ``register``: no copy, later changes to the object show), visible to this connection
only, gone at ``unregister`` or close. It is a **public** table: private queries may join it
(its rows are public data, like any unprotected table) and a registered object cannot be
protected — to protect a DataFrame's rows, load it into a table (``CREATE TABLE t AS SELECT *
FROM df``, curator) and ``PROTECT TABLE t``. A name already used by a table or a view of the
database is refused (a frame never shadows a table, so a name keeps its privacy meaning).

**Roles.** ``register`` is a Python call, not SQL: whoever holds the connection object chooses
the data, so an analyst's connection may register their own DataFrames and query them, plainly
or joined to protected tables in private queries (where the mechanism applies as always).
Looking variables up *implicitly* by name is for curator connections only: an analyst's SQL may
come from elsewhere (a web form, a shell) and must not reach the Python variables of the
process serving it. Analyst connections have DuckDB's own replacement scans turned off.

>>> import pandas as pd, provsql_dp
>>> con = provsql_dp.connect()
>>> depts = pd.DataFrame({"dept": ["a", "b"], "floor": [1, 2]})
>>> con.execute("SELECT floor FROM depts ORDER BY floor").fetchall()   # found in scope
[(1,), (2,)]
>>> an = provsql_dp.connect(role="analyst")
>>> an.execute("SELECT floor FROM depts")
Traceback (most recent call last):
...
provsql_dp.errors.PrivacyError: an analyst can read only tables of the database; 'depts' is not one
>>> _ = an.register("mine", depts)
>>> an.execute("SELECT COUNT(*) FROM mine").fetchall()
[(2,)]
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager

import duckdb
from sqlglot import exp

from ..._duckdb_errors import translate
from ...errors import ProgrammingError

__all__ = ["caller_frame", "is_frame_like", "register", "unregister", "scope_frames",
           "run_in_scope"]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: (module prefix, class name) of the Python objects DuckDB scans as tables
_FRAME_TYPES = {("pandas", "DataFrame"), ("pyarrow", "Table"), ("pyarrow", "RecordBatchReader"),
                ("pyarrow", "RecordBatch"), ("pyarrow", "Dataset"), ("pyarrow", "FileSystemDataset"),
                ("polars", "DataFrame"), ("polars", "LazyFrame")}


def is_frame_like(obj) -> bool:
    """Whether ``obj`` is a DataFrame or Arrow object DuckDB can read as a table."""
    t = type(obj)
    return (t.__module__.split(".")[0], t.__name__) in _FRAME_TYPES


def caller_frame():
    """The innermost frame outside the provsql_dp package: whose variables a query may name."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE_DIR + os.sep):
        f = f.f_back
    return f


def register(con, name: str, obj) -> None:
    """Register ``obj`` as the temporary public view ``name`` of ``con`` (see the module doc)."""
    if not isinstance(name, str) or not name or name != name.strip():
        raise ProgrammingError(f"a registered name must be a non-empty string, got {name!r}")
    if not is_frame_like(obj):
        raise ProgrammingError(
            f"cannot register a {type(obj).__name__}: register a pandas or polars DataFrame or a "
            "pyarrow Table/RecordBatchReader/Dataset")
    if name.lower() not in con._catalog.frames and con._catalog.find_table([name]) is not None:
        raise ProgrammingError(
            f"a table or view named {name!r} exists; register the DataFrame under another name "
            "(a registered DataFrame never shadows a table of the database)")
    try:
        con._duck.register(name, obj)
    except duckdb.Error as e:
        raise translate(e) from e
    con._catalog.frames.add(name.lower())


def unregister(con, name: str) -> None:
    """Drop a registered DataFrame (not a table: only what :func:`register` made)."""
    if name.lower() not in con._catalog.frames:
        raise ProgrammingError(f"{name!r} is not a registered DataFrame of this connection")
    try:
        con._duck.unregister(name)
    except duckdb.Error as e:
        raise translate(e) from e
    con._catalog.frames.discard(name.lower())


def _lookup(frame, name: str):
    for scope in (frame.f_locals, frame.f_globals):
        obj = scope.get(name)
        if obj is not None and is_frame_like(obj):
            return obj
    return None


@contextmanager
def scope_frames(con, tree: exp.Expression, frame):
    """For the duration of a statement, register the DataFrames of ``frame`` (the caller's
    scope) that ``tree`` names and that are not tables of the database (curator connections;
    nothing happens without a frame)."""
    added = []
    try:
        if frame is not None:
            ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
            for t in tree.find_all(exp.Table):
                if not isinstance(t.this, exp.Identifier) or t.args.get("db") or t.args.get("catalog"):
                    continue
                name = t.name
                if name.lower() in ctes or name.lower() in con._catalog.frames:
                    continue
                obj = _lookup(frame, name)
                if obj is not None and con._catalog.find_table([name]) is None:
                    register(con, name, obj)
                    added.append(name)
        yield
    finally:
        for name in added:
            try:
                unregister(con, name)
            except Exception:  # noqa: BLE001 - the connection may be closed or aborted
                con._catalog.frames.discard(name.lower())


def run_in_scope(duck, stmt: str, parameters, frame):
    """``duck.execute(stmt, parameters)`` run so that DuckDB's replacement scans see the
    variables of ``frame`` (the caller's scope), as when the caller calls DuckDB directly."""
    if frame is None:
        return duck.execute(stmt, parameters) if parameters is not None else duck.execute(stmt)
    local = dict(frame.f_locals)
    local.update(__provsql_dp_duck=duck, __provsql_dp_stmt=stmt, __provsql_dp_params=parameters)
    code = ("__provsql_dp_duck.execute(__provsql_dp_stmt)" if parameters is None else
            "__provsql_dp_duck.execute(__provsql_dp_stmt, __provsql_dp_params)")
    return eval(code, frame.f_globals, local)  # noqa: S307 - fixed code, the caller's namespace
