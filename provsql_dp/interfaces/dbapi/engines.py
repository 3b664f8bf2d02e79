"""The engine a connection reads data from: its own DuckDB database, or Apache Spark.

With ``provsql_dp.connect("ledger.duckdb", engine=spark)`` the DuckDB file is the *catalog of
record* — privacy declarations, policies, budgets and the ledger live there, as on the embedded
engine — and the data lives in Spark. :meth:`Connection.attach` keys a Spark table to the catalog
by name:

* in Spark, the table's rows are snapshotted with a stable ``rowid``
  (:meth:`provsql_dp.provenance.backends.spark.SparkBackend.attach`);
* in DuckDB, an *empty* table of the same name and schema mirrors it (with the ``primary_key``
  given to ``attach``, checked on the Spark rows first), so that the planner, the
  declarations (``PROTECT TABLE``, ``SET GROUP KEYS``, bounds, policies) and the analyst's
  statements see the table exactly as they would a local one;
* ``_provsql_dp.engine_tables`` records the name and its Spark source, so that a later
  ``connect(..., engine=spark)`` — a curator's or an analyst's — attaches it again.

Every data read of a private statement then goes to Spark (capture, the single-owner totals,
the public values of GROUP BY keys): the compact results cross back, never a row at a time.
Plain SQL naming an attached table is refused (:func:`refuse_mirrored`): its rows are in Spark,
not in the mirror; read them through Spark itself. ``SET GROUP KEYS … FROM`` a table reads the
catalog of record: declare the keys with ``VALUES`` for an attached table.

>>> import provsql_dp, duckdb
>>> con = provsql_dp.connect()
>>> type(con._engine).__name__
'DuckDBBackend'
"""

from __future__ import annotations

from ...errors import InterfaceError, NotSupportedError
from ...provenance.backends import DuckDBBackend
from ...sql.catalog import SCHEMA

__all__ = ["open_engine", "attach_table", "refuse_mirrored"]

_TABLE = f"{SCHEMA}.engine_tables"


def open_engine(con, engine):
    """The backend of a new connection; a Spark engine re-attaches the tables recorded in the
    catalog of record."""
    if engine is None:
        return DuckDBBackend(con._duck)
    if not (hasattr(engine, "sql") and hasattr(engine, "conf") and hasattr(engine, "table")):
        raise InterfaceError(
            f"engine must be None (DuckDB) or a pyspark.sql.SparkSession, got {type(engine).__name__}")
    from ...provenance.backends.spark import SparkBackend

    backend = SparkBackend(engine)
    exists = con._duck.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND table_name = 'engine_tables'",
        [SCHEMA]).fetchone()[0]
    if exists:
        for name, source, key in con._duck.execute(
                f"SELECT table_name, source, primary_key FROM {_TABLE}").fetchall():
            if source is not None:
                backend.attach(name, source, tuple(key or ()))
    return backend


def attach_table(con, name: str, source=None, primary_key=()) -> None:
    """Snapshot ``source`` (a Spark DataFrame or table name; default ``name``) in Spark and mirror
    its schema in the catalog of record (see the module docstring)."""
    backend = con._engine
    if isinstance(backend, DuckDBBackend):
        raise NotSupportedError(
            "attach keys a table of an external engine to this catalog; this connection reads its "
            "own DuckDB database (open it with provsql_dp.connect(..., engine=spark_session))")
    if con.read_only:
        raise NotSupportedError("attach writes the catalog of record; this connection is read-only")
    primary_key = tuple(primary_key)
    columns = backend.attach(name, source, primary_key)
    ddl = ", ".join(f'{_q(c)} {t}' for c, t in columns)
    if primary_key:
        ddl += f", PRIMARY KEY ({', '.join(_q(c) for c in primary_key)})"
    quoted = '"' + name.replace('"', '""') + '"'
    duck = con._duck
    duck.execute(f"CREATE TABLE IF NOT EXISTS {_TABLE} (table_name VARCHAR PRIMARY KEY, "
                 "source VARCHAR, primary_key VARCHAR[])")
    duck.execute(f"CREATE OR REPLACE TABLE {quoted} ({ddl})")
    duck.execute(f"DELETE FROM {_TABLE} WHERE table_name = ?", [name])
    # a DataFrame has no name to attach it by again: it is recorded without a source
    recorded = name if source is None else source if isinstance(source, str) else None
    duck.execute(f"INSERT INTO {_TABLE} VALUES (?, ?, ?)", [name, recorded, list(primary_key)])


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def refuse_mirrored(con, stmt: str) -> None:
    """Refuse plain SQL that names a table attached from another engine: in DuckDB it is an empty
    mirror, and an empty answer would be wrong without saying so."""
    backend = con._engine
    if isinstance(backend, DuckDBBackend) or not backend.tables:
        return
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    try:
        trees = sqlglot.parse(stmt, read="duckdb")
    except SqlglotError:
        return  # DuckDB judges what sqlglot cannot read
    attached = set(backend.tables)
    for tree in filter(None, trees):
        for t in tree.find_all(exp.Table):
            if t.name.lower() in attached:
                raise NotSupportedError(
                    f"table {t.name} is attached from Spark: its rows are not in the DuckDB "
                    f"catalog. Ask a private query (… WITH EPSILON ε), or read it through Spark "
                    f"(spark.table({t.name!r}))")
