"""DuckDB's SEMI JOIN / ANTI JOIN in FROM (provsql_dp.sql.from_semijoin): admitted exactly when the
EXISTS / NOT EXISTS form is, with the same owner-locality, and — checked by brute force on random
TPC-H-like databases — the K-relation's answer is DuckDB's own answer to the SEMI/ANTI JOIN, and
removing a participant changes that participant's rows only."""

from __future__ import annotations

import random

import duckdb
import pytest

from provsql_dp.errors import ProgrammingError, UnsupportedQueryError
from provsql_dp.provenance.owners import owners
from provsql_dp.sql.plan import AntiJoin, SemiJoin, walk

from test_owner_fd import INNER, LOCAL, _check_neighbours, _databases, _plan


def _node(plan):
    return next(n for n in walk(plan) if isinstance(n, (SemiJoin, AntiJoin)))


def _outcome(con, sql):
    try:
        node = _node(_plan(con, sql))
    except UnsupportedQueryError as e:
        return "refused", "non-monotone" in str(e)
    return type(node).__name__, isinstance(node, AntiJoin) or node.local


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow),
                                  pytest.param(2, marks=pytest.mark.slow)])
def test_from_joins_are_planned_as_exists_and_are_owner_local(seed):
    con, plain = _databases(seed)
    rng = random.Random(3000 + seed)
    for item, corrs in sorted(INNER.items()):
        alias = item.split()[1]
        for corr in corrs:
            extra = rng.choice(["", f" AND {alias}.{'v' if alias == 'l2' else 'nk' if alias in ('s2', 'c2') else 'pr'} > 1"])
            for kind, neg in (("SEMI", ""), ("ANTI", "NOT ")):
                head = "FROM lineitem l1 JOIN orders o ON o.ok = l1.lok"
                from_sql = f"SELECT COUNT(*) {head} {kind} JOIN {item} ON {corr}{extra}"
                exists_sql = (f"SELECT COUNT(*) FROM lineitem l1, orders o WHERE o.ok = l1.lok "
                              f"AND {neg}EXISTS (SELECT 1 FROM {item} WHERE {corr}{extra})")
                got, want = _outcome(con, from_sql), _outcome(con, exists_sql)
                assert got == want, (from_sql, got, want)
                if got[0] == "refused":
                    assert kind == "ANTI" and corr not in LOCAL
                    continue
                kr = con.provenance(from_sql)
                assert float(kr.weights.sum()) == plain.execute(from_sql).fetchone()[0], from_sql
                if got[1] and not item.startswith("supp"):
                    assert owners(_plan(con, from_sql).child) is not None
                    body = f"{head} {kind} JOIN {item} ON {corr}{extra}"
                    _check_neighbours(con, plain, from_sql, "o.ck", body)


def test_using_left_forms_and_refusals():
    con, plain = _databases(0)
    for sql in ("SELECT COUNT(*) FROM orders o SEMI JOIN customer c USING (ck)",
                "SELECT COUNT(*) FROM orders o ANTI JOIN customer c USING (ck)",
                "SELECT COUNT(*) FROM orders o SEMI JOIN nation n ON n.nk = o.pr WHERE o.pr > 0"):
        assert float(con.provenance(sql).weights.sum()) == plain.execute(sql).fetchone()[0], sql
    for kind in ("SEMI", "ANTI"):  # Spark SQL's spelling, refused as DuckDB's parser refuses it
        sql = f"SELECT COUNT(*) FROM orders o LEFT {kind} JOIN customer c ON c.ck = o.ck"
        with pytest.raises(ProgrammingError, match=f"LEFT {kind} JOIN is not DuckDB SQL.*"
                                                   f"write {kind} JOIN … ON"):
            _plan(con, sql)
        with pytest.raises(duckdb.ParserException):
            plain.execute(sql)
    with pytest.raises(ProgrammingError, match="needs a condition"):
        _plan(con, "SELECT COUNT(*) FROM orders o SEMI JOIN customer c")
    with pytest.raises(ProgrammingError, match="unknown table or alias 'c'"):  # not visible after
        _plan(con, "SELECT COUNT(*) FROM orders o SEMI JOIN customer c ON c.ck = o.ck "
                   "WHERE c.seg = 1")
    with pytest.raises(UnsupportedQueryError, match="ANTI JOIN .*non-monotone.*outer row"):
        _plan(con, "SELECT COUNT(*) FROM orders o ANTI JOIN customer c ON c.seg = o.pr")


@pytest.mark.parametrize("from_sql, exists_sql", [
    ("SELECT COUNT(*) FROM orders o SEMI JOIN customer c ON c.ck = o.ck AND c.seg > 1",
     "SELECT COUNT(*) FROM orders o WHERE EXISTS (SELECT 1 FROM customer c WHERE c.ck = o.ck "
     "AND c.seg > 1)"),
    ("SELECT COUNT(*) FROM customer c ANTI JOIN orders o ON o.ck = c.ck AND o.pr = 2",
     "SELECT COUNT(*) FROM customer c WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE "
     "o.ck = c.ck AND o.pr = 2)"),
    ("SELECT COUNT(*) FROM orders o SEMI JOIN nation n ON n.nk = o.pr AND n.name > 'n0'",
     "SELECT COUNT(*) FROM orders o WHERE EXISTS (SELECT 1 FROM nation n WHERE n.nk = o.pr "
     "AND n.name > 'n0')"),
])
def test_the_plan_is_the_exists_plan(from_sql, exists_sql):
    from provsql_dp.sql.plan import explain

    con, _ = _databases(0)
    assert explain(_plan(con, from_sql)) == explain(_plan(con, exists_sql))


def test_left_semi_join_is_refused_for_an_analyst_and_charges_nothing():
    """Spark SQL's ``LEFT SEMI JOIN`` is refused with DuckDB's spelling in the message, before
    anything is charged (a statement over public tables only would meet DuckDB's parser error)."""
    import warnings

    import provsql_dp

    con = provsql_dp.connect(":memory:h52mem_left_semi")
    con.execute("CREATE TABLE customer(ck INT PRIMARY KEY, seg INT); "
                "CREATE TABLE orders(ok INT PRIMARY KEY, ck INT)")
    con.execute("INSERT INTO customer VALUES (1, 1), (2, 2); INSERT INTO orders VALUES (1, 1)")
    con.execute("PROTECT TABLE customer")
    con.execute("SET PRIVACY BUDGET 1 FOR USER 'ann'")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        an = provsql_dp.connect(":memory:h52mem_left_semi", role="analyst", user="ann")
    with pytest.raises(ProgrammingError, match="LEFT SEMI JOIN is not DuckDB SQL.*write SEMI JOIN"):
        an.execute("SELECT COUNT(*) FROM customer c LEFT SEMI JOIN orders o ON o.ck = c.ck "
                   "WITH EPSILON 0.5")
    assert an.execute("SHOW PRIVACY BUDGET").fetchall()[0][2] == "0"
    an.execute("SELECT COUNT(*) FROM customer c SEMI JOIN orders o ON o.ck = c.ck WITH EPSILON 0.5")
    assert an.execute("SHOW PRIVACY BUDGET").fetchall()[0][2] == "0.5"
