"""Red team h73attack, finding 6: DuckDB's default sort order decided which group a tuple joined.

The capture numbers each group's tuples with ``dense_rank() OVER (ORDER BY …)`` and reads them
back ``ORDER BY __t`` with no direction: DuckDB's ``default_order``. After a curator's ``SET
default_order = 'DESC'`` (or ``SET GLOBAL``, which reaches every connection of the process, an
analyst's in a process the curator shares included), ``SELECT g, COUNT(*) FROM (SELECT DISTINCT
s, g FROM t) GROUP BY g`` released every tuple under one group (g1 ≈ 398, the others 0, for
≈ 132 each) and ``SELECT s, COUNT(*) … GROUP BY s`` released each key's count under another key:
a K-relation that is not the query's, so neither its answer nor its privacy analysis hold. A
private statement is now refused before its charge while ``default_order`` or
``default_null_order`` differs from DuckDB's default (``privacy._session_settings``), as
h63attack-3 did for the settings total evaluation relies on.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import provsql_dp

_names = itertools.count()
QUERIES = {
    "SELECT g, COUNT(*) FROM (SELECT DISTINCT s, g FROM t) GROUP BY g": {"g0": 132, "g1": 132, "g2": 132},
    "SELECT s, COUNT(*) FROM t GROUP BY s": {"a": 100, "A": 100, "b": 100},
}


def _database(setting):
    name = f":memory:h73sort_{next(_names)}"
    cur = provsql_dp.connect(name)
    cur.autocommit = True
    cur.execute("CREATE TABLE t(id INT PRIMARY KEY, s VARCHAR, g VARCHAR)")
    cur.execute("INSERT INTO t SELECT range, ['a', 'A', 'b', NULL][range % 4 + 1], "
                "'g' || (range % 3) FROM range(396)")
    cur.execute("PROTECT TABLE t; SET PRIVACY BUDGET 1000; SET PRIVACY BUDGET 1000 FOR USER 'ann'")
    cur.execute("SET GROUP KEYS ON t (g) VALUES ('g0', 'g1', 'g2'); "
                "SET GROUP KEYS ON t (s) VALUES ('a', 'A', 'b')")
    cur.execute(setting)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an analyst sharing the curator's configuration
        analyst = provsql_dp.connect(name, role="analyst", user="ann")
    return cur, analyst


SETTINGS = ("SET GLOBAL default_order = 'DESC'", "SET default_order = 'desc'",
            "SET GLOBAL default_null_order = 'NULLS_FIRST'")


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("sql", QUERIES)
def test_a_release_is_the_querys_or_refused_before_its_charge(setting, sql):
    cur, analyst = _database(setting)
    try:
        for con, user in ((analyst, "ann"), (cur, "default")):
            if con is analyst and "GLOBAL" not in setting:
                continue  # a session setting stays on the curator's connection
            con._rng = np.random.default_rng(3)
            before = con.ledger.remaining(user)
            try:
                rows = con.execute(f"{sql} WITH EPSILON 50").fetchall()
            except provsql_dp.OperationalError as e:
                assert con.ledger.remaining(user) == before and "Nothing was charged" in str(e)
                assert setting.split()[-3] in str(e)
                continue
            got = {k: v for k, v in rows if k is not None}
            truth = QUERIES[sql]
            assert all(abs(got[k] - truth[k]) < 10 for k in truth), (setting, got)
    finally:
        analyst.close()
        cur.execute(f"RESET {'GLOBAL ' if 'GLOBAL' in setting else ''}{setting.split()[-3]}")
        cur.close()
