"""A stated-sensitivity stream SUM whose finite values add up past the largest double releases
like any other step (the true value saturated to the range the mechanism releases over, as
``safe_noise`` clamps a finite one): the step's outcome — released, or refused — never tells
whether one participant's values made the sum overflow."""

from __future__ import annotations

import math

import pytest

import provsql_dp
from conftest import declared_state


def _outcome(amounts, sign=1):
    con = provsql_dp.connect()
    con.execute("CREATE TABLE people(id INT PRIMARY KEY)")
    con.execute("INSERT INTO people SELECT range FROM range(10)")
    con.execute("CREATE TABLE visits(pid INT, amount DOUBLE)")
    con._duck.executemany("INSERT INTO visits VALUES (?, ?)",
                          [[i, sign * a] for i, a in enumerate(amounts)])
    con.execute("PROTECT TABLE people; PROTECT TABLE visits BY (pid) AS people")
    con.execute("SET PRIVACY BUDGET 10; CREATE STREAM s WINDOW 5 STEPS WITH EPSILON 5")
    before = declared_state(con)
    try:
        (row,) = con.execute("PUBLISH STREAM s STEP 1 SENSITIVITY 10 WITH EPSILON 1 AS "
                             "SELECT SUM(amount) FROM visits").fetchall()
        return ("released", math.isfinite(row[2]))
    except provsql_dp.Error as e:
        assert declared_state(con) == before
        return (type(e).__name__, str(e))


@pytest.mark.parametrize("sign", [1, -1])
def test_neighbours_one_overflowing_the_sum_get_the_same_kind_of_outcome(sign):
    big = 1.5e308
    without = _outcome([big], sign)            # a finite true sum
    with_one = _outcome([big, big], sign)      # the neighbour's row: the sum is ±inf in doubles
    assert without == with_one == ("released", True)


def test_overflows_in_both_directions_release_too():
    assert _outcome([1.5e308, 1.5e308, -1.5e308, -1.5e308, -1.5e308]) == ("released", True)
