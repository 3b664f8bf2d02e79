"""An analyst's simplified ``PIVOT (query) ON … USING …`` keeps the table qualifiers of the query
it pivots: sqlglot's DuckDB generator unqualified every column under the PIVOT, so a join of two
tables sharing a column name was refused as an ambiguous reference, and a correlated subquery's
``b.s = a.s`` was emitted ``s = s`` — a different, always-true comparison, and a wrong answer
(h147red's note). Only the PIVOT's own columns are unqualified, as DuckDB requires."""

from __future__ import annotations

import pytest

from conftest import analyst_beside_curator

TABLES = ("CREATE TABLE a(i INT, s VARCHAR, k VARCHAR); CREATE TABLE b(i INT, s VARCHAR); "
          "INSERT INTO a VALUES (1, 'x', 'p'), (2, 'y', 'q'), (3, 'z', 'p'); "
          "INSERT INTO b VALUES (1, 'x'), (2, 'v'), (3, 'z');")


@pytest.fixture(scope="module")
def pair():
    yield from analyst_beside_curator(":memory:pivot_source", TABLES)


@pytest.mark.parametrize("sql", [
    "PIVOT (SELECT a.k, b.s FROM a JOIN b ON a.i = b.i) ON k USING count(*)",
    "PIVOT (SELECT a.k, a.s FROM a WHERE a.i IN (SELECT b.i FROM b WHERE b.s = a.s)) "
    "ON k USING count(*)",
    "PIVOT (SELECT a.k, a.s, b.s AS bs FROM a JOIN b ON a.i = b.i) ON k USING count(*) "
    "GROUP BY s",
    "SELECT * FROM a PIVOT (count(*) FOR k IN ('p', 'q')) ORDER BY ALL",
])
def test_a_pivoted_query_keeps_its_tables(pair, sql):
    cu, an = pair
    want = cu._duck.execute(sql).fetchall()  # the curator's DuckDB, the text as written
    assert sorted(map(repr, an.execute(sql).fetchall())) == sorted(map(repr, want))


def test_the_correlated_subquery_keeps_its_meaning(pair):
    _, an = pair
    rows = an.execute("PIVOT (SELECT a.k, a.s FROM a WHERE a.i IN (SELECT b.i FROM b WHERE "
                      "b.s = a.s)) ON k USING count(*)").fetchall()
    assert sum(v for r in rows for v in r[1:]) == 2  # (1, x) and (3, z), not all three
