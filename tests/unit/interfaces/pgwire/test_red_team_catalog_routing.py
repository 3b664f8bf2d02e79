"""Red team h63attack, finding 4: which statements the wire server answers from the rowless
schema replica (``pgwire._catalog.is_catalog_query``). The replica holds no rows, so nothing it
answers can reveal protected data — but a query that reads the database's rows and is sent
there gets a *wrong* answer (no rows, a count of 0) instead of the database's answer or a
refusal. h57attack closed the plain case (a table of the database beside a catalog function);
these shapes still reached the replica:

* a CTE named like the table it reads (``WITH depts AS (SELECT * FROM depts) …``): the name
  inside its own (non-recursive) body is the database's table, not the CTE;
* a relation of the database whose name starts with ``pg_`` (``pg_mytable``): only the names
  of the replica's catalog (``pg_class``, ``pg_type``, … and the compatibility views) are its;
* ``query('SELECT … FROM depts')`` and ``query_table('depts')``: table functions that read a
  table of the database named in a string.
"""

from __future__ import annotations

import pytest

from provsql_dp.interfaces.pgwire._catalog import is_catalog_query


@pytest.mark.parametrize("stmt", [
    "WITH depts AS (SELECT * FROM depts) SELECT * FROM depts WHERE version() IS NOT NULL",
    "WITH a AS (SELECT 1), depts AS (SELECT * FROM depts) SELECT * FROM depts, pg_class",
    "SELECT * FROM pg_mytable WHERE version() IS NOT NULL",
    "SELECT * FROM query('SELECT * FROM depts') WHERE version() IS NOT NULL",
    "SELECT * FROM query_table('depts') WHERE version() IS NOT NULL",
    "SELECT * FROM QUERY_TABLE(['depts']), pg_class",
])
def test_reads_of_the_database_are_not_answered_from_the_replica(stmt):
    assert not is_catalog_query(stmt)


@pytest.mark.parametrize("stmt", [
    "WITH depts AS (SELECT oid FROM pg_type) SELECT * FROM depts",         # the CTE itself
    "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) "
    "SELECT * FROM r, pg_class",
    "SELECT * FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace",
    "SELECT * FROM pg_settings WHERE name = 'x'", "SELECT * FROM pg_tables",
    "SELECT * FROM pg_roles", "SELECT * FROM pg_user",
    "SELECT * FROM generate_series(1, 3), pg_type",
])
def test_catalog_reads_still_are(stmt):
    assert is_catalog_query(stmt)
