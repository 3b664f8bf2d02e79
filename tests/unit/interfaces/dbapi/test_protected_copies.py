"""The protected-copy refusal reads no table name it does not need: statements that read no
table are not parsed (a bulk INSERT … VALUES), and every way of reading one still is."""

import pytest

import provsql_dp
from provsql_dp.errors import DeclarationError
from provsql_dp.interfaces.dbapi import protected_copies


@pytest.fixture
def con():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE people(id INT PRIMARY KEY, d VARCHAR); PROTECT TABLE people; "
              "CREATE TABLE pub(a BIGINT, b VARCHAR)")
    yield c
    c.close()


@pytest.mark.parametrize("stmt", [
    "INSERT INTO pub VALUES ((SELECT count(*) FROM people), 'x')",
    "insert into pub select id, d from people",
    "INSERT INTO pub FROM people SELECT id, d",
    "UPDATE pub SET a = (SELECT max(id) FROM people)",
    "CREATE TABLE c2 AS SELECT * FROM people",
])
def test_reads_of_protected_rows_refused(con, stmt):
    with pytest.raises(DeclarationError, match="cannot write the protected rows of people"):
        con.execute(stmt)
    assert con.execute("SELECT count(*) FROM pub").fetchall() == [(0,)]


@pytest.mark.parametrize("stmt", [
    "INSERT INTO pub VALUES (1, 'a'), (2, 'b')",
    "UPDATE pub SET a = a + 1",
    "INSERT INTO pub VALUES (3, 'select from people')",  # a word in a string: parsed, passes
])
def test_statements_reading_no_table_pass(con, stmt, monkeypatch):
    con.execute(stmt)
    parsed = []
    real = protected_copies.d.parse_one
    monkeypatch.setattr(protected_copies.d, "parse_one",
                        lambda s, *a, **k: parsed.append(s) or real(s, *a, **k))
    protected_copies.refuse_protected_copy(con, stmt)
    # only a text naming a word a table is read through is parsed
    assert bool(parsed) == bool(protected_copies._READS.search(stmt))


def test_a_macro_made_after_the_macros_were_read_is_seen(con):
    """The macros are read once per connection (``duckdb_functions()`` costs ~15-30 ms) and
    again after a statement through it that may change them."""
    con.execute("CREATE TABLE src(a BIGINT); INSERT INTO src VALUES (1)")
    con.execute("INSERT INTO pub SELECT a, 'x' FROM src")  # reads the macros: there are none
    con.execute("CREATE MACRO all_people() AS TABLE SELECT id, d FROM people")
    with pytest.raises(DeclarationError, match="cannot write the protected rows"):
        con.execute("INSERT INTO pub SELECT * FROM all_people()")
    con.execute("DROP MACRO TABLE all_people; CREATE MACRO all_people() AS TABLE SELECT * FROM src")
    con.execute("INSERT INTO pub SELECT a, 'y' FROM all_people()")  # the new one reads src
    assert con.execute("SELECT count(*) FROM pub").fetchall() == [(2,)]
