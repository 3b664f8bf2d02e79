"""Where a capture query runs: the engine under the capture stage.

The capture stage compiles a plan to one SQL query (:mod:`provsql_dp.provenance.capture`) written
in DuckDB's dialect, and reads back only compact, columnar results: the K-relation's arrays, the
per-participant totals of the single-owner path, the sorted participant dictionaries. A *backend*
runs such a query and hands the result back as numpy arrays:

* :class:`~provsql_dp.provenance.backends.duckdb.DuckDBBackend` — the embedded default: the query
  runs as written in the connection's DuckDB database;
* :class:`~provsql_dp.provenance.backends.spark.SparkBackend` — Apache Spark: the query is parsed
  once into a sqlglot expression, rewritten for Spark (table names to attached snapshots, DuckDB
  types and functions to their Spark equivalents, anything without a total equivalent refused)
  and emitted with ``.sql(dialect="spark")``; results cross back through Arrow.

Every backend offers:

``dialect``
    the sqlglot dialect it executes;
``fetchnumpy(sql) -> (columns, types)``
    run a DuckDB-dialect query; return ``{name: numpy array}`` (masked where NULL) and each
    column's type name in DuckDB's spelling (``"DATE"``, ``"BIGINT"``, …);
``check(sql)``
    refuse a DuckDB-dialect query the backend cannot run totally (called before ε is charged);
``fetchall(sql) -> list[tuple]``
    run a query whose result is small (a few rows per group) and return its rows.

>>> import duckdb
>>> be = as_backend(duckdb.connect())
>>> be.dialect, be.fetchall("SELECT 1 + 1")
('duckdb', [(2,)])
"""

from __future__ import annotations

from .duckdb import DuckDBBackend

__all__ = ["as_backend", "attached_table", "engine_of", "refuse_attached", "DuckDBBackend"]


def as_backend(engine):
    """``engine`` as a backend: a backend is returned unchanged, a DuckDB connection wrapped in
    :class:`DuckDBBackend`."""
    if hasattr(engine, "fetchnumpy") and hasattr(engine, "dialect"):
        return engine
    return DuckDBBackend(engine)


def engine_of(con):
    """The backend a provsql_dp connection reads data from (its DuckDB database by default)."""
    engine = getattr(con, "_engine", None)
    return engine if engine is not None else DuckDBBackend(con._duck)


def refuse_attached(con, sql: str, what: str) -> None:
    """Refuse ``sql`` — run by ``what`` on the catalog's own DuckDB database — when it names a
    table attached from another engine: its DuckDB mirror is empty, and an answer computed from
    it would be wrong without a word. Called before anything is charged.

    >>> import provsql_dp
    >>> refuse_attached(provsql_dp.connect(), "SELECT 1", "a stream")  # DuckDB: nothing to refuse
    """
    engine = engine_of(con)
    name = attached_table(engine, sql)
    if name is not None:
        from ...errors import NotSupportedError

        raise NotSupportedError(
            f"{what} reads the catalog's own DuckDB tables, and table {name} is "
            f"attached from {engine.dialect.capitalize()} (its rows are not in DuckDB); "
            "it is not supported on that engine. Nothing was charged")


def attached_table(engine, sql: str) -> str | None:
    """The first table ``sql`` names that ``engine`` attaches from elsewhere (its DuckDB mirror
    is empty), or None — also for DuckDB itself and for text sqlglot cannot read (DuckDB
    judges it).

    >>> import provsql_dp
    >>> attached_table(engine_of(provsql_dp.connect()), "SELECT * FROM t") is None
    True
    """
    attached = set(getattr(engine, "tables", ()))
    if isinstance(engine, DuckDBBackend) or not attached:
        return None
    import sqlglot
    from sqlglot import exp

    try:
        trees = sqlglot.parse(sql, read="duckdb")
    except sqlglot.errors.SqlglotError:
        return None
    for tree in filter(None, trees):
        for t in tree.find_all(exp.Table):
            if t.name.lower() in attached:
                return t.name
    return None
