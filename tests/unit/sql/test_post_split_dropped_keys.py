"""A select list that leaves a GROUP BY key out (``SELECT count(*) AS n … GROUP BY dept``) is a
projection of the statement's own release (``provsql_dp.sql.post_split``): the routes judge and
release the statement as written — keys first in the GROUP BY's order, then its aggregates in the
select list's — and the answer keeps only the columns the select list names, in its order."""

from __future__ import annotations

import pytest

from provsql_dp.sql.dialect import parse_one
from provsql_dp.sql.post_split import split_post


@pytest.mark.parametrize("sql, outputs", [
    ("SELECT COUNT(*) AS n FROM t GROUP BY k", [("n", "__a0")]),
    ("SELECT AVG(x) AS a FROM t GROUP BY k", [("a", "__a0")]),
    ("SELECT COUNT(*) FROM t GROUP BY k, j", [("COUNT(*)", "__a0")]),
    ("SELECT COUNT(*) AS n, k FROM t GROUP BY k, j", [("n", "__a0"), ("k", "__k0")]),
    ("SELECT j AS jj, SUM(x) AS s FROM t GROUP BY k, j", [("jj", "__k1"), ("s", "__a0")]),
    ("SELECT k AS kk, COUNT(*) FROM t GROUP BY kk, j", [("kk", "__k0"), ("COUNT(*)", "__a0")]),
    ("SELECT k, COUNT(*) FROM t GROUP BY 1, j", [("k", "__k0"), ("COUNT(*)", "__a0")]),
    # each aggregate of the list is its own column of the release, repeated ones too
    ("SELECT COUNT(*) AS a, COUNT(*) AS b FROM t GROUP BY k", [("a", "__a0"), ("b", "__a1")]),
    ("SELECT MEDIAN(x) FROM t GROUP BY k", [("MEDIAN(x)", "__a0")]),
])
def test_the_core_is_the_statement_itself_and_the_post_keeps_the_listed_columns(sql, outputs):
    tree = parse_one(sql)
    core, post = split_post(tree)
    assert core is tree  # every route judges the analyst's own statement (its refusals too)
    assert [(n, e.sql()) for n, e in post.outputs] == outputs
    assert [k.sql() for k in post.keys] == [g.sql() for g in _group_keys(tree)]
    assert post.having is None and post.order == () and post.limit is None
    assert post.describe() == "output " + ", ".join(n for n, _ in outputs)


def _group_keys(tree):
    items = tree.expressions
    out = []
    for g in tree.args["group"].expressions:
        if g.is_int:
            g = items[int(g.this) - 1].unalias()
        elif any(i.alias == g.name for i in items):
            g = next(i for i in items if i.alias == g.name).unalias()
        out.append(g)
    return out


@pytest.mark.parametrize("sql, core_sql", [
    # after the release (HAVING, ORDER BY, LIMIT) or arithmetic: the keys-first core, as before
    ("SELECT COUNT(*) AS n FROM t GROUP BY k ORDER BY n", "SELECT k, COUNT(*) FROM t GROUP BY k"),
    ("SELECT COUNT(*) * 2 AS n FROM t GROUP BY k", "SELECT k, COUNT(*) FROM t GROUP BY k"),
    ("SELECT COUNT(*) AS n FROM t GROUP BY k HAVING COUNT(*) > 1",
     "SELECT k, COUNT(*) FROM t GROUP BY k"),
])
def test_a_dropped_key_with_post_processing_keeps_the_keys_first_core(sql, core_sql):
    core, post = split_post(parse_one(sql))
    assert core.sql(dialect="duckdb") == core_sql
    assert [n for n, _ in post.outputs] == ["n"]


def test_every_key_listed_in_order_is_still_no_post_processing():
    tree = parse_one("SELECT k, j, COUNT(*) FROM t GROUP BY k, j")
    assert split_post(tree) == (tree, None)
