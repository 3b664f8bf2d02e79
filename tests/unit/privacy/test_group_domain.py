"""The groups of a private GROUP BY (``privacy/answer.py:group_domain``): keys from one public
table range over that table's DISTINCT key tuples (a public quantity), not over the cross product
of each column's values; the cross product is taken only across independent parts (different
table scans, declared key lists). Checked against a brute force over the public rows, and end to
end: the groups released, the true value of each (at a huge ε), and the exact noise draws."""

from __future__ import annotations

import pytest
import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import provsql_dp
from provsql_dp.mechanisms.noise.sources import discrete_laplace


def _db(dept_rows, people_depts, regions=("north", "south")):
    con = provsql_dp.connect(raw=True)  # releases compared with the raw draws
    con.execute("CREATE TABLE depts(id INT PRIMARY KEY, name VARCHAR, floor INT)")
    if dept_rows:
        con.execute("INSERT INTO depts VALUES " + ", ".join(
            f"({i}, '{n}', {f})" for i, n, f in dept_rows))
    con.execute("CREATE TABLE regions(r VARCHAR PRIMARY KEY)")
    con.execute("INSERT INTO regions VALUES " + ", ".join(f"('{r}')" for r in regions))
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, dept_id INT, region VARCHAR)")
    if people_depts:
        con.execute("INSERT INTO people VALUES " + ", ".join(
            f"({i}, {d}, '{regions[i % len(regions)]}')" for i, d in enumerate(people_depts)))
    con.execute("PROTECT TABLE people")
    con.execute("SET PRIVACY BUDGET 1e9")
    return con


def test_a_thousand_groups_from_one_public_table_release_a_thousand_groups():
    dept_rows = [(i, f"dept_{i}", i % 7) for i in range(1000)]
    con = _db(dept_rows, [i % 1000 for i in range(3000)])
    sql = ("SELECT depts.name, COUNT(*) FROM people JOIN depts ON people.dept_id = depts.id "
           "GROUP BY depts.name, depts.id WITH EPSILON 1")
    con._rng = np.random.default_rng(5)
    rows = con.execute(sql).fetchall()
    assert len(rows) == 1000  # not 1000 × 1000
    # the select list's columns: depts.id, a GROUP BY key it leaves out, is not returned
    assert sorted(r[0] for r in rows) == sorted(n for _, n, _ in dept_rows)
    # each group at the full ε: one vector of unit-scale noise, in the order released
    noise = discrete_laplace(1.0, size=len(rows), rng=np.random.default_rng(5))
    for (name, value), k in zip(rows, noise):
        assert value == 3 + k


_names = st.sampled_from(["a", "b", "c", "d"])


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(_names, st.integers(0, 2)), min_size=1, max_size=12),
       st.lists(st.integers(0, 14), max_size=30), st.booleans())
@pytest.mark.slow  # 3-10 s (random or brute-force cases): CI's second step
def test_groups_are_the_public_distinct_tuples_brute_force(depts, people, with_region):
    """Released groups = DISTINCT (name, floor) of depts [× regions.r]; each group's value (at a
    huge ε, rounded) = the brute-force count of people in it."""
    dept_rows = [(i, n, f) for i, (n, f) in enumerate(depts)]
    con = _db(dept_rows, people)
    keys = "depts.name, depts.floor" + (", regions.r" if with_region else "")
    frm = "people JOIN depts ON people.dept_id = depts.id"
    if with_region:
        frm += " JOIN regions ON people.region = regions.r"
    rows = con.execute(f"SELECT {keys}, COUNT(*) FROM {frm} GROUP BY {keys} "
                       "WITH EPSILON 1000000").fetchall()
    distinct = sorted({(n, f) for _, n, f in dept_rows})
    expected_groups = ([g + (r,) for g, r in itertools.product(distinct, ["north", "south"])]
                       if with_region else distinct)
    got = {tuple(r[:-1]): round(r[-1]) for r in rows}
    assert len(rows) == len(expected_groups) and set(got) == set(expected_groups)
    brute = {g: 0 for g in expected_groups}
    by_id = {i: (n, f) for i, n, f in dept_rows}
    for pid, d in enumerate(people):
        if d in by_id:
            g = by_id[d] + ((("north", "south")[pid % 2],) if with_region else ())
            brute[g] += 1
    assert got == brute  # the noise at ε = 10^6 rounds to 0 with overwhelming probability


def test_group_domain_orders_keys_as_the_group_by_and_crosses_independent_parts():
    con = _db([(0, "x", 1), (1, "x", 2), (2, "y", 1)], [0, 1, 2])
    con.execute("SET GROUP KEYS ON people (region) VALUES ('north', 'south', 'west')")
    cur = con.execute("SELECT depts.floor, people.region, depts.name, COUNT(*) FROM people "
                      "JOIN depts ON people.dept_id = depts.id "
                      "GROUP BY depts.floor, people.region, depts.name WITH EPSILON 1")
    groups = [tuple(r[:3]) for r in cur.fetchall()]
    pairs = [(1, "x"), (1, "y"), (2, "x")]  # DISTINCT (floor, name), ordered
    assert groups == [(f, r, n) for (f, n), r in itertools.product(pairs, ["north", "south", "west"])]
