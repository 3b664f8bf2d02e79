"""Red team h63attack: a SUM released unsigned without declared bounds (``sql._nonnegative``:
one part at the full ε, no clamp at 0) must have every term ≥ 0 on every database with the
schema and declarations — a negative term reaching the unsigned release makes it fail after
its charge ("the recursive mechanism needs nonnegative totals"), an answer on one neighbour
and an error on the other: one bit about one participant, whatever the noise.

Each case is a neighbour pair: the same schema and declarations, one database with and one
without a participant holding a value the proof must not miss. The outcome (answer or error
and its text, the mechanism, the ε charged) must be the same on both.

Finding h63attack-1 (fixed): a column's *declared* bounds (``SET BOUNDS ON t (c) BETWEEN 0
AND 10``) were taken as a proof of its sign. They are a declaration, not a constraint: a SUM's
weight is clamped to bounds only where the SUM has bounds, and ``c + a`` (``a`` CHECKed ≥ 0)
has none — so a row holding ``c = -10⁹`` reached the unsigned release unclamped.
``SELECT SUM(c + a) FROM t WHERE id = 42`` answered when participant 42's ``c`` was within its
declared range and failed (charged) when it was not.

Finding h63attack-2 (fixed): ``CHECK (s.a >= 0)`` on field ``a`` of a STRUCT column ``s`` was
read as a CHECK on column ``a`` (the qualifier was ignored).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import provsql_dp
from conftest import mechanism_outcome

TABLE = ("CREATE TABLE t(id INT PRIMARY KEY, a DOUBLE CHECK (a >= 0), c DOUBLE, x DOUBLE, "
         "n UINTEGER, ut UTINYINT, h UHUGEINT, d DECIMAL(10, 2) CHECK (d >= 0), b BIGINT)")
ROWS = ("INSERT INTO t SELECT range, range % 7, range % 10, range % 3, range % 5, range % 13, "
        "range % 11, range % 9, range % 4 - 2 FROM range(300)")
DECLARE = ("PROTECT TABLE t", "SET BOUNDS ON t (c) BETWEEN 0 AND 10")


def _row(**v) -> str:
    """One more participant (id 9999), ordinary except for ``v``."""
    row = {"a": 1, "c": 1, "x": 1, "n": 1, "ut": 1, "h": 1, "d": 1, "b": 1} | v
    return (f"INSERT INTO t VALUES (9999, {row['a']}, {row['c']}, {row['x']}, {row['n']}, "
            f"{row['ut']}, {row['h']}, {row['d']}, {row['b']})")


@functools.cache
def _database(setup, extra):
    con = provsql_dp.connect()
    for s in [*setup, *extra, *DECLARE, "SET PRIVACY BUDGET 1000"]:
        con.execute(s)
    return con


def _outcome(setup, extra, sql):
    con = _database(tuple(setup), tuple(extra))
    return mechanism_outcome(con, sql)


def _neighbours(setup, secret, sql):
    without, with_ = _outcome(setup, [], sql), _outcome(setup, [secret], sql)
    assert without == with_, f"{sql}\n  without the participant: {without}\n  with it: {with_}"
    return without[0]


BASE = (TABLE, ROWS)


# ---------------------------------------------------------------------------------- findings

@pytest.mark.parametrize("sql", [
    "SELECT SUM(c + a) FROM t",
    "SELECT SUM(c + a) FROM t WHERE id = 9999",
    "SELECT SUM(v + a) FROM (SELECT id, c * 2 AS v, a FROM t) q",   # bounds of a derived column
    "SELECT SUM(c * 1e300 * 1e300 + a) FROM t",
])
def test_declared_bounds_prove_no_sign(sql):
    """Finding 1: ``c`` is declared in [0, 10] and holds -10⁹: the argument is not proved ≥ 0
    (it is released signed), the same outcome with and without that participant."""
    seen = _neighbours(BASE, _row(c=-1e9), sql)
    assert seen == ("answer", "recursive-signed")


def test_a_check_on_a_struct_field_is_not_a_check_on_the_column():
    """Finding 2: ``CHECK (s.a >= 0)`` constrains field ``a`` of ``s``, not column ``a``."""
    setup = ("CREATE TABLE t(id INT PRIMARY KEY, a DOUBLE, c DOUBLE, s STRUCT(a DOUBLE), "
             "CHECK (s.a >= 0))",
             "INSERT INTO t SELECT range, range % 7, 1, {'a': 1.0} FROM range(300)")
    secret = "INSERT INTO t VALUES (9999, -1e9, 1, {'a': 1.0})"
    assert _neighbours(setup, secret, "SELECT SUM(a) FROM t") == ("answer", "recursive-signed")


def test_a_check_qualified_by_its_own_table_still_proves():
    """DuckDB binds ``t.a`` in t's CHECK to column ``a`` (even beside a STRUCT column named
    ``t``): still a proof."""
    setup = ("CREATE TABLE t(id INT PRIMARY KEY, a DOUBLE, c DOUBLE, t STRUCT(a DOUBLE), "
             "CHECK (t.a >= 0))",
             "INSERT INTO t SELECT range, range % 7, 1, {'a': -1.0} FROM range(300)")
    secret = "INSERT INTO t VALUES (9999, 5, 1, {'a': -1e9})"
    assert _neighbours(setup, secret, "SELECT SUM(a) FROM t") == ("answer", "recursive")


# ---------------------------------------------------------------------------- what held

HELD = [
    # (statement, the planted participant, the route it must take)
    ("SELECT SUM(GREATEST(c, 0) + a) FROM t", _row(c=-1e9), "recursive"),
    ("SELECT SUM(GREATEST(x, -0.0)) FROM t", _row(x=-5), "recursive"),
    ("SELECT SUM(GREATEST(x, 0) - 1) FROM t", _row(x=-5), "recursive-signed"),
    ("SELECT SUM(-GREATEST(x, 0)) FROM t", _row(x=5), "recursive-signed"),
    ("SELECT SUM(a // -1) FROM t", _row(a=5), "recursive-signed"),
    ("SELECT SUM(CASE WHEN x < 0 THEN x ELSE a END) FROM t", _row(x=-5), "recursive-signed"),
    ("SELECT SUM(n - 1) FROM t", _row(n=0), "recursive-signed"),         # UINTEGER 0 - 1
    ("SELECT SUM(CAST(n - 1 AS UINTEGER)) FROM t", _row(n=0), "recursive-signed"),
    ("SELECT SUM(ut - CAST(1 AS UTINYINT)) FROM t", _row(ut=0), "recursive-signed"),  # wrap?
    ("SELECT SUM(-ut) FROM t", _row(ut=0), "recursive-signed"),
    ("SELECT SUM(CAST(n AS TINYINT)) FROM t", _row(n=200), "recursive"),  # overflow: NULL
    ("SELECT SUM(CAST(x AS UTINYINT)) FROM t", _row(x=-5), "recursive-signed"),
    ("SELECT SUM(ut + ut) FROM t", _row(ut=255), "recursive"),
    ("SELECT SUM(ut * ut) FROM t", _row(ut=255), "recursive"),  # a square (overflow: NULL)
    ("SELECT SUM(ut * n) FROM t", _row(ut=255), "recursive"),  # two nonnegative factors (h74)
    ("SELECT SUM(h) FROM t", _row(h=2 ** 128 - 1), "recursive"),          # UHUGEINT max
    ("SELECT SUM(h * 2) FROM t", _row(h=2 ** 128 - 1), "recursive"),  # overflow: NULL (h74)
    ("SELECT SUM(d) FROM t", _row(d=0), "recursive"),                     # DECIMAL CHECK
    ("SELECT SUM(a * -1 * -1) FROM t", _row(a="'nan'::DOUBLE"), "recursive"),  # NaN ≥ 0
    ("SELECT SUM(a) FROM t", _row(a="'-0.0'::DOUBLE"), "recursive"),     # -0.0 ≥ 0
    ("SELECT SUM(x * c) FROM t", _row(x=-5), "recursive-signed"),
    ("SELECT SUM(abs(x) - 1) FROM t", _row(x=-5), "recursive-signed"),
    ("SELECT SUM(-abs(x)) FROM t", _row(x=-5), "recursive-signed"),
    ("SELECT SUM(x * x * x) FROM t", _row(x=-5), "recursive-signed"),
    ("SELECT SUM(z) FROM (SELECT id, a - x AS z FROM t) q", _row(x=5), "recursive-signed"),
    ("SELECT SUM(a) FROM (SELECT id, x AS a FROM t) q", _row(x=-5), "recursive-signed"),
    ("WITH t AS (SELECT id, x AS a FROM t) SELECT SUM(a) FROM t", _row(x=-5), "recursive-signed"),
    ("SELECT SUM(a) FROM (SELECT id, a FROM t UNION ALL SELECT id, x FROM t) q", _row(x=-5),
     "recursive-signed"),
]


@pytest.mark.parametrize("sql, secret, route", HELD, ids=[f"held-{k}" for k in range(len(HELD))])
def test_what_held(sql, secret, route):
    """Casts, unsigned wrap-around, NaN and -0.0, subtraction hidden in an expression, CASE
    branches, a CTE or a derived table shadowing the table's column name, UNION: either not
    proved (signed), or proved and every term is ≥ 0 on both neighbours."""
    assert _neighbours(BASE, secret, sql) == ("answer", route)


SQUARES = [
    ("SELECT SUM(abs(x)) FROM t", _row(x=-5)),
    ("SELECT SUM(abs(x)) FROM t", _row(x="'nan'::DOUBLE")),
    ("SELECT SUM(abs(x)) FROM t", _row(x="'-inf'::DOUBLE")),
    ("SELECT SUM(abs(b)) FROM t", _row(b=-2 ** 63)),            # abs(BIGINT min) overflows
    ("SELECT SUM(x * x) FROM t", _row(x=-5)),
    ("SELECT SUM(x * x) FROM t", _row(x=-1e200)),               # +inf: dropped by the clamp
    ("SELECT SUM(x * x) FROM t", _row(x="'-0.0'::DOUBLE")),
    ("SELECT SUM(b * b) FROM t", _row(b=-3037000500)),          # BIGINT overflow: NULL
    ("SELECT SUM((x - 1) * (x - 1)) FROM t", _row(x=-5)),
    ("SELECT SUM(abs(x) + a) FROM t", _row(x=-5)),
    ("SELECT SUM(z) FROM (SELECT id, abs(b) AS z FROM t) q", _row(b=-2 ** 63)),
]


@pytest.mark.parametrize("sql, secret", SQUARES, ids=[f"square-{k}" for k in range(len(SQUARES))])
def test_abs_and_squares_are_sign_proofs(sql, secret):
    """``abs(e)`` and ``e * e`` are ≥ 0 (or NULL/NaN/+∞, which the clamp drops) whatever ``e``
    holds (``sql._nonnegative``'s docstring: why): released unsigned, and the same outcome with
    a participant whose value is negative, NaN, ±∞, or overflows the square or the abs."""
    assert _neighbours(BASE, secret, sql) == ("answer", "recursive")


def test_a_same_named_column_of_a_joined_table_is_not_the_checked_one():
    """``p.a`` (unchecked) beside ``t.a`` (CHECK a ≥ 0): the proof follows the column's table."""
    setup = (*BASE, "CREATE TABLE p(pid INT, a DOUBLE)",
             "INSERT INTO p SELECT range, 1 FROM range(300)")
    seen = _neighbours(setup, "INSERT INTO p VALUES (3, -1e9)",
                       "SELECT SUM(p.a) FROM t JOIN p ON t.id = p.pid")
    assert seen == ("answer", "recursive-signed")


# ------------------------------------------------------- the unsigned clamp enforces the proof

def _owned(secret: bool):
    con = provsql_dp.connect()
    con.execute("CREATE TABLE p(id INT PRIMARY KEY)")
    con.execute("INSERT INTO p SELECT range FROM range(200)")
    con.execute("CREATE TABLE v(pid INT, x DOUBLE, k VARCHAR, day INT)")
    con.execute("INSERT INTO v SELECT range % 200, range % 10, ['a', 'b'][range % 2 + 1], "
                "range % 50 FROM range(2000)")
    if secret:
        con.execute("INSERT INTO v VALUES (7, -1e9, 'a', 3)")
    con.execute("PROTECT TABLE p; PROTECT TABLE v BY (pid) AS p")
    con.execute("SET GROUP KEYS ON v (k) VALUES ('a', 'b'); SET PRIVACY BUDGET 100")
    con._rng = np.random.default_rng(1)
    return con


@pytest.mark.parametrize("sql", [
    "SELECT SUM(x) FROM v",                                   # single owner
    "SELECT k, SUM(x) FROM v GROUP BY k",                     # one ℓ1 bound across groups
    "SELECT k, SUM(x), SUM(x * 2) FROM v GROUP BY k",         # … and across aggregates
    "SELECT SUM(a.x) FROM v a JOIN v b ON a.day = b.day AND a.pid < b.pid",  # the LP route
])
def test_a_proof_that_missed_a_negative_term_changes_the_answer_not_the_outcome(monkeypatch,
                                                                                   sql):
    """Hardening: should the sign proof ever miss a case (simulated: every SUM "proved" ≥ 0),
    the unsigned release clamps its terms at 0 (``provenance.clamp.sum_clamp``) instead of
    failing after its charge on the negative total ("needs nonnegative totals")."""
    from provsql_dp.privacy import answer
    monkeypatch.setattr(answer, "nonnegative_weight", lambda *a: True)
    seen = []
    for secret in (False, True):
        cur = _owned(secret).execute(f"{sql} WITH EPSILON 1")
        seen.append((len(cur.fetchall()), cur.privacy.mechanism))
    assert seen[0] == seen[1] and seen[0][1] == "recursive"


@pytest.mark.parametrize("view, sql", [
    ("CREATE VIEW w AS SELECT id, x AS a FROM t", "SELECT SUM(a) FROM w"),
    ("CREATE SCHEMA s; CREATE VIEW s.t AS SELECT id, x AS a FROM main.t", "SELECT SUM(a) FROM s.t"),
])
def test_a_view_naming_an_unchecked_column_like_the_checked_one(view, sql):
    """A view (even one named like the table, in another schema) is read through its query:
    its ``a`` is the table's ``x``, unchecked."""
    seen = _neighbours((*BASE, view), _row(x=-1e9), sql)
    assert seen == ("answer", "recursive-signed")
