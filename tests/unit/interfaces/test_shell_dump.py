"""``.dump`` writes every value as a SQL literal that reads back equal (property test over random
rows of many types), and the "did you mean" hint and the progress hook behave on random input."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

import provsql_dp
from provsql_dp import _progress
from provsql_dp.interfaces.shell import Shell
from provsql_dp.interfaces.shell.dump import dump
from provsql_dp.interfaces.shell.statement_help import KEYWORDS, did_you_mean

_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                max_size=12)
_ROW = st.tuples(
    st.none() | st.integers(-2**63, 2**63 - 1),
    st.none() | st.floats(allow_nan=False, width=64),
    st.none() | _TEXT,
    st.none() | st.booleans(),
    st.none() | st.dates(min_value=dt.date(1, 1, 1), max_value=dt.date(9999, 12, 31)),
    st.none() | st.decimals(min_value=-10**6, max_value=10**6, places=3, allow_nan=False),
    st.none() | st.lists(st.none() | _TEXT, max_size=3),
    st.none() | st.binary(max_size=6),
)


@pytest.mark.slow  # ~10 s idle: the default suite stays under 15 min
@settings(max_examples=40, deadline=None)
@given(st.lists(_ROW, max_size=6))
def test_dump_round_trips_every_value(rows):
    con = provsql_dp.connect(user="cur")
    con.execute("CREATE TABLE t(i BIGINT, f DOUBLE, s VARCHAR, b BOOLEAN, d DATE, m DECIMAL(10, 3), "
                "l VARCHAR[], y BLOB)")
    if rows:
        con._duck.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [list(r) for r in rows])
    fresh = provsql_dp.connect(user="cur")
    fresh.autocommit = True
    import io

    err = io.StringIO()
    assert Shell(fresh, io.StringIO(), err).run_text("\n".join(dump(con))), err.getvalue()
    q = "SELECT * FROM t ORDER BY ALL"
    a, b = con.execute(q).fetchall(), fresh.execute(q).fetchall()
    assert len(a) == len(b)
    for ra, rb in zip(a, b):
        for x, y in zip(ra, rb):
            if isinstance(x, float) and math.isinf(x):
                assert x == y
            else:
                assert x == y, (ra, rb)


@given(st.sampled_from(KEYWORDS), st.integers(0, 100))
def test_a_one_letter_slip_in_our_keyword_is_named(word, seed):
    if len(word) < 6:
        return
    i = 1 + seed % (len(word) - 2)
    typo = word[:i] + word[i + 1:]  # one letter dropped
    hint = did_you_mean(f"SELECT 1 {typo} 2")
    assert hint is not None and word in hint or typo in KEYWORDS or any(
        typo == k[:len(typo)] for k in KEYWORDS), (word, typo, hint)


@given(st.lists(st.sampled_from(["a", "b"]), max_size=20))
def test_ticks_count_per_phase(phases):
    seen = []
    with _progress.listening(lambda p, done, total, public: seen.append((p, done))):
        for p in phases:
            _progress.tick(p)
    expected, last, n = [], None, 0
    for p in phases:
        n = n + 1 if p == last else 1
        last = p
        expected.append((p, n))
    assert seen == expected
    _progress.tick("outside")  # nobody listens: nothing happens
    assert len(seen) == len(phases)
