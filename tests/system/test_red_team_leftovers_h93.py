"""Red team leftovers fixed by h93leftovers (beside ``test_declared_drops.py`` and
``test_orphan_declarations.py``).

* ``SET PRIVACY EPSILON 1e300`` echoed the 301 digits of 10^300: ``format_eps`` writes a long
  exact decimal in scientific notation (``1e300``), and a value it cannot show exactly in a
  readable length after ``≈`` — in the echo, ``SHOW PRIVACY BUDGET`` and the budget's errors.
"""

from __future__ import annotations

import pytest

import provsql_dp


def _database(path):
    con = provsql_dp.connect(str(path))
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, grp DOUBLE, pay DOUBLE)")
    con.execute("INSERT INTO people SELECT i, i % 3, i FROM range(30) t(i)")
    con.execute("PROTECT TABLE people")
    con.commit()
    return con


def test_a_huge_epsilon_and_budget_are_printed_readably(tmp_path):
    con = _database(tmp_path / "db.duckdb")
    assert con.execute("SET PRIVACY EPSILON 1e300").fetchall() == [
        ("default epsilon set to 1e300",)]
    assert con.execute("SET PRIVACY BUDGET 1e300 FOR USER 'ann'").fetchall() == [
        ("privacy budget of 'ann' set to 1e300",)]
    con.execute("SET PRIVACY BUDGET 1.5e-25 FOR USER 'bob'")
    con.commit()
    assert con.execute("SHOW PRIVACY BUDGET FOR USER 'bob'").fetchall() == [
        ("bob", "1.5e-25", "0", "1.5e-25")]
    ann = provsql_dp.connect(str(tmp_path / "db.duckdb"), role="analyst", user="ann")
    ann.execute("SELECT COUNT(*) FROM people WITH EPSILON 1")
    assert ann.execute("SHOW PRIVACY BUDGET").fetchall() == [("ann", "1e300", "1", "≈1e300")]
    bob = provsql_dp.connect(str(tmp_path / "db.duckdb"), role="analyst", user="bob")
    with pytest.raises(provsql_dp.errors.BudgetExceededError) as err:
        bob.execute("SELECT COUNT(*) FROM people WITH EPSILON 1e-6")
    assert "0.000001" in str(err.value) and "1.5e-25" in str(err.value)
    assert "00000000" not in str(err.value)
    assert bob.execute("SHOW PRIVACY BUDGET").fetchall() == [("bob", "1.5e-25", "0", "1.5e-25")]
