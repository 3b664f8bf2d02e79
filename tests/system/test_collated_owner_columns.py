"""Owner columns that compare under a collation (h55hard): ``PROTECT TABLE visits BY (pid)``
with ``pid VARCHAR COLLATE NOCASE``, or any string owner under ``SET default_collation``.

DuckDB's ``GROUP BY pid`` then merges 'bob' and 'BOB' — two participants under the binary
equality that tells them apart elsewhere (a binary ``people`` key in the same domain, a
``DELETE … WHERE pid = 'bob'``) — into one participant total. Removing participant 'bob' then
leaves that total in place, smaller (brute force below): the neighbour is not "one total
removed", the single-owner sensitivity argument's premise, and a binary table in the same
domain splits what the collated one merges. So such owner columns are refused when declared,
and at each statement once a ``default_collation`` makes them collated — charging nothing."""

from __future__ import annotations

import duckdb
import pytest

import provsql_dp

SPELLINGS = ["bob", "BOB", "Bob", "amy"]


def _totals(rows) -> list:
    con = duckdb.connect()
    con.execute("CREATE TABLE visits(pid VARCHAR COLLATE NOCASE, amount INT)")
    if rows:
        con.executemany("INSERT INTO visits VALUES (?, ?)", rows)
    return sorted(r[0] for r in con.execute(
        "SELECT SUM(amount) FROM visits GROUP BY pid").fetchall())


def test_a_collated_group_by_owner_merges_participants():
    """Brute force over the neighbours (remove one binary participant): under NOCASE some
    removal changes a total without removing it — what a sound owner column never does."""
    rows = [(p, 10 + i) for i, p in enumerate(SPELLINGS)]
    full = _totals(rows)
    assert len(full) == 2  # four participants, two totals
    partial = []
    for p in SPELLINGS:
        rest = _totals([r for r in rows if r[0] != p])
        if len(rest) == len(full):  # no total removed: one only shrank
            partial.append(p)
    assert partial == ["bob", "BOB", "Bob"]


@pytest.mark.parametrize("ddl, protect", [
    ("CREATE TABLE visits(pid VARCHAR COLLATE NOCASE, amount INT)", "PROTECT TABLE visits BY (pid)"),
    ("CREATE TABLE visits(pid VARCHAR COLLATE NOCASE PRIMARY KEY, amount INT)",
     "PROTECT TABLE visits"),  # row by row, by a collated key
])
def test_a_collated_owner_column_is_refused_when_declared(ddl, protect):
    con = provsql_dp.connect()
    con.execute(ddl)
    with pytest.raises(provsql_dp.DatabaseError, match="visits.pid, which compare.s. under a collation"):
        con.execute(protect)
    assert con.execute("SHOW PROTECTED TABLES").fetchall() == []


def test_a_default_collation_set_later_refuses_each_statement_charging_nothing():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE visits(pid VARCHAR, amount INT)")
    con.execute("INSERT INTO visits VALUES ('bob', 1), ('BOB', 2), ('amy', 3)")
    con.execute("PROTECT TABLE visits BY (pid)")
    con.execute("SET PRIVACY BUDGET 10")
    assert con.execute("SELECT COUNT(*) FROM visits WITH EPSILON 1").fetchall()
    con.execute("SET default_collation = 'nocase'")
    with pytest.raises(provsql_dp.DatabaseError, match="collation"):
        con.execute("SELECT SUM(amount) FROM visits WITH EPSILON 1")
    assert con.execute("SHOW PRIVACY BUDGET").fetchall() == [("default", "10", "1", "9")]
    con.execute("SET default_collation = 'binary'")
    assert con.execute("SELECT COUNT(*) FROM visits WITH EPSILON 1").fetchall()
