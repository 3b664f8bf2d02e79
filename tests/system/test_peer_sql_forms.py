"""Issue 28 item 4: the analyst's SQL as SmartNoise SQL / Tumult / psql users write it — a
quantile or variance beside other aggregates (one charge, ε split per aggregate, rows joined by
key), constant scalar subqueries, the statement's clock, APPROX_COUNT_DISTINCT, MIN/MAX as a
low/high quantile; and the refusals, which leave the database and the ledger as they were."""

from fractions import Fraction

import numpy as np
import pytest

import provsql_dp
from conftest import declared_state, mechanism_outcome

MIXED = "SELECT COUNT(*), AVG(x), STDDEV(x), MEDIAN(x) FROM p"


def _db(extra_row: bool = False, budget: str = "50"):
    con = provsql_dp.connect()
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, g VARCHAR, x DOUBLE, y DOUBLE, d DATE)")
    con.execute("INSERT INTO p SELECT i, ['a', 'b', 'c'][i % 3 + 1], i % 10, i % 7, "
                "DATE '2020-01-01' + CAST(i AS INT) FROM range(600) t(i)")
    if extra_row:  # a neighbour: one participant more, with extreme values
        con.execute("INSERT INTO p VALUES (9999, 'a', 1e300, -1e300, DATE '9999-12-31')")
    con.execute(f"PROTECT TABLE p; SET PRIVACY BUDGET {budget}")
    con.execute("SET BOUNDS ON p (x) BETWEEN 0 AND 10")
    con.execute("SET GROUP KEYS ON p (g) VALUES ('a', 'b', 'c')")
    con._rng = np.random.default_rng(5)
    return con


def _spent(con) -> Fraction:
    return Fraction(50) - con.ledger.remaining("default")


def test_mixed_list_is_answered_once_charged_and_split_equally():
    con = _db()
    rows_before = con.execute("SELECT count(*) FROM _provsql_dp.ledger").fetchone()[0]
    cur = con.execute(f"{MIXED} WITH EPSILON 1")
    rows = cur.fetchall()
    assert [c[0] for c in cur.description] == ["COUNT(*)", "AVG(x)", "stddev_samp(x)",
                                                "median(x)"]
    assert len(rows) == 1 and 0 <= rows[0][3] <= 10 and isinstance(rows[0][0], int)
    info = cur.privacy
    assert info.routes == ("laplace", "laplace", "laplace", "variance", "quantile")
    assert _spent(con) == 1 and info.epsilon_exact == 1  # charged once, exactly ε
    assert con.execute("SELECT count(*) FROM _provsql_dp.ledger").fetchone()[0] == rows_before + 1
    assert "split equally over the 4 aggregates" in info.strategy
    assert "at ε = 0.5 (laplace" in info.strategy and "at ε = 0.25 (variance)" in info.strategy
    assert len(info.intervals()[0]) == 4
    # EXPLAIN PRIVACY: one row per released aggregate, its ε the part's share, its route
    explain = con.execute(f"EXPLAIN PRIVACY {MIXED} WITH EPSILON 1").fetchall()
    assert [r[8] for r in explain] == list(info.routes)
    assert [r[4] for r in explain] == ["0.5", "0.5", "0.5", "0.25", "0.25"]


def test_mixed_list_matches_the_separate_releases():
    """The same mechanism and noise per part as each aggregate released alone at its share."""
    con = _db()
    cur = con.execute("SELECT COUNT(*), STDDEV_POP(x), MEDIAN(x) FROM p WITH EPSILON 3")
    cur.fetchall()
    mixed = cur.privacy.releases[0]
    alone = []
    for q in ("COUNT(*)", "STDDEV_POP(x)", "MEDIAN(x)"):
        c = con.execute(f"SELECT {q} FROM p WITH EPSILON 1")
        c.fetchall()
        alone.append(c.privacy.releases[0])
    assert mixed[0].release.epsilon == alone[0].release.epsilon == 1
    assert mixed[0].release.sensitivity == alone[0].release.sensitivity
    for part in ("count", "total", "squares"):
        a, b = getattr(mixed[1], part), getattr(alone[1], part)
        assert (a.epsilon, a.sensitivity) == (b.epsilon, b.sensitivity)
    assert (mixed[2].epsilon, mixed[2].steps, mixed[2].q) == (alone[2].epsilon, alone[2].steps,
                                                              alone[2].q)
    assert _spent(con) == 6


def test_mixed_list_grouped_by_declared_keys_with_post_processing():
    con = _db()
    cur = con.execute("SELECT g, COUNT(*) AS n, STDDEV(x) * 2 AS s2, MEDIAN(x) AS m FROM p "
                      "GROUP BY g HAVING COUNT(*) > 0 ORDER BY g DESC WITH EPSILON 2")
    rows = cur.fetchall()
    assert [r[0] for r in rows] == ["c", "b", "a"]
    assert all(isinstance(r[1], int) and abs(r[1] - 200) < 60 for r in rows)
    assert all(0 <= r[3] <= 10 for r in rows)
    assert cur.privacy.routes == ("laplace", "variance", "quantile")
    assert _spent(con) == 2


def test_mixed_list_on_a_rho_budget_debits_the_statement_once():
    con = _db(budget="RHO 1")
    cur = con.execute(f"{MIXED} WITH EPSILON 1")
    cur.fetchall()
    assert con.ledger.remaining("default") == Fraction(1, 2)  # ε²/2 of the one statement
    assert cur.privacy.unit == "rho" and cur.privacy.epsilon_exact == Fraction(1, 2)


def test_mixed_list_on_an_epsilon_delta_budget_spends_no_delta():
    con = _db(budget="EPSILON 3 DELTA 1e-6")
    con.execute(f"{MIXED} WITH EPSILON 1").fetchall()
    assert con.ledger.remaining("default") == 2
    assert con.execute("SELECT spent, spent_delta, unit FROM _provsql_dp.budget").fetchall() == [
        ("1/1", "0/1", "epsilon-delta")]


@pytest.mark.parametrize("sql", [
    f"{MIXED} WITH RHO 0.1",
    f"{MIXED} WITH EPSILON 1 DELTA 1e-6",
    "SELECT COUNT(*) AS n, STDDEV(x) AS s FROM p ORDER BY n WITH RHO 0.1",
    "EXPLAIN PRIVACY SELECT COUNT(*) AS n, MEDIAN(x) FROM p ORDER BY n WITH RHO 0.1",
    "SELECT COUNT(*), STDDEV(y) FROM p WITH EPSILON 1",  # y has no bounds
    "SELECT COUNT(*), MEDIAN(y) FROM p WITH EPSILON 1",
    "SELECT x, COUNT(*), MEDIAN(y) FROM p GROUP BY x WITH EPSILON 1",  # undeclared keys
    "SELECT COUNT(*), STDDEV(x) FROM p WITH ACCURACY 5",
    "EXPLAIN PRIVACY SELECT COUNT(*), MEDIAN(x) FROM p WITH EPSILON 1 ESTIMATE ERROR WITH "
    "EPSILON 0.5",
    "SELECT COUNT(*) FROM p WHERE x > (SELECT MAX(x) FROM p) WITH EPSILON 1",
    "SELECT MIN(y) FROM p WITH EPSILON 1",
    "SELECT MIN(d) FROM p WITH EPSILON 1",
])
def test_refusals_leave_database_and_ledger_unchanged(sql):
    con = _db()
    before = declared_state(con)
    with pytest.raises(provsql_dp.Error) as err:
        con.execute(sql).fetchall()
    assert declared_state(con) == before
    if "RHO" in sql or "DELTA" in sql:
        assert "pure-ε mechanisms" in str(err.value)
    if "MIN(" in sql:  # in the words the analyst wrote, naming what would be released
        assert str(err.value).startswith(f"{sql[7:13]} is released as QUANTILE_CONT(")


def test_mixed_list_on_neighbours_shows_the_same_outcome():
    for sql in (MIXED, "SELECT g, COUNT(*), STDDEV(x), MEDIAN(x) FROM p GROUP BY g",
                "SELECT COUNT(*), STDDEV(x) FROM p WHERE 1 // id > 0",
                "SELECT MIN(x), MAX(x) FROM p", "SELECT approx_count_distinct(g) FROM p",
                "SELECT COUNT(*) FROM p WHERE d < CURRENT_DATE AND x > (SELECT 2 * 3)"):
        a, b = (mechanism_outcome(_db(extra), sql) for extra in (False, True))
        assert a == b, sql


def test_constant_scalar_subqueries_are_their_values():
    con = _db()
    seen = []
    for where in ("x > (SELECT 4)", "x > 4", "x > (SELECT 2 * 2)", "x > ((SELECT (SELECT 4)))"):
        con._rng = np.random.default_rng(1)
        seen.append(con.execute(f"SELECT COUNT(*) FROM p WHERE {where} WITH EPSILON 1").fetchall())
    assert seen[0] == seen[1] == seen[2] == seen[3]
    cur = con.execute("SELECT (SELECT 2 * 3) AS six, COUNT(*) FROM p WITH EPSILON 1")
    assert cur.fetchall()[0][0] == 6


def test_the_clock_is_a_public_value():
    con = _db()
    today = con.execute("SELECT current_date").fetchone()[0]
    for clock in ("CURRENT_DATE", "NOW()", "CURRENT_TIMESTAMP", "TODAY()"):
        con._rng = np.random.default_rng(1)
        got = con.execute(f"SELECT COUNT(*) FROM p WHERE d < {clock} WITH EPSILON 1").fetchall()
        con._rng = np.random.default_rng(1)
        want = con.execute(f"SELECT COUNT(*) FROM p WHERE d < DATE '{today}' "
                           "WITH EPSILON 1").fetchall()
        assert got == want, clock


def test_approx_count_distinct_is_count_distinct():
    con = _db()
    out = []
    for agg in ("approx_count_distinct(g)", "COUNT(DISTINCT g)"):
        con._rng = np.random.default_rng(2)
        cur = con.execute(f"SELECT {agg} FROM p WITH EPSILON 1")
        out.append((cur.fetchall(), cur.privacy.routes, cur.description[0][0]))
    assert out[0][:2] == out[1][:2] and out[0][1] == ("distinct",)
    assert out[0][2] == "approx_count_distinct(g)"


def test_min_and_max_are_released_as_a_low_and_high_quantile():
    con = _db()
    cur = con.execute("SELECT MIN(x), MAX(x) AS top FROM p WITH EPSILON 2")
    (lo, hi), = cur.fetchall()
    assert [c[0] for c in cur.description] == ["min(x)", "top"]
    assert 0 <= lo <= 10 and 0 <= hi <= 10
    assert cur.privacy.routes == ("quantile", "quantile")
    assert "MIN(x) released as a DP estimate of the q = 0.01 quantile" in cur.privacy.strategy
    assert "MAX(x) released as a DP estimate of the q = 0.99 quantile" in cur.privacy.strategy
    grouped = con.execute("SELECT g, MIN(x) FROM p GROUP BY g WITH EPSILON 1")
    assert len(grouped.fetchall()) == 3 and "q = 0.01" in grouped.privacy.strategy
    assert _spent(con) == 3


def test_grouped_parts_are_joined_by_key_in_the_order_written():
    """Groups of different sizes and medians: each row's values are its own group's."""
    con = _db()
    con.execute("DELETE FROM p WHERE g = 'c' AND id % 2 = 0")  # sizes 200, 200, 100
    con.execute("UPDATE p SET x = CASE g WHEN 'a' THEN 1 WHEN 'b' THEN 5 ELSE 9 END "
                "+ (id * 7 % 100) / 100 - 0.5")  # spread around each group's median
    cur = con.execute("SELECT g, MEDIAN(x) AS m, COUNT(*) AS n, STDDEV_POP(x) AS s FROM p "
                      "GROUP BY g WITH EPSILON 6")
    rows = {r[0]: r[1:] for r in cur.fetchall()}
    assert [c[0] for c in cur.description] == ["g", "m", "n", "s"]
    for key, (median, size) in {"a": (1, 200), "b": (5, 200), "c": (9, 100)}.items():
        m, n, s = rows[key]
        assert abs(m - median) < 0.5 and abs(n - size) < 25 and s < 1, (key, rows[key])
    # a GROUP BY key the select list leaves out: dropped afterwards, the rows still by key
    cur = con.execute("SELECT COUNT(*) AS n, MEDIAN(x) AS m FROM p GROUP BY g ORDER BY m "
                      "WITH EPSILON 6")
    out = cur.fetchall()
    assert [c[0] for c in cur.description] == ["n", "m"] and len(out) == 3
    assert abs(out[2][0] - 100) < 25 and abs(out[2][1] - 9) < 0.5
    before = declared_state(con)
    with pytest.raises(provsql_dp.ProgrammingError, match="a quantile takes none"):
        con.execute("SELECT COUNT(*), MEDIAN(x) FROM p WITH EPSILON 1 OPTIONS (raw = true)")
    assert declared_state(con) == before


def test_a_statement_reading_the_clock_keeps_no_plan():
    """A new instant each time: neither kept by its text (yesterday's date) nor by its SQL
    (one plan per instant would pile up in a long session)."""
    con = _db()
    sql = "SELECT COUNT(*) FROM p WHERE d < CURRENT_TIMESTAMP WITH EPSILON 0.1"
    with con._catalog.snapshot():
        kept = dict(con._catalog._memo or {})
    for _ in range(3):
        con.execute(sql).fetchall()
    with con._catalog.snapshot():
        plans = [k for k in (con._catalog._memo or {}) if k[0] in ("plan", "route")
                 and k not in kept]
    assert not [k for k in plans if "TIMESTAMPTZ" in str(k) or "CURRENT" in str(k).upper()]
