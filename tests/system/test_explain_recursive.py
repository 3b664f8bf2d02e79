"""EXPLAIN PRIVACY of a recursive-mechanism query: the curator sees the private LP sizes, an
analyst sees only data-independent text (the same on two databases with different data)."""

from __future__ import annotations

import provsql_dp
from provsql_dp.mechanisms.recursive.cost import PUBLIC_NOTE, lp_cost

TRI = ("SELECT COUNT(*) FROM e e1 JOIN e e2 ON e1.dst = e2.src "
       "JOIN e e3 ON e1.src = e3.src AND e2.dst = e3.dst "
       "WHERE e1.src < e1.dst AND e2.src < e2.dst WITH EPSILON 0.5")


def _db(path, edges):
    con = provsql_dp.connect(str(path))
    con.execute("CREATE TABLE e(src INT, dst INT)")
    rows = [(a, b) for a, b in edges] + [(b, a) for a, b in edges]
    con.execute("INSERT INTO e VALUES " + ", ".join(f"({a}, {b})" for a, b in rows))
    con.execute("PROTECT TABLE e BY (src, dst) AS node; SET PRIVACY BUDGET 1 FOR USER 'ann'")
    return con


def test_curator_sees_sizes_analyst_does_not(tmp_path):
    small = [(1, 2), (2, 3), (1, 3)]
    big = [(a, b) for a in range(8) for b in range(a + 1, 8)]
    notes = []
    for k, edges in enumerate((small, big)):
        path = tmp_path / f"db{k}.duckdb"
        cur = _db(path, edges)
        note = cur.execute("EXPLAIN PRIVACY " + TRI).fetchall()[0][-1]
        assert "Curator only" in note and PUBLIC_NOTE in note
        kr = cur.provenance(TRI.replace(" WITH EPSILON 0.5", "").replace("COUNT(*)", "e1.src"))
        assert f"tuples={lp_cost(kr, 0.5, 'node').tuples}" in note
        assert f"tuples={1 if k == 0 else 56}," in note
        cur.close()
        an = provsql_dp.connect(str(path), role="analyst", user="ann")
        notes.append(an.execute("EXPLAIN PRIVACY " + TRI).fetchall())
        assert an.execute("SHOW PRIVACY BUDGET").fetchall()[0][2] == "0"  # nothing spent
        an.close()
    assert notes[0] == notes[1]
    assert "Curator only" not in notes[0][0][-1] and "tuples=" not in notes[0][0][-1]


def test_single_owner_route_names_no_lp(tmp_path):
    """The single-owner closed form solves no LP: its note says so for every role, with no LP
    sizes (they described work that never runs, and counting them captured every tuple)."""
    from provsql_dp.privacy.explain_recursive import CLOSED_FORM_NOTE

    path = tmp_path / "pay.duckdb"
    con = provsql_dp.connect(str(path))
    con.execute("CREATE TABLE pay(id INT PRIMARY KEY, salary DOUBLE)")
    con.execute("INSERT INTO pay SELECT range, 1000 + range % 50 FROM range(300)")
    con.execute("PROTECT TABLE pay; SET PRIVACY BUDGET 1 FOR USER 'ann'")
    sql = "EXPLAIN PRIVACY SELECT SUM(salary) FROM pay WITH EPSILON 1"
    notes = [con.execute(sql).fetchall()[0]]
    con.close()
    an = provsql_dp.connect(str(path), role="analyst", user="ann")
    notes.append(an.execute(sql).fetchall()[0])
    an.close()
    for row in notes:
        assert row[8] == "single-owner" and CLOSED_FORM_NOTE in row[-1]
        assert "LP" not in row[-1] and "tuples=" not in row[-1]
    assert notes[0] == notes[1]
