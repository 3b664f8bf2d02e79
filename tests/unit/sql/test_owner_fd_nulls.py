"""Rule 3 of provsql_dp.sql.owner_fd with NULLs: a UNIQUE key determines its row only where its
columns are not NULL (NULLs are not equal, so many rows share a NULL "key"). Checked on the
claims (GROUP BY … HAVING admitted only when its groups are one participant's) and by brute force
over every world of small databases holding NULL-keyed rows: what the K-relation says is present
in a world is what DuckDB returns on that world."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

import provsql_dp
from provsql_dp.errors import UnsupportedQueryError
from provsql_dp.sql.dialect import parse_one
from provsql_dp.sql.owner_fd import keys_determine_owners, owner_determined
from provsql_dp.sql.plan import GroupFilter, walk
from provsql_dp.sql.planner import plan_query


def _con(rows, k_decl="INT UNIQUE"):
    con = provsql_dp.connect()
    con.execute(f"CREATE TABLE t(id INT PRIMARY KEY, k {k_decl}, v INT)")
    con.execute("CREATE TABLE d(dk INT UNIQUE, name VARCHAR)")
    con.execute("INSERT INTO d VALUES (1, 'one'), (2, 'two'), (NULL, 'none'), (NULL, 'nobody')")
    if rows:
        con.execute("INSERT INTO t VALUES " + ", ".join(
            f"({i}, {'NULL' if k is None else k}, {v})" for i, k, v in rows))
    con.execute("PROTECT TABLE t")
    return con


def _grouped(con, sql):
    plan = plan_query(parse_one(sql), con._catalog)
    return next(n for n in walk(plan) if isinstance(n, GroupFilter))


HAVING = "SELECT k FROM t {w} GROUP BY k HAVING COUNT(*) = 1"


@pytest.mark.parametrize("decl,where,admitted", [
    ("INT UNIQUE", "", False),                        # the NULL group holds many participants
    ("INT UNIQUE", "WHERE k IS NOT NULL", True),      # the statement rules NULL out
    ("INT UNIQUE", "WHERE k = 3", True),              # a constant is not NULL
    ("INT UNIQUE", "WHERE k > 0", False),             # a comparison is no equality: not used
    ("INT UNIQUE NOT NULL", "", True),                # declared NOT NULL
])
def test_a_nullable_unique_key_determines_no_row(decl, where, admitted):
    con = _con([], decl)
    sql = HAVING.format(w=where)
    if admitted:
        g = _grouped(con, sql)
        assert keys_determine_owners(g.child, list(g.keys))
    else:
        with pytest.raises(UnsupportedQueryError, match="several participants"):
            plan_query(parse_one(sql), con._catalog)


def test_a_public_row_is_determined_through_an_equality_only():
    con = _con([])
    # t.k = d.dk holds on the row (both not NULL): d's row is the owner's
    p = plan_query(parse_one("SELECT d.name, COUNT(*) FROM t JOIN d ON t.k = d.dk "
                             "GROUP BY d.name"), con._catalog)
    assert p.group_by[0] in owner_determined(p.child)


def _worlds(ids):
    for r in range(len(ids) + 1):
        yield from itertools.combinations(ids, r)


@pytest.mark.parametrize("seed", range(6))
def test_every_world_of_null_keyed_rows(seed):
    rng = random.Random(seed)
    rows = [(i, rng.choice([None, None, 1, 2, 3, i + 10]), rng.randint(0, 3)) for i in range(6)]
    seen = {k for _, k, _ in rows if k is not None}
    rows = [(i, None if k in seen and [r[1] for r in rows].count(k) > 1 else k, v)
            for i, k, v in rows]  # UNIQUE holds on the non-NULL values
    con = _con(rows)
    for sql in (HAVING.format(w="WHERE k IS NOT NULL"),
                "SELECT t.id FROM t WHERE t.k IN (SELECT k FROM t WHERE k IS NOT NULL "
                "GROUP BY k HAVING SUM(v) >= 2)"):
        kr = con.provenance(sql)
        for world in _worlds(sorted(kr.participants, key=repr)):
            ids = sorted(k for _, k in world)
            duck = con._duck
            duck.execute("BEGIN TRANSACTION")
            try:
                duck.execute("DELETE FROM t WHERE NOT list_contains(?, rowid)", [ids])
                truth = duck.execute(sql).fetchall()
            finally:
                duck.execute("ROLLBACK")
            assert Counter(kr.present(set(world))) == Counter(truth), (sql, world, rows)
    with pytest.raises(UnsupportedQueryError):
        con.provenance(HAVING.format(w=""))
