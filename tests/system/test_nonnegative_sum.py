"""A SUM of terms the schema or the statement proves nonnegative is released unsigned (one part
at the full ε, a one-sided interval) without declared bounds (``sql._nonnegative``): an
unsigned integer column, a ``CHECK (c >= k)`` with ``k ≥ 0``, ``GREATEST(x, 0)``. Anything else
stays signed (two parts at ε/2, no interval). Decided from the statement and the schema: the
same data under another declaration takes the other route."""

from __future__ import annotations

import numpy as np
import pytest

import provsql_dp
from provsql_dp.privacy import fast_path

VALUES = "SELECT range, 10 + (hash(range) % 400) / 3, 10 + (hash(range) % 400) / 3 FROM range(3000)"


def _db(extra_rows: str | None = None):
    con = provsql_dp.connect()
    con.execute("CREATE TABLE t(id INT PRIMARY KEY, a DOUBLE CHECK (a >= 0), c DOUBLE)")
    con.execute(f"INSERT INTO t {VALUES}")
    if extra_rows:
        con.execute(f"INSERT INTO t VALUES {extra_rows}")
    con.execute("CREATE TABLE u(id INT PRIMARY KEY, n UINTEGER, m DOUBLE CHECK (m > -1))")
    con.execute("INSERT INTO u SELECT range, range % 70, range % 70 FROM range(2000)")
    con.execute("CREATE TABLE v(pid INT, w DOUBLE CHECK (0 <= w AND w < 1e9))")
    con.execute("INSERT INTO v SELECT hash(range) % 300, range % 17 FROM range(4000)")
    con.execute("CREATE TABLE people(id INT PRIMARY KEY)")
    con.execute("INSERT INTO people SELECT range FROM range(300)")
    con.execute("PROTECT TABLE t; PROTECT TABLE u; PROTECT TABLE people")
    con.execute("PROTECT TABLE v BY (pid) AS people")
    con.execute("SET PRIVACY BUDGET 1000")
    return con


@pytest.mark.parametrize("arg, table, unsigned", [
    ("a", "t", True),                  # CHECK (a >= 0)
    ("c", "t", False),                 # nothing known
    ("GREATEST(c, 0)", "t", True),     # the statement clamps at 0
    ("a - c", "t", False),
    ("n", "u", True),                  # UINTEGER
    ("m", "u", False),                 # CHECK (m > -1): not ≥ 0
    ("w", "v", True),                  # CHECK (0 <= w AND …), owned BY (pid)
])
def test_the_sign_is_read_from_the_schema_and_the_statement(arg, table, unsigned):
    con = _db()
    q = f"SELECT SUM({arg}) FROM {table} WITH EPSILON 1"
    cur = con.execute(q)
    assert cur.privacy.mechanism == ("recursive" if unsigned else "recursive-signed")
    lo, hi = cur.privacy.intervals(0.95)[0][0]
    assert hi is None and ((lo is not None) == unsigned)   # one-sided from below, or none
    how = con.execute("EXPLAIN PRIVACY " + q).fetchall()[0][2]
    assert ("signed: a positive and a negative part" in how) == (not unsigned)


def _release(sql, seed=7, extra_rows=None):
    con = _db(extra_rows)
    con._rng = np.random.default_rng(seed)
    return con.execute(sql).fetchall()


def test_two_proofs_of_the_same_sign_release_the_same_value():
    # a (CHECK) and GREATEST(c, 0) hold the same values: the same unsigned release
    assert _release("SELECT SUM(a) FROM t WITH EPSILON 1") == \
        _release("SELECT SUM(GREATEST(c, 0)) FROM t WITH EPSILON 1")
    assert _release("SELECT SUM(a) FROM t WITH EPSILON 1") != \
        _release("SELECT SUM(c) FROM t WITH EPSILON 1")


def test_non_finite_values_a_check_lets_through_add_nothing():
    # NaN >= 0 and +inf >= 0 hold in DuckDB: the CHECK admits them; the clamp drops them, and the
    # release is that of the table without them (no error after the charge)
    with_them = _release("SELECT SUM(a) FROM t WITH EPSILON 1",
                         extra_rows="(-1, 'nan'::DOUBLE, 1), (-2, 'inf'::DOUBLE, 1)")
    assert with_them == _release("SELECT SUM(a) FROM t WITH EPSILON 1")


def test_the_engine_path_and_the_per_participant_path_agree(monkeypatch):
    sql = "SELECT SUM(w) FROM v WITH EPSILON 1"
    got = _release(sql)
    monkeypatch.setattr(fast_path, "bucket_params", lambda *a, **k: None)
    assert _release(sql) == got
