"""Streams from SQL (papers/004 §6, Theorem 2): CREATE STREAM charges the ledger once, PUBLISH
STREAM draws on the window account only, so publishing outlives the ledger's total; refusals
spend nothing; analysts can list streams but neither create nor publish."""

from fractions import Fraction

import pytest

import provsql_dp
from provsql_dp.errors import BudgetExceededError, PrivacyError, ProgrammingError


@pytest.fixture
def curator(tmp_path):
    db = str(tmp_path / "s.duckdb")
    con = provsql_dp.connect(db)
    con.execute("SET PRIVACY BUDGET 2")
    con.execute("CREATE TABLE visits(day INT, person INT)")
    con.execute("INSERT INTO visits SELECT d, p FROM range(1, 61) t(d), range(5) u(p)")
    yield con, db
    con.close()


def _publish(con, step, eps="1/3"):
    return con.execute(f"PUBLISH STREAM daily STEP {step} WITH EPSILON {eps} AS "
                       f"SELECT count(*) FROM visits WHERE day = {step}").fetchall()


def test_sixty_days_at_a_third_with_a_budget_of_two(curator):
    con, _ = curator
    con.execute("CREATE STREAM daily WINDOW 3 STEPS WITH EPSILON 1")
    assert con.ledger.budget(con.user) == (Fraction(2), Fraction(1))
    for day in range(1, 61):
        [(name, step, _value, eps, scale, _avail)] = _publish(con, day, "0.333")
        assert (name, step, eps, scale) == ("daily", day, "0.333", pytest.approx(1 / 0.333))
    assert con.ledger.budget(con.user) == (Fraction(2), Fraction(1))  # still: charged once
    assert con.execute("SHOW STREAMS").fetchall() == [("daily", 3, "1", 60, 60, "open")]
    assert len(con.execute("SHOW STREAMS daily").fetchall()) == 60


def test_a_full_window_refuses_and_spends_nothing(curator):
    con, _ = curator
    con.execute("CREATE STREAM daily WINDOW 2 STEPS WITH EPSILON 1")
    _publish(con, 1, "0.75")
    with pytest.raises(BudgetExceededError, match=r"steps 1–2 spend 1\.25 > ε = 1.*at most 0\.25"):
        _publish(con, 2, "0.5")
    assert con.execute("SHOW STREAMS").fetchall()[0][3] == 1
    [(_, _, _, _, _, avail)] = _publish(con, 2, "0.25")
    assert avail == "0"


def test_creation_over_budget_and_duplicates_are_refused_without_effect(curator):
    con, _ = curator
    with pytest.raises(BudgetExceededError):
        con.execute("CREATE STREAM big WINDOW 3 STEPS WITH EPSILON 5")
    assert con.execute("SHOW STREAMS").fetchall() == []
    assert con.ledger.budget(con.user)[1] == 0
    con.execute("CREATE STREAM daily WINDOW 3 STEPS WITH EPSILON 1")
    with pytest.raises(ProgrammingError, match="already exists"):
        con.execute("CREATE STREAM daily WINDOW 3 STEPS WITH EPSILON 1")
    assert con.ledger.budget(con.user)[1] == 1
    with pytest.raises(ProgrammingError, match="(?s)statistic failed.*nothing was spent"):
        con.execute("PUBLISH STREAM daily STEP 1 WITH EPSILON 0.5 AS SELECT nope FROM visits")
    with pytest.raises(ProgrammingError, match="one row with one numeric value"):
        con.execute("PUBLISH STREAM daily STEP 1 WITH EPSILON 0.5 AS SELECT day, person FROM visits")
    assert con.execute("SHOW STREAMS").fetchall()[0][3] == 0


def test_streams_survive_a_reconnect_and_analysts_only_read(curator):
    con, db = curator
    con.execute("CREATE STREAM daily WINDOW 3 STEPS WITH EPSILON 1")
    _publish(con, 1, "0.5")
    con.execute("SET PRIVACY BUDGET 1 FOR USER 'ann'")
    con.close()
    ann = provsql_dp.connect(db, role="analyst", user="ann")
    assert ann.execute("SHOW STREAMS").fetchall() == [("daily", 3, "1", 1, 1, "open")]
    for stmt, name in (("CREATE STREAM mine WINDOW 1 STEP WITH EPSILON 0.1", "CREATE STREAM"),
                       ("PUBLISH STREAM daily STEP 2 WITH EPSILON 0.1 AS SELECT count(*) FROM visits",
                        "PUBLISH STREAM"),
                       ("CREATE POLICY p ON visits (day) AS LINE DOMAIN [0, 9) WIDTH 1",
                        "CREATE POLICY"),
                       ("DROP POLICY IF EXISTS p", "DROP POLICY")):
        with pytest.raises(PrivacyError, match=f"^an analyst cannot run {name}: "):
            ann.execute(stmt)  # the statement's own words, not its class name (CREATESTREAM)
    assert ann.execute("SHOW STREAMS").fetchall()[0][3] == 1
    assert ann.ledger.budget("ann") == (Fraction(1), Fraction(0))
    ann.close()
    again = provsql_dp.connect(db)
    with pytest.raises(BudgetExceededError, match="at most 0.5 is available at step 1"):
        _publish(again, 1, "0.75")
    again.close()
