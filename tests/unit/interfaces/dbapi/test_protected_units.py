"""A copy of protected rows into a protected table of another domain (another unit of
participants), and the UNPROTECT of a staging table that received copies of another protected
table's rows: refused, leaving the database and the ledger as they were."""

import pytest

import provsql_dp
from conftest import declared_state
from provsql_dp.errors import DeclarationError


@pytest.fixture
def con():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE people(id INT PRIMARY KEY, fam INT, d VARCHAR); PROTECT TABLE people; "
              "INSERT INTO people VALUES (1, 10, 'a'), (2, 10, 'b'), (3, 11, 'c'); "
              "CREATE TABLE fam_table(fam INT, d VARCHAR); PROTECT TABLE fam_table BY (fam) AS family; "
              "CREATE VIEW pv AS SELECT * FROM people")
    yield c
    c.close()


@pytest.mark.parametrize("stmt", [
    "INSERT INTO fam_table SELECT fam, d FROM people",
    "INSERT INTO fam_table SELECT fam, d FROM pv",  # through a view
    "INSERT INTO fam_table SELECT f.fam, p.d FROM fam_table f JOIN people p USING (fam)",
    "UPDATE fam_table SET d = (SELECT max(d) FROM people)",
])
def test_a_copy_into_another_domain_is_refused(con, stmt):
    before = declared_state(con)
    with pytest.raises(DeclarationError, match="cannot copy the protected rows of people "
                       r"\(participants of the domain people\) into fam_table, protected in "
                       "the domain family") as e:
        con.execute(stmt)
    assert "AS people), or copy into a TEMP table" in str(e.value)
    assert declared_state(con) == before


def test_the_same_domain_passes(con):
    con.execute("CREATE TABLE copy AS SELECT * FROM people WITH NO DATA; "
                "PROTECT TABLE copy BY (id) AS people")
    con.execute("INSERT INTO copy SELECT * FROM people")
    con.execute("INSERT INTO people SELECT id + 10, fam, d FROM people")  # its own domain
    con.execute("CREATE TABLE fam2(fam INT); PROTECT TABLE fam2 BY (fam) AS family")
    con.execute("INSERT INTO fam2 SELECT fam FROM fam_table")
    con.execute("INSERT INTO fam_table VALUES (12, 'x')")  # reads no protected table
    assert con.execute("SELECT count(*) FROM copy").fetchall() == [(3,)]


def test_unprotect_of_a_staging_table_is_refused(con):
    con.execute("CREATE TABLE stage AS SELECT * FROM people WITH NO DATA; "
                "PROTECT TABLE stage BY (id) AS people; INSERT INTO stage SELECT * FROM people")
    before = declared_state(con)
    with pytest.raises(DeclarationError, match="cannot unprotect stage: it holds rows copied "
                       "from the protected table people") as e:
        con.execute("UNPROTECT TABLE stage")
    assert "DELETE FROM stage" in str(e.value)
    assert declared_state(con) == before
    con.execute("DELETE FROM stage")
    con.execute("UNPROTECT TABLE stage; DROP TABLE stage")  # emptied: the way out
    con.execute("CREATE TABLE mine(x INT); PROTECT TABLE mine BY (x) AS people; "
                "INSERT INTO mine VALUES (1)")
    con.execute("UNPROTECT TABLE mine")  # its own rows: the curator's choice


def test_a_delete_guided_by_another_unit_passes(con):
    con.execute("INSERT INTO fam_table VALUES (10, 'x'), (11, 'y')")
    con.execute("DELETE FROM fam_table WHERE fam IN (SELECT fam FROM people WHERE id = 3)")
    assert con.execute("SELECT fam FROM fam_table").fetchall() == [(10,)]
