"""Declarations naming a TEMP table, and a TEMP table renamed to a declared table's name:
refused. Declarations are stored by (schema, table), and a TEMP table's schema reads ``main``:
``SET GROUP KEYS ON t (c) FROM tt(d)`` with a TEMP ``tt`` was stored as ``main.tt`` — the
connection's own table, gone when it closes, or whatever ``main.tt`` is later; ``ALTER TABLE
<temp> RENAME TO people`` shadowed the declared ``main.people`` in this connection."""

import pytest

import provsql_dp
from conftest import declared_state
from provsql_dp.errors import DeclarationError


@pytest.fixture
def con():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE people(id INT PRIMARY KEY, city VARCHAR, n INT); PROTECT TABLE people; "
              "CREATE TEMP TABLE tt(d VARCHAR, n INT, id INT); INSERT INTO tt VALUES ('x', 1, 1)")
    yield c
    c.close()


@pytest.mark.parametrize("stmt", [
    "SET GROUP KEYS ON people (city) FROM tt(d)",
    "SET GROUP KEYS ON people (city) FROM temp.main.tt(d)",
    "PROTECT TABLE tt",
    "PROTECT TABLE tt BY (id) AS people",
    "SET BOUNDS ON tt (n) BETWEEN 0 AND 1",
    "SET GROUP KEYS ON tt (d) VALUES ('a')",
])
def test_a_declaration_naming_a_temp_table_is_refused(con, stmt):
    before = declared_state(con)
    with pytest.raises(DeclarationError, match="tt is a TEMP table") as e:
        con.execute(stmt)
    assert "CREATE TABLE" in str(e.value)
    assert declared_state(con) == before


def test_a_temp_table_renamed_to_a_declared_name_is_refused(con):
    con.execute("CREATE TEMP TABLE t2(id INT)")
    before = declared_state(con)
    with pytest.raises(DeclarationError, match="would shadow the declared table main.people"):
        con.execute("ALTER TABLE t2 RENAME TO people")
    assert declared_state(con) == before
    assert con.execute("SELECT count(*) FROM people").fetchall() == [(0,)]
    con.execute("ALTER TABLE t2 RENAME TO t3")  # an undeclared name: passes


def test_a_main_table_of_the_same_name_passes(con):
    con.execute("CREATE TABLE src(d VARCHAR); INSERT INTO src VALUES ('x')")
    con.execute("SET GROUP KEYS ON people (city) FROM src(d)")
