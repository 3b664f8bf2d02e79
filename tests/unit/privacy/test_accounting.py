"""Budgets in pure ε, (ε, δ) and zCDP ρ: exact debits, conversions, refusals, and the migration
of a ledger made before budget units."""

from fractions import Fraction

import duckdb
import pytest

from provsql_dp.errors import BudgetExceededError, DeclarationError, ProgrammingError
from provsql_dp.privacy.accounting import Cost, debit, equivalent
from provsql_dp.privacy.ledger import Ledger
from provsql_dp.sql.catalog import SCHEMA

F = Fraction


def test_rho_budget_composes_in_rho_and_converts_pure_epsilon():
    led = Ledger(duckdb.connect())
    led.set_budget("a", "1/2", unit="rho")
    c = led.charge("a", None, "q", "gaussian", cost=Cost(rho=F(1, 10)))
    assert (c.unit, c.epsilon, c.remaining) == ("rho", F(1, 10), F(2, 5))
    c = led.charge("a", F(1, 2), "q", "laplace")  # pure ε = 1/2 is ρ = 1/8
    assert (c.epsilon, c.remaining) == (F(1, 8), F(11, 40))
    with pytest.raises(ProgrammingError, match="WITH RHO"):
        led.charge("a", None, "q", "x", cost=Cost(epsilon=F(1), delta=F(1, 10**6)))
    with pytest.raises(BudgetExceededError, match="ρ = "):
        led.charge("a", None, "q", "x", cost=Cost(rho=F(1, 2)))
    assert led.account("a") == ("rho", F(1, 2), F(9, 40), F(0), F(0))
    assert [e.unit for e in led.entries("a")] == ["rho", "rho"]


def test_epsilon_delta_budget_adds_both_and_refuses_rho():
    led = Ledger(duckdb.connect())
    led.set_budget("b", 2, unit="epsilon-delta", delta=F(1, 10**5))
    led.charge("b", None, "q", "gaussian", cost=Cost(epsilon=F(1), delta=F(1, 10**6)))
    led.charge("b", F(1, 2), "q", "laplace")
    assert led.account("b") == ("epsilon-delta", F(2), F(3, 2), F(1, 10**5), F(1, 10**6))
    with pytest.raises(BudgetExceededError):  # ε fits, δ does not
        led.charge("b", None, "q", "g", cost=Cost(epsilon=F(1, 10), delta=F(1, 10**5)))
    with pytest.raises(ProgrammingError, match="DELTA"):
        led.charge("b", None, "q", "g", cost=Cost(rho=F(1, 10)))
    assert led.account("b")[2] == F(3, 2)  # refusals spent nothing


def test_pure_budget_refuses_delta_and_rho_and_stays_as_before():
    led = Ledger(duckdb.connect())
    led.set_budget("c", 1)
    for cost in (Cost(rho=F(1, 10)), Cost(epsilon=F(1, 10), delta=F(1, 10**6))):
        with pytest.raises(ProgrammingError, match="SET PRIVACY BUDGET"):
            led.charge("c", None, "q", "g", cost=cost)
        with pytest.raises(ProgrammingError):
            led.check("c", None, cost)
    for _ in range(10):
        led.charge("c", "0.1", "q", "laplace")
    assert led.remaining("c") == 0


def test_changing_the_unit_converts_what_was_spent_or_refuses():
    led = Ledger(duckdb.connect())
    led.set_budget("d", 3)
    led.charge("d", 1, "q", "laplace")
    led.set_budget("d", 1, unit="rho")  # ε = 1 spent is ρ = 1/2
    assert led.account("d") == ("rho", F(1), F(1, 2), F(0), F(0))
    with pytest.raises(ProgrammingError, match="does not convert"):
        led.set_budget("d", 5)
    with pytest.raises(DeclarationError, match="already spent"):
        led.set_budget("d", F(1, 4), unit="rho")
    with pytest.raises(DeclarationError, match="δ"):
        led.set_budget("e", 1, unit="epsilon-delta", delta=2)


def test_an_old_ledger_is_migrated_and_keeps_working(tmp_path):
    path = str(tmp_path / "old.duckdb")
    con = duckdb.connect(path)
    con.execute(f"CREATE SCHEMA {SCHEMA}")
    con.execute(f"CREATE TABLE {SCHEMA}.budget (user_name VARCHAR PRIMARY KEY, total VARCHAR NOT "
                "NULL, spent VARCHAR NOT NULL, updated TIMESTAMP DEFAULT current_timestamp)")
    con.execute(f"CREATE SEQUENCE {SCHEMA}.ledger_seq START 2")
    con.execute(f"CREATE TABLE {SCHEMA}.ledger (id BIGINT PRIMARY KEY, charged_at TIMESTAMP NOT "
                "NULL, user_name VARCHAR NOT NULL, statement VARCHAR, mechanism VARCHAR NOT NULL, "
                "epsilon VARCHAR NOT NULL)")
    con.execute(f"INSERT INTO {SCHEMA}.budget (user_name, total, spent) VALUES ('old', '2/1', '1/2')")
    con.execute(f"INSERT INTO {SCHEMA}.ledger VALUES (1, now(), 'old', 'q', 'laplace', '1/2')")
    con.close()
    ro = Ledger(duckdb.connect(path, read_only=True), read_only=True)  # before the migration
    assert ro.account("old") == ("epsilon", F(2), F(1, 2), F(0), F(0))
    assert ro.entries()[0].unit == "epsilon"
    ro.con.close()
    led = Ledger(duckdb.connect(path))
    assert led.account("old") == ("epsilon", F(2), F(1, 2), F(0), F(0))
    assert led.charge("old", "1/2", "q", "laplace").remaining == 1
    assert [(e.epsilon, e.unit, e.delta) for e in led.entries()] == [
        (F(1, 2), "epsilon", 0), (F(1, 2), "epsilon", 0)]
    Ledger(led.con)  # idempotent


def test_debit_and_display():
    assert debit(Cost(epsilon=F(1)), "epsilon", "u") == (F(1), F(0))
    assert debit(Cost(epsilon=F(2)), "rho", "u") == (F(2), F(0))
    assert equivalent("epsilon-delta", F(1), F(1, 10**6)) == "(ε = 1, δ = 0.000001)"
