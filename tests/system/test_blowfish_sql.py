"""Blowfish policies end to end through SQL: statements, persistence, routing, charging, errors,
and the statistics of the released answers (seeded from Python only)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import (
    BudgetExceededError,
    OperationalError,
    ProgrammingError,
    UnsupportedQueryError,
)
from provsql_dp.policies.blowfish.catalog import PolicyCatalog
from provsql_dp.privacy import policy_route as bf_route

AGES = [3, 3, 7, 12, 12, 12, 25, 31, 31, 58]  # bins of width 10 on [0, 60): 3, 3, 1, 2, 0, 1


def _con(path=":memory:", budget="1000"):
    con = provsql_dp.connect(path)
    con.execute("CREATE TABLE people (id INTEGER PRIMARY KEY, age INTEGER, income INTEGER, "
                "sex VARCHAR, member BOOLEAN)")
    rows = ", ".join(f"({i}, {a}, {(i * 37) % 100}, '{'F' if i % 2 else 'M'}', {i % 3 == 0})"
                     for i, a in enumerate(AGES))
    con.execute(f"INSERT INTO people VALUES {rows}")
    con.execute("PROTECT TABLE people")
    con.execute(f"SET PRIVACY BUDGET {budget}")
    return con


def _state(con):
    return ([(r.name, r.spec) for r in PolicyCatalog(con._duck).list()], con.ledger.users(),
            len(con.ledger.entries()))


def test_statements_round_trip_and_persist_across_reconnect(tmp_path):
    path = str(tmp_path / "db.duckdb")
    con = _con(path)
    con.execute("CREATE POLICY age_line ON people (age) AS LINE DOMAIN [0, 60) WIDTH 10 BOUNDED")
    con.execute("CREATE POLICY ai ON people (age, income) AS (THRESHOLD 2, LINE) "
                "DOMAIN [0, 60) BINS 6, [0, 100) WIDTH 25 SOURCES ((10, 0))")
    rows = con.execute("SHOW POLICIES").fetchall()
    assert [(r[0], r[3], r[4], r[6], r[7]) for r in rows] == [
        ("age_line", "age", "LINE", "BOUNDED", None), ("ai", "age, income", "(THRESHOLD 2, LINE)",
                                                       "UNBOUNDED", 1)]
    con.close()
    con = provsql_dp.connect(path)
    assert [r[0] for r in con.execute("SHOW POLICIES ON people").fetchall()] == ["age_line", "ai"]
    assert con.execute("DROP POLICY ai").fetchall()[0][0].startswith("dropped policy ai")
    con.close()
    con = provsql_dp.connect(path, read_only=True)
    assert [r[0] for r in con.execute("SHOW POLICIES").fetchall()] == ["age_line"]
    with pytest.raises(OperationalError, match="read-only"):
        con.execute("DROP POLICY age_line")
    con.close()


def test_histogram_releases_every_bin_under_the_policy():
    con = _con()
    con.execute("CREATE POLICY age_line ON people (age) AS LINE DOMAIN [0, 60) WIDTH 10 BOUNDED")
    con._rng = np.random.default_rng(1)
    cur = con.execute("SELECT age, COUNT(*) AS n FROM people GROUP BY age WITH EPSILON 0.5")
    rows = cur.fetchall()
    assert [r[0] for r in rows] == [0, 10, 20, 30, 40, 50]  # empty bin 40 included
    assert [c[0] for c in cur.description] == ["age", "n"]
    p = cur.privacy
    assert (p.mechanism, p.policy, p.epsilon) == ("blowfish", "age_line", Fraction(1, 2))
    assert p.expected_mse > 0 and len(p.releases) == 6
    assert all(b > 0 for b in p.noise_bound(0.95))
    # bounded: the total is public and released exactly
    assert sum(r[1] for r in rows) == pytest.approx(len(AGES))


def test_ranges_cumulative_rectangles_and_marginals_are_exact_at_huge_epsilon():
    con = _con(budget="1e9")
    con.execute("CREATE POLICY age_line ON people (age) AS LINE DOMAIN [0, 60) WIDTH 10")
    con.execute("CREATE POLICY ai ON people (age, income) AS GRID 1 DOMAIN [0, 60) WIDTH 10, "
                "[0, 100) WIDTH 50")
    ages, inc = np.array(AGES), (np.arange(10) * 37) % 100
    q = lambda s: [tuple(r) for r in con.execute(s + " WITH EPSILON 1e6").fetchall()]
    got = q("COUNT RANGES (age BETWEEN 0 AND 9, age >= 10 AND age < 40) FROM people")
    assert [r[0] for r in got] == ["age BETWEEN 0 AND 9", "age >= 10 AND age < 40"]
    assert [round(r[1]) for r in got] == [3, 6]
    cdf = q("COUNT CUMULATIVE age FROM people")
    assert [round(r[1]) for r in cdf] == [3, 6, 7, 9, 9, 10]
    one = q("SELECT COUNT(*) FROM people WHERE age >= 10 AND age <= 29")
    assert round(one[0][0]) == 4
    rect = q("COUNT RANGES (age < 30 AND income < 50, income >= 50) FROM people")
    assert [round(r[1]) for r in rect] == [int(((ages < 30) & (inc < 50)).sum()), int((inc >= 50).sum())]
    marg = q("SELECT income, COUNT(*) FROM people GROUP BY income")
    assert [(r[0], round(r[1])) for r in marg] == [(0, int((inc < 50).sum())), (50, int((inc >= 50).sum()))]
    two = q("SELECT age, income, COUNT(*) FROM people GROUP BY age, income")
    assert len(two) == 12 and round(sum(r[2] for r in two)) == 10
    filt = q("SELECT age, COUNT(*) FROM people WHERE sex = 'F' AND age < 30 GROUP BY age")
    exp_f = [int(((ages // 10 == b) & (np.arange(10) % 2 == 1)).sum()) for b in range(3)]
    assert [(r[0], round(r[1])) for r in filt] == list(zip([0, 10, 20], exp_f))


def test_histogram_without_policy_is_plain_dp_when_the_domain_is_public():
    con = _con()
    cur = con.execute("SELECT member, COUNT(*) FROM people GROUP BY member WITH EPSILON 1")
    assert [r[0] for r in cur.fetchall()] == [False, True]
    assert cur.privacy.policy.startswith("plain DP") and cur.privacy.mechanism == "blowfish"
    before = _state(con)
    with pytest.raises(UnsupportedQueryError, match="Declare the domain with a policy"):
        con.execute("SELECT sex, COUNT(*) FROM people GROUP BY sex WITH EPSILON 1")
    with pytest.raises(UnsupportedQueryError, match="needs a policy"):
        con.execute("COUNT RANGES (age < 10) FROM people WITH EPSILON 1")
    assert _state(con) == before


def test_multi_owner_tables_keep_going_to_the_recursive_mechanism():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE edge (src INTEGER, dst INTEGER); INSERT INTO edge VALUES "
                "(1, 2), (2, 3), (1, 3); PROTECT TABLE edge BY (src, dst) AS person; "
                "SET PRIVACY BUDGET 10")
    with pytest.raises(ProgrammingError, match="several owners"):
        con.execute("CREATE POLICY e ON edge (src) AS LINE DOMAIN [0, 4) WIDTH 1")
    cur = con.execute("SELECT COUNT(*) FROM edge WITH EPSILON 1")
    assert cur.privacy.mechanism.startswith("recursive")


def test_a_by_key_must_be_declared_unique():
    """One record per individual is read from the declarations, never from the rows: whether a
    policy applies must not depend on the data (side-channel rule)."""
    con = provsql_dp.connect()
    con.execute("CREATE TABLE v (person INTEGER, place INTEGER); INSERT INTO v VALUES (1, 1), "
                "(1, 2), (2, 3); PROTECT TABLE v BY (person)")
    with pytest.raises(ProgrammingError, match="owns several rows|not declared unique"):
        con.execute("CREATE POLICY vp ON v (place) AS LINE DOMAIN [0, 4) WIDTH 1")
    con.execute("DELETE FROM v WHERE place = 2")  # unique in the data, still not declared
    with pytest.raises(ProgrammingError, match="ADD PRIMARY KEY"):
        con.execute("CREATE POLICY vp ON v (place) AS LINE DOMAIN [0, 4) WIDTH 1")
    con.execute("ALTER TABLE v ADD PRIMARY KEY (person)")
    con.execute("CREATE POLICY vp ON v (place) AS LINE DOMAIN [0, 4) WIDTH 1")


def test_errors_leave_catalog_and_ledger_unchanged():
    con = _con(budget="1")
    con.execute("CREATE POLICY age_b ON people (age) AS LINE DOMAIN [0, 60) WIDTH 10 BOUNDED")
    before = _state(con)
    bad = [
        ("CREATE POLICY age_b ON people (income) AS LINE DOMAIN [0, 100) WIDTH 10", "already exists"),
        ("CREATE POLICY x ON people (age) AS FULL DOMAIN [0, 60) WIDTH 10", "already has policy"),
        ("SELECT age, COUNT(*) FROM people WHERE sex = 'F' GROUP BY age WITH EPSILON 0.1", "BOUNDED"),
        ("COUNT RANGES (age BETWEEN 5 AND 14) FROM people WITH EPSILON 0.1", "bin edges"),
        ("COUNT RANGES (income < 5) FROM people WITH EPSILON 0.1", "needs a policy"),
        ("SELECT age, COUNT(*) FROM people GROUP BY age WITH EPSILON 0.1 OPTIONS (theta = 2)",
         "OPTIONS apply to the recursive mechanism only"),
        ("SELECT age, COUNT(*) FROM people GROUP BY age WITH EPSILON 2", "budget exceeded"),
    ]
    for sql, msg in bad:
        with pytest.raises((ProgrammingError, UnsupportedQueryError, BudgetExceededError), match=msg):
            con.execute(sql)
        assert _state(con) == before, sql


def test_budget_is_charged_once_before_noise(monkeypatch):
    con = _con(budget="1")
    con.execute("CREATE POLICY age_line ON people (age) AS LINE DOMAIN [0, 60) WIDTH 10")
    seen = []
    real = bf_route.answer

    def spy(*a, **kw):
        seen.append(con.ledger.budget(con.user)[1])  # spent so far, when noise is drawn
        return real(*a, **kw)

    monkeypatch.setattr(bf_route, "answer", spy)
    con.execute("COUNT CUMULATIVE age FROM people WITH EPSILON 0.25")
    assert seen == [Fraction(1, 4)]
    entries = con.ledger.entries()
    assert [(e.mechanism, e.epsilon) for e in entries] == [("blowfish", Fraction(1, 4))]
    with pytest.raises(BudgetExceededError):
        con.execute("COUNT CUMULATIVE age FROM people WITH EPSILON 0.8")
    assert len(seen) == 1 and con.ledger.budget(con.user)[1] == Fraction(1, 4)


def test_session_default_epsilon_applies():
    con = _con()
    con.execute("CREATE POLICY age_line ON people (age) AS LINE DOMAIN [0, 60) WIDTH 10")
    con.execute("SET PRIVACY EPSILON 0.5")
    cur = con.execute("SELECT age, COUNT(*) FROM people GROUP BY age")
    assert cur.privacy.mechanism == "blowfish" and cur.privacy.epsilon == Fraction(1, 2)
    cur = con.execute("COUNT RANGES (age < 30) FROM people")
    assert cur.privacy.epsilon == Fraction(1, 2) and len(cur.fetchall()) == 1


@pytest.mark.parametrize("presence", ["BOUNDED", "UNBOUNDED", "SOURCES (0)"])
def test_histogram_answers_are_unbiased_with_the_stated_variance(presence):
    con = _con(budget="100000")
    con.raw = True  # the mechanism's own releases (rounding to whole counts would bias them)
    con.execute(f"CREATE POLICY p ON people (age) AS THRESHOLD 2 DOMAIN [0, 60) WIDTH 10 {presence}")
    con._rng = np.random.default_rng(7)
    truth = np.bincount(np.array(AGES) // 10, minlength=6)
    runs = 60  # the seed is fixed: deterministic; bounds are ~4 standard errors
    vals = []
    for _ in range(runs):
        cur = con.execute("SELECT age, COUNT(*) FROM people GROUP BY age WITH EPSILON 1")
        vals.append([r[1] for r in cur.fetchall()])
    vals = np.array(vals)
    var = np.array([r.variance for r in cur.privacy.releases])
    assert cur.privacy.expected_mse == pytest.approx(var.mean())
    se = np.sqrt(var / runs)
    assert np.all(np.abs(vals.mean(axis=0) - truth) <= 4 * se + 1e-9)
    z2 = ((vals - truth) ** 2 / np.where(var > 0, var, 1)).mean()  # pooled: ≈ 1 if var is right
    assert 0.6 <= z2 <= 1.4


def test_explain_privacy_spends_nothing_and_its_epsilon_meets_the_accuracy():
    con = _con()
    con.execute("CREATE POLICY age_line ON people (age) AS LINE DOMAIN [0, 60) WIDTH 10 BOUNDED")
    before = _state(con)
    cur = con.execute("EXPLAIN PRIVACY COUNT RANGES (age < 20, age >= 30) FROM people "
                      "WITH ACCURACY 4 CONFIDENCE 0.9")
    rec = dict(zip([c[0] for c in cur.description], cur.fetchone()))
    assert rec["mechanism"] == "blowfish" and rec["alpha"] <= 4 and rec["queries"] == 2
    assert _state(con) == before
    cur = con.execute(f"EXPLAIN PRIVACY COUNT RANGES (age < 20, age >= 30) FROM people "
                      f"WITH EPSILON {rec['epsilon']}")
    again = dict(zip([c[0] for c in cur.description], cur.fetchone()))
    assert again["confidence"] == 0.95 and again["epsilon"] == rec["epsilon"]
    assert again["alpha"] > rec["alpha"]  # a higher confidence needs a wider interval
    # a one-row-per-person COUNT without a policy on its columns: the Laplace route, and its
    # exact α (sensitivity 1, the discrete law's 95 % quantile at ε = 1 is 3)
    cur = con.execute("EXPLAIN PRIVACY SELECT COUNT(*) FROM people WITH EPSILON 1")
    rec = dict(zip([c[0] for c in cur.description], cur.fetchone()))
    assert rec["mechanism"] == "laplace" and rec["alpha"] == 3.0
    cur = con.execute("EXPLAIN PRIVACY SELECT COUNT(*) FROM people a JOIN people b "
                      "ON a.age = b.age WITH EPSILON 1")
    assert cur.fetchone()[0] == "recursive"
    from provsql_dp.policies.blowfish.sqlaccuracy import answer_with_accuracy

    cur = answer_with_accuracy(con.cursor(), "SELECT age, COUNT(*) FROM people GROUP BY age", 3)
    assert cur.privacy.mechanism == "blowfish" and len(cur.fetchall()) == 6


def test_partition_and_composed_policies_release():
    con = _con(budget="1e9")
    con.execute("CREATE POLICY s ON people (sex) AS PARTITION BY (('F', 'M')) BOUNDED")
    con.execute("CREATE POLICY ai ON people (age, income) AS (LINE, FULL) DOMAIN [0, 60) WIDTH 10,"
                " [0, 100) WIDTH 50")
    rows = con.execute("SELECT sex, COUNT(*) FROM people GROUP BY sex WITH EPSILON 1e6").fetchall()
    assert [(r[0], round(r[1])) for r in rows] == [("F", 5), ("M", 5)]
    rows = con.execute("COUNT RANGES (age < 30 AND income >= 50) FROM people WITH EPSILON 1e6").fetchall()
    inc = (np.arange(10) * 37) % 100
    assert round(rows[0][1]) == int(((np.array(AGES) < 30) & (inc >= 50)).sum())


def test_a_marginal_under_a_composed_policy_has_the_projected_policys_error():
    """Issue 'every paper's promise' point 1: under (THRESHOLD 5, FULL) on (age, state), GROUP BY
    state is answered on the projected policy (FULL on the states), not by summing 2-D cells."""
    con = provsql_dp.connect()
    con.execute("SET PRIVACY BUDGET 100")
    for t in ("pairs", "alone"):
        con.execute(f"CREATE TABLE {t} (id INTEGER PRIMARY KEY, age INTEGER, state INTEGER)")
        con.execute(f"INSERT INTO {t} SELECT i, i % 100, i % 50 FROM range(5000) r(i)")
        con.execute(f"PROTECT TABLE {t}")
    con.execute("CREATE POLICY comp ON pairs (age, state) AS (THRESHOLD 5, FULL) "
                "DOMAIN [0, 100) WIDTH 1, [0, 50) WIDTH 1 BOUNDED")
    con.execute("CREATE POLICY st ON alone (state) AS FULL DOMAIN [0, 50) WIDTH 1 BOUNDED")
    con.execute("CREATE POLICY ag ON alone (age) AS THRESHOLD 5 DOMAIN [0, 100) WIDTH 1 BOUNDED")
    for col in ("state", "age"):
        a = con.execute(f"SELECT {col}, COUNT(*) FROM pairs GROUP BY {col} WITH EPSILON 1")
        b = con.execute(f"SELECT {col}, COUNT(*) FROM alone GROUP BY {col} WITH EPSILON 1")
        assert len(a.fetchall()) == len(b.fetchall()) == (50 if col == "state" else 100)
        assert a.privacy.expected_mse == pytest.approx(b.privacy.expected_mse)
    # the state marginal at ε = 1 costs plain DP's 2·(2/ε)² per bin, not 100 cells' worth
    assert a.privacy.expected_mse < 100


def test_accuracy_first_in_one_statement_charges_what_explain_says():
    con = _con()
    con.execute("CREATE POLICY age_line ON people (age) AS LINE DOMAIN [0, 60) WIDTH 10 BOUNDED")
    explain = con.execute("EXPLAIN PRIVACY SELECT age, COUNT(*) FROM people GROUP BY age "
                          "WITH ACCURACY 4 CONFIDENCE 0.9").fetchone()
    cur = con.execute("SELECT age, COUNT(*) FROM people GROUP BY age WITH ACCURACY 4 CONFIDENCE 0.9")
    assert len(cur.fetchall()) == 6 and cur.privacy.mechanism == "blowfish"
    assert cur.privacy.epsilon_exact == Fraction(explain[4])
    assert con.ledger.entries()[-1].epsilon == Fraction(explain[4])
    cur = con.execute("COUNT CUMULATIVE age FROM people WITH ACCURACY 20")
    assert len(cur.fetchall()) == 6
    con.execute("CREATE TABLE other (id INTEGER PRIMARY KEY, x INTEGER); PROTECT TABLE other")
    before = _state(con)
    with pytest.raises(ProgrammingError, match="WITH ACCURACY is not available.*nothing was spent"):
        con.execute("SELECT COUNT(*) FROM other a JOIN other b ON a.x = b.x WITH ACCURACY 5")
    assert _state(con) == before
    # the Laplace route states its accuracy in advance: accuracy-first works there too
    cur = con.execute("SELECT COUNT(*) FROM other WITH ACCURACY 5")
    assert cur.privacy.mechanism == "laplace" and cur.fetchall()[0][0] >= 0
