"""Every SQL release lies on a grid fixed from public quantities, the same on neighbouring data.

For random small tables and a random neighbour (one protected person added), each statement is
answered on both databases as an analyst would; for every release in ``cursor.privacy``:

* the released value is an integer multiple of the release's power-of-two grid ``γ``
  (``on_grid``): it came from the exact sampler of ``mechanisms.noise.safe_noise``, not from a
  floating-point ``x + Laplace`` whose low bits carry ``x`` (Mironov 2012);
* that grid is the plan's, computed from public quantities only: ``(Δ, ε)`` for the Laplace
  mechanism — hence *identical* on the two neighbours — and ``(Δ̂, ε₂)`` for the recursive
  mechanism, ``Δ̂`` being itself a released number;
* the published error bound (``noise_bound``, what ``cursor.privacy`` reports) is the exact
  quantile of the discrete law of that plan (``noise.error_bound``).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import provsql_dp
from provsql_dp.mechanisms.noise.sources import error_bound
from provsql_dp.mechanisms.recursive.release import Release, x_plan
from provsql_dp.mechanisms.noise.safe_noise import on_grid, plan_laplace

# no shrinking: each example builds two databases (a failure still prints its inputs)
SETTINGS = settings(max_examples=10, deadline=None, phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

STATEMENTS = [
    # Laplace mechanism: counts on the unit grid, a bounded SUM on a fine grid, groups, AVG
    "SELECT COUNT(*) FROM people WHERE salary > 50000 WITH EPSILON 0.5",
    "SELECT SUM(salary) FROM people WITH EPSILON 0.3 OPTIONS (lower = 0, upper = 100000)",
    "SELECT city, COUNT(*) FROM people GROUP BY city WITH EPSILON 0.7",
    "SELECT AVG(salary) FROM people WITH EPSILON 1",
    # recursive mechanism: single-owner fast path, signed SUM, and the LP path over a join
    "SELECT COUNT(*) FROM people WHERE salary < 90000 WITH EPSILON 0.8 "
    "OPTIONS (mechanism = 'recursive')",
    "SELECT SUM(v.amount) FROM people p JOIN visits v ON p.id = v.pid WITH EPSILON 1",
    "SELECT COUNT(*) FROM visits a JOIN visits b ON a.day = b.day AND a.pid < b.pid "
    "WITH EPSILON 1",
]

people = st.lists(st.tuples(st.sampled_from(["Lyon", "Oslo", "Pune"]),
                            st.floats(0, 250_000, allow_nan=False),
                            st.lists(st.tuples(st.integers(0, 3), st.floats(-100, 100)),
                                     max_size=3)),
                  min_size=1, max_size=12)


def _db(rows, extra=None):
    con = provsql_dp.connect(raw=True)  # the raw releases: on the grid before any rounding
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, city VARCHAR, salary DOUBLE)")
    con.execute("CREATE TABLE visits(pid INT, day INT, amount DOUBLE)")
    for i, (city, salary, visits) in enumerate(rows + ([extra] if extra else [])):
        con.execute("INSERT INTO people VALUES (?, ?, ?)", [i, city, salary])
        for day, amount in visits:
            con.execute("INSERT INTO visits VALUES (?, ?, ?)", [i, day, amount])
    con.execute("PROTECT TABLE people")
    con.execute("PROTECT TABLE visits BY (pid) AS people")
    con.execute("SET BOUNDS ON people (salary) BETWEEN 0 AND 200000")
    con.execute("SET BOUNDS ON visits (amount) BETWEEN -40 AND 60")  # a signed SUM
    con.execute("SET GROUP KEYS ON people (city) VALUES ('Lyon', 'Oslo', 'Pune', 'Rome')")
    con.execute("SET PRIVACY BUDGET 1000")
    return con


def _parts(rel):
    """The releases that carry a plan (an AVG is the ratio of a SUM and a COUNT release)."""
    if hasattr(rel, "sum_release"):
        return [rel.sum_release, rel.count_release]
    if isinstance(rel, Release) and rel.parts:
        return list(rel.parts)
    return [rel]


def _plans(info):
    out = []
    for row in info.releases:
        for rel in row if isinstance(row, tuple) else (row,):
            out += _parts(rel)
    return out


def _check(rel):
    plan = rel.plan
    if isinstance(rel, Release):  # Δ̂ is released: the grid is a function of it and ε₂ only
        assert plan == x_plan(rel.delta_hat, rel.params["eps2"])
        public = None
    else:  # the Laplace mechanism: (Δ, ε) only
        assert plan == plan_laplace(rel.sensitivity, rel.epsilon, integer=rel.integer)
        public = (plan.grid, plan.noise_units)
    assert on_grid(rel.value, plan.grid), (rel, plan.grid)
    for p in (0.5, 0.95):
        integer = getattr(rel, "integer", False)
        assert rel.noise_bound(p) == error_bound(plan, p, integer=integer)
    return public


@pytest.mark.slow  # ~15 s per statement: CI's second step (the default suite's 15 min)
@pytest.mark.parametrize("sql", STATEMENTS)
@given(rows=people, extra=people.map(lambda r: r[0]), seed=st.integers(0, 2**31 - 1))
@SETTINGS
def test_releases_lie_on_a_public_grid_shared_by_neighbours(sql, rows, extra, seed):
    outcome = []
    for db in (_db(rows), _db(rows, extra)):
        db._rng = np.random.default_rng(seed)
        cur = db.execute(sql)
        cur.fetchall()
        rels = _plans(cur.privacy)
        assert rels
        outcome.append([_check(r) for r in rels])
    # Laplace releases: the very same grid and noise on both neighbours
    assert outcome[0] == outcome[1]


def test_signed_sum_grid_is_the_finer_of_its_parts():
    con = _db([("Lyon", 1.0, [(0, -30.0), (1, 25.5)]), ("Oslo", 2.0, [(0, 12.25)])])
    cur = con.execute("SELECT SUM(v.amount) FROM people p JOIN visits v ON p.id = v.pid "
                      "WITH EPSILON 1")
    (rel,) = cur.privacy.releases
    assert rel.mechanism == "recursive-signed" and len(rel.parts) == 2
    assert rel.grid == min(p.grid for p in rel.parts) and on_grid(rel.value, rel.grid)


@pytest.mark.parametrize("sql, signed", [
    ("SELECT COUNT(*) FROM visits a JOIN visits b ON a.day = b.day AND a.pid < b.pid "
     "WITH EPSILON 1", False),
    ("SELECT SUM(v.amount) FROM people p JOIN visits v ON p.id = v.pid WITH EPSILON 1", True),
])
def test_the_data_independent_fallback_looks_like_a_release(sql, signed):
    """When a mechanism cannot run (solver failure, the release's deadline) the group is released
    by a fallback that reads no data. It must not be recognisable: the same public grid as a real
    release at its Δ̂ (= θe^μ, the Δ̂ of ĵ = 0), and a signed statement keeps its two parts."""
    from unittest import mock

    from provsql_dp._deadline import DeadlineExceeded
    from provsql_dp.errors import SolverError
    from provsql_dp.mechanisms.recursive import efficient as recursive
    from provsql_dp.mechanisms.recursive import buckets, single_owner

    def fail(*a, **k):
        raise SolverError("no solution")

    late = DeadlineExceeded(1.0, "the closed forms")  # a group cut off at the deadline
    rows = [("Lyon", 1.0, [(0, -30.0), (1, 25.5)]), ("Oslo", 2.0, [(0, 12.25), (1, 3.0)])]
    con = _db(rows)
    real = con.execute(sql).fetchall(), con.execute(sql).privacy.releases[0]
    with mock.patch.object(recursive, "release", fail), \
            mock.patch.object(recursive, "release_signed", fail), \
            mock.patch.object(single_owner, "release", side_effect=late), \
            mock.patch.object(single_owner, "release_signed", side_effect=late), \
            mock.patch.object(buckets, "release_buckets", side_effect=late):
        cur = con.execute(sql)
        cur.fetchall()
    (rel,) = cur.privacy.releases
    assert rel.mechanism == real[1].mechanism
    assert bool(rel.parts) == signed == bool(real[1].parts)
    for part in rel.parts or (rel,):
        p = part.params
        assert part.delta_hat == pytest.approx(p["theta"] * np.exp(p["mu"]))
        assert part.plan == x_plan(part.delta_hat, p["eps2"])
        assert on_grid(part.value, part.grid)
    assert on_grid(rel.value, rel.grid)
    assert con.execute("SELECT count(*) FROM _provsql_dp.incidents").fetchone()[0] >= 1
