"""A curator's writes to an attached database inside a transaction are kept.

The catalog's change counter (``_provsql_dp.generation``) lives in the home database. Bumped
inside the transaction after each statement, it wrote to a second database: DuckDB aborted the
transaction ("a single transaction can only write to a single attached database"), the bump's
error was swallowed, and the INSERT was silently lost (the next statement said "transaction
aborted"). In a transaction the bump now waits for its end (``commit()``/``rollback()`` or a
COMMIT statement), when other connections first see the changes.
"""

from __future__ import annotations

import provsql_dp


def _generation(con) -> int:
    return con._duck.execute("SELECT currval('_provsql_dp.generation')").fetchone()[0]


def test_inserts_into_an_attached_database_in_a_transaction_are_kept(tmp_path):
    con = provsql_dp.connect(str(tmp_path / "home.db"))  # autocommit off: DML opens a transaction
    con.execute(f"ATTACH '{tmp_path / 'other.db'}' AS o")
    con.execute("CREATE TABLE o.t(x INT)")
    con.execute("INSERT INTO o.t VALUES (1)")
    con.execute("INSERT INTO o.t VALUES (2)")
    before = _generation(con)
    con.commit()
    assert _generation(con) > before  # the other connections are told at the end
    con.execute("BEGIN")
    con.execute("UPDATE o.t SET x = x + 10")
    con.execute("INSERT INTO o.t VALUES (3)")
    before = _generation(con)
    con.execute("COMMIT")
    assert _generation(con) > before
    assert sorted(con.execute("SELECT x FROM o.t").fetchall()) == [(3,), (11,), (12,)]
    con.close()
    again = provsql_dp.connect(str(tmp_path / "home.db"))
    again.execute(f"ATTACH '{tmp_path / 'other.db'}' AS o")
    assert sorted(again.execute("SELECT x FROM o.t").fetchall()) == [(3,), (11,), (12,)]


def test_a_rolled_back_write_to_an_attached_database_leaves_nothing(tmp_path):
    con = provsql_dp.connect(str(tmp_path / "home.db"))
    con.execute(f"ATTACH '{tmp_path / 'other.db'}' AS o")
    con.execute("CREATE TABLE o.t(x INT)")
    con.execute("INSERT INTO o.t VALUES (1)")
    con.rollback()
    assert con.execute("SELECT count(*) FROM o.t").fetchall() == [(0,)]
    con.execute("INSERT INTO o.t VALUES (2)")
    con.commit()
    assert con.execute("SELECT x FROM o.t").fetchall() == [(2,)]
