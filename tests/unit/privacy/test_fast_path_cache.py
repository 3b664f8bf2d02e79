"""The Laplace fast path's SQL kept next to its plan (``privacy/fast_path._kept_laplace_sql``)
never outlives what it was made from: each statement's bounds (OPTIONS or SET BOUNDS) reach the
query DuckDB runs, a change of the declarations or of the schema makes a new one, and the
values computed are those of a fresh build."""

from __future__ import annotations

import pytest

import provsql_dp
from provsql_dp.privacy import fast_path


@pytest.fixture
def con():
    c = provsql_dp.connect()
    c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, x DOUBLE)")
    c.execute("INSERT INTO t SELECT range, range FROM range(100)")  # x = 0 … 99
    c.execute("PROTECT TABLE t")
    c.execute("SET PRIVACY BUDGET 1000")
    return c


def _truths(con, monkeypatch):
    """The (sql, true values) of every Laplace release, and a check that each kept SQL is the
    one a fresh build gives."""
    seen = []
    real_values, real_sql = fast_path._true_values, fast_path._laplace_sql

    def values(c, sql, n):
        out = real_values(c, sql, n)
        seen.append((sql, out))
        return out

    built = []

    def build(plan, bounds, with_count):
        out = real_sql(plan, bounds, with_count)
        built.append(out[0])
        return out

    monkeypatch.setattr(fast_path, "_true_values", values)
    monkeypatch.setattr(fast_path, "_laplace_sql", build)
    return seen, built


def _clamped_sum(hi):
    return float(sum(min(v, hi) for v in range(100)))


def test_each_statement_gets_its_own_bounds(con, monkeypatch):
    seen, built = _truths(con, monkeypatch)
    his = (10, 50, 10, 50, 10, 50)
    for hi in his:
        con.execute(f"SELECT SUM(x) FROM t WITH EPSILON 1 OPTIONS (lower = 0, upper = {hi})")
    assert [next(iter(v[0].values())) for _, v in seen] == [_clamped_sum(hi) for hi in his]
    assert seen[0][0] == seen[2][0] == seen[4][0] != seen[1][0] == seen[3][0] == seen[5][0]
    # the catalog starts afresh once after a statement looks up new names (Catalog._kept);
    # from then on the repeats reuse the kept SQL of their bounds
    assert len(built) <= 3 and set(built) == {seen[0][0], seen[1][0]}


def test_a_declaration_change_makes_a_new_query(con, monkeypatch):
    seen, built = _truths(con, monkeypatch)
    con.execute("SET BOUNDS ON t (x) BETWEEN 0 AND 10")
    con.execute("SELECT AVG(x) FROM t WITH EPSILON 1")
    con.execute("SET BOUNDS ON t (x) BETWEEN 0 AND 50")
    for _ in range(3):
        con.execute("SELECT AVG(x) FROM t WITH EPSILON 1")
    sums = [next(iter(v[0].values())) for _, v in seen]
    counts = [next(iter(v[1].values())) for _, v in seen]
    assert sums == [_clamped_sum(10)] + [_clamped_sum(50)] * 3
    assert counts == [100] * 4
    assert "10.0::DOUBLE" in built[0] and all("50.0::DOUBLE" in b for b in built[1:])
    assert len(built) <= 3  # the last repeat reuses the kept SQL


def test_a_schema_change_outside_provsql_dp_makes_a_new_query(con, monkeypatch):
    seen, _ = _truths(con, monkeypatch)
    sql = "SELECT SUM(x) FROM t WITH EPSILON 1 OPTIONS (lower = 0, upper = 10)"
    con.execute(sql)
    con._duck.execute("ALTER TABLE t RENAME COLUMN x TO y")
    con._duck.execute("ALTER TABLE t ADD COLUMN x DOUBLE DEFAULT 1.0")
    con.execute(sql)
    assert [next(iter(v[0].values())) for _, v in seen] == [_clamped_sum(10), 100.0]
