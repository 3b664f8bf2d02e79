"""PostgreSQL's ordered-set quantiles read as DuckDB's two-argument ones
(provsql_dp.sql.ordered_set): pure syntax, no database."""

from __future__ import annotations

import re

import pytest

from provsql_dp.errors import UnsupportedQueryError
from provsql_dp.sql.dialect import parse_one
from provsql_dp.sql.ordered_set import as_quantiles


@pytest.mark.parametrize("sql, want", [
    ("SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM t",
     "SELECT QUANTILE_CONT(x, 0.5) FROM t"),
    ("SELECT percentile_disc(0.9) WITHIN GROUP (ORDER BY x NULLS FIRST) AS p FROM t",
     "SELECT QUANTILE_DISC(x, 0.9) AS p FROM t"),
    ("SELECT percentile_cont(0.1) WITHIN GROUP (ORDER BY x DESC) FROM t",  # 1 − 0.1, exactly
     "SELECT QUANTILE_CONT(x, 0.9) FROM t"),
    ("SELECT k, percentile_cont(0.25) WITHIN GROUP (ORDER BY t.x) FROM t GROUP BY k",
     "SELECT k, QUANTILE_CONT(t.x, 0.25) FROM t GROUP BY k"),
    ("SELECT QUANTILE_CONT(x, 0.5), MEDIAN(x), COUNT(*) FROM t",  # already DuckDB's: unchanged
     "SELECT QUANTILE_CONT(x, 0.5), MEDIAN(x), COUNT(*) FROM t"),
])
def test_ordered_set_quantiles_are_read_as_duckdb_s(sql, want):
    assert as_quantiles(parse_one(sql)).sql(dialect="duckdb") == want


@pytest.mark.parametrize("sql, says", [
    ("SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x DESC) FROM t",
     "write it ascending, percentile_disc(1 - q)"),
    ("SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x, y) FROM t", "one ORDER BY column"),
])
def test_what_has_no_exact_duckdb_form_is_refused_with_the_form_to_write(sql, says):
    with pytest.raises(UnsupportedQueryError, match=re.escape(says)):
        as_quantiles(parse_one(sql))
