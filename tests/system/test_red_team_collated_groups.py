"""Red team h75cache, finding 2 (``privacy/_collated_keys.py``): a private GROUP BY over a string
compared under a collation put 'A' and 'a' in one group keyed by whichever spelling DuckDB met
first, matched by value against the public groups — so one row decided which released group
received the whole count. Neighbouring databases (one row removed) released 50 and 0 for the
same group at any ε. Now refused before the charge on every route that groups by value (the
aggregate routes, partition selection, COUNT(DISTINCT) over keys, grouped quantiles); the same
statements over a column without a collation are released as before."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import provsql_dp

_names = itertools.count()


def _people(first: str | None, collate: str = " COLLATE NOCASE"):
    """50 rows alternating 'A'/'a' (49 without the first row), keys ('A', 'a', 'b')."""
    con = provsql_dp.connect(f":memory:collated_{next(_names)}")
    con.autocommit = True
    con.execute(f"CREATE TABLE t(id INT PRIMARY KEY, s VARCHAR{collate}, x INT)")
    if first is not None:
        con.execute(f"INSERT INTO t VALUES (0, '{first}', 1)")
    con.execute("INSERT INTO t SELECT range, CASE WHEN range % 2 = 0 THEN 'A' ELSE 'a' END, "
                "range FROM range(1, 50)")
    con.execute("PROTECT TABLE t")
    con.execute("SET PRIVACY BUDGET 1000")
    con.execute("SET GROUP KEYS ON t (s) VALUES ('A', 'a', 'b')")
    con._rng = np.random.default_rng(0)
    return con


def _released(con, sql: str):
    """{group: value} of a release at ε = 100 (noise ≪ 1), or 'refused' (then nothing charged)."""
    before = con.ledger.remaining("default")
    try:
        rows = con.execute(f"{sql} WITH EPSILON 100").fetchall()
    except provsql_dp.UnsupportedQueryError as e:
        assert "Nothing was charged" in str(e)
        assert con.ledger.remaining("default") == before
        return "refused"
    return {r[0]: r[1] for r in rows}


def _neighbours_agree(a, b) -> bool:
    if a == "refused" or b == "refused":
        return a == b
    return all(abs(a.get(k, 0) - b.get(k, 0)) <= 2 for k in set(a) | set(b))


@pytest.mark.parametrize("sql", ["SELECT s, COUNT(*) FROM t GROUP BY s",
                                 "SELECT s, SUM(x) FROM t GROUP BY s",
                                 "SELECT trim(s) AS k, COUNT(*) FROM t GROUP BY k"])
def test_declared_keys_of_a_collated_column_do_not_follow_one_row(sql):
    with_first = _released(_people("A"), sql)
    without = _released(_people(None), sql)  # its first row is 'a'
    assert _neighbours_agree(with_first, without), (with_first, without)
    assert with_first == "refused"


def test_the_same_statement_without_a_collation_is_released():
    con = _people("A", collate="")
    got = _released(con, "SELECT s, COUNT(*) FROM t GROUP BY s")
    assert abs(got["A"] - 26) <= 1 and abs(got["a"] - 24) <= 1 and abs(got["b"]) <= 1


def test_a_session_default_collation_is_refused_too():
    con = _people("A", collate="")
    con.execute("SET default_collation = 'nocase'")
    before = con.ledger.remaining("default")
    try:  # a pinned setting since h86follow: every private statement is refused, uncharged
        with pytest.raises(provsql_dp.OperationalError, match="default_collation is nocase.*"
                                                              "Nothing was charged"):
            _released(con, "SELECT s, COUNT(*) FROM t GROUP BY s")
        assert con.ledger.remaining("default") == before
    finally:
        con.execute("RESET default_collation")
    assert _released(con, "SELECT s, COUNT(*) FROM t GROUP BY s") != "refused"


def _depts(first_dept: int):
    con = provsql_dp.connect(f":memory:collated_{next(_names)}")
    con.autocommit = True
    con.execute("CREATE TABLE depts(did INT PRIMARY KEY, dname VARCHAR COLLATE NOCASE)")
    con.execute("INSERT INTO depts VALUES (1, 'E'), (2, 'e')")
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, did INT)")
    con.execute(f"INSERT INTO people VALUES (0, {first_dept})")
    con.execute("INSERT INTO people SELECT range, 1 + range % 2 FROM range(1, 40)")
    con.execute("PROTECT TABLE people")
    con.execute("SET PRIVACY BUDGET 1000")
    con._rng = np.random.default_rng(0)
    return con


def test_a_public_tables_collated_column_is_refused():
    """depts holds 'E' and 'e' (one group under NOCASE): E was released as 40 or 0 as the first
    person's department decided."""
    sql = ("SELECT d.dname, COUNT(*) FROM people p JOIN depts d ON p.did = d.did "
           "GROUP BY d.dname")
    one, two = _released(_depts(1), sql), _released(_depts(2), sql)
    assert _neighbours_agree(one, two), (one, two)
    assert one == "refused"


def test_partition_selection_does_not_release_a_spelling():
    con = _people("A")
    before = con.ledger.remaining("default")
    with pytest.raises(provsql_dp.UnsupportedQueryError, match="collation"):
        con.execute("SELECT upper(s) || s AS k, COUNT(*) FROM t GROUP BY k "
                    "WITH EPSILON 1 DELTA 1e-6")
    assert con.ledger.remaining("default") == before


def test_count_distinct_and_quantiles_over_collated_keys():
    con = _people("A")
    cur = con.execute("SELECT COUNT(DISTINCT s) FROM t WITH EPSILON 1")
    assert cur.privacy.mechanism != "presence"  # keys matched by value: not that route
    cur.fetchall()
    con.execute("SET BOUNDS ON t (x) BETWEEN 0 AND 100")
    with pytest.raises(provsql_dp.UnsupportedQueryError, match="collation"):
        con.execute("SELECT s, QUANTILE_CONT(x, 0.5) FROM t GROUP BY s WITH EPSILON 1")
