"""Private queries from SQL through the connection: routing, charging, refusals, roles."""

from __future__ import annotations

from fractions import Fraction

import pytest

import provsql_dp
from provsql_dp.errors import (
    BudgetExceededError,
    PrivacyError,
    ProgrammingError,
    UnsupportedQueryError,
)
from provsql_dp.interfaces import example_data

from graph_sql_kit import TRIANGLES, example_db


@pytest.fixture
def con():
    return example_db(budget=5, seed=7)


def ledger_state(c):
    return c.ledger.budget(c.user), len(c.ledger.entries())


def test_a_private_count_is_one_row_with_metadata(con):
    cur = con.execute(TRIANGLES + " WITH EPSILON 0.5")
    rows = cur.fetchall()
    assert len(rows) == 1 and isinstance(rows[0][0], int) and rows[0][0] >= 0  # post-processed
    assert cur.description[0][1] == "BIGINT"
    info = cur.privacy
    assert info.mechanism == "recursive" and info.epsilon == Fraction(1, 2)
    assert info.remaining == Fraction(9, 2)
    (rel,) = info.releases
    assert rel.params["privacy"] == "node" and rel.params["mu"] == 1.0
    assert info.noise_bound(0.95)[0] > 0
    # the release carries released quantities only
    assert not any(hasattr(rel, k) for k in ("x", "delta", "true_answer", "h_values"))
    (entry,) = con.ledger.entries()
    assert entry.mechanism == "recursive" and entry.statement.endswith("WITH EPSILON 0.5")


def test_edge_style_for_single_owner_rows(con):
    cur = con.execute("SELECT COUNT(*) FROM employees WHERE salary > 90000 WITH EPSILON 1 "
                      "OPTIONS (mechanism = 'recursive')")
    assert cur.privacy.releases[0].params["mu"] == 0.5


def test_over_budget_spends_nothing(con):
    before = ledger_state(con)
    with pytest.raises(BudgetExceededError, match="nothing was spent"):
        con.execute(TRIANGLES + " WITH EPSILON 6")
    assert ledger_state(con) == before


@pytest.mark.parametrize("sql", [
    "SELECT * FROM friendship WITH EPSILON 1",
    "SELECT COUNT(*) FROM friendship a LEFT JOIN friendship b ON a.dst = b.src WITH EPSILON 1",
    "SELECT AVG(salary) FROM employees WITH EPSILON 1",
    "SELECT COUNT(*) FROM departments WITH EPSILON 1",
    "SELECT COUNT(*) FROM friendship WITH EPSILON 1 OPTIONS (theta = -1)",
    "SELECT COUNT(*) FROM friendship WITH EPSILON 1 OPTIONS (gamma = 2)",
    "SELECT e.name, COUNT(*) FROM employees e GROUP BY e.name WITH EPSILON 1",
])
def test_refused_private_queries_spend_nothing(con, sql):
    before = ledger_state(con)
    with pytest.raises((UnsupportedQueryError, ProgrammingError)):
        con.execute(sql)
    assert ledger_state(con) == before


def test_group_by_public_keys_releases_every_public_group(con):
    con.execute("INSERT INTO departments VALUES (6, 'Legal')")  # no employee: still released
    cur = con.execute(
        "SELECT d.name, COUNT(*) FROM employees e JOIN departments d ON e.dept_id = d.id "
        "GROUP BY d.name WITH EPSILON 1"
    )
    rows = cur.fetchall()
    assert [r[0] for r in rows] == sorted(r[0] for r in con.execute("SELECT name FROM departments").fetchall())
    assert len(cur.privacy.releases) == 6
    # each employee joins one department (its declared key): parallel composition, full ε each
    assert cur.privacy.mechanism == "laplace"
    assert all(r.epsilon == pytest.approx(1) for r in cur.privacy.releases)
    assert cur.privacy.epsilon == 1


def test_group_by_public_keys_without_a_key_takes_one_l1_bound(con):
    """Without a declared key on the public side a participant may reach several groups: the
    recursive mechanism releases the groups together with one ℓ1 bound across them
    (privacy.group_l1), each at the full ε, the plan counting the 5 groups as moved coordinates."""
    con.execute("CREATE TABLE dept_names AS SELECT * FROM departments")  # no key declared
    cur = con.execute(
        "SELECT d.name, COUNT(*) FROM employees e JOIN dept_names d ON e.dept_id = d.id "
        "GROUP BY d.name WITH EPSILON 1"
    )
    assert cur.privacy.mechanism == "recursive"
    rels = [getattr(r, "release", r) for r in cur.privacy.releases]
    assert all(r.epsilon == pytest.approx(1.0) and r.changed == 5 for r in rels)


def test_session_default_epsilon(con):
    assert con.execute("SELECT COUNT(*) FROM employees").fetchone() == (30,)  # curator: exact
    con.execute("SET PRIVACY EPSILON 0.25")
    cur = con.execute("SELECT COUNT(*) FROM employees")
    assert cur.privacy is not None and cur.privacy.epsilon == Fraction(1, 4)
    assert con.execute("SELECT COUNT(*) FROM departments").fetchone() == (5,)  # public: exact


def test_signed_sum_is_two_half_releases(con):
    cur = con.execute("SELECT SUM(salary - 100000) FROM employees WITH EPSILON 1 OPTIONS (theta = 100000)")
    (rel,) = cur.privacy.releases
    assert rel.mechanism == "recursive-signed"
    assert [p.epsilon for p in rel.parts] == [0.5, 0.5]


def test_a_failing_mechanism_keeps_the_charge(con, monkeypatch):
    """The charge is committed before the mechanism runs: a crash after it loses nothing."""
    from provsql_dp.mechanisms.recursive import efficient as recursive
    from provsql_dp.mechanisms.recursive import single_owner

    def boom(*a, **k):
        raise RuntimeError("solver crashed")

    monkeypatch.setattr(recursive, "release", boom)
    monkeypatch.setattr(single_owner, "release", boom)  # the single-owner fast path
    # PEP 249 only: the crash reaches the curator as an InternalError carrying its message
    with pytest.raises(provsql_dp.InternalError, match="solver crashed"):
        con.execute("SELECT COUNT(*) FROM employees WITH EPSILON 1 OPTIONS (mechanism = 'recursive')")
    assert con.ledger.remaining("default") == 4
    assert len(con.ledger.entries()) == 1
    assert con.execute("SELECT count(*) FROM _provsql_dp.incidents").fetchone()[0] == 1


def test_seed_cannot_come_from_sql(con):
    with pytest.raises(ProgrammingError):
        con.execute("SET PRIVACY SEED 1")


def test_analyst_gets_private_answers_only(tmp_path):
    path = str(tmp_path / "db.duckdb")
    cur = provsql_dp.connect(path)
    example_data.load(cur)
    cur.execute("PROTECT TABLE employees; SET PRIVACY BUDGET 1 FOR USER 'ann'")
    an = provsql_dp.connect(path, role="analyst", user="ann")
    assert an.execute("SELECT COUNT(*) FROM employees WITH EPSILON 0.5").privacy.remaining == Fraction(1, 2)
    assert len(an.execute("SELECT * FROM departments").fetchall()) == 5
    for sql in ["SELECT * FROM employees", "DELETE FROM employees", "PROTECT TABLE departments",
                "SET PRIVACY BUDGET 9 FOR USER 'ann'", "COPY employees TO 'x.csv'",
                f"ATTACH '{path}' AS y", "PRAGMA database_list", "SELECT * FROM read_csv('x.csv')",
                "SELECT * FROM _provsql_dp.ledger", "SELECT * FROM query('SELECT 1')"]:
        with pytest.raises(PrivacyError):
            an.execute(sql)
    with pytest.raises(PrivacyError):
        an.provenance("SELECT * FROM employees")
    with pytest.raises(PrivacyError):
        an.explain("SELECT COUNT(*) FROM employees")
    with pytest.raises(PrivacyError):
        an.ledger.set_budget("ann", 10)
    assert [u for u, *_ in an.ledger.users()] == ["ann"]
    assert an.execute("SHOW PRIVACY BUDGET").fetchall() == [("ann", "1", "0.5", "0.5")]
    assert cur.ledger.remaining("ann") == Fraction(1, 2)


def test_curator_explain_shows_private_diagnostics(con):
    text = con.explain(TRIANGLES, epsilon=0.5)
    assert "Aggregate COUNT" in text and "true_answer=45" in text


def test_analyst_cannot_call_user_defined_macros(tmp_path):
    path = str(tmp_path / "m.duckdb")
    cur = provsql_dp.connect(path)
    example_data.load(cur)
    cur.execute("PROTECT TABLE employees")
    cur.execute("CREATE MACRO headcount() AS (SELECT count(*) FROM employees)")
    cur.execute("CREATE MACRO double_it(x) AS x * 2")
    an = provsql_dp.connect(path, role="analyst", user="ann")
    for sql in ["SELECT headcount()", "SELECT double_it(id) FROM departments"]:
        with pytest.raises(PrivacyError, match="user-defined function"):
            an.execute(sql)
    assert an.execute("SELECT upper(name) FROM departments WHERE id = 1").fetchall() == [("ENGINEERING",)]
