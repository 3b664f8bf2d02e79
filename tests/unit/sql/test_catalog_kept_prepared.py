"""The fingerprint run as a prepared statement (provsql_dp.sql._catalog_kept.Prepared): after
every kind of change the fingerprint guards against — a setting, the generation, the current
schema, a table of a looked-up name added, redefined or dropped in any schema or attached
database — the prepared statement gives the key the text gives, without being prepared again;
a statement dropped behind its back or an aborted transaction lose nothing; and the reason a
release's own SQL is never kept prepared (a SET is not seen by a statement bound before it)."""

from __future__ import annotations

import duckdb
import pytest

from provsql_dp.sql._catalog_kept import Prepared, fingerprint

NAMES = ("t", "u")

#: each changes what the fingerprint must see (run in order, on the fingerprint's connection
#: or, for ``other``, on a second connection to the same database)
CHANGES = [
    ("SET search_path = 'main,o'", "own"),
    ("SET default_collation = 'nocase'", "own"),
    ("SET integer_division = true", "own"),
    ("SET ieee_floating_point_ops = false", "own"),
    ("SET max_execution_time = 600000", "own"),  # ms: 5 timed out the EXECUTE under load
    ("SET default_order = 'DESC'", "own"),
    ("SET default_null_order = 'NULLS_FIRST'", "own"),
    ("SELECT nextval('s.generation')", "other"),
    ("CREATE TABLE o.t(y VARCHAR)", "other"),
    ("ALTER TABLE t ADD COLUMN w INT", "other"),
    ("DROP TABLE t; CREATE TABLE t(x INT)", "other"),  # the PRIMARY KEY gone
    ("CREATE TABLE u(z INT UNIQUE)", "other"),
    ("CREATE TABLE u2(a INT, b INT, UNIQUE (a, b)); DROP TABLE u; ALTER TABLE u2 RENAME TO u",
     "other"),  # a composite UNIQUE under the same name
    ("USE o", "own"),
    ("USE f.main", "own"),
    ("ATTACH ':memory:' AS side; CREATE TABLE side.main.T(q INT)", "own"),
    ("DROP TABLE o.t", "other"),
    ("SET GLOBAL default_order = 'ASC'", "other"),
]


@pytest.fixture
def db(tmp_path):
    con = duckdb.connect(str(tmp_path / "f.duckdb"))
    con.execute("CREATE SCHEMA s; CREATE SEQUENCE s.generation; CREATE SCHEMA o; "
                "CREATE TABLE t(x INT PRIMARY KEY)")
    con.execute("SELECT nextval('s.generation')")
    other = con.cursor()  # a plain connection to the same database: bumps nothing
    yield con, other
    other.close()
    con.close()


def test_after_each_change_the_prepared_key_is_the_texts(db):
    con, other = db
    kept = Prepared()
    before = fingerprint(con, NAMES, "s", prepared=kept)
    assert before == fingerprint(con, NAMES, "s")
    text = kept.text
    for sql, where in CHANGES:
        (con if where == "own" else other).execute(sql)
        now = fingerprint(con, NAMES, "s", prepared=kept)
        assert now == fingerprint(con, NAMES, "s"), sql
        assert now != before, f"{sql}: the key did not change"
        assert kept.text == text, sql  # the same statement, not prepared again
        before = now


def test_fixed_settings_and_new_names_prepare_their_own_text(db):
    con, _ = db
    kept = Prepared()
    key = fingerprint(con, ("t",), "s", prepared=kept)
    fixed = next(r for r in key[1:] if r[0] == "g")[5:]
    assert fingerprint(con, ("t",), "s", fixed, kept) == fingerprint(con, ("t",), "s", fixed)
    assert fingerprint(con, ("t", "u"), "s", prepared=kept) == fingerprint(con, ("t", "u"), "s")
    assert fingerprint(con, (), "s", prepared=kept) == fingerprint(con, (), "s")
    names = [r[0] for r in con.execute("SELECT name FROM duckdb_prepared_statements()").fetchall()]
    assert names == [kept.name]  # one statement, prepared again under its name


def test_a_statement_dropped_behind_its_back_loses_nothing(db):
    con, other = db
    kept = Prepared()
    fingerprint(con, NAMES, "s", prepared=kept)
    con.execute(f"DEALLOCATE {kept.name}")
    other.execute("CREATE TABLE o.t(y INT)")
    assert fingerprint(con, NAMES, "s", prepared=kept) == fingerprint(con, NAMES, "s")
    assert kept.text is None  # run as text; prepared again next time
    assert fingerprint(con, NAMES, "s", prepared=kept) == fingerprint(con, NAMES, "s")
    assert kept.text is not None


def test_a_statement_of_ours_under_the_name_is_prepared_again_when_the_text_changes(db):
    con, _ = db
    kept = Prepared()
    fingerprint(con, ("t",), "s", prepared=kept)
    con.execute(f"PREPARE {kept.name} AS SELECT 42")  # not ours any more
    kept.text = None  # as after a failure: the next call prepares its own text again
    assert fingerprint(con, ("t",), "s", prepared=kept) == fingerprint(con, ("t",), "s")


def test_an_aborted_transaction_gives_none_and_the_next_read_works(db):
    con, _ = db
    kept = Prepared()
    fingerprint(con, NAMES, "s", prepared=kept)
    con.execute("BEGIN")
    with pytest.raises(duckdb.Error):
        con.execute("SELECT 1 / 'x'")
    assert fingerprint(con, NAMES, "s", prepared=kept) is None
    con.execute("ROLLBACK")
    assert fingerprint(con, NAMES, "s", prepared=kept) == fingerprint(con, NAMES, "s")


def test_the_names_are_private_to_each_connection_object():
    assert Prepared().name != Prepared().name
    assert Prepared().name.startswith("_provsql_dp_fp_")


@pytest.mark.parametrize("expr, setting, fresh", [
    ("7 / 2", "SET integer_division = true", 3),
    ("'a' = 'A'", "SET default_collation = 'nocase'", True),
])
def test_why_a_release_s_sql_is_never_kept_prepared(expr, setting, fresh):
    # DuckDB binds a prepared statement again after a catalog change, not after a SET: a
    # statement whose meaning a setting fixes at bind time keeps the old meaning. If DuckDB
    # starts binding again after a SET, this fails and Prepared's docstring is to be revised.
    con = duckdb.connect()
    con.execute(f"PREPARE p AS SELECT {expr}")
    before = con.execute("EXECUTE p").fetchall()[0][0]
    con.execute(setting)
    assert con.execute(f"SELECT {expr}").fetchall()[0][0] == fresh != before
    assert con.execute("EXECUTE p").fetchall()[0][0] == before
