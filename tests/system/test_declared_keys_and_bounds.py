"""Declared group keys and column bounds, end to end through the DB-API: which groups are
released (exactly the declared ones, empty or not, never an undeclared one), at which ε (parallel
composition where a participant's data falls in one group), the bounds a SUM and an AVG use
(OPTIONS override them), the refusal when nothing is declared, and the roles."""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import PrivacyError, UnsupportedQueryError
from provsql_dp.mechanisms.recursive import single_owner
from provsql_dp.mechanisms.noise.sources import discrete_laplace, laplace

CITIES = ["Lyon", "Oslo", "Pune", "Rome"]  # Rome is never declared


def _db(build, path=":memory:", n_people=80, seed=0, extra_rows=()):
    """The shared people ⋈ visits database (``people_visits`` in tests/conftest.py) with random
    people (``extra_rows`` after them), their visits and a public ``cities`` table."""
    rng = np.random.default_rng(seed)
    people, visits = [], []
    for i in range(n_people):
        people.append([i, CITIES[int(rng.integers(0, 4))], float(rng.integers(0, 300_000))])
        for d in range(int(rng.integers(0, 5))):
            visits.append([i, d, float(rng.normal(20, 30))])
    return build(  # raw: releases compared with the mechanisms' own draws
        people + [list(r) for r in extra_rows], visits, path=path, raw=True, budget="1000",
        people_columns="id INT PRIMARY KEY, city VARCHAR, salary DOUBLE",
        before_protect=("CREATE TABLE cities(name VARCHAR)",
                        "INSERT INTO cities VALUES ('Lyon'), ('Oslo'), ('Berlin')"))


def _release(con, sql, seed):
    con._rng = np.random.default_rng(seed)
    cur = con.execute(sql)
    return cur.fetchall(), cur.privacy


def _true_counts(con, sql):
    return dict(con.execute(sql).fetchall())


# ====================================================================== group keys
def test_declared_values_are_exactly_the_groups_released_laplace_full_epsilon(people_visits):
    con = _db(people_visits)
    con.execute("SET GROUP KEYS ON people (city) VALUES ('Oslo', 'Lyon', 'Berlin', 'Pune')")
    true = _true_counts(con, "SELECT city, COUNT(*) FROM people GROUP BY city")
    rows, info = _release(con, "SELECT city, COUNT(*) FROM people GROUP BY city WITH EPSILON 0.5", 4)
    assert [r[0] for r in rows] == ["Berlin", "Lyon", "Oslo", "Pune"]  # sorted; Rome dropped
    assert info.mechanism == "laplace" and info.epsilon == pytest.approx(0.5)
    assert all(r.epsilon == 0.5 for r in info.releases)  # parallel composition: full ε per group
    # one vector of noise, in the order of the declared groups
    noise = discrete_laplace(2.0, size=len(rows), rng=np.random.default_rng(4))
    for (city, value), k in zip(rows, noise):
        assert value == true.get(city, 0) + k
    assert con.ledger.remaining(con.user) == Fraction(1999, 2)


def test_keys_from_a_public_table_are_read_at_query_time(people_visits):
    con = _db(people_visits)
    con.execute("SET GROUP KEYS ON people (city) FROM cities (name)")
    rows, _ = _release(con, "SELECT city, COUNT(*) FROM people GROUP BY city WITH EPSILON 1", 1)
    assert [r[0] for r in rows] == ["Berlin", "Lyon", "Oslo"]
    con.execute("INSERT INTO cities VALUES ('Rome')")
    rows, _ = _release(con, "SELECT city, COUNT(*) FROM people GROUP BY city WITH EPSILON 1", 1)
    assert [r[0] for r in rows] == ["Berlin", "Lyon", "Oslo", "Rome"]


def test_join_with_visits_uses_the_single_owner_path_at_full_epsilon(people_visits):
    """The key is a column of the owner's own row: each person's visits fall in one group."""
    con = _db(people_visits)
    con.execute("SET GROUP KEYS ON people (city) VALUES ('Lyon', 'Oslo', 'Berlin')")
    sql = ("SELECT p.city, COUNT(*) FROM people p JOIN visits v ON p.id = v.pid "
           "GROUP BY p.city WITH EPSILON 1")
    rows, info = _release(con, sql, 9)
    assert [r[0] for r in rows] == ["Berlin", "Lyon", "Oslo"]
    assert info.mechanism.startswith("recursive")
    assert [r.epsilon for r in info.releases] == [1.0, 1.0, 1.0]


def test_a_key_outside_the_owners_row_takes_one_l1_bound(people_visits):
    """Grouping visits by day: one person's visits span several days, so the days are released
    with one ℓ1 bound across them (privacy.group_l1): the full ε each, one Δ̂, one charge."""
    con = _db(people_visits)
    con.execute("SET GROUP KEYS ON visits (day) VALUES (0, 1, 2, 3, 9)")
    sql = ("SELECT v.day, COUNT(*) FROM people p JOIN visits v ON p.id = v.pid "
           "GROUP BY v.day WITH EPSILON 1")
    rows, info = _release(con, sql, 2)
    assert [r[0] for r in rows] == [0, 1, 2, 3, 9]  # day 4 exists but is not declared; 9 is empty
    assert [r.epsilon for r in info.releases] == [pytest.approx(1.0)] * 5
    assert len({getattr(r, "release", r).delta_hat for r in info.releases}) == 1
    assert info.epsilon == 1


def test_multi_owner_rows_use_the_lp_path_with_split_epsilon():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE edge(src INT, dst INT, kind VARCHAR)")
    con.execute("INSERT INTO edge VALUES (1, 2, 'a'), (2, 3, 'a'), (1, 3, 'b'), (3, 4, 'z')")
    con.execute("PROTECT TABLE edge BY (src, dst) AS person")
    con.execute("SET PRIVACY BUDGET 10")
    con.execute("SET GROUP KEYS ON edge (kind) VALUES ('a', 'b', 'c')")
    rows, info = _release(con, "SELECT kind, COUNT(*) FROM edge GROUP BY kind WITH EPSILON 1", 3)
    assert [r[0] for r in rows] == ["a", "b", "c"]
    assert [r.epsilon for r in info.releases] == [pytest.approx(1 / 3)] * 3


def test_refusal_without_declarations_says_what_to_declare(people_visits):
    con = _db(people_visits)
    with pytest.raises(UnsupportedQueryError,
                       match=r"SET GROUP KEYS ON people \(city\) VALUES \(…\)") as err:
        con.execute("SELECT city, COUNT(*) FROM people GROUP BY city WITH EPSILON 1")
    assert "FROM a public table" in str(err.value)
    with pytest.raises(UnsupportedQueryError,
                       match=r"SET GROUP KEYS ON people \(city\) VALUES \(…\)"):
        con.execute("SELECT p.city, COUNT(*) FROM people p JOIN visits v ON p.id = v.pid "
                    "GROUP BY p.city WITH EPSILON 1")
    with pytest.raises(UnsupportedQueryError, match=r"SET GROUP KEYS ON people \(city\)"):
        con.execute("SELECT city, SUM(salary) FROM people GROUP BY city WITH EPSILON 1 "
                    "OPTIONS (lower = 0, upper = 10)")
    assert con.ledger.remaining(con.user) == 1000  # nothing spent


def test_a_dropped_declaration_is_refused_again(people_visits):
    con = _db(people_visits)
    con.execute("SET GROUP KEYS ON people (city) VALUES ('Lyon')")
    con.execute("SELECT city, COUNT(*) FROM people GROUP BY city WITH EPSILON 1")
    con.execute("DROP GROUP KEYS ON people (city)")
    with pytest.raises(UnsupportedQueryError, match="SET GROUP KEYS"):
        con.execute("SELECT city, COUNT(*) FROM people GROUP BY city WITH EPSILON 1")


def test_a_policy_on_the_column_takes_precedence(people_visits):
    con = _db(people_visits)
    con.execute("SET GROUP KEYS ON people (city) VALUES ('Lyon')")
    con.execute("CREATE POLICY cp ON people (city) AS FULL DOMAIN ('Lyon', 'Oslo')")
    rows, info = _release(con, "SELECT city, COUNT(*) FROM people GROUP BY city WITH EPSILON 1", 0)
    assert info.mechanism == "blowfish" and [r[0] for r in rows] == ["Lyon", "Oslo"]


def test_possible_worlds_the_released_groups_ignore_an_undeclared_row(people_visits):
    """Two databases that differ in one row whose city is not declared: the released groups are
    the same, and with the same noise the whole answer is identical."""
    sql = "SELECT city, COUNT(*) FROM people GROUP BY city WITH EPSILON 1"
    answers = []
    for extra in ((), ((10_000, "Atlantis", 5.0),)):
        con = _db(people_visits, extra_rows=extra)
        con.execute("SET GROUP KEYS ON people (city) VALUES ('Lyon', 'Oslo', 'Berlin')")
        answers.append(_release(con, sql, 17)[0])
        rows, _ = _release(con, "SELECT p.city, SUM(v.amount) FROM people p JOIN visits v ON "
                                "p.id = v.pid GROUP BY p.city WITH EPSILON 1 "
                                "OPTIONS (lower = 0, upper = 50)", 5)
        answers.append(rows)
    assert [r[0] for r in answers[0]] == [r[0] for r in answers[2]] == ["Berlin", "Lyon", "Oslo"]
    assert answers[0] == answers[2]  # counts: exactly the same release
    assert [r[0] for r in answers[1]] == [r[0] for r in answers[3]]
    # sums: the same up to DuckDB's floating-point summation order
    assert [r[1] for r in answers[1]] == pytest.approx([r[1] for r in answers[3]], rel=1e-12)


# ====================================================================== bounds
def test_declared_bounds_make_a_sum_laplace(people_visits):
    con = _db(people_visits)
    con.execute("SET BOUNDS ON people (salary) BETWEEN 0 AND 100000")
    true = con.execute("SELECT SUM(least(greatest(salary, 0), 100000)) FROM people").fetchone()[0]
    rows, info = _release(con, "SELECT SUM(salary) FROM people WITH EPSILON 1", 3)
    assert info.mechanism == "laplace" and info.releases[0].sensitivity == 100000
    assert rows[0][0] == pytest.approx(true + float(laplace(100000.0, rng=np.random.default_rng(3))))
    # exactly what the same bounds given as OPTIONS release
    same, _ = _release(con, "SELECT SUM(salary) FROM people WITH EPSILON 1 "
                            "OPTIONS (lower = 0, upper = 100000)", 3)
    assert same == rows


def test_options_override_the_declared_bounds(people_visits):
    con = _db(people_visits)
    con.execute("SET BOUNDS ON people (salary) BETWEEN 0 AND 100000")
    _, info = _release(con, "SELECT SUM(salary) FROM people WITH EPSILON 1 "
                            "OPTIONS (lower = 0, upper = 10)", 3)
    assert info.releases[0].sensitivity == 10


def test_declared_bounds_in_the_single_owner_path_equal_options(people_visits):
    con = _db(people_visits)
    sql = "SELECT SUM(v.amount) FROM people p JOIN visits v ON p.id = v.pid WITH EPSILON 1"
    with_options, info = _release(con, sql + " OPTIONS (lower = 0, upper = 50)", 11)
    con.execute("SET BOUNDS ON visits (amount) BETWEEN 0 AND 50")
    declared, info2 = _release(con, sql, 11)
    assert declared == with_options and info2.mechanism == info.mechanism == "recursive"


def test_avg_works_without_options_when_the_column_is_bounded(people_visits):
    con = _db(people_visits)
    with pytest.raises(provsql_dp.ProgrammingError, match="SET BOUNDS ON"):
        con.execute("SELECT AVG(salary) FROM people WITH EPSILON 1")
    con.execute("SET BOUNDS ON people (salary) BETWEEN 0 AND 300000")
    con.execute("SET GROUP KEYS ON people (city) VALUES ('Lyon', 'Oslo', 'Berlin')")
    rows, info = _release(con, "SELECT city, AVG(salary), SUM(salary) FROM people GROUP BY city "
                               "WITH EPSILON 2", 8)
    assert [r[0] for r in rows] == ["Berlin", "Lyon", "Oslo"]
    assert info.columns == ("AVG(salary)", "SUM(salary)")
    lyon = rows[1][1]
    assert lyon is None or 0 <= lyon <= 300000
    avg_release = info.releases[1][0]
    assert (avg_release.lower, avg_release.upper) == (0, 300000)
    assert info.epsilon == 2


def test_a_signed_bound_releases_the_sum_in_two_parts_on_the_lp_paths(people_visits):
    con = _db(people_visits)
    con.execute("SET BOUNDS ON visits (amount) BETWEEN -50 AND 50")
    _, info = _release(con, "SELECT SUM(v.amount) FROM people p JOIN visits v ON p.id = v.pid "
                            "WITH EPSILON 1", 2)
    assert info.mechanism == "recursive-signed"


# ====================================================================== roles, reconnect
def test_analyst_can_show_but_not_set(people_visits, tmp_path):
    path = str(tmp_path / "db.duckdb")
    con = _db(people_visits, path, n_people=20)
    con.execute("SET BOUNDS ON people (salary) BETWEEN 0 AND 100000")
    con.execute("SET GROUP KEYS ON people (city) VALUES ('Lyon', 'Oslo')")
    con.execute("SET PRIVACY BUDGET 5 FOR USER 'ann'")
    con.close()
    ann = provsql_dp.connect(path, role="analyst", user="ann")
    assert ann.execute("SHOW BOUNDS").fetchall() == [
        ("main", "people", "salary", 0.0, 100000.0, "ok")]
    assert len(ann.execute("SHOW GROUP KEYS ON people").fetchall()) == 1
    for sql in ("SET BOUNDS ON people (salary) BETWEEN 0 AND 1", "DROP BOUNDS ON people (salary)",
                "SET GROUP KEYS ON people (city) VALUES ('Rome')",
                "DROP GROUP KEYS ON people (city)"):
        with pytest.raises(PrivacyError, match="an analyst cannot run (SET|DROP)"):
            ann.execute(sql)
    rows = ann.execute("SELECT city, COUNT(*) FROM people GROUP BY city WITH EPSILON 1").fetchall()
    assert [r[0] for r in rows] == ["Lyon", "Oslo"]
    assert ann.execute("SELECT SUM(salary) FROM people WITH EPSILON 1").privacy.mechanism == "laplace"
    with pytest.raises(PrivacyError):  # the catalog tables stay unreadable
        ann.execute("SELECT * FROM _provsql_dp.group_keys")
    ann.close()


def test_declarations_run_from_the_shell(people_visits):
    import io

    from provsql_dp.interfaces.shell import Shell
    from provsql_dp.interfaces.shell.dot_commands import HELP

    assert "SET GROUP KEYS ON t (c) VALUES" in HELP and "SET BOUNDS ON t (c)" in HELP
    out = io.StringIO()
    sh = Shell(_db(people_visits, n_people=10), out=out, err=out)
    sh.run_statement("SET BOUNDS ON people (salary) BETWEEN 0 AND 10")
    sh.run_statement("SHOW BOUNDS")
    sh.run_statement("SET bounds = 3")  # a DuckDB setting, judged by DuckDB
    text = out.getvalue()
    assert "bounds set: people.salary BETWEEN 0 AND 10" in text
    assert re.search(r"\|\s*main\s*\|\s*people\s*\|\s*salary\s*\|\s*0\s*\|\s*10\s*\|", text)
    assert 'unrecognized configuration parameter "bounds"' in text


# ====================================================================== max_groups
def test_max_groups_is_enforced_per_participant_and_gives_each_group_eps_over_k(people_visits):
    """GROUP BY visit day: a person's visits span several days. OPTIONS (max_groups = 2) keeps
    each person's first two declared days (public order) and releases each day at ε/2; at a huge
    ε the releases are the brute-force truncated counts."""
    con = _db(people_visits)
    con.execute("SET GROUP KEYS ON visits (day) VALUES (0, 1, 2, 3, 9)")
    sql = ("SELECT v.day, COUNT(*) FROM people p JOIN visits v ON p.id = v.pid "
           "GROUP BY v.day WITH EPSILON {eps} OPTIONS (max_groups = 2)")
    rows, info = _release(con, sql.format(eps=1), 2)
    assert [r.epsilon for r in info.releases] == [pytest.approx(0.5)] * 5 and info.epsilon == 1
    visits = con.execute("SELECT pid, day FROM visits").fetchall()
    declared = [0, 1, 2, 3, 9]
    per_person = {}
    for pid, day in visits:
        if day in declared:
            per_person.setdefault(pid, []).append(day)
    totals = {d: [] for d in declared}  # brute force: each person's first two declared days
    for days in per_person.values():
        for day in sorted(set(days), key=declared.index)[:2]:
            totals[day].append(float(days.count(day)))
    gen = np.random.default_rng(2)
    for (day, value), rel in zip(rows, info.releases):
        slow = single_owner.release(np.array(totals[day]), 0.5, "edge", gen)
        assert rel.delta_hat == pytest.approx(slow.delta_hat, rel=1e-12)
        assert value == pytest.approx(slow.value, rel=1e-9, abs=1e-9)
    assert sum(map(len, totals.values())) < sum(len(set(d)) for d in per_person.values())


def test_max_groups_is_refused_where_it_cannot_be_enforced(people_visits):
    con = _db(people_visits)
    con.execute("SET GROUP KEYS ON visits (day) VALUES (0, 1, 2)")
    with pytest.raises(provsql_dp.ProgrammingError, match="GROUP BY"):
        con.execute("SELECT COUNT(*) FROM visits WITH EPSILON 1 OPTIONS (max_groups = 2)")
    with pytest.raises(provsql_dp.ProgrammingError, match="whole number"):
        con.execute("SELECT day, COUNT(*) FROM visits GROUP BY day WITH EPSILON 1 "
                    "OPTIONS (max_groups = 1.5)")
    con.execute("CREATE TABLE edge(src INT, dst INT, kind VARCHAR)")
    con.execute("INSERT INTO edge VALUES (1, 2, 'a'), (2, 3, 'b')")
    con.execute("PROTECT TABLE edge BY (src, dst) AS person")
    con.execute("SET GROUP KEYS ON edge (kind) VALUES ('a', 'b')")
    with pytest.raises(provsql_dp.ProgrammingError, match="one owner"):
        con.execute("SELECT kind, COUNT(*) FROM edge GROUP BY kind WITH EPSILON 1 "
                    "OPTIONS (max_groups = 1)")
    assert con.ledger.remaining(con.user) == 1000
