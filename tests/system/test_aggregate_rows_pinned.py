"""Several aggregates (and an AVG) in one select list are assembled into rows by one helper
(``release_info.column_rows``) on the ε route and the Gaussian route; the releases are pinned to
the values the two copies gave before they became one (bit for bit, under a seed) — the AVG
columns re-pinned once when an AVG's SUM part became its centred sum
(:mod:`provsql_dp.privacy.centred_avg`: other noise scale, same draws otherwise), and the
single-owner one again when it was centred there too (a signed SUM: two parts, other draws)."""

from __future__ import annotations

import numpy as np
import pytest

import provsql_dp


@pytest.fixture(scope="module")
def con():
    con = provsql_dp.connect()
    con.execute("CREATE TABLE d(id INT PRIMARY KEY, name VARCHAR)")
    con.execute("INSERT INTO d VALUES (1,'a'),(2,'b')")
    con.execute("CREATE TABLE t(id INT PRIMARY KEY, dept INT, x DOUBLE)")
    con.execute("INSERT INTO t SELECT range, range % 2 + 1, (range * 37) % 11 FROM range(200)")
    con.execute("CREATE TABLE v(rid INT PRIMARY KEY, pid INT, y DOUBLE)")
    con.execute("INSERT INTO v SELECT range, range % 50, range % 7 FROM range(300)")
    con.execute("PROTECT TABLE t")
    con.execute("PROTECT TABLE v BY (pid) AS t")
    con.execute("SET BOUNDS ON t (x) BETWEEN 0 AND 10")
    con.execute("SET BOUNDS ON v (y) BETWEEN 0 AND 6")
    con.execute("SET PRIVACY BUDGET 1e6")
    return con


@pytest.mark.parametrize("sql, seed, want", [
    ("SELECT AVG(x), COUNT(*), SUM(x) FROM t WITH EPSILON 1", 0,
     [(4.600980102374989, 197, 983.0005798339844)]),
    ("SELECT d.name, AVG(x), COUNT(*) FROM t JOIN d ON t.dept = d.id GROUP BY d.name "
     "WITH EPSILON 1", 1, [("a", 4.947376324580266, 101), ("b", 5.003901982071376, 109)]),
    # single-owner: re-pinned when its AVG's SUM became the signed centred sum (h56l1)
    ("SELECT AVG(y), SUM(y) FROM v WITH EPSILON 1", 2, [(3.279965193995692, 734.8179931640625)]),
    ("SELECT AVG(x), COUNT(*) FROM t WITH EPSILON 1 DELTA 1e-6", 0, [(4.900866499041567, 201)]),
])
def test_rows_are_pinned(con, sql, seed, want):
    con._rng = np.random.default_rng(seed)
    assert con.execute(sql).fetchall() == want
