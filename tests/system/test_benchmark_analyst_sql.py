"""``benchmarks/analyst_sql.py`` and ``benchmarks/tpch.py``: their helper modules' examples, the
error arithmetic, the ownership declarations kept in one place, and the truth of the workload
(the smoke runs themselves are in test_benchmarks_smoke.py)."""

from __future__ import annotations

import doctest
import importlib
import math
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def mods():
    sys.path.insert(0, str(BENCH))
    try:
        yield {n: importlib.import_module(n) for n in
               ("_analyst_workload", "_analyst_peers", "_tpch_queries", "tpch")}
    finally:
        sys.path.remove(str(BENCH))


@pytest.mark.parametrize("name", ["_analyst_workload", "_analyst_peers", "_tpch_queries", "tpch"])
def test_examples(mods, name, monkeypatch):
    monkeypatch.chdir(BENCH.parent)
    failed, attempted = doctest.testmod(mods[name], optionflags=doctest.ELLIPSIS)[:2]
    assert attempted and not failed


def test_errors_match_groups_and_see_order_and_limit(mods):
    w = mods["_analyst_workload"]
    limit = next(s for s in w.STATEMENTS if s.name == "limit")
    truth = [("Adelie", 152), ("Gentoo", 124)]
    e = w.errors(limit, [("Chinstrap", 70), ("Adelie", 150), ("Gentoo", 124)], truth)
    assert e["abs"] == 1.0 and e["groups"] == "2/2" and not e["order"]  # 3 rows, unsorted
    e = w.errors(limit, [("Adelie", 150), ("Gentoo", 126)], truth)
    assert e["order"] and e["rel"] == pytest.approx((2 / 152 + 2 / 124) / 2)
    s = w.summarise(limit, [([("Gentoo", 1), ("Adelie", 2)], 0.5)], truth)
    assert s["note"] == "ORDER BY not honoured in 1/1 releases"
    count = w.STATEMENTS[0]
    assert math.isnan(w.errors(count, [], [(344,)])["abs"])


def test_workload_truths(mods):
    w = mods["_analyst_workload"]
    truth = {s.name: w.truth(s) for s in w.STATEMENTS}
    assert truth["count"] == [(344,)]
    assert sorted(truth["group keys"]) == [("Adelie", 152), ("Chinstrap", 68), ("Gentoo", 124)]
    assert truth["in (subquery)"] == [(220,)]  # Adelie and Chinstrap live on Dream
    assert truth["exists"][0][0] + truth["not exists"][0][0] == 344
    assert len(w.STATEMENTS) == len({s.name for s in w.STATEMENTS}) == 21


def test_ownership_in_one_place(mods):
    tq = mods["_tpch_queries"]
    assert list(tq.OWNERSHIP) == ["foreign-keys", "columns"]  # auto tries them in this order
    fk = " ".join(tq.OWNERSHIP["foreign-keys"])
    assert "lineitem BY (l_orderkey) REFERENCES orders" in fk
    for q in tq.QUERIES.values():  # as TPC-H writes them: nothing rewritten away
        assert "WITH EPSILON" not in q.sql
    assert "NOT EXISTS" in tq.QUERIES["Q21"].sql and "HAVING" in tq.QUERIES["Q11"].sql


def test_tpch_declares_the_columns_model_on_this_checkout(mods):
    import provsql_dp

    tq, tpch = mods["_tpch_queries"], mods["tpch"]
    con = provsql_dp.connect(":memory:")
    con.execute("CREATE TABLE customer (c_custkey INT PRIMARY KEY, c_name VARCHAR)")
    con.execute("CREATE TABLE orders (o_orderkey INT PRIMARY KEY, o_custkey INT, "
                "o_totalprice DOUBLE)")  # tpch.py declares its bounds (SET BOUNDS ON orders …)
    con.execute("CREATE TABLE lineitem (l_orderkey INT, l_extendedprice DOUBLE, "
                "l_quantity DOUBLE, l_discount DOUBLE, l_shipmode VARCHAR)")
    model = tpch.declare(con, tq.QUERIES["Q12"].sql, "auto")
    assert model in tq.OWNERSHIP
    protected = {r[1] for r in con.execute("SHOW PROTECTED").fetchall()}
    assert {"customer", "orders"} <= protected
    assert ("lineitem" in protected) == (model == "foreign-keys")
