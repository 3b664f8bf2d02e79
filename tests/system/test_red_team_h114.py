"""Red team h114attack: copies of protected rows the curator's copy guard
(:mod:`provsql_dp.interfaces.dbapi.protected_copies`) let through, each made with one or two
statements a careless curator may write, and each read afterwards by any analyst."""

import pytest

import provsql_dp
from provsql_dp.errors import DeclarationError


@pytest.fixture
def con():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE people(id INT PRIMARY KEY, d VARCHAR); PROTECT TABLE people; "
              "INSERT INTO people VALUES (1, 'secret-a'), (2, 'secret-b'); "
              "CREATE TABLE pub(id INT, d VARCHAR)")
    c.commit()
    yield c
    c.close()


def _tables(con):
    return sorted(r[0] for r in con.execute("SHOW TABLES").fetchall())


@pytest.mark.parametrize("stmt", [
    # finding 1: a table function that reads a table (or runs a query) named by a string the
    # guard cannot read: the name is computed, so no literal names the protected table
    "CREATE TABLE c AS SELECT * FROM query_table('peo' || 'ple')",
    "CREATE TABLE c AS SELECT * FROM query_table(chr(112) || 'eople')",
    "CREATE TABLE c AS SELECT * FROM query('SELECT * FROM ' || 'peo' || 'ple')",
    "INSERT INTO pub SELECT * FROM query_table(concat('peo', 'ple'))",
    "INSERT INTO pub SELECT * FROM (FROM query('FROM peo' || 'ple'))",
    "CREATE TABLE c AS SELECT * FROM json_execute_serialized_sql("
    "json_serialize_sql('SELECT * FROM peo' || 'ple'))",
])
def test_computed_table_names_refused(con, stmt):
    before = _tables(con)
    with pytest.raises(DeclarationError, match="cannot write the protected rows of .*computed"):
        con.execute(stmt)
    assert _tables(con) == before
    assert con.execute("SELECT count(*) FROM pub").fetchall() == [(0,)]


@pytest.mark.parametrize("query", [
    "SELECT d FROM query_table('peo' || 'ple')",
    "SELECT unnest(getvariable('v'))",  # finding 3
    "SELECT d FROM tt",  # finding 2
])
def test_enum_labels_from_a_computed_name_refused(con, query):
    con.execute("SET VARIABLE v = (SELECT list(d) FROM people); "
                "CREATE TEMP TABLE tt AS SELECT * FROM people")
    with pytest.raises(DeclarationError, match="cannot make the labels of the ENUM type m"):
        con.execute(f"CREATE TYPE m AS ENUM ({query})")
    assert con.execute("SELECT count(*) FROM duckdb_types() WHERE type_name = 'm'").fetchall() \
        == [(0,)]


@pytest.mark.parametrize("second", [
    "INSERT INTO pub SELECT * FROM tt",
    "CREATE TABLE c AS SELECT * FROM tt",
    "CREATE TABLE c AS SELECT * FROM temp.main.tt",
    "CREATE TABLE c AS SELECT count(*) AS n FROM (SELECT * FROM tt) s",
])
def test_protected_rows_through_a_temp_table_refused(con, second):
    # finding 2: a TEMP table may hold protected rows (it is the curator's own); copied on from
    # it into a table analysts read, the rows were public
    con.execute("CREATE TEMP TABLE tt AS SELECT * FROM people")
    before = _tables(con)
    with pytest.raises(DeclarationError, match=r"people \(through the TEMP table tt\)"):
        con.execute(second)
    assert _tables(con) == before
    assert con.execute("SELECT count(*) FROM pub").fetchall() == [(0,)]


def test_a_temp_table_of_public_rows_still_copies(con):
    con.execute("INSERT INTO pub VALUES (7, 'x')")
    con.execute("CREATE TEMP TABLE tt AS SELECT * FROM people")
    con.execute("CREATE OR REPLACE TEMP TABLE tt AS SELECT * FROM pub")  # public rows now
    con.execute("CREATE TABLE c AS SELECT * FROM tt")
    assert con.execute("SELECT * FROM c").fetchall() == [(7, "x")]


def test_protected_rows_through_a_variable_refused(con):
    # finding 3: SET VARIABLE keeps a value on the connection; written on into a table
    con.execute("SET VARIABLE v = (SELECT string_agg(d) FROM people)")
    with pytest.raises(DeclarationError, match=r"people \(through the variable v\)"):
        con.execute("CREATE TABLE c AS SELECT getvariable('v') AS x")
    with pytest.raises(DeclarationError, match="through the variable"):
        con.execute("INSERT INTO pub SELECT 1, getvariable(lower('V'))")
    assert "c" not in _tables(con)
    con.execute("SET VARIABLE w = (SELECT max(id) FROM pub)")  # a public value copies
    con.execute("CREATE TABLE c AS SELECT getvariable('w') AS x")


@pytest.mark.parametrize("alias", ["mood[]", "STRUCT(a mood)", "MAP(VARCHAR, mood)"])
def test_enum_column_through_a_type_alias_refused(con, alias):
    # finding 4: ALTER TABLE gave a protected table a list (struct, map) of ENUM through a type
    # alias, whose name is not an ENUM type's: PROTECT TABLE refuses such a column
    con.execute(f"CREATE TYPE mood AS ENUM ('sad', 'ok', 'bob-rare'); CREATE TYPE moods AS {alias}")
    with pytest.raises(DeclarationError, match="cannot give the protected table 'people' an ENUM"):
        con.execute("ALTER TABLE people ADD COLUMN z moods")
    assert [r[0] for r in con.execute("DESCRIBE people").fetchall()] == ["id", "d"]


@pytest.mark.parametrize("stmt", [
    "INSERT INTO pub VALUES (1, m(1))",
    "UPDATE pub SET d = m(1)",
    "INSERT INTO pub VALUES (1, getvariable('v'))",
    "UPDATE pub SET d = getvariable('v')",
])
def test_macros_and_variables_without_a_from_refused(con, stmt):
    # finding 5: a write with no SELECT nor FROM (INSERT … VALUES, UPDATE … SET) was let through
    # unread, so a scalar macro whose body reads the protected table, or a variable filled from
    # it, copied protected values into a public table
    con.execute("INSERT INTO pub VALUES (0, 'public')")
    con.execute("CREATE MACRO m(x) AS (SELECT string_agg(d) FROM people); "
                "SET VARIABLE v = (SELECT string_agg(d) FROM people)")
    with pytest.raises(DeclarationError, match="cannot write the protected rows of people"):
        con.execute(stmt)
    assert con.execute("SELECT * FROM pub").fetchall() == [(0, "public")]


@pytest.mark.parametrize("stmt", [
    "CREATE TABLE c(x VARCHAR DEFAULT getvariable('v'))",
    "ALTER TABLE pub ALTER d SET DEFAULT getvariable('v')",
    "ALTER TABLE pub ADD COLUMN z VARCHAR DEFAULT getvariable('v')",
])
def test_a_default_of_a_variable_holding_protected_rows_refused(con, stmt):
    # finding 3 again: the DEFAULT is evaluated at each INSERT, whose text names no variable
    con.execute("SET VARIABLE v = (SELECT string_agg(d) FROM people)")
    with pytest.raises(DeclarationError, match=r"people \(through the variable v\)"):
        con.execute(stmt)
    assert [r[0] for r in con.execute("DESCRIBE pub").fetchall()] == ["id", "d"]
    assert "c" not in _tables(con)


def test_a_bulk_insert_of_literals_reads_no_macro(con, monkeypatch):
    from provsql_dp.interfaces.dbapi import protected_copies

    read = []
    monkeypatch.setattr(protected_copies, "_macros", lambda c: read.append(1) or {})
    con.execute("INSERT INTO pub VALUES " + ", ".join(f"({i}, 'v{i}')" for i in range(2000)))
    assert not read


def test_a_default_of_such_a_variable_in_a_protected_table_passes(con):
    con.execute("SET VARIABLE v = (SELECT max(d) FROM people)")
    con.execute("ALTER TABLE people ALTER d SET DEFAULT getvariable('v')")


@pytest.mark.parametrize("body", [
    "INSERT INTO pub SELECT * FROM people",
    "UPDATE pub SET d = (SELECT max(d) FROM people)",
    "INSERT INTO pub SELECT id, $1 FROM people",
])
def test_a_prepared_copy_refused(con, body):
    # finding 6: PREPARE … AS <copy> passed unread (its text starts with PREPARE), and EXECUTE
    # ran it
    with pytest.raises(DeclarationError, match="cannot write the protected rows of people"):
        con.execute(f"PREPARE p AS {body}")
    assert con.execute("SELECT count(*) FROM duckdb_prepared_statements() WHERE NOT "  # ours:
                       "starts_with(name, '_provsql_dp_fp_')").fetchall() == [(0,)]  # the fingerprint


def test_a_statement_prepared_before_the_protection_is_refused_at_execute():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE people(id INT PRIMARY KEY, d VARCHAR); CREATE TABLE pub(id INT, "
              "d VARCHAR); INSERT INTO people VALUES (1, 'secret-a')")
    c.execute('PREPARE "Cp" AS INSERT INTO pub SELECT * FROM people')
    c.execute("PROTECT TABLE people")
    with pytest.raises(DeclarationError, match="cannot write the protected rows of people"):
        c.execute("EXECUTE cp")
    assert c.execute("SELECT count(*) FROM pub").fetchall() == [(0,)]


def test_a_renamed_temp_table_still_holds_protected_rows(con):
    con.execute("CREATE TEMP TABLE tt AS SELECT * FROM people")
    con.execute("ALTER TABLE tt RENAME TO tt2")
    with pytest.raises(DeclarationError, match=r"people \(through the TEMP table tt2\)"):
        con.execute("INSERT INTO pub SELECT * FROM tt2")
    assert con.execute("SELECT count(*) FROM pub").fetchall() == [(0,)]


@pytest.mark.parametrize("stmt", [
    # finding 7: a write sqlglot does not read (CREATE TABLE … AS PIVOT …) was checked by the
    # names among its tokens only: a table read by a string, a macro, a variable passed
    "CREATE TABLE c AS PIVOT (FROM query_table('peo' || 'ple')) ON d USING count(*)",
    "CREATE TABLE c AS PIVOT (FROM query_table('people')) ON d USING count(*)",
    "CREATE TABLE c AS PIVOT (FROM query('FROM people')) ON d USING count(*)",
    "CREATE TABLE c AS PIVOT (SELECT m(1) AS d) ON d USING count(*)",
    "CREATE TABLE c AS PIVOT (SELECT getvariable('v') AS d) ON d USING count(*)",
])
def test_unread_writes_with_strings_macros_and_variables_refused(con, stmt):
    con.execute("CREATE MACRO m(x) AS (SELECT max(d) FROM people); "
                "SET VARIABLE v = (SELECT max(d) FROM people)")
    with pytest.raises(DeclarationError, match="cannot write the protected rows of"):
        con.execute(stmt)
    assert "c" not in _tables(con)


@pytest.mark.parametrize("stmt", [
    # finding 8: DuckDB reads a two-part name as catalog.table when no schema has that name;
    # the catalog did not, so the guard found no table there, and no protection
    "CREATE TABLE c AS SELECT * FROM memory.people",
    "INSERT INTO pub SELECT * FROM memory.people",
    "INSERT INTO pub SELECT * FROM \"MEMORY\".\"people\"",
])
def test_a_catalog_qualified_name_is_the_protected_table(con, stmt):
    with pytest.raises(DeclarationError, match="cannot write the protected rows of people"):
        con.execute(stmt)
    assert "c" not in _tables(con)
    assert con.execute("SELECT count(*) FROM pub").fetchall() == [(0,)]


def test_a_catalog_qualified_name_in_a_private_query(con):
    con.execute("SET PRIVACY BUDGET 1")  # DuckDB reads it as the protected table: so do we
    assert len(con.execute("SELECT count(*) FROM memory.people WITH EPSILON 0.5").fetchall()) == 1


def test_a_temp_table_made_by_a_statement_sqlglot_cannot_read(con):
    con.execute("CREATE TEMP TABLE tt AS PIVOT people ON d USING count(*)")
    with pytest.raises(DeclarationError, match=r"people \(through the TEMP table tt\)"):
        con.execute("CREATE TABLE c AS SELECT * FROM tt")
    assert "c" not in _tables(con)
