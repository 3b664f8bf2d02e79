"""After ``USE <attached database>`` the curator's statements still reach provsql_dp's own
schema, which lives in the database the connection opened (issue 28: ``CREATE TABLE t AS
SELECT …`` failed with "_provsql_dp.owner_references does not exist")."""

from __future__ import annotations

import provsql_dp


def _home(tmp_path):
    con = provsql_dp.connect(str(tmp_path / "home.duckdb"))
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, x INT)")
    con.execute("INSERT INTO p SELECT range, range FROM range(100)")
    con.execute("PROTECT TABLE p; SET PRIVACY BUDGET 10")
    con.execute(f"ATTACH '{tmp_path / 'other.duckdb'}' AS o")
    return con


def test_the_curators_statements_work_after_use_of_an_attached_database(tmp_path):
    con = _home(tmp_path)
    con.execute("USE o")
    con.execute("CREATE TABLE t AS SELECT 1 AS a")
    con.execute("CREATE TABLE u(a INT)")
    assert con.execute("SELECT database_name, table_name FROM duckdb_tables() "
                       "WHERE table_name IN ('t', 'u') ORDER BY 2").fetchall() == [("o", "t"),
                                                                                  ("o", "u")]
    assert con.execute("SELECT * FROM t").fetchall() == [(1,)]
    assert [r[1] for r in con.execute("SHOW PROTECTED").fetchall()] == ["p"]
    con.execute("DROP TABLE u")
    cur = con.execute("SELECT count(*) FROM home.p WITH EPSILON 1")
    assert cur.fetchone()[0] >= 0 and cur.privacy.remaining == 9
    con.execute("USE home")
    assert con.execute("SELECT count(*) FROM p WITH EPSILON 1").privacy.remaining == 8


def test_a_protected_copy_is_still_refused_after_use(tmp_path):
    con = _home(tmp_path)
    con.execute("USE o")
    try:
        con.execute("CREATE TABLE leak AS SELECT * FROM home.p")
    except provsql_dp.DeclarationError as e:
        assert "cannot write the protected rows of p into leak" in str(e)
    else:
        raise AssertionError("a copy of protected rows was allowed after USE")
    assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'leak'"
                       ).fetchone()[0] == 0


def test_an_unqualified_name_never_reaches_provsql_dps_own_tables(tmp_path):
    con = _home(tmp_path)
    con.execute("USE o")
    for stmt in ("DROP TABLE budget", "SELECT * FROM ledger", "DELETE FROM budget"):
        try:
            con.execute(stmt)
        except provsql_dp.Error as e:
            assert "budget" in str(e) or "ledger" in str(e)
        else:
            raise AssertionError(f"{stmt} reached provsql_dp's own table after USE o")
    assert con.execute("SELECT count(*) FROM home.p WITH EPSILON 1").privacy.remaining == 9


def test_a_failed_statement_in_a_transaction_leaves_the_catalog_reachable(tmp_path):
    con = _home(tmp_path)
    con.execute("USE o")
    con.execute("CREATE TABLE u(a INT)")
    con.execute("INSERT INTO u VALUES (1)")  # the implicit transaction is open
    try:
        con.execute("SELECT * FROM nope")
    except provsql_dp.Error:
        pass
    assert [r[1] for r in con.execute("SHOW PROTECTED").fetchall()] == ["p"]
    assert con.execute("SELECT count(*) FROM home.p WITH EPSILON 1").privacy.remaining == 9
