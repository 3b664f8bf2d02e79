"""Whether what a catalog kept between statements is still the database's: the definitions of
the tables it read, recorded as they were when read.

:meth:`provsql_dp.sql.catalog.Catalog.snapshot` keeps its reads while the database's fingerprint
(the generation, the search path, the definitions of the tables of every name looked up) is
unchanged. A name first looked up by a statement joins the fingerprint at the next one, and the
memo is kept when the fingerprints differ only by such new names — which is right only if those
tables are defined now as they were when read. A table redefined outside provsql_dp in between
(a plain DuckDB connection bumps no generation) was planned from its old definition for as long
as the connection lived: a dropped PRIMARY KEY still gave one row per participant, a Laplace
release at sensitivity 1 for a participant owning thousands of rows (red team h63attack,
finding 5). So each name's definitions are recorded when it is first read
(:func:`read_definitions`, before its columns: a change racing with the read makes them differ
later, never agree wrongly), and :func:`read_as_kept` compares them with the new fingerprint.

>>> import duckdb
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE t(id INT PRIMARY KEY)")
>>> memo = {("defined", "t"): read_definitions(con, "t")}
>>> now = (("t",), ("g", "1"), *read_definitions(con, "t"))
>>> read_as_kept(memo, ((), ("g", "1")), now)
True
>>> _ = con.execute("DROP TABLE t; CREATE TABLE t(id INT)")
>>> read_as_kept(memo, ((), ("g", "1")), (("t",), ("g", "1"), *read_definitions(con, "t")))
False
"""

from __future__ import annotations

import secrets
import threading

import duckdb

__all__ = ["fingerprint", "Prepared", "settings_of", "SETTINGS", "KEPT_ENTRIES",
           "read_definitions", "read_as_kept", "locked", "names_changed", "names_generation"]

#: the DuckDB settings the fingerprint reads: the search path and the default collation (which
#: decides what ``=`` of strings proves: ``sql._not_null.collated_columns``), then those a private
#: release relies on (``privacy._session_settings.PINNED``: checked from this read, which saves a
#: query per statement; a pinned setting missing here is read by the check itself)
SETTINGS = ("search_path", "default_collation", "ieee_floating_point_ops", "integer_division",
            "max_execution_time", "default_order", "default_null_order")

#: how many of SETTINGS a locked configuration fixes for good: all but the first, the search
#: path (DuckDB lets it be SET under ``lock_configuration``, and ``USE`` changes it); the lock
#: itself cannot be undone (``SET lock_configuration = false`` is refused like any other SET)
_FREE = 1

#: at most this many entries are kept between statements (a statement starts afresh past it).
#: Each distinct private text keeps its plan, route and SQL (~5 KiB: 10^5 texts, ~0.5 GB), and
#: each name looked up joins every later fingerprint query (3000 names not found: 9 s per 1000
#: statements, then 17 s, then 24 s); unbounded before (red team h75cache, finding 1)
KEPT_ENTRIES = 4096

#: the fingerprint's rows of the tables of one name (``fingerprint`` reads them alike)
_SQL = ("SELECT 't', database_name, schema_name, table_name, sql FROM duckdb_tables() "
        "WHERE lower(table_name) = lower(?)")


def locked(con) -> bool:
    """Whether ``con``'s DuckDB configuration is locked (``lock_configuration``), for good: the
    values of ``SETTINGS[1:]`` read after this said True are theirs for as long as the database
    is open (:func:`fingerprint`'s ``fixed``)."""
    try:
        return con.execute("SELECT current_setting('lock_configuration')").fetchone()[0] is True
    except duckdb.Error:
        return False


class Prepared:
    """One text of ours kept as a DuckDB prepared statement on one connection, under a name of
    its own (``_provsql_dp_fp_`` and 16 random hexadecimal digits): :meth:`rows` runs ``EXECUTE``
    of it, prepared again when the text changes. Only for a text whose every value DuckDB reads
    when it runs — a table function's rows, ``currval``, ``current_setting``,
    ``current_schema()`` — never one whose meaning a setting fixes when it is bound: a prepared
    statement is bound again after a catalog change but not after a ``SET`` (``7 / 2`` keeps
    the ``integer_division`` it was prepared under, a ``TIMESTAMPTZ`` literal its ``TimeZone``,
    ``=`` of strings its collation; ``tests/unit/sql/test_catalog_kept_prepared.py``).

    The fingerprint's text is the same from one statement to the next (it changes when a name
    joins it): prepared, DuckDB binds it once instead of every statement, ~0.25 ms of its
    ~1.05 ms (``EXECUTE`` 0.80 against 1.03–1.09 ms warm, 1.70 against 1.97 right after a
    10^7-row ``SUM``, median of 400 and of 40, measured interleaved). An analyst cannot reach
    it: ``PREPARE``, ``EXECUTE``, ``DEALLOCATE`` and ``duckdb_prepared_statements()`` are
    refused to analysts. A statement dropped behind our back (``DEALLOCATE`` by the curator)
    or failing (an aborted transaction) is run once as text, and prepared again next time.

    >>> import duckdb
    >>> con = duckdb.connect()
    >>> kept = Prepared()
    >>> kept.rows(con, "SELECT current_setting('integer_division')")
    [(False,)]
    >>> _ = con.execute("SET integer_division = true")
    >>> kept.rows(con, "SELECT current_setting('integer_division')")  # read when it runs
    [(True,)]
    """

    def __init__(self):
        self.name = "_provsql_dp_fp_" + secrets.token_hex(8)
        self.text: str | None = None  # the text prepared under ``name`` now, if any

    def rows(self, con, text: str) -> list:
        """The rows of ``text`` on ``con`` (a ``duckdb.Error`` as running the text raises)."""
        try:
            if self.text != text:
                self.text = None
                con.execute(f"PREPARE {self.name} AS {text}")
                self.text = text
            return con.execute(f"EXECUTE {self.name}").fetchall()
        except duckdb.Error:
            self.text = None  # prepared again next time: run as text now
        return con.execute(text).fetchall()


def fingerprint(con, names: tuple[str, ...], schema: str,
                fixed: tuple | None = None, prepared: Prepared | None = None) -> tuple | None:
    """(names, the generation row, the definitions of the tables of those names), or None when
    the database has no generation sequence (a read-only database from an older version), or it
    was never bumped, or the read fails (an aborted transaction). The generation row is
    ``('g', generation, current database, current schema, the value of each of SETTINGS)``. Tables only: the definitions decide a plan's sensitivity (keys, owner columns); a
    view redefined behind provsql_dp's back (provsql_dp bumps the generation when it runs the
    change itself) leaves a plan answering the view's old query, with that query's sensitivity.
    One query, about 1 ms (the generation by ``currval``, which reads the sequence's last value
    whichever connection bumped it, committed or not, like ``duckdb_sequences().last_value``,
    in half the time): one row, the tables' rows as a list in its last column (~0.1 ms less
    than the generation row ``UNION ALL`` the tables' rows, measured interleaved: 1.10 against
    1.20 ms CPU). ``duckdb_tables()`` lists every table of the database whatever the filter:
    ~7 µs a table (1000 tables: ~7.5 ms). ``fixed``: the values of ``SETTINGS[1:]`` read after
    :func:`locked` said True, which no statement can change since: only the search path is read
    (the six current_setting calls cost ~0.2 ms a statement). ``prepared``: run as that
    :class:`Prepared` statement of ``con`` (the same rows, bound once).

    >>> import duckdb
    >>> con = duckdb.connect()
    >>> _ = con.execute("CREATE SCHEMA s; CREATE SEQUENCE s.generation; CREATE TABLE t(x INT)")
    >>> fingerprint(con, ("t",), "s") is None  # never bumped
    True
    >>> _ = con.execute("SELECT nextval('s.generation')")
    >>> key = fingerprint(con, ("t",), "s")
    >>> key[1][:4], key[2]
    (('g', '1', 'memory', 'main'), ('t', 'memory', 'main', 't', 'CREATE TABLE t(x INTEGER);'))
    >>> settings_of(key)["integer_division"], settings_of(key)["default_order"]
    (False, 'ASCENDING')
    >>> _ = con.execute("SET lock_configuration = true")
    >>> locked(con) and fingerprint(con, ("t",), "s", key[1][5:]) == key
    True
    """
    read = SETTINGS if fixed is None else SETTINGS[:_FREE]
    values = ", ".join(f"current_setting('{s}')" for s in read)
    sql = (f"SELECT 'g', currval('{schema}.generation')::VARCHAR, current_database(), "
           f"current_schema(), {values}")
    if names:  # literals, not parameters: a prepared statement costs twice as much here
        listed = ", ".join("'" + n.replace("'", "''") + "'" for n in names)
        sql += (", list([database_name, schema_name, table_name, sql]) FROM duckdb_tables() "
                f"WHERE lower(table_name) IN ({listed})")  # one row, whatever matches
    try:  # fetchall: a result left unfinished refuses the connection's relation API
        found = con.execute(sql).fetchall() if prepared is None else prepared.rows(con, sql)
    except duckdb.Error:
        return None
    row = found[0] if len(found) == 1 else None
    if row is None or row[0] != "g":
        return None
    tables = [("t", *t) for t in row[-1] or ()] if names else []  # as read_definitions'
    rows = [(row[:-1] if names else row) + (fixed or ()), *tables]
    return (names, *sorted(rows, key=repr))


def settings_of(key: tuple) -> dict:
    """The values of :data:`SETTINGS` in fingerprint ``key``, as DuckDB gives them (a BOOLEAN
    setting as a bool, a number as an int)."""
    row = next(r for r in key[1:] if r[0] == "g")
    return dict(zip(SETTINGS, row[4:]))


def read_definitions(con, name: str) -> tuple:
    """The definitions of the tables named ``name`` (any schema), as the fingerprint has them."""
    return tuple(sorted(con.execute(_SQL, [name]).fetchall(), key=repr))


def read_as_kept(memo: dict, old: tuple | None, new: tuple) -> bool:
    """Whether each name of fingerprint ``new`` that ``old`` lacks has, in ``new``, the
    definitions ``memo`` recorded when the name was first read (none recorded: no)."""
    known = set(old[0]) if old else set()
    for name in set(new[0]) - known:
        recorded = memo.get(("defined", name))
        now = tuple(sorted((r for r in new[1:] if r[0] == "t" and r[3].lower() == name), key=repr))
        if recorded is None or recorded != now:
            return False
    return True


_names = [0]  # the names generation of this process (below)
_names_lock = threading.Lock()


def names_changed() -> None:
    """Bump this process's names generation: a statement through some provsql_dp connection of
    the process may have changed a declaration, a macro or what a name resolves to
    (:meth:`.catalog.Catalog.changed`, for every declaration and every statement but plain data
    writes). What a connection keeps of them between statements
    (:mod:`provsql_dp.interfaces.dbapi.guard_names`) is read again once it moved. A process
    alone writes a DuckDB file (DuckDB's lock), so every writer of the declarations bumps it.

    >>> before = names_generation(); names_changed(); names_generation() > before
    True
    """
    with _names_lock:
        _names[0] += 1


def names_generation() -> int:
    """This process's names generation (:func:`names_changed`)."""
    return _names[0]
