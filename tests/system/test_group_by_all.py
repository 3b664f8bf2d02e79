"""DuckDB's ``GROUP BY ALL`` and ``ORDER BY ALL`` in a private statement: spelled out by
``post_split`` (every select-list item without an aggregate; every output column) before the
routes read it. Refused before: "species in the select list is neither a GROUP BY key nor inside
an aggregate"."""

from __future__ import annotations

import provsql_dp

BIG = 1e6


def _con():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE p(id INT PRIMARY KEY, k VARCHAR, x DOUBLE)")
    c.execute("INSERT INTO p SELECT i, CASE WHEN i % 3 = 0 THEN 'a' ELSE 'b' END, i % 7 "
              "FROM range(300) r(i)")
    c.execute("PROTECT TABLE p; SET BOUNDS ON p (x) BETWEEN 0 AND 10; SET PRIVACY BUDGET 1e9")
    c.execute("SET GROUP KEYS ON p (k) VALUES ('a', 'b')")
    return c


def test_group_by_all_is_the_keys_spelled_out():
    con = _con()
    sql = ("SELECT k, SUM(x) / 10 AS s, COUNT(*) FILTER (WHERE x > 3) AS n FROM p GROUP BY ALL "
           "ORDER BY ALL DESC")
    cur = con.execute(f"{sql} WITH EPSILON {BIG}")
    got = [(k, round(s, 2), round(n)) for k, s, n in cur.fetchall()]
    truth = [(k, round(s, 2), n) for k, s, n in con._duck.execute(sql).fetchall()]
    assert got == truth and [r[0] for r in got] == ["b", "a"]
    assert [d[0] for d in cur.description] == ["k", "s", "n"]


def test_group_by_all_without_a_key_is_one_group():
    con = _con()
    assert round(con.execute(f"SELECT COUNT(*) FROM p GROUP BY ALL WITH EPSILON {BIG}")
                 .fetchall()[0][0]) == 300


def test_count_if_is_a_filtered_count():
    """DuckDB's count_if(c) is COUNT(*) FILTER (WHERE c), its own FILTER joined by AND; an
    unnamed one keeps its own name. Refused before ("not supported in a private query")."""
    con = _con()
    cur = con.execute(f"SELECT k, count_if(x > 3), count_if(x > 3) FILTER (WHERE x < 6) AS mid "
                      f"FROM p GROUP BY k WITH EPSILON {BIG}")
    got = [(k, round(a), round(b)) for k, a, b in cur.fetchall()]
    truth = con._duck.execute("SELECT k, count_if(x > 3), count_if(x > 3 AND x < 6) FROM p "
                              "GROUP BY k ORDER BY k").fetchall()
    assert got == truth
    assert [d[0] for d in cur.description] == ["k", "COUNT_IF(x > 3)", "mid"]
