"""Pre-charge checks (``provsql_dp.privacy.precheck``): what the statement alone decides is refused
before ε with a PEP 249 error naming it; a failure says "charged" only when the ledger charged."""

from __future__ import annotations

from fractions import Fraction

import pytest

import provsql_dp
from provsql_dp.errors import DataError, Error, ProgrammingError
from provsql_dp.privacy import answer as answer_module
from provsql_dp.privacy import routing
from provsql_dp.privacy.failures import ANALYST_FAILURE
from provsql_dp.privacy.precheck import ANALYST_FAILURE_UNCHARGED, check_epsilon


@pytest.fixture()
def dbs():
    cur = provsql_dp.connect(":memory:precheck")
    cur.autocommit = True
    cur.execute("CREATE TABLE people(id INT PRIMARY KEY, salary BIGINT, name VARCHAR)")
    cur.execute("INSERT INTO people VALUES (1, 50000, 'a'), (2, 60000, 'b')")
    cur.execute("PROTECT TABLE people")
    cur.execute("SET PRIVACY BUDGET 100 FOR USER 'ann'")
    an = provsql_dp.connect(":memory:precheck", role="analyst", user="ann")
    yield cur, an
    an.close()
    cur.close()


@pytest.mark.parametrize("eps", [Fraction(0), Fraction(-1), Fraction(10) ** 999, Fraction(10) ** 16,
                                 Fraction(1, 10**9)])
def test_unusable_epsilon(eps):
    with pytest.raises(ProgrammingError, match="Nothing was charged"):
        check_epsilon(eps)


@pytest.mark.parametrize("sql, match", [
    ("SELECT COUNT(*) FROM people WITH EPSILON 1e999", "epsilon 1e\\+999 is too large"),
    ("SELECT COUNT(*) FROM people WITH ACCURACY 1e-320", "accuracy α = 1e-320 is out of range"),
    ("SELECT COUNT(*) FROM people WITH ACCURACY 1e999", "out of range"),
    ("SELECT COUNT(*) FROM people WITH ACCURACY 1e308", "out of range"),
    ("SELECT COUNT(*) FROM people WITH ACCURACY 1e-300", "no release reaches"),
    ("SELECT COUNT(*) FROM people WITH ACCURACY 1 CONFIDENCE 0.99999999999999999999", "too close to 1"),
    ("SELECT COUNT(*) FROM people WITH ACCURACY 1 CONFIDENCE 1e-320", "too close to 0"),
    ("EXPLAIN PRIVACY SELECT COUNT(*) FROM people WITH ACCURACY 1e-300", "no release reaches"),
    ("EXPLAIN PRIVACY SELECT COUNT(*) FROM people WITH EPSILON 1e999", "too large"),
    ("EXPLAIN PRIVACY SELECT COUNT(*) FROM people WITH EPSILON 1e999 ESTIMATE ERROR WITH EPSILON 0.5",
     "too large"),
    ("SELECT SUM(salary) FROM people WITH EPSILON 0.1 OPTIONS (lower = 0, upper = 1e-300)",
     "noise scale .* is too small"),
    ("SELECT SUM(salary) FROM people WITH EPSILON 1e-6 OPTIONS (lower = -1e15, upper = 1e15)",
     "noise scale .* is too large"),
    ("SELECT AVG(salary) FROM people WITH EPSILON 1 OPTIONS (lower = 0, upper = 1e-300)", "too small"),
    ("SELECT COUNT(*), SUM(salary) FROM people WITH EPSILON 1 OPTIONS (lower = 0, upper = 1e-300)",
     "too small"),
])
def test_refused_before_the_charge(dbs, sql, match):
    _, an = dbs
    before = an.ledger.remaining("ann")
    with pytest.raises(ProgrammingError, match=match) as info:
        an.execute(sql)
    assert "Nothing was charged" in str(info.value) or "nothing was spent" in str(info.value).lower()
    assert an.ledger.remaining("ann") == before


def test_a_failure_before_the_charge_does_not_say_charged(dbs, monkeypatch):
    _, an = dbs

    def broken(*args, **kwargs):
        raise RuntimeError("a bug before the charge")

    monkeypatch.setattr(routing, "decide", broken)
    before = an.ledger.remaining("ann")
    with pytest.raises(DataError) as info:
        an.execute("SELECT COUNT(*) FROM people WITH EPSILON 0.5")
    assert str(info.value) == ANALYST_FAILURE_UNCHARGED and an.ledger.remaining("ann") == before


def test_a_failure_after_the_charge_says_charged(dbs, monkeypatch):
    _, an = dbs

    def broken(con, plan, epsilon, groups, key_names, bounds, charge_fn, rng=None):
        charge_fn()
        raise RuntimeError("a failure while reading protected data")

    monkeypatch.setattr(answer_module, "release_laplace", broken)
    before = an.ledger.remaining("ann")
    with pytest.raises(DataError) as info:
        an.execute("SELECT COUNT(*) FROM people WITH EPSILON 0.5")
    assert str(info.value) == ANALYST_FAILURE
    assert an.ledger.remaining("ann") == before - Fraction(1, 2)


def test_every_error_is_pep249(dbs):
    _, an = dbs
    for sql in ("SELECT COUNT(*) FROM people WITH ACCURACY 1e-320",
                "SELECT COUNT(*) FROM people WITH EPSILON 1e999"):
        with pytest.raises(Error):
            an.execute(sql)
