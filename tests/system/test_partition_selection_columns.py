"""Partition selection reads its groups by column (``fetchcolumns``: numpy for the types that
convert back exactly) and makes a released COUNT's release object only when it is read
(``SelectedCounts``): the released rows, their types and intervals are exactly those of the
row-by-row read (``fetchall``), with the same noise, on keys of every kind."""

from __future__ import annotations

import numpy as np
import pytest

import provsql_dp
from provsql_dp.privacy import partition_selection
from provsql_dp.privacy.partition_selection import SelectedCount, SelectedCounts
from provsql_dp.provenance.backends.duckdb import DuckDBBackend

_KEYS = ["k_int", "k_txt", "k_dbl", "k_bool", "k_date", "k_dec", "k_txt, k_int"]


def _con():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, k_int INT, k_txt VARCHAR, k_dbl DOUBLE, "
                "k_bool BOOLEAN, k_date DATE, k_dec DECIMAL(6, 2), x DOUBLE)")
    con.execute("""INSERT INTO p SELECT i,
        CASE WHEN i % 11 = 0 THEN NULL ELSE i % 7 END,
        CASE WHEN i % 13 = 0 THEN NULL ELSE 't' || (i % 5) END,
        CASE WHEN i % 2 = 0 THEN -0.0 ELSE (i % 3) / 2 END,
        i % 3 = 0, DATE '2024-01-01' + (i % 4)::INT, (i % 6) / 4, i % 10
        FROM range(3000) r(i)""")
    con.execute("PROTECT TABLE p; SET PRIVACY BUDGET EPSILON 1000 DELTA 0.5")
    return con


def _release(con, sql, seed):
    con._rng = np.random.default_rng(seed)
    cur = con.execute(sql)
    return cur.fetchall(), [tuple(c[:2]) for c in cur.description], cur.privacy.intervals(0.9)


@pytest.mark.parametrize("keys", _KEYS)
@pytest.mark.parametrize("agg", ["COUNT(*)", "SUM(x)"])
def test_the_columns_read_release_what_the_rows_read_releases(monkeypatch, keys, agg):
    con = _con()
    opts = " OPTIONS (lower = 0, upper = 10)" if agg != "COUNT(*)" else ""
    sql = f"SELECT {keys}, {agg} FROM p GROUP BY {keys} WITH EPSILON 2 DELTA 1e-6{opts}"
    fast = _release(con, sql, 7)
    monkeypatch.delattr(DuckDBBackend, "fetchcolumns")  # the engine without it: rows, transposed
    slow = _release(con, sql, 7)
    assert fast[0] and repr(fast) == repr(slow)  # repr: -0.0 and 0.0, int and float differ
    assert len(fast[2]) == len(fast[0])


def test_released_counts_are_made_when_read():
    base = provsql_dp.mechanisms.global_sensitivity.laplace.LaplaceRelease(0, 1.0, 1.0, True)
    rels = SelectedCounts([40, 50, 60], base)
    assert len(rels) == 3 and [r.value for r in rels] == [40, 50, 60]
    assert isinstance(rels[0], SelectedCount) and [r.value for r in rels[1:]] == [50, 60]
    assert rels[2].noise_bound(0.9) == base.noise_bound(0.9)
    con = _con()
    cur = con.execute("SELECT k_int, COUNT(*) FROM p GROUP BY k_int WITH EPSILON 1 DELTA 1e-6")
    assert isinstance(cur.privacy.releases, SelectedCounts)
    rows, intervals = cur.fetchall(), cur.privacy.intervals(0.95)
    assert [r[1] for r in rows] == [rel.value for rel in cur.privacy.releases]
    assert all(lo <= n <= hi for (n,), ((lo, hi),) in zip([r[1:] for r in rows], intervals))


def test_no_group_read_releases_no_row(monkeypatch):
    con = _con()
    monkeypatch.setattr(partition_selection, "_columns", lambda engine, sql: [(), ()])
    cur = con.execute("SELECT k_int, COUNT(*) FROM p GROUP BY k_int WITH EPSILON 1 DELTA 1e-6")
    assert cur.fetchall() == [] and len(cur.privacy.releases) == 0
