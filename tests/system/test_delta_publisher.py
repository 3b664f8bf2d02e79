"""Sustainable publishing end to end: Theorem 2 enforced across reconnects of a file database,
refusals spend nothing, the ledger is charged the window budget once (papers/004 Theorem 2)."""

from fractions import Fraction

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import BudgetExceededError, DeclarationError, ProgrammingError
from provsql_dp.policies.delta import Publisher


def _windows_ok(spent: dict, delta: int, eps: Fraction) -> bool:
    if not spent:
        return True
    lo, hi = min(spent), max(spent)
    for a in range(lo - delta + 1, hi + 1):
        if sum((spent.get(s, Fraction(0)) for s in range(a, a + delta)), Fraction(0)) > eps:
            return False
    return True


def test_no_window_ever_over_budget_across_reconnects(tmp_path):
    db = str(tmp_path / "pub.duckdb")
    rng = np.random.default_rng(0)
    delta, eps = 4, Fraction(1)
    con = provsql_dp.connect(db)
    con.ledger.set_budget(con.user, 1000)
    con.close()
    accepted = refused = 0
    step = 1
    for session in range(6):
        con = provsql_dp.connect(db)
        pub = Publisher(con, "flu", delta=delta, epsilon=1)
        for _ in range(15):
            step += int(rng.integers(0, 2))
            if rng.random() < 0.15:  # occasionally back-fill an earlier step
                s = max(1, step - int(rng.integers(1, delta + 2)))
            else:
                s = step
            e = Fraction(int(rng.integers(1, 8)), 10)
            before_spent = pub.spent()
            before_ledger = con.ledger.budget(con.user)[1]
            avail = pub.available(s)
            try:
                pub.release(s, float(rng.integers(0, 100)), e, rng=rng)
                accepted += 1
                assert e <= avail
                assert con.ledger.budget(con.user)[1] == before_ledger  # the window pays
            except BudgetExceededError as err:
                refused += 1
                assert e > avail
                assert "Nothing was spent" in str(err)
                assert pub.spent() == before_spent  # no reservation left behind
                assert con.ledger.budget(con.user)[1] == before_ledger
            assert _windows_ok(pub.spent(), delta, eps)
        con.close()
    assert accepted > 20 and refused > 5
    con = provsql_dp.connect(db)
    pub = Publisher(con, "flu")  # reopened by name alone
    assert (pub.delta, pub.epsilon) == (delta, eps)
    assert len(pub.releases()) == accepted
    assert _windows_ok(pub.spent(), delta, eps)
    charges = [c for c in con.ledger.entries() if c.mechanism.startswith("delta_")]
    assert [(c.mechanism, c.epsilon) for c in charges] == [("delta_stream", eps)]
    con.close()


def test_equal_split_sustains_forever():
    con = provsql_dp.connect()
    con.ledger.set_budget(con.user, 10 ** 6)
    pub = Publisher(con, "steady", delta=7, epsilon=1)
    for t in range(1, 200):
        pub.release(t, 5.0, Fraction(1, 7), rng=np.random.default_rng(t))
    with pytest.raises(BudgetExceededError):
        pub.release(199, 5.0, Fraction(1, 1000))


def test_publishing_outlives_the_ledger_total():
    """6 releases at 1/3 with a budget of 2 used to exhaust the ledger; the series costs ε once."""
    con = provsql_dp.connect()
    con.ledger.set_budget(con.user, 2)
    pub = Publisher(con, "daily", delta=3, epsilon=1)
    for t in range(1, 61):
        pub.release(t, 10.0, Fraction(1, 3), rng=np.random.default_rng(t))
    assert con.ledger.budget(con.user) == (Fraction(2), Fraction(1))
    assert len(pub.releases()) == 60


def test_creation_refused_by_the_ledger_spends_nothing_and_leaves_no_stream():
    con = provsql_dp.connect()
    con.ledger.set_budget(con.user, "0.5")
    with pytest.raises(BudgetExceededError, match="privacy budget exceeded"):
        Publisher(con, "p", delta=2, epsilon=1)
    assert con.ledger.budget(con.user) == (Fraction(1, 2), Fraction(0))
    with pytest.raises(DeclarationError, match="does not exist"):
        Publisher(con, "p")
    pub = Publisher(con, "p", delta=2, epsilon="0.5")  # fits: created, the whole budget spent
    assert con.ledger.remaining(con.user) == 0
    pub.release(1, 1.0, "0.5", rng=np.random.default_rng(0))
    assert pub.spent() == {1: Fraction(1, 2)}
    assert pub.available(2) == 0 and pub.available(3) == Fraction(1, 2)


def test_legacy_series_are_still_charged_release_by_release(tmp_path):
    db = str(tmp_path / "old.duckdb")
    con = provsql_dp.connect(db)
    con.ledger.set_budget(con.user, 2)
    Publisher(con, "old", delta=2, epsilon=1)
    # as an earlier version left it: no state column, nothing charged at creation
    con.execute("ALTER TABLE _provsql_dp.delta_publishers DROP COLUMN state")
    con.close()
    con = provsql_dp.connect(db)
    spent0 = con.ledger.budget(con.user)[1]
    pub = Publisher(con, "old")
    assert pub.legacy
    pub.release(1, 1.0, "0.5", rng=np.random.default_rng(0))
    assert con.ledger.budget(con.user)[1] == spent0 + Fraction(1, 2)
    con.close()


def test_sql_statistic_and_errors():
    con = provsql_dp.connect()
    con.ledger.set_budget(con.user, 10)
    con.execute("CREATE TABLE visits(day INT, person INT)")
    con.execute("INSERT INTO visits VALUES (1, 1), (1, 2), (2, 3)")
    pub = Publisher(con, "v", delta=2, epsilon=1)
    r = pub.release(1, "SELECT count(*) FROM visits WHERE day = ?", 1.0, params=[1],
                    rng=np.random.default_rng(0))
    assert r.step == 1 and abs(r.value - 2) < 20 and r.scale == 1.0
    with pytest.raises(ProgrammingError, match="nothing was spent"):
        pub.release(2, "SELECT nope FROM visits", 0.5)
    assert pub.spent() == {1: Fraction(1)}
    with pytest.raises(DeclarationError, match="cannot change"):
        Publisher(con, "v", delta=3, epsilon=1)
    with pytest.raises(DeclarationError, match="give delta"):
        Publisher(con, "unknown")
    with pytest.raises(DeclarationError):
        Publisher(con, "bad", delta=0, epsilon=1)
