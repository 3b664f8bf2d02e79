"""The engine a connection reads data from: its own DuckDB database (with its guard rails), or Spark.

**Guard rails.** A connection that serves an analyst opens its DuckDB database with
:data:`GUARD_RAILS` (:func:`guard_rails_config`): no file system or network access from SQL
(``enable_external_access = false``: ``read_csv``, ``COPY … TO``, ``ATTACH``, ``INSTALL`` are
refused by DuckDB itself), no extension installed or loaded behind the scenes, no DataFrames
of the process's scope, a memory limit and a cap on what queries may spill to disk — and
``lock_configuration = true``, so that no ``SET``/``RESET``/``PRAGMA`` can undo any of it.
This is a second wall behind provsql_dp's own checks of analyst statements. DuckDB applies
these settings to the whole database instance, and its Python client keeps one instance per
file and process: every connection on that file in the process has the same configuration
(:func:`open_error` explains a clash). provsql_dp's own work runs under the rails unchanged
(its catalog schema, the ledger, captures, ICU time-zone functions — ICU is built into the
DuckDB wheel, nothing is loaded).

With ``provsql_dp.connect("ledger.duckdb", engine=spark)`` the DuckDB file is the *catalog of
record* — privacy declarations, policies, budgets and the ledger live there, as on the embedded
engine — and the data lives in Spark. :meth:`Connection.attach` keys a Spark table to the catalog
by name:

* in Spark, the table's rows are written once to a Parquet *snapshot* with a stable ``rowid``
  (:meth:`provsql_dp.provenance.backends.spark.SparkBackend.attach`; by default beside the
  DuckDB file, ``<file>.spark/<table>/v<version>``; ``snapshot=`` names another place, e.g. a
  path every node of a cluster reads);
* in DuckDB, an *empty* table of the same name and schema mirrors it (with the ``primary_key``
  and ``checks`` given to ``attach``, checked once on the snapshot), so that the planner, the
  declarations (``PROTECT TABLE``, ``SET GROUP KEYS``, bounds, policies) and the analyst's
  statements see the table exactly as they would a local one — the k-star and k-triangle routes
  read the declared key and ``CHECK (src < dst)`` there, as on DuckDB;
* ``_provsql_dp.engine_tables`` records the name, its Spark source, the key and checks, the
  snapshot's path and version (1, 2, … per attach of the name), when it was attached and, for a
  Delta source (``"delta:/path"``, read through the ``deltalake`` package), the Delta version, so
  that a later ``connect(..., engine=spark)`` — a curator's or an analyst's — reads the same
  snapshot again without copying or checking anything;
* attaching a table again writes a new version; the older ones are removed as soon as no open
  connection reads them — at that attach, or a later one, or by :func:`vacuum_snapshots`
  (each reader holds a lease file beside the snapshot,
  :mod:`provsql_dp.provenance.backends._snapshot_leases`; ones still read, or not on the local
  file system, wait in ``_provsql_dp.engine_snapshots_retired``).

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

import duckdb

from ..._duckdb_errors import translate
from ...errors import Error, InterfaceError, NotSupportedError, OperationalError
from ...privacy.fast_path import PERFECT_HASH_BITS
from ...provenance.backends import DuckDBBackend, attached_table
from ...provenance.backends._spark_snapshot import snapshot_path
from ...sql.catalog import SCHEMA

__all__ = ["open_engine", "refresh_attached", "attach_table", "vacuum_snapshots",
           "refuse_mirrored", "GUARD_RAILS",
           "guard_rails_config",
           "open_error", "shares_unguarded", "warn_unguarded"]

#: the DuckDB settings of a guarded connection (besides its memory and spill limits), in the
#: order DuckDB applies them; ``lock_configuration`` last: nothing can change them afterwards
GUARD_RAILS = {
    "enable_external_access": False,  # no files, no network, no ATTACH/COPY/INSTALL from SQL
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
    "python_enable_replacements": False,  # no DataFrame of the serving process by its name
    # the single-owner path's hash aggregate setting (privacy.fast_path): it cannot be SET
    # once the configuration is locked
    "perfect_ht_threshold": PERFECT_HASH_BITS,
    "lock_configuration": True,
}


def guard_rails_config(config: dict | None, memory_limit: str | None,
                       temp_directory_limit: str | None) -> dict:
    """The DuckDB config of a guarded connection: ``config`` (the caller's own settings) with
    :data:`GUARD_RAILS`, ``memory_limit`` and ``max_temp_directory_size`` (``None``: DuckDB's
    default, still locked). A caller's setting that would lower a rail is refused by name.

    >>> cfg = guard_rails_config({"threads": 2}, "1GB", None)
    >>> cfg["enable_external_access"], cfg["lock_configuration"], cfg["memory_limit"], cfg["threads"]
    (False, True, '1GB', 2)
    >>> guard_rails_config({"enable_external_access": True}, None, None)
    Traceback (most recent call last):
    ...
    provsql_dp.errors.InterfaceError: config sets enable_external_access = True, which the guard rails forbid; open the connection with guard_rails=False (a curator in a process of its own) to have it
    """
    out = dict(config or {})
    for key, value in GUARD_RAILS.items():
        if key in out and out[key] != value and key != "perfect_ht_threshold":
            raise InterfaceError(
                f"config sets {key} = {out[key]!r}, which the guard rails forbid; open the "
                "connection with guard_rails=False (a curator in a process of its own) to have it")
    for key, value in (("memory_limit", memory_limit),
                       ("max_temp_directory_size", temp_directory_limit)):
        if value is not None:
            out[key] = str(value)
    out.update({k: v for k, v in GUARD_RAILS.items() if k != "lock_configuration"})
    out["lock_configuration"] = True  # last
    return out


def shares_unguarded(e: duckdb.Error) -> bool:
    """Whether DuckDB refused a connection because the file is open in this process with
    another configuration."""
    return isinstance(e, duckdb.ConnectionException) and "different configuration" in str(e)


def warn_unguarded(database: str) -> None:
    """Say that an analyst connection shares an unguarded database instance (see
    :func:`provsql_dp.connect`)."""
    import warnings

    warnings.warn(
        f"analyst connection to {database!r} opened without DuckDB's guard rails: this process "
        "already holds the file without them (a curator's connection), and DuckDB has one "
        "configuration per file and process. provsql_dp's own checks still apply; to have the "
        "rails, serve analysts from a process of their own (provsql-dp serve/shell) or pass "
        "guard_rails=True (an error instead of this warning)", UserWarning, stacklevel=4)


def open_error(database: str, e: duckdb.Error, guarded: bool) -> Error:
    """The PEP 249 error for a DuckDB database that would not open, with what to do."""
    text = str(e)
    if shares_unguarded(e):
        mine, other = ("with", "without") if guarded else ("without", "with")
        return OperationalError(
            f"cannot open {database!r} {mine} DuckDB's guard rails: this process already has "
            f"a connection to it {other} them, and DuckDB shares one database instance (one "
            "configuration) per file and process. Close the other connection first, or open "
            "both the same way (guard_rails=True for the curator too, who then cannot read "
            "files), or serve the analysts from another process (provsql-dp serve)")
    if isinstance(e, duckdb.IOException):
        if "lock" in text.lower():
            hint = ("DuckDB lets one process write a database file at a time; close the other "
                    "process's connection, or open this one read_only=True")
        elif "no such file or directory" in text.lower():
            hint = ("check the path: its directory must exist (DuckDB creates the file, not "
                    "the directories above it)")
        else:
            hint = "check the path and its permissions"
        return OperationalError(f"cannot open {database!r}: {e}. {hint}")
    if isinstance(e, (duckdb.InvalidInputException, duckdb.ParserException)) and guarded:
        return InterfaceError(f"cannot open {database!r} with the guard rails: {e} (check "
                              "memory_limit and temp_directory_limit, e.g. '4GB' or '50%')")
    return translate(e)

_TABLE = f"{SCHEMA}.engine_tables"


def open_engine(con, engine):
    """The backend of a new connection; a Spark engine opens the snapshots recorded in the
    catalog of record (written and checked once, when the curator attached them)."""
    if engine is None:
        return DuckDBBackend(con._duck)
    if not (hasattr(engine, "sql") and hasattr(engine, "conf") and hasattr(engine, "table")):
        raise InterfaceError(
            f"engine must be None (DuckDB) or a pyspark.sql.SparkSession, got {type(engine).__name__}")
    from ...provenance.backends.spark import SparkBackend

    backend = SparkBackend(engine)
    # our Spark queries read timestamps in the zone DuckDB proves group keys in (its session's)
    backend.time_zone = lambda: con._duck.execute(
        "SELECT current_setting('TimeZone')").fetchall()[0][0]
    _open_recorded(con, backend)
    return backend


def _open_recorded(con, backend) -> None:
    """Open the snapshots recorded in the catalog that ``backend`` has not opened at their
    recorded version (all of them on a new backend); remember the versions opened."""
    opened = backend.__dict__.setdefault("recorded_versions", {})
    if not _recorded(con):
        return
    have = _upgrade(con)
    cols = ", ".join(c if c in have else f"NULL AS {c}" for c in ("checks", "snapshot", "version"))
    for name, source, key, checks, path, version in con._duck.execute(
            f"SELECT table_name, source, primary_key, {cols} FROM {_TABLE}").fetchall():
        if name.lower() in opened and opened[name.lower()] == version:
            continue
        if path is not None:
            columns = [r[0] for r in con._duck.execute(
                "SELECT column_name FROM duckdb_columns() WHERE schema_name = 'main' AND "
                "table_name = ? ORDER BY column_index ASC", [name]).fetchall()]
            backend.open_snapshot(name, path, columns)
            if con.role == "analyst" and name.lower() in getattr(backend, "_gone", {}):
                # an analyst gets no path (the curator's message names it)
                backend._gone[name.lower()] = (
                    f"the Spark snapshot of table {name} cannot be read; a curator attaches the "
                    f"table again (ATTACH SPARK TABLE {name} FROM 'source')")
        elif source is not None:  # recorded before snapshots were kept: snapshot it again
            backend.attach(name, source, tuple(key or ()), tuple(checks or ()))
        opened[name.lower()] = version


def refresh_attached(con) -> None:
    """Before a statement on the Spark engine: open what another connection attached (or
    attached again) since this one opened, so that a server's long-lived sessions see the
    curator's ``ATTACH SPARK TABLE`` at once (one small read of the catalog; nothing on DuckDB)."""
    backend = con._engine
    if isinstance(backend, DuckDBBackend):
        return
    _open_recorded(con, backend)


def _recorded(con) -> bool:
    return bool(con._duck.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND table_name = 'engine_tables'",
        [SCHEMA]).fetchall()[0][0])


def _upgrade(con) -> set[str]:
    """Add the snapshot columns to a record written before they existed (on a writable
    connection); return the record's columns."""
    have = {r[0] for r in con._duck.execute(
        "SELECT column_name FROM duckdb_columns() WHERE schema_name = ? AND "
        "table_name = 'engine_tables'", [SCHEMA]).fetchall()}
    for col, ddl in _COLUMNS.items():
        if col not in have and not con.read_only:
            con._duck.execute(f"ALTER TABLE {_TABLE} ADD COLUMN {col} {ddl}")
            have.add(col)
    return have


#: the columns of the record of an attached table (besides table_name, source, primary_key)
_COLUMNS = {"checks": "VARCHAR[]", "snapshot": "VARCHAR", "version": "BIGINT",
            "attached_at": "TIMESTAMPTZ", "source_version": "BIGINT"}


def attach_table(con, name: str, source=None, primary_key=(), checks=(), snapshot=None,
                 version=None) -> None:
    """Snapshot ``source`` (a Spark DataFrame or table name; default ``name``) to Parquet, check
    it once, mirror its schema in the catalog of record and record where the snapshot is (see
    the module docstring)."""
    backend = con._engine
    if isinstance(backend, DuckDBBackend):
        raise NotSupportedError(
            "attach keys a table of an external engine to this catalog; this connection reads its "
            "own DuckDB database (open it with provsql_dp.connect(..., engine=spark_session))")
    if con.read_only:
        raise NotSupportedError("attach writes the catalog of record; this connection is read-only")
    primary_key, checks = tuple(primary_key), tuple(checks)
    duck = con._duck
    duck.execute(f"CREATE TABLE IF NOT EXISTS {_TABLE} (table_name VARCHAR PRIMARY KEY, "
                 "source VARCHAR, primary_key VARCHAR[])")
    _upgrade(con)
    prev = duck.execute(f"SELECT max(version) FROM {_TABLE} WHERE lower(table_name) = lower(?)",
                        [name]).fetchone()[0]
    number = (prev or 0) + 1
    db = duck.execute("SELECT path FROM duckdb_databases() WHERE database_name = "
                      "current_database()").fetchone()[0]
    path = snapshot if snapshot is not None else snapshot_path(db, name, number)
    columns = backend.attach(name, source, primary_key, checks, path, version)
    ddl = ", ".join(f'{_q(c)} {t}' for c, t in columns)
    if primary_key:
        ddl += f", PRIMARY KEY ({', '.join(_q(c) for c in primary_key)})"
    ddl += "".join(f", CHECK ({c})" for c in checks)
    quoted = '"' + name.replace('"', '""') + '"'
    duck.execute(f"CREATE OR REPLACE TABLE {quoted} ({ddl})")
    old = duck.execute(f"SELECT version, snapshot FROM {_TABLE} WHERE table_name = ?",
                       [name]).fetchall()
    duck.execute(f"DELETE FROM {_TABLE} WHERE table_name = ?", [name])
    # a DataFrame has no name: recorded without a source (its snapshot is what later
    # connections read; a scratch snapshot of an in-memory catalog is not recorded)
    recorded = name if source is None else source if isinstance(source, str) else None
    duck.execute(f"INSERT INTO {_TABLE} (table_name, source, primary_key, checks, snapshot, "
                 "version, attached_at, source_version) VALUES (?, ?, ?, ?, ?, ?, now(), ?)",
                 [name, recorded, list(primary_key), list(checks), path, number,
                  backend.source_version])
    backend.__dict__.setdefault("recorded_versions", {})[name.lower()] = number
    retire(con, name, [(v, p) for v, p in old if p is not None and p != path])


#: older snapshot versions of re-attached tables, until :func:`vacuum_snapshots` removes them
_RETIRED = f"{SCHEMA}.engine_snapshots_retired"


def retire(con, name: str, versions: list[tuple[int, str]]) -> None:
    """Record the snapshots ``(version, path)`` that table ``name`` no longer reads, then
    remove every retired snapshot no open connection reads — unless a transaction is open
    (a rollback could bring the record back: they are removed at a later attach or
    :func:`vacuum_snapshots`)."""
    duck = con._duck
    duck.execute(f"CREATE TABLE IF NOT EXISTS {_RETIRED} (table_name VARCHAR, version BIGINT, "
                 "snapshot VARCHAR, retired_at TIMESTAMPTZ)")
    for version, path in versions:
        duck.execute(f"INSERT INTO {_RETIRED} VALUES (?, ?, ?, now())", [name, version, path])
    if not con._in_tx:
        vacuum_snapshots(con)


def vacuum_snapshots(con) -> list[str]:
    """(A curator's, on a writable catalog: ``engines.vacuum_snapshots(con)``.) Remove the
    retired snapshots (older versions of re-attached tables) that no open connection reads (:mod:`provsql_dp.provenance.backends._snapshot_leases`); return their
    paths. One still read, or not on the local file system, stays recorded in
    ``_provsql_dp.engine_snapshots_retired`` for a later call."""
    from ...provenance.backends import _snapshot_leases as leases

    con._check_open()
    con._require_curator("removing snapshots")
    if con.read_only:
        raise NotSupportedError("removing snapshots writes the catalog of record; this "
                                "connection is read-only")
    duck = con._duck
    if not duck.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND "
                        "table_name = 'engine_snapshots_retired'", [SCHEMA]).fetchall()[0][0]:
        return []
    current = {r[0] for r in duck.execute(f"SELECT snapshot FROM {_TABLE}").fetchall()}
    gone = []
    for (path,) in duck.execute(f"SELECT DISTINCT snapshot FROM {_RETIRED}").fetchall():
        if path in current or (leases.local(path) is not None and leases.remove(path)):
            duck.execute(f"DELETE FROM {_RETIRED} WHERE snapshot = ?", [path])
            if path not in current:
                gone.append(path)
    return sorted(gone)


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def refuse_mirrored(con, stmt: str) -> None:
    """Refuse plain SQL that names a table attached from another engine: in DuckDB it is an empty
    mirror, and an empty answer would be wrong without saying so."""
    name = attached_table(con._engine, stmt)
    if name is not None:
        raise NotSupportedError(
            f"table {name} is attached from Spark: its rows are not in the DuckDB "
            f"catalog. Ask a private query (… WITH EPSILON ε), or read it through Spark "
            f"(spark.table({name!r}))")
