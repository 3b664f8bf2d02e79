"""A stream step whose sensitivity the curator states runs the planner's statistic, as a
derived-sensitivity step does (``privacy/stream_sensitivity.py``): expressions total, a SUM over
its finite values. One participant's row neither makes the step fail nor its value NaN."""

from __future__ import annotations

import math

import pytest

import provsql_dp


@pytest.mark.parametrize("statistic", [
    "SUM(amount) FROM visits",                                 # no bounds: finite values only
    "SUM(amount) FROM visits WHERE 1 // CAST(amount - 5 AS INT) >= 0",
    "COUNT(*) FROM visits AS a JOIN visits AS b ON a.vid = b.vid",  # a self-join
])
def test_a_stated_sensitivity_step_releases_with_and_without_the_participant(statistic):
    for plant in (None, "5", "'nan'::DOUBLE", "'inf'::DOUBLE"):
        con = provsql_dp.connect()
        con.execute("CREATE TABLE people(id INT PRIMARY KEY)")
        con.execute("INSERT INTO people SELECT range FROM range(50)")
        con.execute("CREATE TABLE visits(vid INT, pid INT, amount DOUBLE)")
        con.execute("INSERT INTO visits SELECT range, range % 50, range % 4 FROM range(200)")
        if plant is not None:
            con.execute(f"INSERT INTO visits VALUES (1000, 3, {plant})")
        con.execute("PROTECT TABLE people; PROTECT TABLE visits BY (pid) AS people")
        con.execute("SET PRIVACY BUDGET 10; CREATE STREAM s WINDOW 5 STEPS WITH EPSILON 5")
        (row,) = con.execute("PUBLISH STREAM s STEP 1 SENSITIVITY 10 WITH EPSILON 1 AS "
                             f"SELECT {statistic}").fetchall()
        assert math.isfinite(row[2]), (plant, row)
        assert [r[3] for r in con.execute("SHOW STREAMS").fetchall()] == [1]
