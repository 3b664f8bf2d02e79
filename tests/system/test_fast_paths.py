"""The single-owner fast paths from SQL: the Laplace mechanism where the declarations bound each
participant's contribution, the closed-form recursive mechanism where they do not — each
cross-checked against the slow, obviously-correct path (capture the K-relation, run the LPs)."""

from __future__ import annotations

import numpy as np
import pytest

from provsql_dp.mechanisms.recursive import efficient as rm
from provsql_dp.mechanisms.noise.sources import discrete_laplace, laplace


def _db(build, n_people=60, seed=0):
    """The shared people ⋈ visits database (``people_visits`` in tests/conftest.py) with random
    people, their visits and a public ``cities`` table."""
    rng = np.random.default_rng(seed)
    people, visits = [], []
    for i in range(n_people):
        people.append([i, int(rng.integers(18, 90)), float(rng.integers(0, 200_000)),
                       int(rng.integers(1, 4))])
        for d in range(int(rng.integers(0, 6))):
            visits.append([i, d, float(rng.normal(10, 30))])
    return build(  # raw: the mechanisms' own releases, compared with each other
        people, visits, raw=True, budget="1000",
        people_columns="id INT PRIMARY KEY, age INT, salary DOUBLE, city_id INT",
        before_protect=("CREATE TABLE cities(id INT PRIMARY KEY, name VARCHAR)",
                        "INSERT INTO cities VALUES (1, 'Lyon'), (2, 'Oslo'), (3, 'Pune')"))


def _release(con, sql, seed):
    con._rng = np.random.default_rng(seed)
    cur = con.execute(sql)
    return cur.fetchall(), cur.privacy


def test_count_one_row_per_person_is_laplace_with_integer_noise(people_visits):
    con = _db(people_visits)
    true = con.execute("SELECT COUNT(*) FROM people WHERE age > 40").fetchone()[0]
    rows, info = _release(con, "SELECT COUNT(*) FROM people WHERE age > 40 WITH EPSILON 0.5", 7)
    assert info.mechanism == "laplace" and info.releases[0].noise_scale == 2.0
    assert rows[0][0] == true + discrete_laplace(2.0, rng=np.random.default_rng(7))


def test_bounded_sum_is_clamped_then_laplace(people_visits):
    con = _db(people_visits)
    true = con.execute("SELECT SUM(least(greatest(salary, 0), 100000)) FROM people").fetchone()[0]
    rows, info = _release(
        con, "SELECT SUM(salary) FROM people WITH EPSILON 1 OPTIONS (lower = 0, upper = 100000)", 3)
    assert info.mechanism == "laplace" and info.releases[0].sensitivity == 100000
    expected = true + float(laplace(100000.0, rng=np.random.default_rng(3)))
    assert rows[0][0] == pytest.approx(expected)


def test_group_by_public_key_is_parallel_laplace(people_visits):
    con = _db(people_visits)
    rows, info = _release(
        con, "SELECT c.name, COUNT(*) FROM people p JOIN cities c ON p.city_id = c.id "
             "GROUP BY c.name WITH EPSILON 1", 1)
    assert [r[0] for r in rows] == ["Lyon", "Oslo", "Pune"]
    assert info.mechanism == "laplace" and all(r.epsilon == 1 for r in info.releases)
    assert info.epsilon == 1


@pytest.mark.parametrize("sql, style", [
    ("SELECT COUNT(*) FROM people p JOIN visits v ON p.id = v.pid", "edge"),
    ("SELECT COUNT(*) FROM visits WHERE day > 1", "edge"),
    ("SELECT SUM(v.amount) FROM people p JOIN visits v ON p.id = v.pid "
     "OPTIONS_PLACEHOLDER", "edge"),
])
def test_single_owner_closed_form_equals_the_lp_path(people_visits, sql, style):
    con = _db(people_visits)
    bounds = None
    if "OPTIONS_PLACEHOLDER" in sql:
        sql = sql.replace(" OPTIONS_PLACEHOLDER", "")
        opts = " OPTIONS (lower = 0, upper = 50)"
        bounds = (0.0, 50.0)
    else:
        opts = ""
    rows, info = _release(con, f"{sql} WITH EPSILON 1{opts}", 11)
    assert info.mechanism == "recursive"
    plan = con.plan(sql)
    from provsql_dp.provenance.capture import capture

    kr = capture(con._duck, plan, bounds)
    slow = rm.release(kr, 1.0, style, np.random.default_rng(11), solver="simplex")
    assert info.releases[0].delta_hat == pytest.approx(slow.delta_hat, rel=1e-9)
    assert rows[0][0] == pytest.approx(slow.value, rel=1e-6, abs=1e-6)


def test_sum_without_bounds_is_signed_whatever_the_data(people_visits):
    """Signed or not is decided by the statement: all-positive data still gets two parts."""
    con = _db(people_visits)
    rows, info = _release(con, "SELECT SUM(salary) FROM people WITH EPSILON 1", 5)
    assert info.mechanism == "recursive-signed"


@pytest.mark.slow  # a rate check, ~7 s loaded: CI's second step
def test_laplace_count_noise_has_the_stated_scale(people_visits):
    con = _db(people_visits, n_people=20)
    true = con.execute("SELECT COUNT(*) FROM people").fetchone()[0]
    con._rng = np.random.default_rng(2024)
    errs = np.array([con.execute("SELECT COUNT(*) FROM people WITH EPSILON 1").fetchone()[0] - true
                     for _ in range(400)])
    # discrete Laplace with scale 1: variance 2α/(1−α)² with α = e^{-1} ≈ 1.84
    assert abs(errs.mean()) < 0.3 and 1.4 < errs.var() < 2.4
    bound = con.execute("SELECT COUNT(*) FROM people WITH EPSILON 1").privacy.noise_bound(0.9)[0]
    assert np.mean(np.abs(errs) <= bound) >= 0.9 - 0.04


def test_group_by_a_public_row_the_owners_key_determines_is_parallel_and_equals_the_lp_path(people_visits):
    """people ⋈ visits ⋈ cities GROUP BY cities.name: a person's visits all fall in the group of
    the city their own row names (cities joined on its declared key), so each group is released at
    the full ε — per group, the closed form equals the LP path on that group's tuples."""
    con = _db(people_visits)
    sql = ("SELECT c.name, COUNT(*) FROM people p JOIN visits v ON p.id = v.pid "
           "JOIN cities c ON p.city_id = c.id GROUP BY c.name")
    rows, info = _release(con, sql + " WITH EPSILON 1", 13)
    assert [r[0] for r in rows] == ["Lyon", "Oslo", "Pune"]
    assert info.mechanism == "recursive" and [r.epsilon for r in info.releases] == [1.0] * 3
    from provsql_dp.provenance.capture import capture

    kr = capture(con._duck, con.plan(sql), None)
    names = kr.values[kr.columns.index("name")]
    gen = np.random.default_rng(13)
    for (name, value), rel in zip(rows, info.releases):
        slow = rm.release(kr.restrict(np.asarray(names == name, dtype=bool)), 1.0, "edge", gen,
                          solver="simplex")
        assert rel.delta_hat == pytest.approx(slow.delta_hat, rel=1e-9)
        assert value == pytest.approx(slow.value, rel=1e-6, abs=1e-6)


def test_group_by_a_public_row_not_pinned_by_a_key_takes_one_l1_bound(people_visits):
    """Without a declared key on the public side (or joined from a visit's column, not the
    owner's row), one person may reach several groups: the groups are released together with
    one ℓ1 bound across them (privacy.group_l1), each at the full ε, the vector's plan counting
    every group as a moved coordinate; ``OPTIONS (max_groups = 1)`` keeps its ε split."""
    con = _db(people_visits)
    con.execute("CREATE TABLE cities2 AS SELECT * FROM cities")  # no key declared
    con.execute("CREATE TABLE days(id INT PRIMARY KEY, name VARCHAR)")
    con.execute("INSERT INTO days SELECT range, 'day' || range FROM range(6)")
    for sql in (("SELECT c.name, COUNT(*) FROM people p JOIN visits v ON p.id = v.pid "
                 "JOIN cities2 c ON p.city_id = c.id GROUP BY c.name"),
                ("SELECT d.name, COUNT(*) FROM people p JOIN visits v ON p.id = v.pid "
                 "JOIN days d ON v.day = d.id GROUP BY d.name")):
        rows, info = _release(con, sql + " WITH EPSILON 1", 2)
        assert [r.epsilon for r in info.releases] == [pytest.approx(1.0)] * len(rows)
        rels = [getattr(r, "release", r) for r in info.releases]  # a COUNT's wraps its release
        assert {r.changed for r in rels} == {len(rows)}
        assert len({r.delta_hat for r in rels}) == 1  # one Δ̂ for the vector
        rows, info = _release(con, sql + " WITH EPSILON 1 OPTIONS (max_groups = 1)", 2)
        assert [r.epsilon for r in info.releases] == [pytest.approx(1.0)] * len(rows)
        assert not hasattr(getattr(info.releases[0], "release", info.releases[0]), "changed")


def test_avg_reads_its_sum_and_count_in_one_scan_and_equals_the_two_releases(people_visits):
    """An AVG on the Laplace path: its SUM and COUNT come from one query (the clamped SUM over
    the finite values, their count), released exactly as the two parts released one by one with
    the same generator; the COUNT counts the finite values only (NaN, ±∞ and NULL are not values
    and add nothing to the SUM)."""
    from provsql_dp.mechanisms.global_sensitivity import laplace
    from provsql_dp.privacy import fast_path
    from provsql_dp.provenance.capture import compile_node

    con = _db(people_visits)
    con.execute("INSERT INTO people VALUES (1000, 30, 'nan', 1), (1001, 31, NULL, 1), "
                "(1002, 32, 'inf', 2), (1003, 33, '-inf', 2), (1004, 34, 1e300, 3)")
    con.execute("SET BOUNDS ON people (salary) BETWEEN -5000 AND 150000")
    for sql in ("SELECT AVG(salary) FROM people", "SELECT c.name, AVG(p.salary) FROM people p "
                "JOIN cities c ON p.city_id = c.id GROUP BY c.name"):
        rows, info = _release(con, sql + " WITH EPSILON 1", 21)
        plan = con.plan(sql)
        s, c = plan.parts
        n_finite = con.execute(f"SELECT count(*) FROM ({compile_node(c.child, False).sql}) AS t"
                               ).fetchone()[0]
        assert n_finite == 61  # 60 people + the clamped 1e300
        queries = []
        real = fast_path._true_values
        fast_path._true_values = lambda con_, q, n: queries.append(q) or real(con_, q, n)
        try:
            rows, info = _release(con, sql + " WITH EPSILON 1", 21)
        finally:
            fast_path._true_values = real
        assert len(queries) == 1 and "count(*)" in queries[0]
        gen = np.random.default_rng(21)
        charge = type("C", (), {"epsilon": 1, "remaining": 0})
        groups = [(r[0],) for r in rows] if len(rows[0]) == 2 else [()]
        names = ["name"] if len(rows[0]) == 2 else []
        # the SUM part is the centred sum Σ (clamp(x) − m), m = 72500, at sensitivity 77500
        # (provsql_dp.privacy.centred_avg), drawn before the COUNT from the same generator
        sums = fast_path._true_values(
            con, fast_path._laplace_sql(s, (-5000.0, 150000.0), False)[0], 1)[0]
        counts = fast_path._true_values(con, fast_path._laplace_sql(c, None, False)[0], 1)[0]
        centred = [sums.get(g, 0) - 72500.0 * counts.get(g, 0) for g in groups]
        srels = laplace.release_many(centred, sensitivity=77500.0, epsilon=0.5, rng=gen)
        _, _, cinfo = fast_path.release_laplace(con, c, 0.5, groups, names, None, lambda: charge,
                                                gen)
        for i, rel in enumerate(info.releases):
            avg = rel[0]
            assert avg.centre == 72500.0 and avg.sum_release.sensitivity == 77500.0
            assert avg.sum_release.value == srels[i].value
            assert avg.count_release.value == cinfo.releases[i].value
