"""A file a curator's COPY … TO (or EXPORT DATABASE) filled with protected rows: writing it
passes (the curator's own file, which no analyst reads through provsql_dp), reading it back
into a table no declaration protects is refused, leaving the database and the ledger as they
were; a TEMP table or a protected table may take it."""

import pytest

import provsql_dp
from conftest import declared_state
from provsql_dp.errors import DeclarationError


@pytest.fixture
def con():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE people(id INT PRIMARY KEY, d VARCHAR); PROTECT TABLE people; "
              "INSERT INTO people VALUES (1, 'a'), (2, 'b'); CREATE TABLE pub(id INT, d VARCHAR)")
    yield c
    c.close()


@pytest.mark.parametrize("write", [
    "COPY people TO '{f}'",
    "COPY (SELECT id, d FROM people WHERE id > 0) TO '{f}' (FORMAT csv)",
])
@pytest.mark.parametrize("read", [
    "CREATE TABLE c AS SELECT * FROM read_csv('{f}')",
    "INSERT INTO pub SELECT * FROM read_csv_auto('{f}')",
    "INSERT INTO pub SELECT * FROM '{f}'",
    "INSERT INTO pub SELECT * FROM read_csv('{g}')",  # a glob that matches it
    "COPY pub FROM '{f}'",
])
def test_reading_back_a_copied_file_is_refused(con, tmp_path, write, read):
    f, g = tmp_path / "people.csv", tmp_path / "peo*.csv"
    con.execute(write.format(f=f))
    assert f.exists()
    before = declared_state(con)
    with pytest.raises(DeclarationError, match=r"people \(through the file .*people\.csv") as e:
        con.execute(read.format(f=f, g=g))
    assert "PROTECT TABLE" in str(e.value)
    assert declared_state(con) == before


def test_what_passes(con, tmp_path):
    f = tmp_path / "people.csv"
    con.execute(f"COPY people TO '{f}'")
    con.execute(f"CREATE TEMP TABLE tt AS SELECT * FROM read_csv('{f}')")  # yours alone
    with pytest.raises(DeclarationError, match="through the TEMP table tt"):
        con.execute("INSERT INTO pub SELECT * FROM tt")
    con.execute("CREATE TABLE people2(id INT PRIMARY KEY, d VARCHAR); PROTECT TABLE people2 BY (id) AS people")
    con.execute(f"INSERT INTO people2 SELECT * FROM read_csv('{f}')")  # stays protected
    con.execute("DELETE FROM people2")
    con.execute(f"COPY people2 FROM '{f}'")  # into a protected table
    other = tmp_path / "pub.csv"
    con.execute(f"COPY (SELECT 7 AS id, 'x' AS d) TO '{other}'")
    con.execute(f"INSERT INTO pub SELECT * FROM read_csv('{other}')")  # a public file
    con.execute(f"COPY (SELECT 8 AS id, 'y' AS d) TO '{f}'")  # written again with public rows
    con.execute(f"INSERT INTO pub SELECT * FROM read_csv('{f}')")
    assert con.execute("SELECT id FROM pub ORDER BY id").fetchall() == [(7,), (8,)]


def test_export_database(con, tmp_path):
    out = tmp_path / "backup"
    con.execute(f"EXPORT DATABASE '{out}'")
    assert (out / "people.csv").exists()
    with pytest.raises(DeclarationError, match="through the directory .*backup"):
        con.execute(f"CREATE TABLE c AS SELECT * FROM read_csv('{out / 'people.csv'}')")
    with pytest.raises(DeclarationError, match="through the directory .*backup"):
        con.execute(f"INSERT INTO pub SELECT * FROM read_csv('{out}/*.csv')")
    con.execute(f"CREATE TABLE c AS SELECT * FROM read_csv('{out / 'pub.csv'}')")  # public


def test_a_copied_file_into_a_protected_table_of_another_unit_is_refused(con, tmp_path):
    f = tmp_path / "people.csv"
    con.execute(f"COPY (SELECT id AS fam, d FROM people) TO '{f}'")
    con.execute("CREATE TABLE fam(fam INT, d VARCHAR); PROTECT TABLE fam BY (fam) AS family")
    before = declared_state(con)
    with pytest.raises(DeclarationError, match="into fam, protected in the domain family"):
        con.execute(f"COPY fam FROM '{f}'")
    assert declared_state(con) == before
