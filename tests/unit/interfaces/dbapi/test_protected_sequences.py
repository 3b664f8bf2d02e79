"""A sequence a protected table's column draws its DEFAULT from counts the rows inserted into
it: its value (``currval``, ``nextval``, ``duckdb_sequences()``, ``pg_sequences``) is an exact
statistic of the protected rows. Analysts cannot read it; a curator's copy of it into a table
no declaration protects is refused, leaving the database and the ledger as they were."""

import warnings

import pytest

import provsql_dp
from conftest import declared_state
from provsql_dp.errors import DeclarationError, PrivacyError

SETUP = ("CREATE SEQUENCE s; CREATE SEQUENCE other; "
         "CREATE TABLE people(id INT PRIMARY KEY DEFAULT nextval('s'), d VARCHAR); "
         "PROTECT TABLE people; CREATE TABLE pub(a BIGINT); "
         "INSERT INTO people(d) VALUES ('a'), ('b'), ('c')")


@pytest.fixture
def con():
    c = provsql_dp.connect()
    c.execute(SETUP)
    yield c
    c.close()


@pytest.mark.parametrize("stmt", [
    "INSERT INTO pub VALUES (currval('s'))",
    "INSERT INTO pub SELECT currval('main.s')",
    "INSERT INTO pub VALUES (nextval('s'))",
    "UPDATE pub SET a = currval('s')",
    "CREATE TABLE c2 AS SELECT last_value AS a FROM duckdb_sequences()",
    "INSERT INTO pub SELECT last_value FROM duckdb_sequences() WHERE sequence_name = 's'",
    "INSERT INTO pub SELECT last_value FROM pg_catalog.pg_sequences",
    "INSERT INTO pub SELECT currval('S')",
    "INSERT INTO pub SELECT currval(lower('S'))",  # a computed name may be any sequence
    "CREATE TABLE c3(a BIGINT DEFAULT currval('s'))",  # every later INSERT would copy it
])
def test_a_copy_of_a_protected_sequence_is_refused(con, stmt):
    before = declared_state(con)
    with pytest.raises(DeclarationError, match=r"people \(through the sequence") as e:
        con.execute(stmt)
    assert "counts the rows inserted" in str(e.value) and "PROTECT TABLE" in str(e.value)
    assert declared_state(con) == before
    assert con.execute("SELECT count(*) FROM pub").fetchall() == [(0,)]


def test_through_a_variable_a_macro_or_a_temp_table(con):
    con.execute("SET VARIABLE v = currval('s')")
    with pytest.raises(DeclarationError, match="through the sequence s"):
        con.execute("INSERT INTO pub VALUES (getvariable('v'))")
    con.execute("CREATE MACRO n() AS currval('s')")
    with pytest.raises(DeclarationError, match="through the sequence s"):
        con.execute("INSERT INTO pub SELECT n()")
    con.execute("CREATE TEMP TABLE tt AS SELECT currval('s') AS a")  # the curator's own: passes
    with pytest.raises(DeclarationError, match="through the sequence s"):
        con.execute("INSERT INTO pub SELECT a FROM tt")


@pytest.mark.parametrize("stmt", [
    "INSERT INTO pub VALUES (nextval('other'))",  # a sequence of no protected table
    "INSERT INTO people(d) VALUES ('d')",  # into the protected table: stays protected
    "CREATE TABLE people_copy(id INT DEFAULT nextval('other'))",
    "SELECT currval('s')",  # the curator reads it: no copy
])
def test_what_passes(con, stmt):
    con.execute(stmt)


def test_no_protected_sequence_no_refusal():
    c = provsql_dp.connect()
    c.execute("CREATE SEQUENCE s; CREATE TABLE t(id INT DEFAULT nextval('s')); "
              "CREATE TABLE pub(a BIGINT); INSERT INTO t VALUES (DEFAULT)")
    c.execute("INSERT INTO pub SELECT last_value FROM duckdb_sequences() WHERE sequence_name = 's'")
    c.execute("INSERT INTO pub VALUES (currval('s'))")
    assert c.execute("SELECT count(*) FROM pub").fetchall() == [(2,)]


@pytest.mark.parametrize("stmt", [
    "SELECT currval('s')", "SELECT nextval('s')", "SELECT last_value FROM duckdb_sequences()",
    "SELECT * FROM pg_catalog.pg_sequences", "SELECT * FROM information_schema.sequences",
])
def test_an_analyst_cannot_read_it(tmp_path, stmt):
    path = str(tmp_path / "db.duckdb")
    cur = provsql_dp.connect(path)
    cur.execute(SETUP + "; SET PRIVACY BUDGET 1 FOR USER 'ann'")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the analyst shares the curator's process
        an = provsql_dp.connect(path, role="analyst", user="ann")
    with pytest.raises(PrivacyError, match="an analyst can"):
        an.execute(stmt)
    an.close()
    cur.close()


@pytest.mark.parametrize("stmt", [
    "INSERT INTO pub SELECT estimated_size FROM duckdb_tables() WHERE table_name = 'people'",
    "CREATE TABLE c4 AS SELECT * FROM duckdb_tables()",
    "INSERT INTO pub SELECT reltuples FROM pg_catalog.pg_class WHERE relname = 'people'",
    "INSERT INTO pub SELECT reltuples FROM pg_class",
])
def test_a_copy_of_a_catalog_row_count_is_refused(con, stmt):
    before = declared_state(con)
    with pytest.raises(DeclarationError, match="exact row count") as e:
        con.execute(stmt)
    assert "information_schema.tables" in str(e.value)
    assert declared_state(con) == before


def test_the_table_names_alone_pass(con):
    con.execute("CREATE TABLE names AS SELECT table_name FROM information_schema.tables")
    c = provsql_dp.connect()  # no protected table: its catalog counts are public
    c.execute("CREATE TABLE sizes AS SELECT estimated_size FROM duckdb_tables()")
