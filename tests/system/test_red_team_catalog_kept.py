"""Red team h63attack, finding 5: what a connection keeps of the catalog between statements
(``Catalog.snapshot``) must notice a table redefined outside provsql_dp — a plain DuckDB
connection in the same process (a curator's ETL job), which bumps no generation.

The kept reads are valid while the database's fingerprint is unchanged: the generation, the
search path and the definitions of the tables of every name looked up. But a name first looked
up by a statement joins the fingerprint only at the next statement, and that statement kept the
memo when the fingerprints differed "only by new names" — without checking that those tables
were still defined as when they were read. So a table redefined between an analyst's first and
second statements was planned from its old definition for as long as the connection lived:
with its PRIMARY KEY dropped and participant 7 given 5 001 rows, ``SELECT COUNT(*) FROM t``
was still released by the Laplace mechanism at sensitivity 1 (one row per participant) — the
count moved by 5 000 with noise of about 1: participant 7's presence, plain to see. A fresh
connection took the recursive mechanism. Now the definition of each table is recorded when its
name is first read, and the memo is kept only if it is the same in the new fingerprint.
"""

from __future__ import annotations

import itertools
import warnings

import duckdb
import numpy as np

import provsql_dp

_names = itertools.count()


def _same_config(con) -> dict:
    """DuckDB keeps one configuration per file and process: a file provsql_dp opened with the
    native bucket pass was created with allow_unsigned_extensions (off again once loaded)."""
    return {"allow_unsigned_extensions": True} if getattr(con, "_native", False) else {}


def _setup(ddl: str, rows: str, declare: str):
    name = f":memory:h63kept_{next(_names)}"
    curator = provsql_dp.connect(name)
    curator.autocommit = True
    curator.execute(ddl)
    curator.execute(rows)
    curator.execute(declare)
    curator.execute("SET PRIVACY BUDGET 100 FOR USER 'ann'")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an analyst sharing the curator's process
        analyst = provsql_dp.connect(name, role="analyst", user="ann")
    analyst._rng = np.random.default_rng(1)
    return name, curator, analyst


def test_a_primary_key_dropped_outside_provsql_dp_is_seen_by_the_next_statement():
    name, curator, analyst = _setup("CREATE TABLE t(id INT PRIMARY KEY, x DOUBLE)",
                                    "INSERT INTO t SELECT range, 1 FROM range(100)",
                                    "PROTECT TABLE t")
    sql = "SELECT COUNT(*) FROM t WITH EPSILON 1"
    assert analyst.execute(sql).privacy.mechanism == "laplace"  # one row per participant
    raw = duckdb.connect(name, config=_same_config(curator))
    raw.execute("DROP TABLE t")
    raw.execute("CREATE TABLE t(id INT, x DOUBLE)")
    raw.execute("INSERT INTO t SELECT range, 1 FROM range(100)")
    raw.execute("INSERT INTO t SELECT 7, 1 FROM range(5000)")  # participant 7: 5 001 rows
    cur = analyst.execute(sql)
    cur.fetchall()
    assert cur.privacy.mechanism != "laplace", "planned with the dropped key"
    raw.close(), analyst.close(), curator.close()


def test_a_check_renamed_away_outside_provsql_dp_is_seen_by_the_next_statement():
    name, curator, analyst = _setup("CREATE TABLE t(id INT PRIMARY KEY, a DOUBLE CHECK (a >= 0))",
                                    "INSERT INTO t SELECT range, range % 7 FROM range(100)",
                                    "PROTECT TABLE t")
    sql = "SELECT SUM(a) FROM t WITH EPSILON 1"
    assert analyst.execute(sql).privacy.mechanism == "recursive"  # CHECK (a >= 0)
    raw = duckdb.connect(name, config=_same_config(curator))
    raw.execute("ALTER TABLE t RENAME COLUMN a TO b")  # the CHECK follows: (b >= 0)
    raw.execute("ALTER TABLE t ADD COLUMN a DOUBLE")
    raw.execute("INSERT INTO t VALUES (1000, 1, -1e9)")
    assert analyst.execute(sql).privacy.mechanism == "recursive-signed"
    raw.close(), analyst.close(), curator.close()


def test_a_table_created_outside_provsql_dp_after_a_failed_lookup_is_found():
    name, curator, analyst = _setup("CREATE TABLE t(id INT PRIMARY KEY)",
                                    "INSERT INTO t SELECT range FROM range(10)", "PROTECT TABLE t")
    try:
        analyst.execute("SELECT COUNT(*) FROM u WITH EPSILON 1")
    except provsql_dp.Error:
        pass  # no table u yet
    raw = duckdb.connect(name, config=_same_config(curator))
    raw.execute("CREATE TABLE u(id INT PRIMARY KEY)")
    raw.execute("INSERT INTO u SELECT range FROM range(10)")
    assert analyst.execute("SELECT COUNT(*) FROM u").fetchall() == [(10,)]  # public: plain
    raw.close(), analyst.close(), curator.close()
