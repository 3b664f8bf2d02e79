"""The native pass of an unbounded SUM reads a flat plan (one table's rows under filters) in one
``SELECT col AS id … FROM table WHERE …`` layer, as the Laplace path does, and the compiled
plan otherwise — the same rows, so the same buckets bit for bit (``engine_buckets._rows_sql``).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import provsql_dp
from provsql_dp.privacy import engine_buckets as eb
from provsql_dp.privacy import native
from provsql_dp.provenance.capture import compile_node

PATH = native.built_path()
if PATH is None and os.environ.get("PROVSQL_DP_REQUIRE_NATIVE") == "1":
    raise RuntimeError("PROVSQL_DP_REQUIRE_NATIVE=1 but pdp_buckets is not built: run "
                       "provsql-dp build-native")
pytestmark = pytest.mark.skipif(PATH is None, reason="pdp_buckets not built (provsql-dp build-native)")


def _passes(monkeypatch, query):
    """The native pass SQL of ``query``'s release, and the same pass over the compiled plan."""
    con = provsql_dp.connect()
    assert con._native
    con._duck.execute("CREATE TABLE people(id INTEGER PRIMARY KEY, dept VARCHAR, salary DOUBLE)")
    con._duck.execute("INSERT INTO people SELECT range, ['a', 'b', NULL][range % 3 + 1], "
                      "CASE WHEN range % 17 = 0 THEN NULL ELSE (hash(range) % 20000)::DOUBLE "
                      "- 5000 END FROM range(5000)")
    con.execute("PROTECT TABLE people")
    con.execute("SET PRIVACY BUDGET 10")
    seen = []
    real = eb.native_pass_sql

    def spy(c, child, weight_sql, bounds, signed, params, totals_sql, n_parts, inline):
        sql = real(c, child, weight_sql, bounds, signed, params, totals_sql, n_parts, inline)
        nested = None
        if sql is not None and inline:
            compiled = compile_node(child, disc=False).sql
            nested = native.direct_sql(compiled, weight_sql, *bounds, signed, params)
        seen.append((sql, nested))
        return sql

    monkeypatch.setattr(eb, "native_pass_sql", spy)
    monkeypatch.setattr("provsql_dp.privacy.fast_path.native_pass_sql", spy)
    con.execute(query).fetchall()
    assert len(seen) == 1 and seen[0][1] is not None
    return con, seen[0]


def _buckets(con, sql):
    data = native.decode(con._duck.execute(sql).fetchnumpy())
    return {k: np.ma.getdata(v) for k, v in data.items()}


@pytest.mark.parametrize("query", [
    "SELECT SUM(salary) FROM people WITH EPSILON 1",
    "SELECT SUM(salary) FROM people WHERE dept = 'a' AND salary > -1000 WITH EPSILON 1",
    "SELECT SUM(s) FROM (SELECT salary AS s, dept FROM people WHERE dept IS NOT NULL) AS t "
    "WHERE s < 9000 WITH EPSILON 1",
])
def test_a_flat_plan_is_read_in_one_layer_with_the_same_buckets(monkeypatch, query):
    con, (flat, nested) = _passes(monkeypatch, query)
    inner = flat.split(" FROM (", 1)[1]
    assert inner.count("SELECT") == 1 and '"memory"."main"."people"' in inner, flat
    assert flat != nested
    got, want = _buckets(con, flat), _buckets(con, nested)
    assert got.keys() == want.keys()
    for k in want:
        assert np.array_equal(got[k], want[k], equal_nan=True), k


def test_a_plan_that_is_not_flat_is_compiled(monkeypatch):
    con, (sql, nested) = _passes(
        monkeypatch, "SELECT SUM(s) FROM (SELECT salary * 2 AS s FROM people) AS t "
        "WITH EPSILON 1")
    assert sql == nested
