"""Red team h85attack-2 and -3: a curator's schema change under the declarations.

* -2: ``PROTECT TABLE people BY (owner)``, then ``ALTER TABLE people RENAME COLUMN owner TO …``
  (or ``DROP COLUMN owner``): every private query over ``people`` was charged, then failed in
  DuckDB (the owner column is gone) — the failure decided by the schema alone, yet charged, each
  time. Now refused before the charge, naming the column (``foreign_owners``).
* -3: ``ALTER TABLE people RENAME TO staff`` ran: the declarations still named ``people`` (``SHOW
  PROTECTED`` listed it), and ``staff`` was a public table, every row readable by an analyst.
  Now refused before it runs (``interfaces/dbapi/declared_renames.py``).
"""

from __future__ import annotations

import duckdb
import pytest

import provsql_dp
from provsql_dp.errors import DeclarationError


def _database(path):
    con = provsql_dp.connect(str(path))
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, owner INT, salary DOUBLE)")
    con.execute("INSERT INTO people SELECT i, i % 3, i * 10.0 FROM range(12) t(i)")
    con.execute("PROTECT TABLE people BY (owner)")
    con.execute("SET PRIVACY BUDGET 5 FOR USER 'ann'")
    con.commit()
    return con


def _spent(con) -> str:
    return con.execute("SHOW PRIVACY BUDGET").fetchall()[0][2]


@pytest.mark.parametrize("change", ["ALTER TABLE people RENAME COLUMN owner TO holder",
                                    "ALTER TABLE people DROP COLUMN owner"])
def test_a_vanished_owner_column_is_refused_before_the_charge(tmp_path, change):
    con = _database(tmp_path / "db.duckdb")
    con.close()  # through provsql_dp the change is refused (declared_columns): DuckDB's own client
    with duckdb.connect(str(tmp_path / "db.duckdb")) as duck:
        duck.execute(change)
    ann = provsql_dp.connect(str(tmp_path / "db.duckdb"), role="analyst", user="ann")
    for sql in ("SELECT COUNT(*) FROM people WITH EPSILON 1",
                "SELECT SUM(salary) FROM people WITH EPSILON 1 OPTIONS (lower = 0, upper = 100)"):
        with pytest.raises(DeclarationError, match="named by column 'owner'.*no longer has"):
            ann.execute(sql)
    assert _spent(ann) == "0"


@pytest.mark.parametrize("rename", ["ALTER TABLE people RENAME TO staff",
                                    "ALTER TABLE IF EXISTS main.PEOPLE RENAME TO staff",
                                    "/* a comment first */ alter table people rename to staff"])
def test_a_protected_table_cannot_be_renamed_into_a_public_one(tmp_path, rename):
    con = _database(tmp_path / "db.duckdb")
    with pytest.raises(DeclarationError, match="cannot rename the protected table 'people'"):
        con.execute(rename)
    con.commit()
    con.close()
    ann = provsql_dp.connect(str(tmp_path / "db.duckdb"), role="analyst", user="ann")
    assert ann.execute("SHOW TABLES").fetchall() == [("people",)]
    with pytest.raises(provsql_dp.errors.PrivacyError, match="protected"):
        ann.execute("SELECT * FROM people")


def test_a_public_table_and_an_unprotected_one_still_rename(tmp_path):
    con = _database(tmp_path / "db.duckdb")
    con.execute("CREATE TABLE notes(x INT)")
    con.execute("ALTER TABLE notes RENAME TO memos")
    con.execute("UNPROTECT TABLE people")
    con.execute("ALTER TABLE people RENAME TO staff")
    con.execute("PROTECT TABLE staff BY (owner)")
    assert [r[1] for r in con.execute("SHOW PROTECTED").fetchall()] == ["staff"]
