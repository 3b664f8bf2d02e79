"""A private answer has the select list's columns, in its order and under its names (issue 28:
``SELECT count(*) AS n, dept … GROUP BY dept`` as SmartNoise and Tumult users write it), through
the DB-API and the shell alike; arithmetic, HAVING, ORDER BY and LIMIT keep working."""

from __future__ import annotations

import io

import pytest

import provsql_dp
from provsql_dp.interfaces.shell import main as shell_main

KEYS = ("d0", "d1", "d2")


def _make(path=":memory:"):
    con = provsql_dp.connect(path)
    con.execute("CREATE TABLE t(id INT PRIMARY KEY, dept VARCHAR, g INT, x DOUBLE)")
    con.execute("INSERT INTO t SELECT range, 'd' || (range % 3), range % 2, range % 10 FROM range(300)")
    con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 1000")
    con.execute("SET GROUP KEYS ON t (dept) VALUES ('d0', 'd1', 'd2')")
    con.execute("SET GROUP KEYS ON t (g) VALUES (0, 1)")
    return con


@pytest.mark.parametrize("sql, names", [
    ("SELECT count(*) AS n, dept FROM t GROUP BY dept", ["n", "dept"]),
    ("SELECT count(*) AS n, sum(x) AS s, dept FROM t GROUP BY dept", ["n", "s", "dept"]),
    ("SELECT dept, count(*) AS n FROM t GROUP BY dept", ["dept", "n"]),
    ("SELECT dept AS d, count(*) AS n FROM t GROUP BY dept", ["d", "n"]),
    ("SELECT g, dept, count(*) AS n FROM t GROUP BY dept, g", ["g", "dept", "n"]),
    ("SELECT count(*) AS n, dept, dept AS e FROM t GROUP BY dept", ["n", "dept", "e"]),
    ("SELECT dept, count(*) * 2 AS d, sum(x) AS s FROM t GROUP BY dept", ["dept", "d", "s"]),
    ("SELECT count(*) AS n, dept FROM t GROUP BY dept WITH EPSILON 1 DELTA 1e-6", ["n", "dept"]),
])
def test_the_answer_has_the_select_lists_columns_in_its_order(sql, names):
    con = _make()
    stmt = sql if "WITH EPSILON" in sql else f"{sql} WITH EPSILON 1"
    cur = con.execute(stmt)
    rows = cur.fetchall()
    assert [d[0] for d in cur.description] == names
    assert len(rows) == len(KEYS) * (2 if "g" in names else 1)
    kinds = {"dept": KEYS, "e": KEYS, "g": (0, 1)}
    if "dept AS d" in sql:
        kinds["d"] = KEYS
    for row in rows:
        for name, value in zip(names, row):
            assert value in kinds[name] if name in kinds else isinstance(value, (int, float))

def test_having_order_by_and_limit_keep_the_select_lists_order():
    con = _make()
    cur = con.execute("SELECT count(*) AS n, dept FROM t GROUP BY dept HAVING count(*) > 10 "
                      "ORDER BY dept DESC LIMIT 2 WITH EPSILON 1")
    assert [d[0] for d in cur.description] == ["n", "dept"]
    assert [r[1] for r in cur.fetchall()] == ["d2", "d1"]


def test_the_shell_shows_the_select_lists_order(tmp_path):
    path = str(tmp_path / "t.duckdb")
    _make(path).close()
    out, err = io.StringIO(), io.StringIO()
    code = shell_main(path, command="SELECT count(*) AS n, dept FROM t GROUP BY dept "
                      "WITH EPSILON 1;", mode="csv", stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    lines = out.getvalue().splitlines()
    assert lines[0] == "n,n 95% interval,dept"  # a key is public: no interval of its own
    assert sorted(line.split(",")[-1] for line in lines[1:4]) == list(KEYS)


def test_interval_columns_follow_the_released_values_and_not_the_keys():
    con = _make()
    cur = con.execute("SELECT count(*) AS n, dept FROM t GROUP BY dept WITH EPSILON 1 "
                      "OPTIONS (intervals = 0.95)")
    rows = cur.fetchall()
    assert [d[0] for d in cur.description] == ["n", "n_low", "n_high", "dept"]
    assert all(lo <= n <= hi and dept in KEYS for n, lo, hi, dept in rows)
    assert list(cur.privacy.to_frame().columns) == ["n_low", "n_high"]
