"""Red team h57attack: equalities that are not identity, in ``JOIN … ON`` and against constants.

h49attack found that a collated ``p.dept = d.dept_id`` in a WHERE clause made
:mod:`provsql_dp.sql.owner_fd` believe a person sits on one department row, and fixed owner_fd
(``Scan.collated``). The same belief had a second home: :mod:`provsql_dp.provenance.owners`
pins a public table's declared key through an inner join's ``ON`` condition on its own
(``_matches_one_row`` for the Laplace route's rows per owner, ``_key_pinned_by`` for the
GROUP BY columns the owner determines), with neither the collation nor the type check. So

* ``SELECT COUNT(*) FROM people p JOIN depts d ON p.dept = d.dept_id`` (``dept`` ``COLLATE
  NOCASE``, ``depts`` holding ``'eng'``, ``'ENG'``, ``'Eng'``) took the Laplace route with
  sensitivity 1 while one person adds 3 rows: ε charged 1, true loss 3 (k case variants: k×);
* the same with ``GROUP BY d.dname`` released each department at the full ε (parallel
  composition) while one person moves 3 groups;
* a DOUBLE ``p.x`` joined to a BIGINT key matches both ``2**53`` and ``2**53 + 1`` (DuckDB
  compares them as doubles): no collation needed;
* owner_fd's rule 2 took ``c.k = 9007199254740992e0`` (a DOUBLE constant against a BIGINT key)
  as fixing the key: two rows pass it.

Each test brute-forces the neighbours (a participant and its rows removed) on the exact answers
and compares with what the release claims: the Laplace sensitivity, or the number of groups one
participant may move at the full ε. Fixed by :mod:`provsql_dp.sql._equal_values` (one rule for
owner_fd and owners.py).
"""

from __future__ import annotations

import pytest

import provsql_dp
from test_red_team_owner_groups import (COLLATED, _changed_groups, _database, _exact, _person,
                                        _plain, _released_per_group_at_full_epsilon)

BIG = [
    "CREATE TABLE people(id INT PRIMARY KEY, dept VARCHAR, salary DOUBLE, x DOUBLE)",
    "CREATE TABLE codes(k BIGINT PRIMARY KEY, label VARCHAR)",
    "INSERT INTO codes VALUES (9007199254740992, 'A'), (9007199254740993, 'B'), (7, 'C')",
    "INSERT INTO people VALUES (1, 'a', 10, 9007199254740992), (2, 'b', 20, 7), (3, 'b', 30, 7)",
]


def _count_change(setup, sql, people) -> float:
    """The largest change of a scalar exact answer when one participant is removed."""
    base = _exact(_plain(setup), sql)[()]
    out = 0
    for p in people:
        con = _plain(setup)
        for d in _person(p):
            con.execute(d)
        out = max(out, abs(base - _exact(con, sql)[()]))
    return out


def _laplace_sensitivity(con, sql) -> float | None:
    """The sensitivity of the release's Laplace noise, or None when it takes another route."""
    cur = con.cursor()
    cur.execute(f"{sql} WITH EPSILON 1")
    cur.fetchall()
    rel = cur.privacy.releases[0]
    rel = getattr(rel, "release", rel)
    return float(rel.sensitivity) if getattr(rel, "mechanism", "") == "laplace" else None


@pytest.mark.parametrize("setup,sql", [
    (COLLATED, "SELECT COUNT(*) FROM people p JOIN depts d ON p.dept = d.dept_id"),
    (BIG, "SELECT COUNT(*) FROM people p JOIN codes c ON p.x = c.k"),
], ids=["collated", "double-bigint"])
def test_join_on_key_bounds_rows_per_owner_only_when_equal_is_identity(setup, sql):
    change = _count_change(setup, sql, [1, 2, 3])
    assert change >= 2  # person 1 adds a row per matching key
    sens = _laplace_sensitivity(_database(setup, ["PROTECT TABLE people"]), sql)
    assert sens is None or sens >= change, (
        f"Laplace noise for sensitivity {sens}, but one participant moves the count by {change}")


@pytest.mark.parametrize("setup,sql", [
    (COLLATED, "SELECT d.dname, COUNT(*) FROM people p JOIN depts d ON p.dept = d.dept_id "
               "GROUP BY d.dname"),
    (COLLATED, "SELECT d.dname, SUM(p.salary) FROM people p JOIN depts d ON p.dept = d.dept_id "
               "GROUP BY d.dname"),
    (BIG, "SELECT c.label, COUNT(*) FROM people p JOIN codes c ON p.x = c.k GROUP BY c.label"),
    # rule 2: a DOUBLE constant does not fix a BIGINT key (both 2**53 and 2**53 + 1 pass)
    (BIG, "SELECT c.label, COUNT(*) FROM people p, codes c WHERE c.k = 9007199254740992e0 "
          "GROUP BY c.label"),
], ids=["collated-count", "collated-sum", "double-bigint", "double-constant"])
def test_join_on_key_determines_groups_only_when_equal_is_identity(setup, sql):
    changed = _changed_groups(setup, _person, sql, [1, 2, 3])
    assert max(changed) >= 2
    full = _released_per_group_at_full_epsilon(_database(setup, ["PROTECT TABLE people"]), sql)
    assert not (full and max(changed) > full), (
        f"each group released at the whole ε, but one participant changes {max(changed)} groups")


@pytest.mark.parametrize("sql", [
    "SELECT COUNT(*) FROM people p JOIN depts d ON p.dept = d.dept_id",
    "SELECT d.dname, COUNT(*) FROM people p JOIN depts d ON p.dept = d.dept_id GROUP BY d.dname",
    "SELECT d.dname, COUNT(*) FROM people p JOIN depts d ON d.dept_id = 'eng' GROUP BY d.dname",
])
def test_binary_join_on_key_keeps_the_laplace_route(sql):
    """Without the collation the proofs still hold: one department row per person, the Laplace
    route at sensitivity 1 with each group at the full ε."""
    plain = [s.replace(" COLLATE NOCASE", "") for s in COLLATED]
    assert max(_changed_groups(plain, _person, sql, [1, 2, 3])) <= 1
    con = _database(plain, ["PROTECT TABLE people"])
    assert _laplace_sensitivity(con, sql) == 1.0


OWNERS = [
    "CREATE TABLE people(name VARCHAR COLLATE NOCASE PRIMARY KEY, age INT)",
    "INSERT INTO people VALUES ('bob', 30), ('Bob', 40), ('al', 50)",  # a binary key holds both
    "CREATE TABLE visits(pname VARCHAR, amount INT)",
    "INSERT INTO visits SELECT 'BOB', 1 FROM range(50)",
]


def test_collated_owner_column_is_refused():
    """Participants named by a collated column: participant 'BOB''s 50 visits join both 'bob'
    and 'Bob' (100 tuples), and the single-owner route (slots merged on the collated equality)
    released them as two participants' 50 each — one person's removal moved two participants'
    totals (2× the ε charged; k spellings, k×). Now refused when declared."""
    con = _plain(OWNERS)
    base = con.execute("SELECT COUNT(*) FROM people p JOIN visits v ON p.name = v.pname").fetchone()[0]
    con.execute("DELETE FROM visits WHERE pname = 'BOB'")
    after = con.execute("SELECT COUNT(*) FROM people p JOIN visits v ON p.name = v.pname").fetchone()[0]
    assert base - after == 100
    with pytest.raises(provsql_dp.ProgrammingError, match="collation"):
        _database(OWNERS, ["PROTECT TABLE people"])


def test_default_collation_set_later_refuses_string_owners_and_charges_nothing():
    plain = [s.replace(" COLLATE NOCASE", "") for s in OWNERS]
    con = _database(plain, ["PROTECT TABLE people", "PROTECT TABLE visits BY (pname) AS people"])
    sql = "SELECT COUNT(*) FROM people p JOIN visits v ON p.name = v.pname WITH EPSILON 1"
    con.execute(sql).fetchall()
    spent = con.execute("SHOW PRIVACY BUDGET").fetchall()
    con.execute("SET default_collation = 'nocase'")
    with pytest.raises(provsql_dp.ProgrammingError, match="collation"):
        con.execute(sql)
    assert con.execute("SHOW PRIVACY BUDGET").fetchall() == spent


@pytest.mark.parametrize("sql", [
    "SELECT COUNT(*) FROM t JOIN u ON t.v = u.v",
    "SELECT COUNT(*) FROM t JOIN u ON t.x = u.x",
    "SELECT SUM(t.v) FROM t JOIN u ON t.v = u.v",
])
def test_a_nan_participant_key_releases_like_any_other(sql):
    """Participants named by a DOUBLE column: DuckDB's NaN = NaN makes NaN one participant, but
    the participant list's lookup compared NaN != NaN and failed after the charge — the error
    (instead of an answer) told that a participant's key is NaN. Outcomes must not differ."""
    kinds = []
    for x in ("1.5", "'nan'"):
        con = _database([f"CREATE TABLE {t}(x DOUBLE, v INT)" for t in ("t", "u")]
                        + [f"INSERT INTO {t} VALUES ({x}, 1), (2.5, 3)" for t in ("t", "u")],
                        ["PROTECT TABLE t BY (x) AS who", "PROTECT TABLE u BY (x) AS who",
                         "SET BOUNDS ON t (v) BETWEEN 0 AND 5"])
        try:
            con.execute(f"{sql} WITH EPSILON 1 OPTIONS (mechanism = 'recursive')").fetchall()
            kinds.append("answer")
        except provsql_dp.Error as e:
            kinds.append(type(e).__name__)
    assert kinds == ["answer", "answer"]
