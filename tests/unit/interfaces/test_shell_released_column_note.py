"""The shell's line under a private answer reads the released information, not the column
positions: a single count whose GROUP BY key the select list puts after it (``SELECT count(*) AS
n, dept``) still gets "(every one of N groups at the full ε …)", and a one-row answer its value."""

from __future__ import annotations

import io

import pytest

import provsql_dp
from provsql_dp.interfaces.shell import main


@pytest.fixture()
def database(tmp_path):
    path = str(tmp_path / "t.duckdb")
    con = provsql_dp.connect(path)
    con.execute("CREATE TABLE t(id INT PRIMARY KEY, dept VARCHAR, g INT)")
    con.execute("INSERT INTO t SELECT range, 'd' || (range % 3), 0 FROM range(300)")
    con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 100")
    con.execute("SET GROUP KEYS ON t (dept) VALUES ('d0', 'd1', 'd2')")
    con.execute("SET GROUP KEYS ON t (g) VALUES (0)")
    con.close()
    return path


def shell(database, command):
    out, err = io.StringIO(), io.StringIO()
    assert main(database, command=command, stdout=out, stderr=err) == 0, err.getvalue()
    return out.getvalue()


@pytest.mark.parametrize("select", ["dept, count(*) AS n", "count(*) AS n, dept", "count(*) AS n"])
def test_every_group_at_the_full_epsilon_wherever_the_count_is(database, select):
    out = shell(database, f"SELECT {select} FROM t GROUP BY dept WITH EPSILON 1;")
    assert "ε charged 1 (every one of 3 groups at the full ε: a participant is in one group)" in out


def test_a_split_epsilon_is_stated_per_group_for_a_reordered_count(tmp_path):
    path = str(tmp_path / "e.duckdb")
    con = provsql_dp.connect(path)
    con.execute("CREATE TABLE e(src INT, dst INT, k VARCHAR)")
    con.execute("INSERT INTO e SELECT range % 10, (range * 7) % 10, 'k' || (range % 2) "
                "FROM range(40)")
    con.execute("PROTECT TABLE e BY (src, dst) AS person; SET PRIVACY BUDGET 100")
    con.execute("SET GROUP KEYS ON e (k) VALUES ('k0', 'k1')")
    con.close()
    for select in ("k, count(*) AS n", "count(*) AS n, k"):  # an edge in both groups: ε / 2 each
        out = shell(path, f"SELECT {select} FROM e GROUP BY k WITH EPSILON 1;")
        assert "ε charged 1 (0.5 per group, 2 groups)" in out


def test_a_one_row_reordered_answer_states_its_value_and_interval(database):
    out = shell(database, "SELECT count(*) AS n, g FROM t GROUP BY g WITH EPSILON 1;")
    row = next(line for line in out.splitlines() if line.startswith("| ") and "| 0 " in line)
    value, interval = (c.strip() for c in row.strip("| ").split("|")[:2])
    assert f"private answer: {value}, 95% interval {interval}, laplace mechanism" in out


def test_several_released_aggregates_get_no_per_group_note(database):
    out = shell(database, "SELECT count(*) AS n, count(*) * 2 AS m, dept FROM t GROUP BY dept "
                          "WITH EPSILON 1;")
    assert "every one of" not in out and "per group" not in out
