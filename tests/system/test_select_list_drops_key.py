"""A select list that leaves a GROUP BY key out returns the select list's columns only, in its
order (``SELECT count(*) AS n FROM t GROUP BY dept`` answers one column ``n``, as plain SQL and
SmartNoise do): through the DB-API (description, rows, ``fetchdf``, interval columns,
``PrivacyInfo``), the shell and the wire server. Every route still judges the statement as
written, so its refusals stay the same sentences; the quantile and variance routes take the
statistic alone with GROUP BY (one column per group)."""

from __future__ import annotations

import io

import pytest

import provsql_dp
from conftest import declared_state
from provsql_dp.interfaces.shell import main as shell_main

KEYS = ("d0", "d1", "d2")


def _make(path=":memory:"):
    con = provsql_dp.connect(path)
    con.execute("CREATE TABLE t(id INT PRIMARY KEY, dept VARCHAR, g INT, x DOUBLE)")
    con.execute("INSERT INTO t SELECT range, 'd' || (range % 3), range % 2, range % 10 "
                "FROM range(300)")
    con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 1000")
    con.execute("SET GROUP KEYS ON t (dept) VALUES ('d0', 'd1', 'd2')")
    con.execute("SET GROUP KEYS ON t (g) VALUES (0, 1)")
    con.execute("SET BOUNDS ON t (x) BETWEEN 0 AND 10")
    return con


@pytest.mark.parametrize("sql, names, groups", [
    ("SELECT count(*) AS n FROM t GROUP BY dept", ["n"], 3),
    ("SELECT count(*) FROM t GROUP BY dept, g", ["COUNT(*)"], 6),
    ("SELECT count(*) AS n, dept FROM t GROUP BY dept, g", ["n", "dept"], 6),
    ("SELECT g AS gg, sum(x) AS s FROM t GROUP BY dept, g", ["gg", "s"], 6),
    ("SELECT count(*) AS n, avg(x) AS a FROM t GROUP BY dept", ["n", "a"], 3),
    ("SELECT count(*) AS n FROM t GROUP BY dept WITH EPSILON 1 OPTIONS (mechanism = 'recursive')",
     ["n"], 3),
    ("SELECT count(DISTINCT g) AS c FROM t GROUP BY dept", ["c"], 3),
])
def test_the_answer_has_only_the_select_lists_columns(sql, names, groups):
    con = _make()
    cur = con.execute(sql if "WITH EPSILON" in sql else f"{sql} WITH EPSILON 1")
    rows = cur.fetchall()
    assert [d[0] for d in cur.description] == names
    assert len(rows) == groups and all(len(r) == len(names) for r in rows)
    for row in rows:
        for name, value in zip(names, row):
            if name == "dept":
                assert value in KEYS
            elif name == "gg":
                assert value in (0, 1)
            else:
                assert isinstance(value, (int, float))
    # the value columns run from the first released one to the end (a key before it is not one
    # of them); a key after it is public among them, without an interval
    info = cur.privacy
    first = next(j for j, n in enumerate(names) if n not in ("dept", "gg"))
    assert info.value_names == tuple(names[first:])
    assert all(len(iv) == len(names) - first for iv in info.intervals())
    assert info.public_columns == tuple(j - first for j, n in enumerate(names)
                                        if j >= first and n in ("dept", "gg"))


def test_fetchdf_interval_columns_and_privacy_info_follow_the_one_column():
    con = _make()
    cur = con.execute("SELECT count(*) AS n FROM t GROUP BY dept WITH EPSILON 1 "
                      "OPTIONS (intervals = 0.95)")
    assert [d[0] for d in cur.description] == ["n", "n_low", "n_high"]
    rows = cur.fetchall()
    assert len(rows) == 3 and all(lo <= n <= hi for n, lo, hi in rows)
    cur = con.execute("SELECT count(*) AS n FROM t GROUP BY dept WITH EPSILON 1")
    df = cur.fetchdf()
    assert list(df.columns) == ["n", "n_low", "n_high"]  # fetchdf adds the intervals
    info = cur.privacy
    assert info.value_names == ("n",) and info.columns == () and info.public_columns == ()
    assert list(info.to_frame().columns) == ["n_low", "n_high"]
    assert info.routes == ("laplace",) and len(info.noise_bound()) == 3


def test_a_key_listed_after_the_aggregate_keeps_no_interval():
    con = _make()
    cur = con.execute("SELECT count(*) AS n, dept FROM t GROUP BY dept, g WITH EPSILON 1 "
                      "OPTIONS (intervals = 0.95)")
    assert [d[0] for d in cur.description] == ["n", "n_low", "n_high", "dept"]
    assert list(cur.privacy.to_frame().columns) == ["n_low", "n_high"]


def test_explain_privacy_shows_the_projection_free():
    con = _make()
    rows = con.execute("EXPLAIN PRIVACY SELECT count(*) AS n FROM t GROUP BY dept "
                       "WITH EPSILON 1").fetchall()
    assert [r[8] for r in rows] == ["laplace", "post-processing"]
    assert rows[-1][4] == "0" and rows[-1][9].endswith("output n")


# The quantile and variance routes take a select list of their GROUP BY column and the
# statistic, or of the statistic alone (the column left out: answered per group, one column,
# as the COUNT above and as the same statement with an ORDER BY already was); other select
# lists are refused as before, in the same words.
REFUSED = [
    ("SELECT dept, MEDIAN(x) FROM t GROUP BY dept, g WITH EPSILON 1",
     "MEDIAN with GROUP BY takes one column of 't' as the group"),
    ("SELECT stddev_pop(x) AS s FROM t GROUP BY dept, g WITH EPSILON 1",
     "STDDEV_POP with GROUP BY takes one column of 't' as the group"),
]


@pytest.mark.parametrize("sql, message", REFUSED)
def test_the_quantile_routes_refusals_are_the_same_sentences(sql, message):
    con = _make()
    before = declared_state(con)
    with pytest.raises(provsql_dp.UnsupportedQueryError) as err:
        con.execute(sql)
    assert str(err.value) == message
    assert declared_state(con) == before  # nothing charged, nothing declared


@pytest.mark.parametrize("sql, name, groups", [
    ("SELECT MEDIAN(x) FROM t GROUP BY dept WITH EPSILON 1", "MEDIAN(x)", 3),
    ("SELECT QUANTILE_CONT(x, 0.9) AS q FROM t GROUP BY g WITH EPSILON 1", "q", 2),
    ("SELECT var_samp(x) AS v FROM t GROUP BY dept WITH EPSILON 1", "v", 3),
    ("SELECT stddev_pop(x) AS s FROM t GROUP BY g WITH EPSILON 1", "s", 2),
])
def test_a_quantile_or_variance_without_its_group_column_answers_one_column(sql, name, groups):
    con = _make()
    left = con.ledger.remaining("default")
    cur = con.execute(sql)
    assert [d[0] for d in cur.description] == [name]
    rows = cur.fetchall()
    assert len(rows) == groups and all(len(r) == 1 and 0 <= r[0] <= 100 for r in rows)
    assert left - con.ledger.remaining("default") == 1  # charged once


def test_a_statement_route_the_planner_cannot_plan_takes_a_reordered_select_list():
    # the post-processing is compiled without the plan the planner refuses (VAR_SAMP): the
    # variance route answers, as it does for the keys-first select list
    con = _make()
    cur = con.execute("SELECT var_samp(x) AS v, dept FROM t GROUP BY dept WITH EPSILON 1")
    assert [d[0] for d in cur.description] == ["v", "dept"]
    assert sorted(r[1] for r in cur.fetchall()) == list(KEYS)


def test_the_shell_shows_the_one_column(tmp_path):
    path = str(tmp_path / "t.duckdb")
    _make(path).close()
    out, err = io.StringIO(), io.StringIO()
    code = shell_main(path, command="SELECT count(*) AS n FROM t GROUP BY dept WITH EPSILON 1;",
                      mode="csv", stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    lines = out.getvalue().splitlines()
    assert lines[0] == "n,95% interval" and len(lines) == 4
    assert "every one of 3 groups at the full ε" in err.getvalue()


@pytest.mark.slow  # a real client end to end, as tests/system/test_pgwire.py
def test_the_wire_server_returns_the_one_column(tmp_path):
    psycopg = pytest.importorskip("psycopg")
    from pgwire_support import dsn, make_database, running_server

    path = str(tmp_path / "wire.duckdb")
    make_database(path)
    with running_server(path, max_concurrent=1) as server, \
            psycopg.connect(dsn(server, "ann"), autocommit=True) as c:
        cur = c.execute("SELECT COUNT(*) AS n FROM emp GROUP BY dept WITH EPSILON 0.25")
        assert [d.name for d in cur.description] == ["n", "n_low", "n_high"]
        rows = cur.fetchall()
        assert len(rows) == 3 and all(lo <= n <= hi for n, lo, hi in rows)
        last = c.execute("SHOW LAST RELEASE").fetchall()
        assert [r[4] for r in last] == ["n", "n", "n"]
