"""GROUP BY a key whose values the statement lists (provsql_dp.sql.key_domain._listed): a CASE
whose every result is a constant, or a predicate (TRUE/FALSE). Its groups are public — read from
the statement, never from a row — so they are released the pure-ε way without declared keys:
every listed value, reached by a row or not; a row whose key is NULL (no ELSE, a predicate over a
NULL) is dropped, as a row outside declared keys is. Refused before: "a group key must be a
column with declared group keys …"."""

from __future__ import annotations

import pytest

import provsql_dp
from provsql_dp.errors import UnsupportedQueryError

BIG = 1e6  # ε large enough that the noise is far below 0.5: the counts come back exact


@pytest.fixture
def con():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE p(id INT PRIMARY KEY, mass DOUBLE, kind VARCHAR)")
    c.execute("INSERT INTO p SELECT i, CASE WHEN i % 10 = 0 THEN NULL ELSE 2000 + i * 10 END, "
              "CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END FROM range(300) r(i)")
    c.execute("PROTECT TABLE p; SET PRIVACY BUDGET 1e9")
    return c


def _plain(con, sql):
    return sorted(con._duck.execute(sql).fetchall(), key=repr)


def test_a_case_of_constants_is_answered_with_every_listed_group(con):
    sql = ("SELECT CASE WHEN mass > 4000 THEN 'heavy' WHEN mass > 9000 THEN 'never' "
           "ELSE 'light' END AS w, COUNT(*) AS n FROM p GROUP BY 1")
    cur = con.execute(f"{sql} WITH EPSILON {BIG}")
    got = sorted(cur.fetchall())
    # 'never' no row reaches (the first branch takes them): released all the same, as noise
    assert [g for g, _ in got] == ["heavy", "light", "never"]
    assert [(g, round(n)) for g, n in got] == sorted(_plain(con, sql) + [("never", 0)])
    assert [c[0] for c in cur.description] == ["w", "n"] and str(cur.description[0][1]) == "VARCHAR"


def test_a_predicate_key_has_the_groups_false_and_true(con):
    sql = "SELECT mass > 4000 AS heavy, AVG(mass) AS m FROM p GROUP BY 1"
    con.execute("SET BOUNDS ON p (mass) BETWEEN 0 AND 6000")
    cur = con.execute(f"{sql} WITH EPSILON {BIG}")
    got = cur.fetchall()
    assert [g for g, _ in got] == [False, True] and str(cur.description[0][1]) == "BOOLEAN"
    truth = dict(r for r in _plain(con, sql) if r[0] is not None)  # NULL masses: dropped
    assert all(abs(m - truth[g]) < 1e-3 for g, m in got)


def test_null_keys_are_dropped_and_other_keys_combine(con):
    sql = ("SELECT kind, CASE WHEN mass < 3000 THEN 1 WHEN mass < 4000 THEN 2 END AS band, "
           "COUNT(*) FROM p GROUP BY kind, band")
    con.execute("SET GROUP KEYS ON p (kind) VALUES ('a', 'b')")
    got = sorted((k, b, round(n)) for k, b, n in con.execute(f"{sql} WITH EPSILON {BIG}").fetchall())
    truth = [r for r in _plain(con, sql) if r[1] is not None]
    assert got == sorted(truth)
    assert {b for _, b, _ in got} == {1, 2}


def test_the_groups_do_not_depend_on_the_rows():
    """Neighbouring databases (one participant more, reaching a group no other row reaches):
    the same groups, in the same order."""
    answers = []
    for extra in (False, True):
        c = provsql_dp.connect()
        c.execute("CREATE TABLE p(id INT PRIMARY KEY, mass DOUBLE)")
        c.execute("INSERT INTO p SELECT i, 3000 FROM range(50) r(i)")
        if extra:
            c.execute("INSERT INTO p VALUES (999, 9999)")
        c.execute("PROTECT TABLE p; SET PRIVACY BUDGET 10")
        rows = c.execute("SELECT CASE WHEN mass > 5000 THEN 'big' ELSE 'small' END, COUNT(*) "
                         "FROM p GROUP BY 1 WITH EPSILON 1").fetchall()
        answers.append([r[0] for r in rows])
    assert answers[0] == answers[1] == ["big", "small"]


@pytest.mark.parametrize("key", [
    "CASE WHEN mass > 4000 THEN mass ELSE 0 END",  # a column's value among the results
    "CASE WHEN mass > 4000 THEN kind ELSE 'x' END",
    "CASE WHEN mass > 4000 THEN lower('A') ELSE 'x' END",  # a function: not a constant here
])
def test_other_case_keys_are_refused_as_before_and_nothing_is_charged(con, key):
    before = con.execute("SHOW PRIVACY BUDGET").fetchall()
    with pytest.raises(UnsupportedQueryError, match="a group key must be a column with declared"):
        con.execute(f"SELECT {key} AS k, COUNT(*) FROM p GROUP BY 1 WITH EPSILON 1")
    assert con.execute("SHOW PRIVACY BUDGET").fetchall() == before
