"""COUNTs come back whole and nonnegative; raw = true (statement, cursor, connection) keeps the
mechanism's release; bad values are refused before anything is spent; intervals follow."""

from __future__ import annotations

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import ProgrammingError


def _con(**kw):
    con = provsql_dp.connect(**kw)
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, age INT)")
    con.execute("INSERT INTO p SELECT range, range % 60 FROM range(300)")
    con.execute("PROTECT TABLE p; SET PRIVACY BUDGET 1000")
    return con


def test_counts_are_whole_and_never_negative_by_default_and_raw_keeps_the_release():
    con = _con()
    seen_negative_raw = False
    for seed in range(40):  # a true count of 0 at a small ε: raw releases go negative often
        con._rng = np.random.default_rng(seed)
        cur = con.execute("SELECT COUNT(*) FROM p WHERE age > 100 WITH EPSILON 0.1")
        (v,), = cur.fetchall()
        assert isinstance(v, int) and v >= 0 and cur.description[0][1] == "BIGINT"
        (lo, hi), = cur.privacy.intervals(0.95)[0]
        assert 0 <= lo <= v <= hi and float(lo).is_integer() and float(hi).is_integer()
        con._rng = np.random.default_rng(seed)
        raw = con.execute("SELECT COUNT(*) FROM p WHERE age > 100 WITH EPSILON 0.1 "
                          "OPTIONS (raw = true)").fetchone()[0]
        assert v == max(0, round(raw))
        seen_negative_raw |= raw < 0
    assert seen_negative_raw


def test_raw_at_connection_and_cursor_level_and_statement_override():
    con = _con(raw=True)
    con._rng = np.random.default_rng(3)
    cur = con.cursor()
    assert cur.raw is True
    cur.raw = False
    cur.execute("SELECT COUNT(*) FROM p WHERE age > 100 WITH EPSILON 0.1")
    assert cur.fetchone()[0] >= 0
    con._rng = np.random.default_rng(3)
    a = con.execute("SELECT COUNT(*) FROM p WHERE age > 100 WITH EPSILON 0.1").fetchone()[0]
    con._rng = np.random.default_rng(3)
    b = con.execute("SELECT COUNT(*) FROM p WHERE age > 100 WITH EPSILON 0.1 "
                    "OPTIONS (raw = false)").fetchone()[0]
    assert b == max(0, round(a))


def test_a_bad_raw_value_is_refused_before_anything_is_spent():
    con = _con()
    before = con.ledger.remaining(con.user)
    for bad in ("1", "'yes'"):
        with pytest.raises(ProgrammingError, match="option raw takes true or false"):
            con.execute(f"SELECT COUNT(*) FROM p WITH EPSILON 0.5 OPTIONS (raw = {bad})")
    assert con.ledger.remaining(con.user) == before


def test_blowfish_histogram_rounded_bins_keep_the_public_total():
    con = _con()
    con.execute("CREATE POLICY age_line ON p (age) AS LINE DOMAIN [0, 60) WIDTH 10 BOUNDED")
    for seed in range(5):
        con._rng = np.random.default_rng(seed)
        rows = con.execute("SELECT age, COUNT(*) FROM p GROUP BY age WITH EPSILON 0.2 "
                           ).fetchall()
        assert all(isinstance(r[1], int) and r[1] >= 0 for r in rows)
        assert sum(r[1] for r in rows) == 300  # bounded: the total is public
    cur = con.execute("SELECT age, COUNT(*) FROM p GROUP BY age WITH EPSILON 0.2 OPTIONS (raw = true)")
    assert cur.privacy.mechanism == "blowfish"
