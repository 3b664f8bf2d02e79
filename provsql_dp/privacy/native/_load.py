"""Open a DuckDB database with ``pdp_buckets`` loaded when it is built (see the package docstring).

DuckDB accepts an unsigned extension only when the database instance was *created* with
``allow_unsigned_extensions`` (it cannot be turned on later), and loads no file at all once
``enable_external_access`` is off. So :func:`open_duckdb` creates the instance with the
caller's config minus those two settings and ``lock_configuration``, plus
``allow_unsigned_extensions = true``; loads this package's one file by its absolute path; then
sets the held-back settings to the values the caller asked for (``allow_unsigned_extensions``
back to false unless the caller set it), ``lock_configuration`` last. Every provsql_dp connection
to a file of this process opens it with the same transformed config, so DuckDB's instance cache
(one instance per file and config) serves them all; a file the caller opened otherwise in this
process is opened as before, and has ``pdp_buckets`` only if that instance loaded it.
"""

from __future__ import annotations

import os
import warnings

import duckdb

from ._build import built_path, verify

__all__ = ["open_duckdb", "has_native"]

#: the settings applied after the load, in this order (lock_configuration last), with DuckDB's
#: defaults
_HELD = (("enable_external_access", True), ("allow_unsigned_extensions", False),
         ("lock_configuration", False))


def has_native(duck: duckdb.DuckDBPyConnection) -> bool:
    """Whether ``pdp_buckets`` is registered in ``duck``'s database instance: bound with no
    arguments, it exists when DuckDB finds no matching overload (a Binder error) and not when
    it finds no such name (a Catalog error). 0.1–0.3 ms, where a scan of ``duckdb_functions()``
    cost ~35 ms — most of a connection's opening — and ``duckdb_extensions()`` reads the
    extension directory, which an analyst's guarded connection may not."""
    try:
        duck.execute("SELECT pdp_buckets()")
    except duckdb.BinderException:
        return True
    except duckdb.CatalogException:
        return False
    return True  # pragma: no cover - a zero-argument overload would be ours too


def open_duckdb(database: str, read_only: bool = False, config: dict | None = None):
    """``(connection, native)``: ``duckdb.connect(database, read_only, config)`` with
    ``pdp_buckets`` loaded when it is built (``native``: the aggregate is there). Raises what
    ``duckdb.connect`` raises."""
    config = dict(config or {})
    # PROVSQL_DP_NATIVE=0: the SQL pass on every engine (benchmarks, a suspected native fault)
    path = None if os.environ.get("PROVSQL_DP_NATIVE", "1") == "0" else built_path()
    damage = None if path is None else verify(path)
    if damage is not None:  # DuckDB checks only the footer: a damaged body would crash dlopen;
        # a file others can write is not loaded either (native._trust)
        warnings.warn(f"provsql_dp: the native bucket pass {path} is not loaded ({damage}); the "
                      "SQL pass runs. Rebuild it (provsql-dp build-native --force) or fix what "
                      "is said", RuntimeWarning, stacklevel=3)
        path = None
    if path is None:
        return duckdb.connect(database, read_only=read_only, config=config), False
    first = {k: v for k, v in config.items() if k not in dict(_HELD)}
    first["allow_unsigned_extensions"] = True
    try:
        duck = duckdb.connect(database, read_only=read_only, config=first)
    except duckdb.ConnectionException as e:
        if "different configuration" not in str(e):
            raise
        # the file is open in this process with another config (not by provsql_dp with this
        # build): opened as before, the SQL pass unless that instance loaded the aggregate
        duck = duckdb.connect(database, read_only=read_only, config=config)
        return duck, has_native(duck)
    try:
        if not has_native(duck):  # a second connection to the instance finds it loaded
            try:
                duck.execute("LOAD '" + str(path.resolve()).replace("'", "''") + "'")
            except duckdb.Error as e:  # a damaged build: the SQL pass, said once per open
                warnings.warn(f"provsql_dp: the native bucket pass {path} did not load ({e}); "
                              "the SQL pass runs. Rebuild it: provsql-dp build-native --force",
                              RuntimeWarning, stacklevel=3)
        for key, default in _HELD:
            want = config.get(key, default)
            now = duck.execute("SELECT current_setting(?)", [key]).fetchone()[0]
            if bool(now) != bool(want):
                duck.execute(f"SET {key} = {'true' if want else 'false'}")
    except BaseException:
        duck.close()
        raise
    return duck, has_native(duck)
