"""The names the checks of a curator's writes keep per connection (protections, declarations,
macros: :mod:`provsql_dp.interfaces.dbapi.guard_names`) are read again after any change: a
protection, a view or an orphan made after they were kept is seen, by the connection that made
it and by another connection of the process; a plain data write keeps them (no read)."""

import pytest

import provsql_dp
from provsql_dp.errors import DeclarationError
from provsql_dp.interfaces.dbapi import declared_drops, protected_copies

COPY = "cannot write the protected rows of"
ORPHAN = "dropped outside provsql_dp"


def _setup(con):
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, d VARCHAR); PROTECT TABLE people; "
                "CREATE TABLE pub(a BIGINT, b VARCHAR); CREATE TABLE src(a BIGINT, b VARCHAR); "
                "INSERT INTO src VALUES (1, 'x')")


def _fill(con):
    """Statements whose checks read (and keep) the protections, the macros and the declared
    names."""
    con.execute("INSERT INTO pub SELECT * FROM src")
    con.execute("CREATE TABLE filler(x INT)")
    assert con._guard_names[1].keys() >= {"protected", "macros", "declared"}


@pytest.fixture
def con():
    c = provsql_dp.connect()
    _setup(c)
    _fill(c)
    yield c
    c.close()


def test_data_writes_keep_the_names(con, monkeypatch):
    reads = []
    real = protected_copies._protected_names
    monkeypatch.setattr(protected_copies, "_protected_names", lambda c: reads.append(1) or real(c))
    real = declared_drops._declared_names
    monkeypatch.setattr(declared_drops, "_declared_names", lambda c: reads.append(2) or real(c))
    con.execute("INSERT INTO pub SELECT * FROM src")
    con.execute("CREATE TABLE t2(x INT); CREATE TABLE t3 AS SELECT * FROM src; "
                "UPDATE src SET a = a + 1 WHERE a < 0; DELETE FROM t2")
    assert reads == []
    con.execute("CREATE MACRO m() AS 1")  # may change them: read again when next needed
    con.execute("INSERT INTO pub SELECT * FROM src; CREATE TABLE t4(x INT)")
    assert sorted(reads) == [1, 2]


def test_a_protection_made_after_is_seen(con):
    con.execute("CREATE TABLE secret(id INT PRIMARY KEY, b VARCHAR); INSERT INTO secret VALUES (7, 's')")
    con.execute("INSERT INTO pub SELECT * FROM secret")  # not protected yet: passes
    con.execute("PROTECT TABLE secret")
    with pytest.raises(DeclarationError, match=f"{COPY} secret"):
        con.execute("INSERT INTO pub SELECT * FROM secret")
    con.execute("UNPROTECT TABLE secret")
    con.execute("INSERT INTO pub SELECT * FROM secret")  # unprotected: passes again
    assert con.execute("SELECT count(*) FROM pub WHERE a = 7").fetchall() == [(2,)]


def test_a_view_made_after_is_seen(con):
    con.execute("CREATE VIEW everyone AS SELECT * FROM people")
    with pytest.raises(DeclarationError, match=f"{COPY} people \\(through the view everyone\\)"):
        con.execute("INSERT INTO pub SELECT * FROM everyone")
    con._duck.execute("CREATE VIEW behind AS SELECT * FROM people")  # DuckDB's own client
    with pytest.raises(DeclarationError, match=f"{COPY} people \\(through the view behind\\)"):
        con.execute("CREATE TABLE c AS SELECT * FROM behind")


def test_an_orphan_made_after_is_seen(con):
    con.execute("CREATE TABLE gone(id INT PRIMARY KEY); PROTECT TABLE gone")
    con._duck.execute("DROP TABLE gone")  # as DuckDB's own client would
    with pytest.raises(DeclarationError, match=f"cannot create the table 'gone': .*{ORPHAN}"):
        con.execute("CREATE TABLE gone(id INT)")
    con.execute("CREATE TABLE kept(id INT, v INT); SET BOUNDS ON kept (v) BETWEEN 0 AND 1")
    con._duck.execute("DROP TABLE kept")  # bounds alone make an orphan too
    with pytest.raises(DeclarationError, match=f"cannot create the view 'kept': .*{ORPHAN}"):
        con.execute("CREATE VIEW kept AS SELECT 1 AS id")


def test_another_connection_of_the_process_is_seen(tmp_path):
    path = str(tmp_path / "db.duckdb")
    a, b = provsql_dp.connect(path), provsql_dp.connect(path)
    try:
        _setup(a)
        a.commit()
        _fill(a)
        a.commit()
        b.execute("CREATE TABLE secret(id INT PRIMARY KEY, b VARCHAR); PROTECT TABLE secret; "
                  "CREATE VIEW everyone AS SELECT * FROM people")
        b.commit()
        with pytest.raises(DeclarationError, match=f"{COPY} secret"):
            a.execute("INSERT INTO pub SELECT * FROM secret")
        with pytest.raises(DeclarationError, match="through the view everyone"):
            a.execute("INSERT INTO pub SELECT * FROM everyone")
        b.execute("CREATE TABLE gone(id INT PRIMARY KEY); PROTECT TABLE gone")
        b.commit()
        # DuckDB's own client (b's, on the process's instance of the file)
        b._duck.execute("DROP TABLE gone; CREATE VIEW behind AS SELECT * FROM secret")
        with pytest.raises(DeclarationError, match=ORPHAN):
            a.execute("CREATE TABLE gone(id INT)")
        with pytest.raises(DeclarationError, match=f"{COPY} secret \\(through the view behind\\)"):
            a.execute("INSERT INTO pub SELECT * FROM behind")
        assert a.execute("SELECT count(*) FROM pub").fetchall() == [(1,)]
    finally:
        a.close()
        b.close()


def test_a_protection_committed_during_a_transaction_is_seen_at_its_end(tmp_path):
    """Read inside a transaction, the names are its snapshot's: its end reads them again."""
    path = str(tmp_path / "db.duckdb")
    a, b = provsql_dp.connect(path), provsql_dp.connect(path)
    try:
        _setup(a)
        a.execute("CREATE TABLE secret(id INT PRIMARY KEY, b VARCHAR)")
        a.commit()
        a.execute("INSERT INTO pub SELECT * FROM src")  # opens a transaction, keeps the names
        b.execute("PROTECT TABLE secret")
        b.commit()
        a.execute("INSERT INTO pub SELECT * FROM secret")  # a's snapshot: not protected
        a.execute("COMMIT")
        with pytest.raises(DeclarationError, match=f"{COPY} secret"):
            a.execute("INSERT INTO pub SELECT * FROM secret")
    finally:
        a.close()
        b.close()
