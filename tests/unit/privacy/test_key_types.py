"""``key_types.typed_keys``: a key is described by the plan's type when it fits the values, else by
the route's, else by the values' own type — never so that the description and the values
disagree (an untyped plan, another engine's values, the policy route's bin edges)."""

from __future__ import annotations

import datetime
import decimal

from sqlglot import parse_one

from provsql_dp.privacy.key_types import fits, plan_key_types, typed_keys, value_type
from provsql_dp.sql.plan import Aggregate, Aggregates, AggregateColumn, Project, Scan


def _plan(types=("INTEGER", "DATE", "DOUBLE"), key_exprs=None):
    scan = Scan("t", "main", ("g", "d", "x"), ("v0", "v1", "v2"), ("g", "d", "x"), types=types)
    if key_exprs is None:
        return Aggregate(scan, "count", group_by=("v0", "v1"))
    proj = Project(scan, tuple(parse_one(e, read="duckdb") for e in key_exprs),
                   tuple(f"k{i}" for i in range(len(key_exprs))), tuple(key_exprs))
    return Aggregate(proj, "count", group_by=tuple(f"k{i}" for i in range(len(key_exprs))))


def test_the_plans_types_and_the_expressions_duckdb_gives():
    assert plan_key_types(_plan()) == ["INTEGER", "DATE"]
    plan = _plan(key_exprs=["ROUND(v2, -1)", "date_trunc('month', v1)", "FLOOR(v2 / 10)",
                            "v0 % 5"])
    assert plan_key_types(plan) == ["DOUBLE", "TIMESTAMP", "DOUBLE", "INTEGER"]
    several = Aggregates((_plan(), _plan()), (AggregateColumn("c", "count", (0,)),
                                              AggregateColumn("c2", "count", (1,))))
    assert plan_key_types(several) == ["INTEGER", "DATE"]
    assert plan_key_types(Aggregate(_plan().child, "count")) == []


def test_keys_are_typed_and_values_unchanged():
    rows = [(0, datetime.date(2020, 1, 1), 5), (1, None, 7)]
    desc = [("g", "VARCHAR"), ("d", "VARCHAR"), ("count", "BIGINT")]
    assert typed_keys(_plan(), desc, rows) == [("g", "INTEGER"), ("d", "DATE"),
                                               ("count", "BIGINT")]
    assert typed_keys(_plan(), desc, []) == [("g", "INTEGER"), ("d", "DATE"), ("count", "BIGINT")]


def test_an_untyped_plan_or_values_of_another_type_are_described_as_they_are():
    desc = [("g", "VARCHAR"), ("d", "VARCHAR"), ("count", "BIGINT")]
    untyped = _plan(types=())
    assert typed_keys(untyped, desc, [(0, datetime.date(2020, 1, 1), 1)])[:2] == \
        [("g", "BIGINT"), ("d", "DATE")]
    assert typed_keys(untyped, desc, [])[:2] == desc[:2]  # nothing to tell: as the route said
    # another engine's FLOOR gives integers where DuckDB's gives DOUBLE: described BIGINT
    floor = _plan(key_exprs=["FLOOR(v2 / 10)"])
    assert typed_keys(floor, [("f", "VARCHAR"), ("c", "BIGINT")], [(3, 1)])[0] == ("f", "BIGINT")
    # a string key stays VARCHAR; mixed values keep the route's description
    assert typed_keys(untyped, desc, [("a", 1, 2), (1, 1, 2)])[:2] == \
        [("g", "VARCHAR"), ("d", "BIGINT")]


def test_the_policy_routes_bins_keep_a_type_that_fits():
    plan = _plan(types=("TINYINT", "DATE", "DOUBLE"))
    # bins of width 1 over a TINYINT: their lower edges are the column's values
    assert typed_keys(plan, [("g", "DOUBLE"), ("c", "BIGINT")], [(0, 1), (1, 2)])[0] == \
        ("g", "TINYINT")
    # bins of width 0.5: edges 0, 0.5, 1 (ints and floats) fit no type but the route's DOUBLE
    assert typed_keys(plan, [("g", "DOUBLE"), ("c", "BIGINT")], [(0, 1), (0.5, 2)])[0] == \
        ("g", "DOUBLE")


def test_fits_and_value_type():
    assert fits([1, None], "INTEGER") and not fits([1.0], "INTEGER") and not fits([True], "BIGINT")
    assert fits([True], "BOOLEAN") and not fits([1], "BOOLEAN")
    assert fits([datetime.date(2020, 1, 1)], "DATE")
    assert not fits([datetime.datetime(2020, 1, 1)], "DATE")
    assert fits([datetime.datetime(2020, 1, 1)], "TIMESTAMP")
    aware = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
    assert fits([aware], "TIMESTAMP WITH TIME ZONE") and not fits([aware], "TIMESTAMP")
    assert fits([decimal.Decimal("1.50")], "DECIMAL(6,2)") and not fits([1.5], "DECIMAL(6,2)")
    assert fits(["a"], "ENUM('a', 'b')") and fits([object()], "UUID")  # not checked
    assert value_type([True]) == "BOOLEAN" and value_type([2 ** 70]) == "HUGEINT"
    assert value_type([aware]) == "TIMESTAMP WITH TIME ZONE"
    assert value_type([datetime.datetime(2020, 1, 1)]) == "TIMESTAMP"
    assert value_type([datetime.date(2020, 1, 1), None]) == "DATE"
    assert value_type([None]) is None and value_type([1, 1.5]) is None
    assert value_type([decimal.Decimal(1)]) is None


def test_names_are_kept():
    desc = [("my key", "VARCHAR"), ("count", "BIGINT")]
    plan = Aggregate(_plan().child, "count", group_by=("v0",))
    assert typed_keys(plan, desc, [(1, 2)]) == [("my key", "INTEGER"), ("count", "BIGINT")]
