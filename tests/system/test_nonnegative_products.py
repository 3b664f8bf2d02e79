"""A SUM of products of two different nonnegative terms, and of integer columns CHECKed
``> -1``, is released unsigned (``sql._nonnegative``): one part at the full ε, a one-sided
interval. Each case is a neighbour pair — the same schema, one database with and one without a
participant holding an extreme value (NaN, ±∞, −0.0, a product that overflows its type) — and
the outcome (answer or error, the mechanism, the ε charged) must be the same on both: a proof
must never let a negative term, or an error after the charge, through."""

from __future__ import annotations

import functools

import pytest

import provsql_dp
from conftest import mechanism_outcome

H = 2 ** 127 - 1   # HUGEINT max
UH = 2 ** 128 - 1  # UHUGEINT max
COLUMNS = {  # name: (type and CHECK, an ordinary value)
    "a": ("DOUBLE CHECK (a >= 0)", 2), "a2": ("DOUBLE CHECK (a2 >= 0)", 3),
    "c": ("DOUBLE", 1), "n": ("UINTEGER", 4), "ut": ("UTINYINT", 5),
    "i": ("INTEGER CHECK (i > -1)", 6), "k": ("INTEGER CHECK (k >= 0)", 7),
    "b": ("BIGINT CHECK (b >= 0)", 8), "b2": ("BIGINT CHECK (b2 > -0.5)", 9),
    "h": ("HUGEINT CHECK (h >= 0)", 2), "h2": ("HUGEINT CHECK (h2 > -1e-400)", 3),
    "uh": ("UHUGEINT", 4), "d": ("DECIMAL(38, 2) CHECK (d >= 0)", 5),
    "e": ("DECIMAL(10, 2) CHECK (e > -1)", 6), "f": ("DOUBLE CHECK (f > -1)", 7),
    "s": ("SMALLINT CHECK (s > -1)", 8), "w": ("INTEGER CHECK (w > 0.5)", 9),
    "t8": ("TINYINT CHECK (t8 >= -128)", 1), "d2": ("DECIMAL(38, 10) CHECK (d2 >= 0)", 2),
}


def _row(**v) -> str:
    """One more participant (id 9999), ordinary except for ``v``."""
    vals = {name: str(ordinary) for name, (_, ordinary) in COLUMNS.items()} | {
        k: str(x) for k, x in v.items()}
    return f"INSERT INTO t VALUES (9999, {', '.join(vals[name] for name in COLUMNS)})"


@functools.cache
def _database(secret: str | None):
    con = provsql_dp.connect()
    cols = ", ".join(f"{name} {decl}" for name, (decl, _) in COLUMNS.items())
    con.execute(f"CREATE TABLE t(id INT PRIMARY KEY, {cols})")
    vals = ", ".join(f"(range % 5)::{decl.split(' CHECK')[0]}" if name not in ("w", "h2") else "1 + range % 5"
                     for name, (decl, _) in COLUMNS.items())
    con.execute(f"INSERT INTO t SELECT range, {vals} FROM range(300)")
    if secret:
        con.execute(secret)
    con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 1000")
    return con


def _outcome(secret, sql):
    con = _database(secret)
    return mechanism_outcome(con, sql)


def _neighbours(secret, sql):
    without, with_ = _outcome(None, sql), _outcome(secret, sql)
    assert without == with_, f"{sql}\n  without the participant: {without}\n  with it: {with_}"
    assert without[1] == 1
    return without[0]


UNSIGNED, SIGNED = ("answer", "recursive"), ("answer", "recursive-signed")
CASES = [
    # products of two different nonnegative terms
    ("SELECT SUM(a * a2) FROM t", _row(a="'inf'::DOUBLE", a2=0), UNSIGNED),      # 0·∞ = NaN
    ("SELECT SUM(a * a2) FROM t", _row(a="'nan'::DOUBLE"), UNSIGNED),
    ("SELECT SUM(a * a2) FROM t", _row(a="'-0.0'::DOUBLE", a2=5), UNSIGNED),     # −0.0
    ("SELECT SUM(a * a2) FROM t", _row(a=1e200, a2=1e200), UNSIGNED),            # +∞
    ("SELECT SUM(a * a2) FROM t", _row(a=1e-200, a2=1e-200), UNSIGNED),          # underflow
    ("SELECT SUM(a * n) FROM t", _row(a="'inf'::DOUBLE", n=0), UNSIGNED),
    ("SELECT SUM(ut * n) FROM t", _row(ut=255, n=2 ** 32 - 1), UNSIGNED),
    ("SELECT SUM(i * k) FROM t", _row(i=2 ** 31 - 1, k=2 ** 31 - 1), UNSIGNED),  # INTEGER overflow
    ("SELECT SUM(b * b2) FROM t", _row(b=2 ** 63 - 1, b2=2 ** 63 - 1), UNSIGNED),
    ("SELECT SUM(h * h2) FROM t", _row(h=H, h2=H), UNSIGNED),                    # HUGEINT
    ("SELECT SUM(uh * h) FROM t", _row(uh=UH, h=H), UNSIGNED),                   # as DOUBLE
    ("SELECT SUM(d * uh) FROM t", _row(d="99999999999999999999999999999999.99", uh=UH),
     UNSIGNED),                                                                  # DECIMAL(38)
    ("SELECT SUM(d * k) FROM t", _row(d="99999999999999999999999999999999.99", k=2 ** 31 - 1),
     UNSIGNED),
    ("SELECT SUM(a * b * h) FROM t", _row(a=1e300, b=2 ** 63 - 1, h=H), UNSIGNED),
    ("SELECT SUM((a + n) * (k + 1)) FROM t", _row(a=1e300, k=2 ** 31 - 1), UNSIGNED),
    ("SELECT SUM(abs(c) * a) FROM t", _row(c="'-inf'::DOUBLE", a=0), UNSIGNED),
    # … and what stays signed
    ("SELECT SUM(a * c) FROM t", _row(c=-5), SIGNED),
    ("SELECT SUM(d * d2) FROM t", _row(d="99999999999999999999999999999999.99",
                                        d2="9999999999999999999999999999.9999999999"), UNSIGNED),
    ("SELECT SUM(d * e) FROM t", _row(e=-0.5), SIGNED),                          # e > -1: DECIMAL
    ("SELECT SUM(i * (k - 1)) FROM t", _row(k=0), SIGNED),
    ("SELECT SUM(a * a2 - 1) FROM t", _row(a=0), SIGNED),
    ("SELECT SUM(-(a * a2)) FROM t", _row(a=5), SIGNED),
    ("SELECT SUM(a * -1 * a2) FROM t", _row(a=5), SIGNED),
    # integer CHECKs: > -1 is >= 0 for an integer column only
    ("SELECT SUM(i) FROM t", _row(i=0), UNSIGNED),                               # INTEGER > -1
    ("SELECT SUM(s) FROM t", _row(s=0), UNSIGNED),                               # SMALLINT > -1
    ("SELECT SUM(b2) FROM t", _row(b2=0), UNSIGNED),                             # BIGINT > -0.5
    ("SELECT SUM(h2) FROM t", _row(h2=1), UNSIGNED),                             # > -0.0 (DOUBLE)
    ("SELECT SUM(w - 1) FROM t", _row(w=1), UNSIGNED),                           # > 0.5: ≥ 1
    ("SELECT SUM(e) FROM t", _row(e=-0.5), SIGNED),                              # DECIMAL > -1
    ("SELECT SUM(f) FROM t", _row(f=-0.5), SIGNED),                              # DOUBLE > -1
    ("SELECT SUM(i - 1) FROM t", _row(i=0), SIGNED),
    ("SELECT SUM(h2 - 1) FROM t", _row(h2=1), SIGNED),  # truly ≥ 1, proved ≥ 0 only: no harm
    ("SELECT SUM(t8) FROM t", _row(t8=-128), SIGNED),   # ≥ −128: L − 1 outside TINYINT
]


@pytest.mark.parametrize("sql, secret, want", CASES, ids=[f"{k}" for k in range(len(CASES))])
def test_products_and_integer_checks(sql, secret, want):
    assert _neighbours(secret, sql) == want
