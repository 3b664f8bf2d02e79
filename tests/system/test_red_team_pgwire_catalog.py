"""Red team h73attack, finding 4: one analyst's catalog query aborted the wire server.

A query that reads ``pg_catalog`` or ``information_schema`` runs, as the client wrote it, on the
server's schema replica (an in-memory DuckDB holding names and types only, shared by every
session). Only ``query``/``query_table`` were kept from it among table functions, and its
configuration was not locked. So an analyst could run ``SELECT * FROM enable_logging(storage =
'file', storage_path = '/x'), pg_catalog.pg_namespace``: DuckDB accepted the logging setting
(a table function, not a SET), and the next catalog query of any session threw a
PermissionException through DuckDB's C++ — ``terminate called``, SIGABRT: the whole server
and every client's session gone. Now the replica's configuration is locked after its guards,
and a catalog query may call only the table functions drivers use (``generate_series``,
``unnest``, ``range``, ``generate_subscripts``, the compatibility schema's macros); any other
sends the statement down the path of every statement, where an analyst's is refused.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import duckdb
import pytest

from provsql_dp.errors import ProgrammingError
from provsql_dp.interfaces.pgwire._catalog import Replica, is_catalog_query

SIDE_EFFECTS = (
    "SELECT * FROM enable_logging(storage = 'file', storage_path = '/nonexistent/x'), "
    "pg_catalog.pg_namespace",
    "SELECT * FROM enable_profiling(format = 'json', save_location = '/nonexistent/p.json'), "
    "pg_catalog.pg_namespace",
    "SELECT * FROM checkpoint(), information_schema.tables",
    "SELECT * FROM duckdb_settings() s JOIN pg_catalog.pg_type t ON true",
    "SELECT * FROM json_execute_serialized_sql('{}'), pg_catalog.pg_type",
)


@pytest.mark.parametrize("sql", SIDE_EFFECTS)
def test_a_table_function_with_effects_is_not_a_catalog_query(sql):
    assert not is_catalog_query(sql)


@pytest.mark.parametrize("sql", [
    "SELECT * FROM generate_series(1, 3) g, pg_catalog.pg_type t LIMIT 1",
    "SELECT t.typname FROM pg_catalog.pg_type t, unnest(ARRAY[1, 2]) AS u(i) LIMIT 1",
    "SELECT * FROM range(2), information_schema.schemata",
])
def test_drivers_table_functions_still_are(sql):
    assert is_catalog_query(sql)


def test_the_replicas_configuration_is_locked():
    source = duckdb.connect()
    source.execute("CREATE TABLE t(a INT)")
    replica = Replica()
    cur = replica.cursor(source)
    for attack in ("SELECT * FROM enable_logging(level = 'trace')",
                   "SELECT * FROM enable_logging(storage = 'file', storage_path = '/nonexistent/x')"):
        with pytest.raises(ProgrammingError, match="table function ENABLE_LOGGING"):
            replica.run(cur, attack)  # not run: the replica runs only what emitted() makes
        with pytest.raises(duckdb.Error, match="locked"):  # and would not take it (our own text)
            cur.execute(attack)
    cur.close()
    cur = replica.cursor(source)  # the next session's catalog query is answered
    assert replica.run(cur, "SELECT table_name FROM information_schema.tables "
                            "WHERE table_schema = 'main'")[1] == [("t",)]


_SERVER = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {support!r})
    import psycopg
    from pgwire_support import dsn, make_database, running_server
    path = os.path.join({tmp!r}, "w.duckdb")
    make_database(path)
    with running_server(path) as server:
        with psycopg.connect(dsn(server, "ann"), autocommit=True) as ann, \\
                psycopg.connect(dsn(server, "bob"), autocommit=True) as bob:
            try:
                ann.execute({attack!r}).fetchall()
            except psycopg.Error as e:
                print("refused:", str(e).splitlines()[0])
            print("bob:", bob.execute("SELECT nspname FROM pg_catalog.pg_namespace "
                                      "WHERE nspname = 'main'").fetchall())
""")


@pytest.mark.slow
def test_an_analysts_catalog_query_does_not_abort_the_server(tmp_path):
    pytest.importorskip("psycopg")
    code = _SERVER.format(support=os.path.dirname(__file__), tmp=str(tmp_path),
                          attack=SIDE_EFFECTS[0])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, f"the server process died ({done.returncode}): {done.stderr[-600:]}"
    assert "refused: an analyst cannot use the table function" in done.stdout
    assert "bob: [('main',)]" in done.stdout
