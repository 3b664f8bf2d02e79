"""What the checks of a curator's writes read of the catalog, kept per connection between
statements.

Before a curator's write runs, :mod:`.protected_copies` looks for the name of a protected table,
a view or a macro in its text, and :mod:`.declared_drops` for the name of a table a declaration
names (a drop, a replacement, or an orphan's name taken). Read on every statement, the
protections, the declarations and the macros made each write of a test's setup two to three
times as slow (``INSERT … SELECT`` 0.7 → 2.4 ms, ``CREATE TABLE`` 4.4 → 7.7 ms: the default CI
step by two minutes). So each connection keeps them, and reads them again once this process's
names generation (:func:`provsql_dp.sql._catalog_kept.names_changed`) has moved: every
declaration bumps it, and so does every statement through any provsql_dp connection of the
process that may change them (:func:`may_change_names`: all but plain data writes and ``CREATE
TABLE``) and every transaction's end (what it declared, or undid, is then seen or gone). The
views are not kept (``duckdb_views()``, ~0.4 ms): one made by DuckDB's own client is seen at
once, as before. A macro or a declaration made by DuckDB's own client is seen once a statement
through provsql_dp bumps the generation (as what the catalog keeps:
:meth:`provsql_dp.sql.catalog.Catalog.snapshot`).

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE people(id INT PRIMARY KEY)")
>>> reads = []
>>> kept(con, "n", lambda c: reads.append(1) or len(c.catalog.list_protected()))
0
>>> _ = con.execute("INSERT INTO people VALUES (1)")  # a data write: still kept
>>> kept(con, "n", lambda c: reads.append(1) or len(c.catalog.list_protected())), len(reads)
(0, 1)
>>> _ = con.execute("PROTECT TABLE people")  # a declaration: read again
>>> kept(con, "n", lambda c: reads.append(1) or len(c.catalog.list_protected())), len(reads)
(1, 2)
"""

from __future__ import annotations

import re

from ...sql._catalog_kept import names_generation

__all__ = ["kept", "may_change_names"]

#: the words of a statement that may change what is kept: create, drop or bring in macros
#: (``MACRO``, ``FUNCTION``, ``ATTACH``, ``USE``, ``IMPORT``, ``LOAD``…), change what a name
#: resolves to (``DROP``, ``ALTER``), end a transaction (``COMMIT``, ``ROLLBACK``), or write
#: provsql_dp's own catalog tables (which a curator can)
_CHANGES = re.compile(r"\b(MACRO|FUNCTION|ATTACH|DETACH|USE|IMPORT|LOAD|INSTALL|PRAGMA|CALL|"
                      r"DROP|ALTER|COMMIT|ROLLBACK|ABORT|_provsql_dp|protected|owner_references|"
                      r"column_bounds|group_keys|policies)\b", re.IGNORECASE)
#: a setting (``SET search_path``): not in a data write (``UPDATE t SET …``)
_SETTINGS = re.compile(r"\b(SET|RESET)\b", re.IGNORECASE)


def may_change_names(stmt: str, kind: str) -> bool:
    """Whether ``stmt`` (of :func:`.statements.statement_kind` ``kind``), run through provsql_dp,
    may change what :func:`kept` keeps: every connection of the process then reads it again.
    Errs on the side of yes (a word in a string literal counts).

    >>> may_change_names("INSERT INTO t SELECT * FROM range(3)", "dml")
    False
    >>> may_change_names("CREATE MACRO m() AS TABLE SELECT 1", "other")
    True
    >>> may_change_names("END", "end"), may_change_names("DELETE FROM _provsql_dp.protected", "dml")
    (True, True)
    >>> may_change_names("UPDATE t SET x = 1", "dml"), may_change_names("SET search_path = 's'", "other")
    (False, True)
    """
    return kind == "end" or _CHANGES.search(stmt) is not None or (
        kind != "dml" and _SETTINGS.search(stmt) is not None)


def kept(con, key: str, read):
    """``read(con)``, kept on connection ``con`` under ``key`` while this process's names
    generation stands (read before ``read`` runs: a change racing with it is seen next time)."""
    generation = names_generation()
    held = getattr(con, "_guard_names", None)
    if held is None or held[0] != generation:
        held = con._guard_names = (generation, {})
    if key not in held[1]:
        held[1][key] = read(con)
    return held[1][key]
