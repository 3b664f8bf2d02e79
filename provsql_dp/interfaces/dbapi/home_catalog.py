"""provsql_dp's own schema stays reachable after the curator's ``USE <attached database>``.

Every internal statement names ``_provsql_dp.<table>`` without a database: DuckDB finds it in
the *current* database. After ``USE o`` (or ``SET search_path`` to another database's schemas)
the current database is ``o``, where no ``_provsql_dp`` lives, and the next statement that reads
the declarations (``CREATE TABLE t AS SELECT …``, ``SHOW PROTECTED``, a private query) failed with
"_provsql_dp.owner_references does not exist". Away from the home database (the one the
connection opened, where the catalog and the ledger live), :func:`keep_reachable` appends the
home ``_provsql_dp`` schema to the search path, which DuckDB also reads for a schema-qualified
name. The curator's own statements run under the search path they chose (:func:`as_curator`):
an unqualified ``DROP TABLE budget`` never reaches the ledger's table through the appended entry.

>>> import os, tempfile, provsql_dp
>>> d = tempfile.mkdtemp()
>>> con = provsql_dp.connect(os.path.join(d, "home.duckdb"))
>>> _ = con.execute(f"ATTACH '{os.path.join(d, 'other.duckdb')}' AS o")
>>> _ = con.execute("USE o")
>>> _ = con.execute("CREATE TABLE t AS SELECT 1 AS a")
>>> con.execute("SELECT database_name FROM duckdb_tables() WHERE table_name = 't'").fetchall()
[('o',)]
"""

from __future__ import annotations

from ...sql.catalog import SCHEMA

__all__ = ["as_curator", "home_database", "keep_reachable", "moves_search_path", "reach_home"]


def home_database(duck) -> str | None:
    """The database the connection opened (its catalog and ledger live there), or None."""
    try:
        return duck.execute("SELECT current_database()").fetchone()[0]
    except Exception:  # noqa: BLE001 - another engine (Spark): no attached databases to USE
        return None


def moves_search_path(stmt: str) -> bool:
    """Whether ``stmt`` may change the current database or the search path (USE, SET, RESET)."""
    words = stmt.lstrip().split(None, 1)
    return bool(words) and words[0].upper().rstrip(";") in ("USE", "SET", "RESET")


def _set_path(duck, path: str) -> None:
    duck.execute("SET search_path = '" + path.replace("'", "''") + "'")


def _entry(con) -> str:
    return '"{}".{}'.format(con._home_database.replace('"', '""'), SCHEMA)


def keep_reachable(con) -> None:
    """After a statement of :func:`moves_search_path`: away from the home database, the
    curator's search path is kept (``con._curator_path``) and the home ``_provsql_dp`` schema is
    put at its end; back home, nothing is added."""
    if getattr(con, "_home_database", None) is None:
        return
    current, path = con._duck.execute(
        "SELECT current_database(), current_setting('search_path')").fetchone()
    if current == con._home_database:
        con._curator_path = None
        return
    if not path:  # an empty path reads the current database's main schema
        path = '"{}".main'.format(current.replace('"', '""'))
    entry = _entry(con)
    con._curator_path = ",".join(p for p in path.split(",") if p != entry)
    _set_path(con._duck, f"{con._curator_path},{entry}")


def reach_home(con) -> None:
    """Before a statement, away from home: the home schema on the search path again (a
    restore that an aborted transaction refused is made here)."""
    if getattr(con, "_curator_path", None) is not None:
        try:
            _set_path(con._duck, f"{con._curator_path},{_entry(con)}")
        except Exception:  # noqa: BLE001 - an aborted transaction: the statement itself says so
            pass  # and rolls it back (cursor._passthrough); the next statement sets the path


def as_curator(con, stmt: str, run):
    """``run()`` (the curator's statement) under the curator's own search path, the home
    schema put back afterwards (or at the next statement, :func:`reach_home`)."""
    path = getattr(con, "_curator_path", None)
    if path is None:
        return run()
    _set_path(con._duck, path)
    try:
        return run()
    finally:
        if not moves_search_path(stmt):  # a USE: keep_reachable reads the new path
            try:
                _set_path(con._duck, f"{path},{_entry(con)}")
            except Exception:  # noqa: BLE001 - an aborted transaction: reach_home restores it
                pass
