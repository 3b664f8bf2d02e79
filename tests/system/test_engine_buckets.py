"""Unbounded SUM at engine speed (``privacy.engine_buckets``): the release computed from
DuckDB's bucketed summary equals the per-participant path's under one seed."""

from __future__ import annotations

import numpy as np
import pytest

import provsql_dp
from provsql_dp.privacy import fast_path


def _db():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, city VARCHAR, x DOUBLE)")
    con.execute("INSERT INTO people SELECT range, 'c' || (range % 3), "
                "((hash(range) % 2000)::DOUBLE - 500) / 7 FROM range(3000)")
    con.execute("CREATE TABLE visits(pid INT, amount INT)")
    con.execute("INSERT INTO visits SELECT hash(range * 3) % 400, hash(range) % 50 FROM range(5000)")
    con.execute("CREATE TABLE trips(tid INT PRIMARY KEY, pid INT)")
    con.execute("INSERT INTO trips SELECT range, hash(range * 5) % 300 FROM range(800)")
    con.execute("CREATE TABLE legs(tid INT, km DOUBLE)")
    con.execute("INSERT INTO legs SELECT hash(range * 7) % 800, (hash(range) % 90) / 3 FROM range(4000)")
    con.execute("PROTECT TABLE people")
    con.execute("PROTECT TABLE visits BY (pid) AS people")
    con.execute("PROTECT TABLE trips BY (pid) REFERENCES people")
    con.execute("PROTECT TABLE legs BY (tid) REFERENCES trips")
    con.execute("SET GROUP KEYS ON people (city) VALUES ('c0', 'c1', 'c2')")
    con.execute("SET PRIVACY BUDGET 1000")
    return con


QUERIES = [
    "SELECT SUM(x) FROM people WITH EPSILON 1",                      # signed, rows as totals
    "SELECT SUM(x) FROM people WHERE x > 0 WITH EPSILON 0.3",
    "SELECT SUM(amount) FROM visits WITH EPSILON 1",                 # GROUP BY owner in DuckDB
    "SELECT SUM(amount) FROM visits WITH EPSILON 1 OPTIONS (theta = 4, beta = 0.05)",
    "SELECT city, SUM(x) FROM people GROUP BY city WITH EPSILON 2",  # per group
    "SELECT SUM(km) FROM legs WITH EPSILON 1",                       # owned along foreign keys
    "SELECT SUM(amount) FROM people JOIN visits ON id = pid WHERE x > 10 WITH EPSILON 1",
]


def _release(sql, engine: bool, monkeypatch, seed=11):
    con = _db()
    if not engine:  # the per-participant path: totals into numpy
        monkeypatch.setattr(fast_path, "bucket_params", lambda *a, **k: None)
    con._rng = np.random.default_rng(seed)
    cur = con.execute(sql)
    rows = sorted(cur.fetchall())
    monkeypatch.undo()
    return rows, cur.privacy.mechanism, con.execute("SHOW PRIVACY BUDGET").fetchall()


@pytest.mark.parametrize("sql", QUERIES)
def test_the_engine_path_releases_what_the_per_participant_path_releases(sql, monkeypatch):
    got = _release(sql, True, monkeypatch)
    want = _release(sql, False, monkeypatch)
    assert got[1] == want[1] and got[1].startswith("recursive")
    assert got[2] == want[2]
    for g, w in zip(got[0], want[0]):
        assert g[:-1] == w[:-1]
        assert g[-1] == pytest.approx(w[-1], rel=1e-9, abs=1e-9)


def test_no_per_owner_totals_reach_python(monkeypatch):
    """The engine path never runs the per-participant fetch (its totals stay in DuckDB)."""
    con = _db()

    def fail(*a, **k):
        raise AssertionError("per-owner totals fetched into Python")

    monkeypatch.setattr(fast_path, "_owner_totals_sql_path", fail)
    monkeypatch.setattr(fast_path, "dense_owner_totals", fail)
    for sql in QUERIES:
        con.execute(sql).fetchall()


def test_buckets_whose_estimates_are_off_are_read_exactly(monkeypatch):
    """A bucket whose estimate disagrees with the exact thresholds (here: every other total's
    estimate moved by one) is read again exactly: the release does not change."""
    from provsql_dp.mechanisms.recursive import buckets as bk
    from provsql_dp.privacy import engine_buckets as eb

    sql = "SELECT SUM(amount) FROM visits WITH EPSILON 1"
    want = _release(sql, False, monkeypatch)
    calls = []
    real = bk.bucket_sql

    def skewed(*a):
        ln, k, m = real(*a)
        return ln, f"({k}) + (hash(c) % 2)::BIGINT", f"({m}) - (hash(c) % 2)::BIGINT"

    monkeypatch.setattr(eb, "bucket_sql", skewed)
    con = _db()
    con._native = False  # the SQL pass (privacy.native's aggregate computes its own estimates)
    con._rng = np.random.default_rng(11)
    original = eb.engine_buckets

    def spy(run, sql, sql_params, params, n_parts, n_groups, run_exact, **k):
        def exact(text, p=None):
            calls.append(text)
            return run_exact(text, p)
        return original(run, sql, sql_params, params, n_parts, n_groups, exact, **k)

    monkeypatch.setattr(fast_path, "engine_buckets", spy)
    got = sorted(con.execute(sql).fetchall())
    assert calls  # exact reads happened
    assert got[0][0] == pytest.approx(want[0][0][0], rel=1e-9)


@pytest.mark.parametrize("sql", ["SELECT SUM(y) FROM odd WITH EPSILON 1",
                                 "SELECT SUM(y) FROM odd WHERE y < 0 WITH EPSILON 1"])
def test_rows_as_totals_take_nan_infinities_and_extremes(sql, monkeypatch):
    """The one-pass rows of a signed SUM over a table protected row by row (``(w < 0, |w|)``,
    ``ln`` unguarded since the clamp leaves only finite values) release what the
    per-participant path releases, with NaN, ±∞, ±0, huge and tiny values among the rows."""
    def release(engine):
        con = provsql_dp.connect()
        con.execute("CREATE TABLE odd(id INT PRIMARY KEY, y DOUBLE)")
        con.execute("INSERT INTO odd SELECT range, ((hash(range) % 2000)::DOUBLE - 900) / 3 "
                    "FROM range(2000)")
        con.execute("INSERT INTO odd VALUES (5001, 'nan'), (5002, 'inf'), (5003, '-inf'), "
                    "(5004, -0.0), (5005, 0.0), (5006, 1e300), (5007, -1e300), (5008, 1e-300), "
                    "(5009, -1e-300), (5010, NULL)")
        con.execute("PROTECT TABLE odd")
        con.execute("SET PRIVACY BUDGET 100")
        if not engine:
            monkeypatch.setattr(fast_path, "bucket_params", lambda *a, **k: None)
        con._rng = np.random.default_rng(5)
        cur = con.execute(sql)
        out = cur.fetchall()[0][0], cur.privacy.mechanism
        monkeypatch.undo()
        return out

    got, want = release(True), release(False)
    assert got[1] == want[1] == "recursive-signed"
    assert got[0] == pytest.approx(want[0], rel=1e-9, abs=1e-9)
