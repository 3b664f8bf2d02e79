"""Post-processing in SQL (issue 28): ORDER BY, LIMIT/OFFSET, HAVING and arithmetic over
released aggregates act on the noisy answers after release, charge nothing more, and are never
silently dropped; intervals follow monotone functions of one release and are NULL otherwise."""

from __future__ import annotations

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import ProgrammingError, UnsupportedQueryError

KEYS = ("a", "b", "c", "d")


@pytest.fixture()
def con():
    c = provsql_dp.connect()
    c._rng = np.random.default_rng(7)  # the noise seeded from Python (tests only)
    c.execute("CREATE TABLE p(id INT PRIMARY KEY, k VARCHAR, m DOUBLE)")
    # group sizes 40, 80, 120, 160: far apart at ε = 1, so the noisy order is the true one
    c.execute("INSERT INTO p SELECT range, CASE WHEN range < 40 THEN 'a' WHEN range < 120 THEN 'b' "
              "WHEN range < 240 THEN 'c' ELSE 'd' END, range % 10 FROM range(400)")
    c.execute("PROTECT TABLE p; SET GROUP KEYS ON p (k) VALUES ('a', 'b', 'c', 'd')")
    c.execute("SET BOUNDS ON p (m) BETWEEN 0 AND 10; SET PRIVACY BUDGET 100")
    yield c
    c.close()


def test_order_by_a_noisy_aggregate_is_applied(con):
    cur = con.execute("SELECT k, COUNT(*) AS n FROM p GROUP BY k ORDER BY n DESC WITH EPSILON 1")
    rows = cur.fetchall()
    assert [r[1] for r in rows] == sorted((r[1] for r in rows), reverse=True)
    assert [r[0] for r in rows] == ["d", "c", "b", "a"]
    # the releases (and intervals) follow the rows
    for (k, n), rel in zip(rows, cur.privacy.releases):
        assert rel.value == n


def test_order_by_position_key_and_limit_offset(con):
    rows = con.execute("SELECT k, COUNT(*) FROM p GROUP BY k ORDER BY 1 DESC LIMIT 2 OFFSET 1 "
                       "WITH EPSILON 1").fetchall()
    assert [r[0] for r in rows] == ["c", "b"]
    rows = con.execute("SELECT COUNT(*) AS n, k FROM p GROUP BY k ORDER BY k WITH EPSILON 1").fetchall()
    assert [r[1] for r in rows] == list(KEYS)  # the select list's order, ORDER BY a key


def test_having_filters_the_released_groups(con):
    cur = con.execute("SELECT k, COUNT(*) FROM p GROUP BY k HAVING COUNT(*) > 100 WITH EPSILON 1")
    rows = cur.fetchall()
    assert {r[0] for r in rows} == {"c", "d"} and all(r[1] > 100 for r in rows)
    # HAVING on an aggregate not selected: it is released (charged) and used, not shown
    cur = con.execute("SELECT k FROM p GROUP BY k HAVING SUM(m) > 500 ORDER BY k WITH EPSILON 1")
    assert [r[0] for r in cur.fetchall()] == ["c", "d"]
    assert cur.privacy.epsilon == 1


def test_arithmetic_over_aggregates_is_a_function_of_the_releases(con):
    cur = con.execute("SELECT k, COUNT(*) AS n, SUM(m) AS s, SUM(m) / COUNT(*) AS r, "
                      "ROUND(SUM(m), -1) AS s10 FROM p GROUP BY k WITH EPSILON 2")
    assert [c[0] for c in cur.description] == ["k", "n", "s", "r", "s10"]
    for k, n, s, r, s10 in cur.fetchall():
        assert r == pytest.approx(s / n)
        assert s10 == pytest.approx(round(s, -1), abs=1e-9)
    assert cur.privacy.epsilon == 2  # two releases (COUNT, SUM), each ε/2: charged once
    covers = cur.privacy.covers()
    assert covers[2].startswith("nothing") and "separately released" in covers[2]
    assert "monotone" in covers[3]


def test_intervals_of_monotone_functions_map_the_ends(con):
    cur = con.execute("SELECT COUNT(*) AS n, COUNT(*) * 2 + 1 AS up, -COUNT(*) AS down, "
                      "COUNT(*) / COUNT(*) AS one FROM p WITH EPSILON 1")
    (n, up, down, one), = cur.fetchall()
    (lo_n, hi_n), (lo_u, hi_u), (lo_d, hi_d), (lo_1, hi_1) = cur.privacy.intervals()[0]
    assert (lo_u, hi_u) == (2 * lo_n + 1, 2 * hi_n + 1) and up == 2 * n + 1
    assert (lo_d, hi_d) == (-hi_n, -lo_n) and down == -n
    assert (lo_1, hi_1) == (None, None)
    assert lo_n <= n <= hi_n


def test_interval_columns_after_post_processing(con):
    cur = con.execute("SELECT k, COUNT(*) * 10 AS n FROM p GROUP BY k ORDER BY n LIMIT 1 "
                      "WITH EPSILON 1 OPTIONS (intervals = true)")
    assert [c[0] for c in cur.description] == ["k", "n", "n_low", "n_high"]
    (k, n, lo, hi), = cur.fetchall()
    assert k == "a" and lo <= n <= hi


def test_refused_post_processing_charges_nothing(con):
    before = con.execute("SHOW PRIVACY BUDGET").fetchall()
    for sql, err, text in (
        ("SELECT k, COUNT(*) FROM p GROUP BY k HAVING m > 1", ProgrammingError,
         "neither a GROUP BY key"),
        ("SELECT k, COUNT(*) FROM p GROUP BY k LIMIT k", UnsupportedQueryError, "whole number"),
        ("SELECT k, COUNT(*) FROM p GROUP BY k HAVING evil(COUNT(*))", UnsupportedQueryError,
         "allow-list"),
        ("SELECT k, COUNT(*) FROM p GROUP BY k ORDER BY 3", ProgrammingError, "out of range"),
        ("SELECT k, COUNT(*) FROM p GROUP BY k HAVING COUNT(*) > 'x' || k", ProgrammingError,
         r"COUNT\(\*\) > 'x' \|\| k"),
    ):
        with pytest.raises(err, match=text):
            con.execute(f"{sql} WITH EPSILON 1")
    assert con.execute("SHOW PRIVACY BUDGET").fetchall() == before


def test_explain_privacy_shows_the_post_processing(con):
    rows = con.execute("EXPLAIN PRIVACY SELECT k, SUM(m) / COUNT(*) AS r FROM p GROUP BY k "
                       "ORDER BY r DESC LIMIT 2 WITH EPSILON 1").fetchall()
    assert [r[8] for r in rows] == ["laplace", "laplace", "post-processing"]
    note = rows[-1][9]
    assert rows[-1][4] == "0" and "free" in note and "ORDER BY r DESC" in note and "LIMIT 2" in note
    assert "separate releases" in note


def test_nothing_is_dropped_without_post_processing(con):
    """A statement with no post-processing keeps the release's own layout (unchanged path)."""
    cur = con.execute("SELECT k, COUNT(*) FROM p GROUP BY k WITH EPSILON 1")
    assert [c[0] for c in cur.description] == ["k", "COUNT(*)"]
    assert [r[0] for r in cur.fetchall()] == list(KEYS)


def test_post_processing_of_a_released_median(con):
    cur = con.execute("SELECT k, MEDIAN(m) + 1 AS m1 FROM p GROUP BY k ORDER BY k WITH EPSILON 1")
    rows = cur.fetchall()
    assert [r[0] for r in rows] == list(KEYS)
    for (k, m1), (lo, hi) in zip(rows, (iv[0] for iv in cur.privacy.intervals())):
        assert 1 <= m1 <= 11 and (lo is None or lo <= m1 <= hi)


def test_division_by_a_released_zero_is_duckdbs_on_the_released_numbers():
    # h60tz: post-processing evaluates `/` as DuckDB (ieee_floating_point_ops, pinned in the
    # post-processing database) does on the released values: x / 0 is ±inf, 0 / 0 NaN — a
    # function of the released numbers only; `//` by zero, which DuckDB refuses, is NULL
    import math

    import duckdb

    c = provsql_dp.connect()
    c._rng = np.random.default_rng(11)
    c.execute("CREATE TABLE p(id INT PRIMARY KEY, k VARCHAR, x DOUBLE)")
    c.execute("INSERT INTO p SELECT range, 'a', 1.0 FROM range(30)")
    # six declared groups without a row: about half of their released COUNTs are 0
    c.execute("PROTECT TABLE p; SET GROUP KEYS ON p (k) VALUES ('a', 'u', 'v', 'w', 'x', 'y', 'z')")
    c.execute("SET BOUNDS ON p (x) BETWEEN 0 AND 2; SET PRIVACY BUDGET 100")
    plain = duckdb.connect()
    rows = c.execute("SELECT k, SUM(x) AS s, COUNT(*) AS n, SUM(x) / COUNT(*) AS r, "
                     "COUNT(*) / COUNT(*) AS q, SUM(x) // COUNT(*) AS i FROM p GROUP BY k "
                     "WITH EPSILON 1").fetchall()
    zeros = [r for r in rows if r[2] == 0]
    assert zeros and any(r[1] > 0 for r in zeros) and any(r[1] < 0 for r in zeros), rows
    for k, s, n, r, q, i in rows:
        want_r, want_q = plain.execute("SELECT ?::DOUBLE / ?::BIGINT, ?::BIGINT / ?::BIGINT",
                                       [s, n, n, n]).fetchone()
        assert r == want_r and (q == want_q or math.isnan(q) and math.isnan(want_q)), (k, s, n)
        if n == 0:
            assert r == math.copysign(math.inf, s) and math.isnan(q) and i is None
    c.close()
