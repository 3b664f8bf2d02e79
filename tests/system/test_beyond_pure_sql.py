"""WITH EPSILON ε DELTA δ and WITH RHO ρ end to end: the Gaussian route, private partition
selection (threshold, per-participant group bound, binned keys), refusals that spend nothing,
EXPLAIN PRIVACY, and budgets in each unit."""

import math
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import ProgrammingError, UnsupportedQueryError
from provsql_dp.privacy.partition_selection import threshold


def _con(budget="RHO 100", seed=0):
    con = provsql_dp.connect()
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, age INT, city VARCHAR, salary DOUBLE)")
    con.execute("INSERT INTO p SELECT range, range % 90, 'c' || (range % 7), range % 1000 "
                "FROM range(2000)")
    con.execute("INSERT INTO p VALUES (9000, 5, 'lonely', 1)")
    con.execute("CREATE TABLE v(pid INT, place VARCHAR)")
    con.execute("INSERT INTO v SELECT range % 2000, 'x' || (range % 13) FROM range(8000)")
    con.execute("PROTECT TABLE p; PROTECT TABLE v BY (pid) AS p")
    con.execute(f"SET PRIVACY BUDGET {budget}")
    con._rng = np.random.default_rng(seed)
    return con


def test_gaussian_count_is_unbiased_with_the_planned_sigma():
    con = _con()
    vals = [con.execute("SELECT COUNT(*) FROM p WHERE age < 45 WITH RHO 0.02 "
                        "OPTIONS (raw = true)").fetchone()[0] for _ in range(100)]
    truth = con.execute("SELECT COUNT(*) FROM p WHERE age < 45").fetchone()[0]
    sigma = 1 / math.sqrt(2 * 0.02)  # 5: on the unit grid, exactly
    assert abs(np.mean(vals) - truth) < 4 * sigma / math.sqrt(100)
    assert 0.75 * sigma < np.std(vals) < 1.25 * sigma
    assert con.ledger.account(con.user)[2] == Fraction(100 * 2, 100)  # ρ adds up exactly


def test_a_pure_epsilon_query_on_a_rho_budget_costs_eps_squared_over_two():
    con = _con()
    cur = con.execute("SELECT COUNT(*) FROM p WITH EPSILON 0.5")
    assert cur.privacy.mechanism == "laplace"
    assert con.ledger.account(con.user)[2] == Fraction(1, 8)


def test_epsilon_delta_takes_the_smaller_variance_and_charges_what_it_used():
    con = _con("EPSILON 100 DELTA 1e-3")
    cur = con.execute("SELECT COUNT(*) FROM p WITH EPSILON 1 DELTA 1e-6")
    assert cur.privacy.routes == ("laplace",)  # Laplace at ε = 1 beats the Gaussian here
    assert con.ledger.account(con.user)[4] == 0  # δ not spent
    row = con.execute("EXPLAIN PRIVACY SELECT COUNT(*) FROM p WITH EPSILON 1 DELTA 1e-6").fetchone()
    assert row[8] == "laplace" and "δ not spent" in row[9]


@pytest.mark.parametrize("budget,sql,match", [
    ("3", "SELECT COUNT(*) FROM p WITH RHO 0.1", "SET PRIVACY BUDGET RHO"),
    ("3", "SELECT city, COUNT(*) FROM p GROUP BY city WITH EPSILON 1 DELTA 1e-6",
     "EPSILON ε DELTA δ"),
    ("RHO 1", "SELECT SUM(salary) FROM p WITH RHO 0.1", "route single-owner"),
    ("RHO 1", "SELECT MEDIAN(age) FROM p WITH RHO 0.1", "quantile"),
    ("RHO 1", "SELECT COUNT(*) FROM p JOIN v ON p.id = v.pid WITH RHO 0.1", "route single-owner"),
    ("RHO 1", "SELECT COUNT(*), SUM(salary) FROM p WITH RHO 0.1", "SUM.salary. takes route"),
    ("RHO 1", "SELECT AVG(age) FROM p WITH RHO 0.1", "needs bounds"),
    ("RHO 1", "SELECT city, COUNT(*) FROM p GROUP BY city WITH RHO 0.1", "partition selection"),
    ("EPSILON 3 DELTA 1e-3", "SELECT place, COUNT(*) FROM v GROUP BY place "
     "WITH EPSILON 1 DELTA 1e-6", "max_groups"),
    ("EPSILON 3 DELTA 1e-3", "SELECT COUNT(*) FROM p WITH EPSILON 1 DELTA 2", "delta"),
])
def test_refusals_name_the_fix_and_spend_nothing(budget, sql, match):
    con = _con(budget)
    before = con.ledger.account(con.user)
    with pytest.raises((ProgrammingError, UnsupportedQueryError), match=match):
        con.execute(sql)
    assert con.ledger.account(con.user) == before


def test_partition_selection_releases_big_groups_and_never_a_lonely_one():
    con = _con("EPSILON 1000 DELTA 0.1")
    for seed in range(30):
        con._rng = np.random.default_rng(seed)
        rows = con.execute("SELECT city, COUNT(*) FROM p GROUP BY city "
                           "WITH EPSILON 1 DELTA 1e-6").fetchall()
        assert sorted(r[0] for r in rows) == [f"c{i}" for i in range(7)]
        assert all(abs(n - 2000 / 7) < 20 for _, n in rows)


def test_binned_keys_are_partitions():
    con = _con("EPSILON 1000 DELTA 0.1")
    rows = con.execute("SELECT FLOOR(age / 10) AS b, COUNT(*) FROM p GROUP BY 1 "
                       "WITH EPSILON 1 DELTA 1e-6").fetchall()
    assert sorted(int(b) for b, _ in rows) == list(range(9))
    rows = con.execute("SELECT ROUND(salary, -2) AS b, SUM(salary) FROM p GROUP BY 1 "
                       "WITH EPSILON 2 DELTA 1e-6 OPTIONS (lower = 0, upper = 1000)").fetchall()
    assert len(rows) == 11  # 0, 100, …, 1000 (the lonely salary 1 rounds into 0)
    by = dict(rows)
    assert abs(by[500.0] - sum(range(450, 550)) * 2) < 20_000


def test_each_participant_keeps_at_most_max_groups_groups():
    con = _con("EPSILON 1000 DELTA 0.1")
    rows = con.execute("SELECT place, COUNT(*) FROM v GROUP BY place WITH EPSILON 5 DELTA 1e-6 "
                       "OPTIONS (max_groups = 1, max_rows = 1)").fetchall()
    # every participant of v (2000) contributes to exactly one place after the hash rule
    assert abs(sum(n for _, n in rows) - 2000) < 13 * 15
    again = con.execute("SELECT place, COUNT(*) FROM v GROUP BY place WITH EPSILON 5 DELTA 1e-6 "
                        "OPTIONS (max_groups = 2, max_rows = 1)").fetchall()
    assert abs(sum(n for _, n in again) - 4000) < 13 * 15


def test_the_hash_rule_reads_only_the_participants_own_rows():
    """Adding a participant changes the groups kept by no one else (the kept groups of the
    others, read from the selection's own SQL, are the same)."""
    from provsql_dp.privacy.partition_selection import selection_sql
    from provsql_dp.provenance.owners import owners
    from provsql_dp.sql import dialect as d
    from provsql_dp.sql.planner import plan_query

    con = _con()
    plan = plan_query(d.parse_one("SELECT place, COUNT(*) FROM v GROUP BY place"), con._catalog)
    sql = selection_sql(plan, owners(plan.child), 1, 1, None)
    before = {g: u for g, u, _ in con._duck.execute(sql).fetchall()}
    con.execute("INSERT INTO v SELECT 5000, 'x' || range FROM range(13)")
    after = {g: u for g, u, _ in con._duck.execute(sql).fetchall()}
    changed = [(g, n, after[g]) for g, n in before.items() if after[g] != n]
    assert len(changed) == 1 and changed[0][2] == changed[0][1] + 1


def test_threshold_is_exact_and_tight():
    getcontext().prec = 60
    for lam, m, delta in [(Fraction(1), 1, Fraction(1, 10**6)), (Fraction(7, 2), 3, Fraction(1, 10**9)),
                          (Fraction(2), 10, Fraction(1, 100)), (Fraction(1, 4), 1, Fraction(1, 2))]:
        t = threshold(lam, m, delta)
        p = (-(Decimal(1) / (Decimal(lam.numerator) / Decimal(lam.denominator)))).exp()
        tail = lambda T: Decimal(m) * p ** (T - 1) / (1 + p)  # noqa: E731
        assert tail(t) <= Decimal(delta.numerator) / Decimal(delta.denominator)
        assert t == 1 or tail(t - 1) > Decimal(delta.numerator) / Decimal(delta.denominator) * \
            Decimal("0.999999")


@pytest.mark.parametrize("eps,m,delta", [(1.0, 1, 0.2), (0.5, 3, 0.05)])
def test_a_singleton_group_clears_the_threshold_at_most_at_rate_delta(eps, m, delta):
    """With the release's own plan and sampler: a group of one participant (u = 1) is released
    when 1 + K ≥ T; over m such groups the rate is m·p^{T−1}/(1+p) ≤ δ, and the threshold is
    tight (the rate is above δ/(1+e^{1/λ}), the next threshold's)."""
    from provsql_dp.mechanisms.noise.safe_noise import plan_laplace

    plan = plan_laplace(m, eps, integer=True)
    t = threshold(plan.noise_units, m, Fraction(delta))
    n = 200_000
    noisy = plan.release_array(np.ones(n), rng=np.random.default_rng(11))
    rate = m * float(np.mean(noisy >= t))
    assert rate <= delta * 1.05
    assert rate >= delta * math.exp(-1 / float(plan.noise_units)) * 0.9


def test_explain_shows_unit_noise_and_route():
    con = _con("EPSILON 10 DELTA 1e-3")
    row = con.execute("EXPLAIN PRIVACY SELECT city, COUNT(*) FROM p GROUP BY city "
                      "WITH EPSILON 1 DELTA 1e-6").fetchone()
    assert row[0] == row[8] == "partition-selection"
    assert row[4] == "ε = 1, δ = 0.000001" and "released when ≥ 15" in row[2]
    con = _con("RHO 1")
    row = con.execute("EXPLAIN PRIVACY SELECT COUNT(*) FROM p WITH RHO 0.02").fetchone()
    assert row[0] == "gaussian" and row[4] == "ρ = 0.02" and "σ = 5" in row[2]
    assert abs(row[5] - 5.0) < 1e-9


def test_show_budget_in_each_unit():
    con = _con("RHO 0.5")
    con.execute("SELECT COUNT(*) FROM p WITH RHO 0.1")
    assert con.execute("SHOW PRIVACY BUDGET").fetchall() == [
        ("default", "ρ = 0.5", "ρ = 0.1", "ρ = 0.4 ≈ (ε = 5.102, δ = 0.000001)")]


def test_null_and_decimal_keys_come_back_as_sql_gives_them():
    from decimal import Decimal as D

    con = _con("EPSILON 1000 DELTA 0.1")
    con.execute("CREATE TABLE w(id INT PRIMARY KEY, k INT, d DECIMAL(6, 2))")
    con.execute("INSERT INTO w SELECT range, CASE WHEN range % 2 = 0 THEN NULL ELSE 7 END, "
                "CASE WHEN range % 2 = 0 THEN 1.25 ELSE 2.50 END FROM range(400)")
    con.execute("PROTECT TABLE w")
    rows = con.execute("SELECT k, COUNT(*) FROM w GROUP BY k WITH EPSILON 2 DELTA 1e-6").fetchall()
    assert [r[0] for r in rows] == [7, None]
    rows = con.execute("SELECT d, COUNT(*) FROM w GROUP BY d WITH EPSILON 2 DELTA 1e-6").fetchall()
    assert [r[0] for r in rows] == [D("1.25"), D("2.50")]


def test_several_aggregates_share_rho_and_an_avg_is_released():
    con = _con("RHO 1")
    con.execute("SET GROUP KEYS ON p (city) VALUES (" + ", ".join(f"'c{i}'" for i in range(7)) + ")")
    cur = con.execute("SELECT city, AVG(salary), COUNT(*) FROM p GROUP BY city "
                      "WITH RHO 0.5 OPTIONS (lower = 0, upper = 1000)")
    assert cur.privacy.mechanism == "gaussian" and cur.privacy.columns == ("AVG(salary)", "COUNT(*)")
    rows = cur.fetchall()
    assert [r[0] for r in rows] == [f"c{i}" for i in range(7)]
    for _, avg, n in rows:
        assert 0 <= avg <= 1000 and abs(avg - 500) < 60 and abs(n - 2000 / 7) < 15
    assert con.ledger.account(con.user)[2] == Fraction(1, 2)


def test_explain_of_several_aggregates():
    con = _con("RHO 1")
    rows = con.execute("EXPLAIN PRIVACY SELECT AVG(salary), COUNT(*) FROM p WITH RHO 0.5 "
                       "OPTIONS (lower = 0, upper = 1000)").fetchall()
    assert [r[8] for r in rows] == ["gaussian"] * 3 and all(r[4] == "ρ = 0.5" for r in rows)
