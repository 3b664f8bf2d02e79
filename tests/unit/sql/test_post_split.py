"""The split of a private statement into the aggregates it releases and their post-processing
(``provsql_dp.sql.post_split``): pure syntax, no database."""

from __future__ import annotations

import pytest

from provsql_dp.errors import ProgrammingError, UnsupportedQueryError
from provsql_dp.sql.dialect import parse_one
from provsql_dp.sql.post_split import split_post


def split(sql):
    core, post = split_post(parse_one(sql))
    return core.sql(dialect="duckdb"), post


@pytest.mark.parametrize("sql", [
    "SELECT COUNT(*) FROM t",
    "SELECT SUM(x) AS s, COUNT(*) FROM t WHERE x > 0",  # no GROUP BY: bare aggregates
    "SELECT k, COUNT(*), SUM(x) FROM t GROUP BY k",
    "SELECT k, AVG(x) AS a FROM t GROUP BY k",
    "SELECT a FROM t ORDER BY a",  # no aggregate: not split (the planner judges it)
    "SELECT a FROM t UNION SELECT b FROM s",
])
def test_statements_without_post_processing_are_unchanged(sql):
    tree = parse_one(sql)
    core, post = split_post(tree)
    assert post is None and core is tree


@pytest.mark.parametrize("sql", [
    "SELECT k AS kk, AVG(x) AS a FROM t GROUP BY kk",  # the key under its alias
    "SELECT COUNT(*) AS n, k FROM t GROUP BY k",  # an aggregate first
    "SELECT j, k, COUNT(*) AS n FROM t GROUP BY k, j",  # the keys in another order
    "SELECT COUNT(*) + 1 AS n FROM t",  # no GROUP BY: arithmetic over the aggregate
    "SELECT 1 AS one, COUNT(*) AS n FROM t",  # no GROUP BY: a constant beside it
    "SELECT SUM(x) / COUNT(*) AS r FROM t",
])
def test_a_select_list_other_than_the_releases_layout_is_a_projection(sql):
    core, post = split(sql)
    assert post is not None and [n for n, _ in post.outputs] == [
        i.alias_or_name for i in parse_one(sql).expressions]


def test_each_distinct_aggregate_is_released_once_keys_first():
    core, post = split("SELECT SUM(x) / COUNT(*) AS r, k, COUNT(*) FROM t GROUP BY 2 "
                       "HAVING count(*) > 3 ORDER BY SUM(x)")
    assert core == "SELECT k, SUM(x), COUNT(*) FROM t GROUP BY k"
    assert [(n, e.sql()) for n, e in post.outputs] == [
        ("r", "__a0 / __a1"), ("k", "__k0"), ("COUNT(*)", "__a1")]
    assert post.having.sql() == "__a1 > 3"
    assert [(e.sql(), d) for e, d, _ in post.order] == [("__a0", False)]
    assert post.sources(0) == {0, 1} and post.sources(1) == set()


def test_aggregates_only_in_having_or_order_by_are_released():
    core, post = split("SELECT k FROM t GROUP BY k HAVING SUM(x) > 1 ORDER BY MAX(y)")
    assert core == "SELECT k, SUM(x), MAX(y) FROM t GROUP BY k"
    assert [n for n, _ in post.outputs] == ["k"]


def test_order_by_alias_position_and_key_and_window():
    _, post = split("SELECT t.k, COUNT(*) AS n FROM t GROUP BY t.k ORDER BY n DESC, 1, k "
                    "NULLS FIRST LIMIT 5 OFFSET 2")
    assert [(e.sql(), d) for e, d, _ in post.order] == [("__a0", True), ("__k0", False),
                                                        ("__k0", False)]
    assert (post.limit, post.offset) == (5, 2)
    assert "LIMIT 5" in post.describe() and "OFFSET 2" in post.describe()


def test_functions_of_the_keys_and_having_aliases():
    _, post = split("SELECT upper(k) AS u, COUNT(*) * 2 AS c2 FROM t GROUP BY k HAVING c2 > 4")
    assert [e.sql() for _, e in post.outputs] == ["UPPER(__k0)", "__a0 * 2"]
    assert post.having.sql() == "__a0 * 2 > 4"


@pytest.mark.parametrize(("sql", "err", "text"), [
    ("SELECT k, COUNT(*) FROM t GROUP BY k HAVING x > 1", ProgrammingError, "neither a GROUP BY key"),
    ("SELECT k, COUNT(*) + x FROM t GROUP BY k", ProgrammingError, "neither a GROUP BY key"),
    ("SELECT COUNT(*) FROM t LIMIT n", UnsupportedQueryError, "whole number"),
    ("SELECT COUNT(*) FROM t LIMIT 1 + 1", UnsupportedQueryError, "whole number"),
    ("SELECT COUNT(*) FROM t ORDER BY 2", ProgrammingError, "out of range"),
    ("SELECT *, COUNT(*) FROM t", UnsupportedQueryError, "SELECT \\*"),
    # TPC-H Q11: a threshold computed by another aggregate query
    ("SELECT k, SUM(x) FROM t GROUP BY k HAVING SUM(x) > (SELECT SUM(x) * 0.01 FROM t)",
     UnsupportedQueryError, "a subquery in HAVING"),
])
def test_refusals_name_the_problem(sql, err, text):
    with pytest.raises(err, match=text):
        split_post(parse_one(sql))


def test_group_by_all_and_order_by_all_are_spelled_out():
    core, post = split("SELECT k, SUM(x) / COUNT(*) AS r FROM t GROUP BY ALL ORDER BY ALL")
    assert core == "SELECT k, SUM(x), COUNT(*) FROM t GROUP BY k"
    assert post is not None and post.describe().endswith("ORDER BY 1, 2")
    tree = parse_one("SELECT k, COUNT(*) FROM t GROUP BY ALL")
    core, post = split_post(tree)
    assert post is None and core.sql(dialect="duckdb") == "SELECT k, COUNT(*) FROM t GROUP BY 1"
