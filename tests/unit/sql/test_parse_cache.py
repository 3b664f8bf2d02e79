"""The parse cache of ``sql.dialect.parse_one``: a tree is a function of the text alone, every
call gets a copy of its own, errors are never kept, and the cache stays bounded."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp
from sqlglot.errors import ParseError

from provsql_dp.sql import dialect as d


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["x", "salary", "a + 1"]), st.integers(0, 10**6),
       st.sampled_from(["", " WITH EPSILON 0.5", " WITH EPSILON 1 OPTIONS (lower = 0, upper = 9)"]))
def test_kept_tree_equals_a_fresh_parse_and_is_never_shared(col, k, tail):
    sql = f"SELECT SUM({col}) FROM t WHERE id > {k}{tail}"
    first = d.parse_one(sql)
    fresh = d.parse(sql)[0]
    assert first == fresh
    first.find(exp.Table).set("this", exp.to_identifier("changed"))  # a caller changes its copy
    again = d.parse_one(sql)
    assert again == fresh and again is not first
    assert again.find(exp.Table).name == "t"


def test_errors_are_raised_every_time_and_not_kept():
    for _ in range(2):
        with pytest.raises(ParseError):
            d.parse_one("SELECT 1; SELECT 2")
    assert "SELECT 1; SELECT 2" not in d._parsed


def test_the_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(d, "PARSED_KEPT", 3)
    monkeypatch.setattr(d, "_parsed", {})
    for i in range(10):
        d.parse_one(f"SELECT {i}")
    assert list(d._parsed) == ["SELECT 7", "SELECT 8", "SELECT 9"]
