"""Red team h103attack: attacks on main after session 9 (declared drops, the wire's catalog
replica, one thread a connection, streams' sensitivity, issue 28's analyst SQL).

Finding 1 — a text DuckDB reads as more statements than provsql_dp does. provsql_dp splits a
text on its tokenizer's semicolons; DuckDB's parser quotes a name in backticks (```a b```), which
the tokenizer does not, so ``SELECT 1 `--`; DROP TABLE people`` was one statement for provsql_dp
(``--`` opening a comment to the end of the line) and two for DuckDB. A curator's text of that
form ran a ``DROP TABLE`` of a protected table past :mod:`provsql_dp.interfaces.dbapi.declared_drops`
(and past every check read from the statement's first words), leaving its declarations behind.

Finding 2 — the same text on the wire, as an analyst's catalog query: the schema replica (one
in-memory DuckDB shared by every session of the server) ran every statement of it, so an analyst
could ``DROP SCHEMA pgcompat CASCADE`` there (every later catalog query of every session failed
until the schema changed: psql's ``\\d``, JDBC's metadata) or ``CREATE MACRO``/``CREATE TABLE`` to
change the catalog answers other analysts get — with nothing in the audit log (a catalog query
that succeeds writes nothing). The replica now runs one read-only statement, as DuckDB reads it.

Finding 3 — an ENUM column's labels are data when the curator loaded them from data. A pandas
``Categorical`` column (``CREATE TABLE people AS SELECT * FROM df``) becomes a DuckDB ENUM whose
labels are the column's distinct values; ``CREATE TYPE t AS ENUM (SELECT DISTINCT …)`` does the
same. Protected, the table showed them to every analyst for nothing (``DESCRIBE``, ``SHOW t``,
``SHOW ALL TABLES``, psql's ``\\d``), and the policy route took them as the column's public domain
(a histogram released one bin per label: 'bob-hiv' present because one participant has it). Now
``PROTECT TABLE`` of a table with an ENUM column, and an ``ALTER TABLE`` giving a protected table
one, are refused unless the curator says the labels are public (``SET GROUP KEYS`` on the column),
with the way out: cast the column to VARCHAR.

Finding 4 — a stream's release failed or not by one participant's row. ``PUBLISH STREAM`` derived
the sensitivity from the planner's plan, whose expressions are made total (``1 // (pay - 5)`` is
NULL on the row where it would fail), but ran the curator's query as written: with a participant
whose ``pay`` is 5 the step failed ("the statistic failed: Division by zero"), without it the step
was released — and ``SHOW STREAMS``, which analysts may run, shows which steps were. Where the
planner derives the sensitivity, the stream now runs the planner's statistic (the one a private
query releases: total expressions, the SUM clamped).
"""

from __future__ import annotations

import duckdb
import psycopg
import pytest

import provsql_dp
from provsql_dp.errors import ProgrammingError
from provsql_dp.interfaces.pgwire._catalog import Replica
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from pgwire_support import dsn, make_database, running_server  # noqa: E402

HIDDEN_DROP = "SELECT 1 `--`; DROP TABLE people"


def _people():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, pay INT); INSERT INTO people VALUES (1, 5)")
    con.execute("PROTECT TABLE people")
    con.execute("SET BOUNDS ON people (pay) BETWEEN 0 AND 10")
    return con


@pytest.mark.parametrize("text", [HIDDEN_DROP, "SELECT 1 AS `--`; CREATE OR REPLACE TABLE people AS SELECT 2 AS id",
                                  "SELECT 1 `--`; ALTER TABLE people RENAME TO p2",
                                  "SELECT 1 `--`; TRUNCATE people"])
def test_a_drop_duckdb_reads_as_a_second_statement_is_refused(text):
    con = _people()
    with pytest.raises(ProgrammingError, match="backtick"):
        con.execute(text)
    assert con._duck.execute("SELECT id, pay FROM people").fetchall() == [(1, 5)]
    assert con.execute("SELECT 1 AS `a b`; SELECT 2").fetchall() == [(2,)]  # a backtick-quoted name alone still runs


def test_the_replica_runs_one_read_only_statement():
    source = duckdb.connect()
    source.execute("CREATE TABLE t(a INT)")
    replica = Replica()
    for attack in ("SELECT 1 FROM pg_class `--`; DROP SCHEMA pgcompat CASCADE",
                   "SELECT 1 FROM pg_class `--`; CREATE TABLE main.planted AS SELECT 1 AS a"):
        cur = replica.cursor(source)
        with pytest.raises(ProgrammingError, match="could not be read as one PostgreSQL query"):
            replica.run(cur, attack)
        cur.close()
    cur = replica.cursor(source)  # the replica is as it was
    assert replica.run(cur, "SELECT table_name FROM information_schema.tables "
                            "WHERE table_schema = 'main'")[1] == [("t",)]


def test_an_analyst_cannot_change_the_replica_other_sessions_read(tmp_path):
    path = str(tmp_path / "w.duckdb")
    make_database(path)
    with running_server(path) as server:
        with psycopg.connect(dsn(server, "ann"), autocommit=True) as ann, \
                psycopg.connect(dsn(server, "bob"), autocommit=True) as bob:
            with pytest.raises(psycopg.Error, match="could not be read as one PostgreSQL query"):
                ann.execute("SELECT 1 FROM pg_catalog.pg_class `--`; DROP SCHEMA pgcompat CASCADE")
            names = bob.execute("SELECT table_name FROM information_schema.tables "
                                "WHERE table_schema = 'main' ORDER BY 1").fetchall()
            assert names == [("depts",), ("emp",), ("pub",)]
            bob.execute("SELECT c.relname FROM pg_catalog.pg_class c").fetchall()
        with server.engine.checkout("curator", "_test") as con:
            logged = con.execute("SHOW AUDIT LOG").fetchall()
        assert any("pgcompat" in str(r) for r in logged)  # the refusal is in the audit log


def _categorical_people(con):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"id": [1, 2, 3], "name": pd.Categorical(["ann", "bob-rare-condition", "cy"]),
                       "pay": [1, 2, 3]})
    con._duck.register("df", df)
    con.execute("CREATE TABLE people AS SELECT * FROM df")
    con._duck.unregister("df")
    con.execute("ALTER TABLE people ADD PRIMARY KEY (id)")


def test_protecting_a_table_with_labels_from_the_data_is_refused():
    con = provsql_dp.connect()
    _categorical_people(con)
    with pytest.raises(provsql_dp.errors.DeclarationError, match="ENUM.*name.*VARCHAR"):
        con.execute("PROTECT TABLE people")
    assert con.execute("SHOW PROTECTED").fetchall() == []
    con.execute("ALTER TABLE people ALTER name TYPE VARCHAR")  # the way out
    con.execute("PROTECT TABLE people")
    con.execute("SET PRIVACY BUDGET 5")
    with pytest.raises(provsql_dp.errors.Error):  # no public domain for the histogram now
        con.execute("SELECT name, COUNT(*) FROM people GROUP BY name WITH EPSILON 1")


@pytest.mark.parametrize("keys", ["VALUES ('sad', 'ok')", "FROM src (k)"])
def test_group_keys_declaring_some_labels_only_do_not_make_them_all_public(keys):
    con = provsql_dp.connect()
    con.execute("CREATE TYPE mood AS ENUM ('sad', 'ok', 'one participant''s label')")
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, m mood)")
    con.execute("CREATE TABLE src(k VARCHAR); INSERT INTO src VALUES ('sad'), ('ok')")
    con.execute(f"SET GROUP KEYS ON p (m) {keys}")
    with pytest.raises(provsql_dp.errors.DeclarationError, match="ENUM"):
        con.execute("PROTECT TABLE p")
    con.execute("DROP GROUP KEYS ON p (m)")
    con.execute("SET GROUP KEYS ON p (m) VALUES ('sad', 'ok', 'one participant''s label')")
    con.execute("PROTECT TABLE p")


def test_labels_declared_public_may_be_protected():
    con = provsql_dp.connect()
    con.execute("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')")
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, m mood)")
    con.execute("SET GROUP KEYS ON p (m) VALUES ('sad', 'ok', 'happy')")
    con.execute("PROTECT TABLE p")
    assert [r[1] for r in con.execute("SHOW PROTECTED").fetchall()] == ["p"]


@pytest.mark.parametrize("alter", ["ALTER TABLE p ADD COLUMN m mood",
                                   "ALTER TABLE p ADD m ENUM('a', 'b')",
                                   "ALTER TABLE p ALTER note TYPE mood",
                                   "ALTER TABLE p ALTER COLUMN note SET DATA TYPE ENUM('x')"])
def test_an_enum_column_given_to_a_protected_table_is_refused(alter):
    con = provsql_dp.connect()
    con.execute("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')")
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, note VARCHAR); PROTECT TABLE p")
    before = con._duck.execute("SELECT column_name, data_type FROM information_schema.columns "
                               "WHERE table_name = 'p'").fetchall()
    with pytest.raises(provsql_dp.errors.DeclarationError, match="ENUM"):
        con.execute(alter)
    assert con._duck.execute("SELECT column_name, data_type FROM information_schema.columns "
                             "WHERE table_name = 'p'").fetchall() == before


@pytest.mark.parametrize("statistic", ["COUNT(*) FROM people WHERE 1 // (pay - 5) > 0",
                                       "SUM(pay) FROM people WHERE 1 // (pay - 5) >= 0",
                                       "COUNT(*) FROM people WHERE CAST(city AS INT) > 0"])
def test_a_streams_step_is_released_with_and_without_the_participant(statistic):
    for plant in (False, True):
        con = provsql_dp.connect()
        con.execute("CREATE TABLE people(id INT PRIMARY KEY, pay INT, city VARCHAR)")
        con.execute("INSERT INTO people SELECT range, range % 5, 'c' || range FROM range(50)")
        if plant:  # the neighbour: one participant whose row makes the query as written fail
            con.execute("INSERT INTO people VALUES (1000, 5, 'x')")
        con.execute("PROTECT TABLE people; SET BOUNDS ON people (pay) BETWEEN 0 AND 10")
        con.execute("SET PRIVACY BUDGET 10; CREATE STREAM s WINDOW 5 STEPS WITH EPSILON 5")
        con.execute(f"PUBLISH STREAM s STEP 1 WITH EPSILON 1 AS SELECT {statistic}")
        assert [r[3] for r in con.execute("SHOW STREAMS").fetchall()] == [1]  # one release


def test_a_stated_sensitivity_steps_release_does_not_fail_on_one_row():
    """Finding 4's leftover: a step whose sensitivity the curator states (the planner derives
    none: an owner with any number of rows) runs the planner's statistic, total expressions."""
    for plant in (False, True):
        con = provsql_dp.connect()
        con.execute("CREATE TABLE people(id INT PRIMARY KEY, pay INT)")
        con.execute("INSERT INTO people SELECT range, range % 5 FROM range(50)")
        con.execute("CREATE TABLE visits(vid INT, pid INT, amount INT)")
        con.execute("INSERT INTO visits SELECT range, range % 50, range % 4 FROM range(200)")
        if plant:
            con.execute("INSERT INTO visits VALUES (1000, 3, 5)")
        con.execute("PROTECT TABLE people; PROTECT TABLE visits BY (pid) AS people")
        con.execute("SET PRIVACY BUDGET 10; CREATE STREAM s WINDOW 5 STEPS WITH EPSILON 5")
        con.execute("PUBLISH STREAM s STEP 1 SENSITIVITY 10 WITH EPSILON 1 AS "
                    "SELECT COUNT(*) FROM visits WHERE 1 // (amount - 5) >= 0")
        assert [r[3] for r in con.execute("SHOW STREAMS").fetchall()] == [1]


def _with_people():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, diagnosis VARCHAR)")
    con.execute("INSERT INTO people VALUES (1, 'rare'), (2, 'flu'); PROTECT TABLE people")
    con.execute("CREATE VIEW pv AS SELECT * FROM people; CREATE TABLE pub(x INT, d VARCHAR)")
    return con


@pytest.mark.parametrize("copy", [
    "CREATE TABLE copy AS SELECT * FROM people",
    "CREATE TABLE copy AS FROM pv",
    "CREATE OR REPLACE TABLE copy AS SELECT id FROM main.people WHERE diagnosis = 'rare'",
    "INSERT INTO pub SELECT id, diagnosis FROM people",
    "INSERT INTO pub BY NAME SELECT id AS x FROM (SELECT * FROM pv)",
    "UPDATE pub SET x = (SELECT COUNT(*) FROM people)",
    "DELETE FROM pub WHERE x IN (SELECT id FROM people)",
    "CREATE TABLE copy AS PIVOT people ON diagnosis USING count(*)",  # not read by sqlglot
    "CREATE TABLE copy AS UNPIVOT pv ON diagnosis INTO NAME k VALUE v",
    "WITH c AS (SELECT * FROM people) INSERT INTO pub SELECT id, diagnosis FROM c",
    "CREATE TABLE copy AS WITH people AS (SELECT 1 AS id) SELECT * FROM main.people",
    "CREATE TYPE labels AS ENUM (SELECT diagnosis FROM people)",
    "CREATE TYPE labels AS ENUM ((SELECT diagnosis FROM pv))",
])
def test_a_copy_of_protected_rows_into_a_public_table_is_refused(copy):
    con = _with_people()
    tables = con._duck.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()
    with pytest.raises(provsql_dp.errors.DeclarationError, match="WITH NO DATA|public labels"):
        con.execute(copy)
    assert con._duck.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall() == tables
    assert con._duck.execute("SELECT * FROM pub").fetchall() == []


@pytest.mark.parametrize("copy", [
    "CREATE TABLE copy AS SELECT * FROM rows_of_people()",
    "INSERT INTO pub SELECT count_people(), 'n'",
    "CREATE TABLE copy AS SELECT * FROM query_table('people')",
    "CREATE TABLE copy AS SELECT * FROM query('SELECT * FROM pv')",
])
def test_a_copy_through_a_macro_or_a_table_function_is_refused(copy):
    con = _with_people()
    con.execute("CREATE MACRO rows_of_people() AS TABLE SELECT * FROM people")
    con.execute("CREATE MACRO count_people() AS (SELECT COUNT(*) FROM pv)")
    con.execute("CREATE MACRO harmless(a) AS a + 1")
    with pytest.raises(provsql_dp.errors.DeclarationError, match="WITH NO DATA"):
        con.execute(copy)
    assert con._duck.execute("SELECT * FROM pub").fetchall() == []
    con.execute("INSERT INTO pub SELECT harmless(1), 'n' FROM range(2)")


def test_the_way_out_and_what_stays_allowed():
    con = _with_people()
    con.execute("CREATE TABLE copy AS SELECT * FROM people WITH NO DATA")  # the way out
    con.execute("PROTECT TABLE copy BY (id) AS people")  # in the unit of people's rows
    con.execute("INSERT INTO copy SELECT * FROM people")  # into a protected table
    con.execute("CREATE TEMP TABLE mine AS SELECT * FROM people")  # the curator's own
    con.execute("WITH people AS (SELECT 7 AS x) INSERT INTO pub SELECT x, 'a' FROM people")
    con.execute("CREATE TABLE pub2 AS SELECT * FROM pub; DELETE FROM pub2 WHERE x > 3")
    con.execute("CREATE TABLE piv AS PIVOT pub ON d USING count(*)")
    con.execute("CREATE TYPE moods AS ENUM (SELECT d FROM pub); CREATE TYPE m2 AS ENUM ('a')")
    assert con._duck.execute("SELECT count(*) FROM copy").fetchall() == [(2,)]


def test_a_streams_recorded_statistic_is_the_curators_text_not_the_views_it_reads():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, n VARCHAR); PROTECT TABLE people")
    con.execute("CREATE VIEW pv AS SELECT * FROM people WHERE n IN ('a view body')")
    con.execute("SET PRIVACY BUDGET 10; CREATE STREAM s WINDOW 3 STEPS WITH EPSILON 3")
    con.execute("PUBLISH STREAM s STEP 1 WITH EPSILON 1 AS SELECT COUNT(*) FROM pv")
    (row,) = con.execute("SHOW STREAMS s").fetchall()  # analysts may run it
    assert row[3] == "SELECT COUNT(*) FROM pv"
