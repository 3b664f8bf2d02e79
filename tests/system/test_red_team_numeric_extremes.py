"""Red team h85attack-4 and -5: numbers an analyst writes, at the edges of a double.

Numbers of a statement are read exactly (``Fraction``), checked, then used as doubles. Between
the two, an analyst's choice slipped through:

* -4: ``OPTIONS (upper = 1e400)`` (any option: ``beta``, ``mu``, ``theta``, ``split``,
  ``max_groups``, ``max_contribution``, ``intervals``), ``WITH RHO 1e400``, ``WITH EPSILON 1e300
  DELTA 0.1``, ``DELTA 1e-320`` or ``DELTA 0.9999999999999999999999`` (exactly below 1, 1.0 as a
  double) passed the exact checks and failed in the mechanism: reported to the analyst as a
  failure "while it read protected data" (a ``DataError``, an incident for the curator), and
  ``OPTIONS (intervals = 1e400)`` raised Python's ``OverflowError`` out of ``execute``;
* -5: worse, some failed **after the charge**, though the statement alone decided the failure:
  R2T with ``max_contribution = 1e-8`` (its noise scale below 2^-24), ``beta = 1e-320``, a COUNT
  at ε = 10⁻⁶ with ``max_contribution = 1e15`` (a scale above 2^64), and ``KMEANS … WITH EPSILON
  1e-13`` (below the k-means' smallest ε): each charged its ε and failed.

Each is now a ``ProgrammingError`` naming the number, before the charge: options and δ must lie
within [1e-300, 1e300] in magnitude (``sql.expressions.in_double_range``), δ strictly inside
(0, 1) as a double too, ρ at most 5·10²⁹, ε of an (ε, δ) statement and of KMEANS checked as a
private query's (``precheck.check_epsilon``), and R2T's public plan made before the charge
(``r2t_release.check_r2t_plan``).
"""

from __future__ import annotations

import pytest

import provsql_dp
from provsql_dp.errors import ProgrammingError

SUM = "SELECT SUM(salary) FROM people WITH EPSILON 1 OPTIONS ({})"
REFUSED = [
    (SUM.format("lower = 0, upper = 1e400"), "option upper is beyond what a double holds"),
    (SUM.format("lower = -1e400, upper = 1"), "option lower is beyond"),
    (SUM.format("mechanism = 'recursive', beta = 1e400"), "option beta is beyond"),
    (SUM.format("mechanism = 'recursive', theta = 1e400"), "option theta is beyond"),
    (SUM.format("intervals = 1e400"), "option intervals is beyond"),
    (SUM.format("max_groups = 1e400"), "option max_groups is beyond"),
    ("SELECT COUNT(*) FROM people WITH RHO 1e400", "rho must be at most"),
    ("SELECT COUNT(*) FROM people WITH EPSILON 1e300 DELTA 0.1", "epsilon 1e\\+300 is too large"),
    ("SELECT COUNT(*) FROM people WITH EPSILON 1 DELTA 1e-320", "delta is beyond"),
    ("SELECT COUNT(*) FROM people WITH EPSILON 1 DELTA 0.9999999999999999999999",
     "delta must lie strictly between 0 and 1"),
    # -5: these were charged, then failed
    (SUM.format("lower = 0, upper = 100, mechanism = 'r2t', max_contribution = 1e-8"),
     "R2T cannot plan this release.*noise scale"),
    (SUM.format("lower = 0, upper = 100, mechanism = 'r2t', beta = 1e-320"),
     "option beta is beyond"),
    ("SELECT COUNT(*) FROM people WITH EPSILON 1e-6 OPTIONS (mechanism = 'r2t', "
     "max_contribution = 1e15)", "R2T cannot plan this release"),
    ("KMEANS CLUSTERS 2 OF (salary) FROM people ITERATIONS 2 WITH EPSILON 1e-13",
     "below the smallest ε"),
]


@pytest.fixture(scope="module")
def ann(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("extremes") / "db.duckdb")
    con = provsql_dp.connect(path)
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, salary DOUBLE)")
    con.execute("INSERT INTO people SELECT i, i * 10.0 FROM range(200) t(i)")
    con.execute("PROTECT TABLE people")
    con.execute("SET BOUNDS ON people (salary) BETWEEN 0 AND 2000")
    con.execute("SET PRIVACY BUDGET EPSILON 100 DELTA 0.5 FOR USER 'ann'")
    con.commit()
    con.close()
    return provsql_dp.connect(path, role="analyst", user="ann")


def _spent(con) -> str:
    return con.execute("SHOW PRIVACY BUDGET").fetchall()[0][2]


@pytest.mark.parametrize("sql, message", REFUSED, ids=[m for _, m in REFUSED])
def test_a_number_out_of_a_double_s_reach_is_refused_before_the_charge(ann, sql, message):
    before = _spent(ann)
    with pytest.raises(ProgrammingError, match=message) as err:
        ann.execute(sql)
    assert "protected data" not in str(err.value)  # the statement decided it, not the data
    assert _spent(ann) == before


def test_nearby_numbers_still_release(ann):
    for sql in (SUM.format("lower = 0, upper = 1e15"),
                "SELECT COUNT(*) FROM people WITH EPSILON 1 DELTA 1e-300",
                SUM.format("lower = 0, upper = 100, mechanism = 'r2t', max_contribution = 100")):
        assert len(ann.execute(sql).fetchall()) == 1
