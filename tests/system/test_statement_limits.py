"""Limits an operator states on analyst statements (issue 26, item 6): size and nesting depth,
checked before the statement is parsed, so before anything is planned or charged."""

from __future__ import annotations

import pytest

import provsql_dp
from provsql_dp.errors import InterfaceError, ProgrammingError
from provsql_dp.privacy.limits import (
    DEFAULT_MAX_EXPRESSION_DEPTH,
    DEFAULT_MAX_STATEMENT_BYTES,
    expression_depth,
    tree_depth,
)


@pytest.fixture
def analyst(tmp_path):
    path = str(tmp_path / "l.duckdb")
    cur = provsql_dp.connect(path)
    cur.execute("CREATE TABLE t AS SELECT i AS id, i % 7 AS x FROM range(100) r(i)")
    cur.execute("PROTECT TABLE t; SET PRIVACY BUDGET 2 FOR USER 'ann'")
    cur.commit()
    cur.close()
    an = provsql_dp.connect(path, role="analyst", user="ann")
    yield an
    an.close()


def ledger(an):
    return an.execute("SHOW PRIVACY BUDGET").fetchall()


def test_defaults():
    an = provsql_dp.connect(role="analyst", user="ann")
    assert (an.max_statement_bytes, an.max_expression_depth) == (
        DEFAULT_MAX_STATEMENT_BYTES, DEFAULT_MAX_EXPRESSION_DEPTH) == (65536, 64)
    for bad in (0, -1, 1.5, "10", True):
        with pytest.raises(InterfaceError, match="max_statement_bytes"):
            an.max_statement_bytes = bad
    an.max_statement_bytes = None  # no limit
    assert an.max_statement_bytes is None


def test_an_oversize_statement_is_refused_before_the_charge(analyst):
    before = ledger(analyst)
    flat = "SELECT COUNT(*) FROM t WHERE x = 0" + " OR x = 1" * 8000 + " WITH EPSILON 1"  # 72 KB
    with pytest.raises(ProgrammingError, match=r"max_statement_bytes = 65,536.*"
                       r"--max-statement-bytes N\. Nothing was charged"):
        analyst.execute(flat)
    huge = "SELECT '" + "x" * 829_000 + "'"  # the 829 KB statement: refused at once
    with pytest.raises(ProgrammingError, match="829,009 bytes"):
        analyst.execute(huge)
    sql = "SELECT COUNT(*) FROM t WHERE x = 0" + " OR x = 1" * 20 + " WITH EPSILON 1"
    analyst.max_statement_bytes = 200
    with pytest.raises(ProgrammingError, match=f"{len(sql)} bytes.*max_statement_bytes = 200"):
        analyst.execute(sql)
    assert ledger(analyst) == before
    analyst.max_statement_bytes = 1000  # the operator raised it: the same text runs
    assert analyst.execute(sql).fetchall() and ledger(analyst) != before


def test_an_over_deep_statement_is_refused_before_the_charge(analyst):
    before = ledger(analyst)
    deep = "SELECT COUNT(*) FROM t WHERE " + "abs(" * 80 + "x" + ")" * 80 + " > 0 WITH EPSILON 1"
    with pytest.raises(ProgrammingError, match=r"80 deep.*max_expression_depth = 64"):
        analyst.execute(deep)
    assert ledger(analyst) == before
    multibyte = "SELECT 'é" + "é" * 40_000 + "'"  # 80 KB in UTF-8, 40 K characters
    with pytest.raises(ProgrammingError, match="max_statement_bytes"):
        analyst.execute(multibyte)


def test_the_curator_is_not_limited():
    cur = provsql_dp.connect(max_statement_bytes=10, max_expression_depth=1)
    assert cur.execute("SELECT abs(abs(abs(-1))) AS deep_and_long").fetchall() == [(1,)]


def test_depth_counts_brackets_outside_literals_names_and_comments():
    assert expression_depth("SELECT 1") == 0
    assert expression_depth("SELECT ((1))") == 2
    assert expression_depth("SELECT '((((', \"((((\" -- ((((\n, /* (((( */ (1)") == 1
    assert expression_depth("SELECT 'it''s (' , (2)") == 1
    assert expression_depth("SELECT [1, [2, {'a': (3)}]]") == 4
    assert expression_depth("SELECT ((( unterminated") == 3


def test_tree_depth_has_no_recursion_limit():
    import sqlglot

    chain = sqlglot.parse_one("SELECT " + " + ".join(["1"] * 3000))  # left-deep: 3000 levels
    assert tree_depth(chain) > 2000
