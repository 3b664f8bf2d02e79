"""provsql_dp.privacy.shared_charge: one charge of a statement's ε, its parts' shares never
more than it (an overspending split is refused before the part reads, nothing more charged)."""

from fractions import Fraction

import pytest

import provsql_dp
from provsql_dp.errors import InternalError
from provsql_dp.privacy.accounting import Cost
from provsql_dp.privacy.charge_ahead import charge_ahead
from provsql_dp.privacy.shared_charge import shared, sharing


def _con():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE p(id INT PRIMARY KEY); PROTECT TABLE p; SET PRIVACY BUDGET 2")
    con.execute("SELECT COUNT(*) FROM p WITH EPSILON 0.5")  # the ledger learns the budget
    return con


def test_parts_take_their_shares_of_one_charge():
    con = _con()
    with sharing(con, Fraction(1), "q", "mixed") as share:
        assert charge_ahead(con, Fraction(1, 3), "q", "laplace") is None  # stands aside
        first = con._ledger.charge(con.user, Fraction(1, 3), "q", "laplace")
        assert con._ledger.remaining("default") == Fraction(1, 2)  # the whole ε, once
        second = con._ledger.charge(con.user, Fraction(2, 3), "q", "quantile")
    assert first is second and share.left == 0 and shared() is None
    assert con._ledger.remaining("default") == Fraction(1, 2)


@pytest.mark.parametrize("ask", [Fraction(3, 2), Fraction(0), Fraction(-1)])
def test_a_part_asking_more_than_is_left_is_refused(ask):
    con = _con()
    before = con._ledger.remaining("default")
    with sharing(con, Fraction(1), "q", "mixed"):
        with pytest.raises(InternalError):
            con._ledger.charge(con.user, ask, "q", "laplace")
    assert con._ledger.remaining("default") == before  # refused before the one charge


def test_overspending_after_the_charge_is_refused():
    con = _con()
    with sharing(con, Fraction(1), "q", "mixed"):
        con._ledger.charge(con.user, Fraction(3, 4), "q", "laplace")
        with pytest.raises(InternalError):
            con._ledger.charge(con.user, Fraction(1, 2), "q", "variance")
    assert con._ledger.remaining("default") == Fraction(1, 2)


def test_only_pure_epsilon_and_the_statements_user():
    con = _con()
    with sharing(con, Fraction(1), "q", "mixed"):
        with pytest.raises(InternalError):
            con._ledger.charge(con.user, Fraction(1, 2), "q", "g",
                               cost=Cost(rho=Fraction(1, 2)))
        with pytest.raises(InternalError):
            con._ledger.charge("someone_else", Fraction(1, 2), "q", "laplace")
        with pytest.raises(InternalError):
            with sharing(con, Fraction(1), "q", "nested"):
                pass
    assert con._ledger.remaining("default") == Fraction(3, 2)


def test_the_budget_refusal_of_the_one_charge_spends_nothing():
    con = _con()
    with sharing(con, Fraction(5), "q", "mixed"):
        with pytest.raises(provsql_dp.BudgetExceededError):
            con._ledger.charge(con.user, Fraction(1), "q", "laplace")
    assert con._ledger.remaining("default") == Fraction(3, 2)
