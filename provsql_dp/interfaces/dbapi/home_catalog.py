"""provsql_dp's own schema stays reachable after the curator's ``USE <attached database>``.

Every internal statement names ``_provsql_dp.<table>`` without a database: DuckDB finds it in
the *current* database. After ``USE o`` (or ``SET search_path`` to another database's schemas)
the current database is ``o``, where no ``_provsql_dp`` lives, and the next statement that reads
the declarations (``CREATE TABLE t AS SELECT …``, ``SHOW PROTECTED``, a private query) failed with
"_provsql_dp.owner_references does not exist". :func:`keep_reachable` appends the home
database's ``_provsql_dp`` schema (the database the connection opened, where the catalog and the
ledger live) to the search path, which DuckDB also reads for a schema-qualified name; the
curator's own names still resolve first in the database they chose.

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

__all__ = ["home_database", "keep_reachable", "moves_search_path"]


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


def keep_reachable(con) -> None:
    """After a statement of :func:`moves_search_path`: when the current database is not the
    home one, the home ``_provsql_dp`` schema is put at the end of the search path."""
    home = getattr(con, "_home_database", None)
    if home is None:
        return
    duck = con._duck
    current, path = duck.execute(
        "SELECT current_database(), current_setting('search_path')").fetchone()
    if current == home:
        return
    entry = '"{}".{}'.format(home.replace('"', '""'), SCHEMA)
    if entry in path.split(","):
        return
    if not path:  # an empty path reads the current database's main schema
        path = '"{}".main'.format(current.replace('"', '""'))
    duck.execute("SET search_path = " + "'" + f"{path},{entry}".replace("'", "''") + "'")
