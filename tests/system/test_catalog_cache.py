"""The catalog and plans kept between statements (sql/catalog.py ``Catalog.snapshot``): reused
while nothing changed, and never stale after a change — made by this connection, by another
provsql_dp connection to the same database, or behind provsql_dp's back on the tables a plan read.
A stale declaration would be a wrong sensitivity, so each test changes something that decides
the mechanism or the sensitivity and checks that the next release sees it."""

from __future__ import annotations

import pytest

import provsql_dp


def _db(path):
    con = provsql_dp.connect(str(path))
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, owner INT, x DOUBLE)")
    con.execute("INSERT INTO p SELECT range, range % 10, range FROM range(200)")
    con.execute("PROTECT TABLE p")
    con.execute("SET PRIVACY BUDGET 1000")
    return con


COUNT = "SELECT COUNT(*) FROM p WITH EPSILON 1"


def test_a_repeated_statement_is_planned_once(tmp_path, plans):
    con = _db(tmp_path / "a.db")
    for _ in range(4):
        con.execute(COUNT).fetchall()
        assert con.privacy.mechanism == "laplace"
    # the first run looks the names up; the second starts afresh once with them in its key
    assert len(plans) <= 2


def test_own_declaration_change_is_seen(tmp_path, plans):
    con = _db(tmp_path / "a.db")
    for _ in range(3):
        con.execute(COUNT)
    con.execute("UNPROTECT TABLE p")
    con.execute("PROTECT TABLE p BY (owner)")  # 20 rows per owner: no longer one row each
    con.execute(COUNT)
    assert con.privacy.mechanism != "laplace"


def test_another_connections_declaration_change_is_seen(tmp_path):
    path = tmp_path / "shared.db"
    a = _db(path)
    b = provsql_dp.connect(str(path))
    for _ in range(3):
        a.execute(COUNT)
        assert a.privacy.mechanism == "laplace"
    b.execute("UNPROTECT TABLE p")
    b.execute("PROTECT TABLE p BY (owner)")
    a.execute(COUNT)
    assert a.privacy.mechanism != "laplace"
    # bounds declared elsewhere decide the clamp of the next SUM here
    for _ in range(2):
        a.execute("SELECT SUM(x) FROM p WITH EPSILON 1 OPTIONS (lower = 0, upper = 10)")
    b.execute("SET BOUNDS ON p (x) BETWEEN 0 AND 5")
    a.execute("SELECT SUM(x) FROM p WITH EPSILON 1")
    assert a.privacy.mechanism != "laplace"  # still many rows per owner
    b.execute("UNPROTECT TABLE p")
    with pytest.raises(provsql_dp.errors.UnsupportedQueryError, match="no protected table"):
        a.execute(COUNT)


def test_a_change_committed_in_a_transaction_elsewhere_is_seen(tmp_path):
    path = tmp_path / "tx.db"
    a = _db(path)
    b = provsql_dp.connect(str(path))
    for _ in range(3):
        a.execute(COUNT)
    b.execute("BEGIN")
    b._duck.execute("DROP TABLE p")  # behind provsql_dp's back (through it: refused, declared)
    b._duck.execute("CREATE TABLE p(id INT, owner INT, x DOUBLE)")  # the key is gone (through
    # provsql_dp: refused, it would take the dropped table's declarations)
    b.execute("INSERT INTO p SELECT range % 10, range % 10, range FROM range(200)")
    a.execute(COUNT)  # not committed yet: a still reads the old table, with its key
    assert a.privacy.mechanism == "laplace"
    b.execute("COMMIT")
    a.execute(COUNT)
    assert a.privacy.mechanism != "laplace"


def test_a_table_redefined_behind_provsql_dps_back_is_seen(tmp_path):
    """A raw DuckDB change bumps nothing; the kept plan's tables are compared by definition."""
    con = _db(tmp_path / "raw.db")
    for _ in range(3):
        con.execute(COUNT)
        assert con.privacy.mechanism == "laplace"
    raw = con._duck
    raw.execute("DROP TABLE p")
    raw.execute("CREATE TABLE p(id INT, owner INT, x DOUBLE)")  # no key: rows may repeat an id
    raw.execute("INSERT INTO p SELECT range % 10, range % 10, range FROM range(200)")
    con.execute(COUNT)
    assert con.privacy.mechanism != "laplace"


def test_nothing_is_kept_while_a_frame_is_registered(tmp_path, plans):
    pd = pytest.importorskip("pandas")
    con = _db(tmp_path / "f.db")
    con.register("labels", pd.DataFrame({"id": [1, 2], "label": ["a", "b"]}))
    q = "SELECT COUNT(*) FROM p JOIN labels ON p.id = labels.id WITH EPSILON 1"
    for _ in range(3):
        con.execute(q)
    assert len(plans) == 3
    con.register("labels", pd.DataFrame({"id": [1, 2, 3], "label": ["a", "b", "c"]}))
    assert con.execute(q).fetchall()


def test_statements_over_other_tables_do_not_evict_the_kept_reads(tmp_path, plans):
    """Alternating tables keeps both plans (a statement naming a new table only adds its name
    to what is kept), and a table of an already-kept name created elsewhere is seen."""
    con = _db(tmp_path / "a.db")
    con.execute("CREATE TABLE q(id INT PRIMARY KEY, y DOUBLE)")
    con.execute("INSERT INTO q SELECT range, range FROM range(50)")
    con.execute("PROTECT TABLE q")
    other = "SELECT COUNT(*) FROM q WITH EPSILON 1"
    for _ in range(4):
        con.execute(COUNT).fetchall()
        con.execute(other).fetchall()
    assert len(plans) <= 4  # each planned at most twice (first look-up, then once afresh)
    con._duck.execute("CREATE TEMP TABLE p(id INT, owner INT, x DOUBLE)")  # behind our back
    con.execute(COUNT)
    with con._catalog.snapshot() as cat:  # the kept reads now resolve p to the new table
        assert cat.find_table(["p"]).catalog == "temp"
