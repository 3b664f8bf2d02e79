"""Red team h85attack-7: a released group key spelled by one participant's row.

DuckDB groups ``-0.0`` with ``0.0`` (and ``-NaN`` with ``NaN``), as ``=`` compares them, and
gives the group the *first row's* value as its key. Partition selection (``GROUP BY`` without
declared keys, ``WITH EPSILON ε DELTA δ``) released the keys as DuckDB returned them: a group of
299 participants at ``0.0`` was released as ``-0.0`` when participant 0 (``x = -0.0``, the first
row) was in the table and as ``0.0`` without it — on every run, whatever the noise: the two
neighbouring databases are told apart with certainty, at any ε. (The sibling of h75cache-2's
collated strings, which are refused.) Fixed in ``privacy/partition_selection.py``: released
float keys (also inside lists and structs) are spelled ``0.0`` and ``nan``.
"""

from __future__ import annotations

import math

import pytest

import provsql_dp


def _table(first: str | None, rest: str):
    con = provsql_dp.connect()
    con.execute("CREATE TABLE t(id INT PRIMARY KEY, x DOUBLE)")
    if first is not None:  # participant 0, the first row DuckDB meets
        con.execute(f"INSERT INTO t VALUES (0, '{first}'::DOUBLE)")
    con.execute(f"INSERT INTO t SELECT i, '{rest}'::DOUBLE FROM range(1, 300) r(i)")
    con.execute("PROTECT TABLE t")
    con.execute("SET PRIVACY BUDGET EPSILON 100 DELTA 0.5")
    return con


def _spelling(v):
    return ("nan" if math.isnan(v) else repr(v), math.copysign(1.0, v))


@pytest.mark.parametrize("first, rest", [("-0.0", "0.0"), ("-nan", "nan")])
@pytest.mark.parametrize("key", ["x", "x * 2", "ROUND(x, 1)"])
def test_a_released_key_is_spelled_alike_on_neighbouring_databases(first, rest, key):
    sql = f"SELECT {key} AS k, COUNT(*) FROM t GROUP BY k WITH EPSILON 1 DELTA 1e-6"
    spelled = set()
    for con in (_table(first, rest), _table(None, rest)):  # neighbours: participant 0 or not
        assert con.execute(f"SELECT {key} FROM t GROUP BY 1").fetchall()  # one group
        rows = con.execute(sql).fetchall()
        assert len(rows) == 1  # ~300 participants: selected whatever the noise
        spelled.add(_spelling(rows[0][0]))
    assert len(spelled) == 1, f"the key's spelling tells participant 0 apart: {spelled}"
    assert spelled.pop()[1] == 1.0  # the one spelling: no sign
