"""What a private statement keeps between runs — its plan, kept under its text
(``cursor._private_release``), and the catalog reads of ``Catalog.snapshot`` — is never served
after the schema changed, whoever changed it: this connection, another provsql_dp connection, or
a plain DuckDB connection behind provsql_dp's back (which bumps no generation: the fingerprint's
table definitions tell). The settings a release relies on are read with the fingerprint of each
statement (``privacy/_session_settings.py``), so a setting changed between two runs of a kept
statement is seen by the second one, which is refused before any charge."""

from __future__ import annotations

import itertools
import warnings

import duckdb
import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import DeclarationError

_names = itertools.count()
COUNT = "SELECT COUNT(*) FROM p WHERE x > 5 WITH EPSILON 1"


def _db():
    name = f":memory:kept_plans_{next(_names)}"
    con = provsql_dp.connect(name)
    con.autocommit = True
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, owner INT, x DOUBLE CHECK (x >= 0))")
    con.execute("INSERT INTO p SELECT range, range % 10, range % 50 FROM range(200)")
    con.execute("PROTECT TABLE p")
    con.execute("SET PRIVACY BUDGET 100000")
    return name, con


def _changer(who: str, name: str, con):
    """Something that runs DDL on the database: this connection's DuckDB (behind provsql_dp's
    back), a plain DuckDB connection, or another provsql_dp connection."""
    if who == "same":
        return con._duck, None
    if who == "raw":
        config = {"allow_unsigned_extensions": True} if getattr(con, "_native", False) else {}
        raw = duckdb.connect(name, config=config)
        return raw, raw
    other = provsql_dp.connect(name)
    other.autocommit = True
    return other, other


CHANGES = {
    "column type": ["ALTER TABLE p ALTER COLUMN owner TYPE BIGINT"],
    "column renamed": ["ALTER TABLE p RENAME COLUMN owner TO holder"],
    "column added": ["ALTER TABLE p ADD COLUMN y INT"],
    "replaced": ["CREATE OR REPLACE TABLE p(id INT PRIMARY KEY, owner INT, x DOUBLE)",
                 "INSERT INTO p SELECT range, range % 10, range % 50 FROM range(200)"],
    "primary key dropped": ["DROP TABLE p", "CREATE TABLE p(id INT, owner INT, x DOUBLE)",
                            "INSERT INTO p SELECT range % 20, range % 10, range % 50 "
                            "FROM range(200)"],
    "check changed": ["DROP TABLE p",
                      "CREATE TABLE p(id INT PRIMARY KEY, owner INT, x DOUBLE CHECK (x >= 1))",
                      "INSERT INTO p SELECT range, range % 10, 1 + range % 50 FROM range(200)"],
    "primary key added": ["DROP TABLE p", "CREATE TABLE p(id INT, owner INT, x DOUBLE)",
                          "INSERT INTO p SELECT range, range % 10, range % 50 FROM range(200)",
                          "ALTER TABLE p ADD PRIMARY KEY (id)"],
}


@pytest.mark.parametrize("who", ["same", "raw", "other"])
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_changed_table_is_planned_afresh(plans, who, change):
    name, con = _db()
    for _ in range(3):
        con.execute(COUNT).fetchall()
    kept = len(plans)
    con.execute(COUNT).fetchall()
    assert len(plans) == kept, "the plan is kept while nothing changes"
    runner, closing = _changer(who, name, con)
    for stmt in CHANGES[change]:
        if who == "other" and stmt.startswith(("DROP TABLE", "CREATE OR REPLACE")):
            with pytest.raises(DeclarationError, match="declarations name it"):
                runner.execute(stmt)  # through provsql_dp: refused (declared_drops)
            runner = runner._duck  # the other connection's DuckDB, behind provsql_dp's back
        runner.execute(stmt)
    cur = con.execute(COUNT)
    cur.fetchall()
    assert len(plans) == kept + 1, f"{change} by {who}: a kept plan was served"
    if change == "primary key dropped":  # 10 rows per id now: never one row per participant
        assert cur.privacy.mechanism != "laplace"
    if closing is not None:
        closing.close()
    con.close()


def test_the_search_path_decides_the_kept_plan(plans):
    name, con = _db()
    con.execute("CREATE SCHEMA s2")
    con.execute("CREATE TABLE s2.p(id INT, owner INT, x DOUBLE)")
    con.execute("INSERT INTO s2.p SELECT range, range % 5, 10 FROM range(100)")
    con.execute("PROTECT TABLE s2.p BY (owner) AS other")  # 20 rows per owner
    for _ in range(3):
        assert con.execute(COUNT).privacy.mechanism == "laplace"
    con.execute("SET search_path = 's2,main'")
    cur = con.execute(COUNT)
    assert cur.privacy.mechanism != "laplace" and len(plans) >= 2
    con.execute("RESET search_path")
    assert con.execute(COUNT).privacy.mechanism == "laplace"


def test_parameters_are_bound_afresh_on_each_run(plans):
    """A statement with parameters is kept under its tree, never under its text alone."""
    name, con = _db()
    con._rng = np.random.default_rng(0)
    sql = "SELECT COUNT(*) FROM p WHERE x > ? WITH EPSILON 1000"
    lows = [con.execute(sql, [40]).fetchone()[0] for _ in range(3)]
    highs = [con.execute(sql, [-1]).fetchone()[0] for _ in range(3)]
    assert all(abs(v - 36) <= 5 for v in lows) and all(abs(v - 200) <= 5 for v in highs)


@pytest.mark.parametrize("setting", ["integer_division = true", "ieee_floating_point_ops = false"])
def test_a_setting_changed_between_kept_runs_is_refused_before_the_charge(setting):
    name, con = _db()
    for _ in range(3):
        con.execute(COUNT).fetchall()
    con.execute(f"SET {setting}")
    before = con.ledger.remaining("default")
    which = setting.split()[0]
    with pytest.raises(provsql_dp.OperationalError, match=f"{which}.*Nothing was charged"):
        con.execute(COUNT)
    assert con.ledger.remaining("default") == before
    con.execute(f"RESET {which}")
    con.execute(COUNT).fetchall()
    assert con.ledger.remaining("default") == before - 1


def test_a_global_setting_from_another_connection_is_refused_on_the_next_run():
    name, curator = _db()
    curator.execute("SET PRIVACY BUDGET 10 FOR USER 'ann'")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an analyst sharing the curator's process
        analyst = provsql_dp.connect(name, role="analyst", user="ann")
    for _ in range(3):
        analyst.execute(COUNT).fetchall()
    before = analyst.ledger.remaining("ann")
    curator.execute("SET GLOBAL integer_division = true")
    try:
        with pytest.raises(provsql_dp.OperationalError, match="integer_division"):
            analyst.execute(COUNT)
        assert analyst.ledger.remaining("ann") == before
    finally:
        curator.execute("RESET GLOBAL integer_division")
    analyst.execute(COUNT).fetchall()
    analyst.close(), curator.close()


def test_the_check_reads_the_settings_itself_when_nothing_is_kept():
    """A registered DataFrame: nothing is kept, no fingerprint is read, the check queries."""
    pd = pytest.importorskip("pandas")
    name, con = _db()
    con.register("labels", pd.DataFrame({"id": [1, 2], "label": ["a", "b"]}))
    q = "SELECT COUNT(*) FROM p JOIN labels ON p.id = labels.id WITH EPSILON 1"
    con.execute(q).fetchall()
    con.execute("SET integer_division = true")
    with pytest.raises(provsql_dp.OperationalError, match="integer_division"):
        con.execute(q)


@pytest.mark.parametrize("who", ["same", "other"])
def test_the_route_kept_under_the_text_follows_the_declarations(who):
    """The statement route is kept with the plan (under the text): a policy declared since, here
    or by another connection, takes the next run."""
    name, con = _db()
    sql = "SELECT COUNT(*) FROM p WHERE x >= 10 AND x < 20 WITH EPSILON 1"
    for _ in range(3):
        assert con.execute(sql).privacy.mechanism == "laplace"
    runner, closing = (con, None) if who == "same" else _changer("other", name, con)
    runner.execute("CREATE POLICY px ON p (x) AS LINE DOMAIN [0, 50) WIDTH 10")
    assert con.execute(sql).privacy.mechanism == "blowfish"
    runner.execute("DROP POLICY px")
    assert con.execute(sql).privacy.mechanism == "laplace"
    if closing is not None:
        closing.close()


def test_every_pinned_setting_is_read_with_the_fingerprint(monkeypatch):
    """The check of a statement queries nothing itself: the fingerprint read every setting it
    checks (a pinned setting added without it would still be checked, by a query of its own)."""
    from provsql_dp.privacy._session_settings import PINNED
    from provsql_dp.sql._catalog_kept import SETTINGS

    assert set(PINNED) <= set(SETTINGS)
    name, con = _db()
    con.execute(COUNT).fetchall()
    seen = []

    class Watch:  # where the check would query (the fingerprint and the reads hold their own)
        def __getattr__(self, k):
            return getattr(duck, k)

        def execute(self, sql, *a):
            seen.append(sql)
            return duck.execute(sql, *a)

    duck = con._duck
    monkeypatch.setattr(con, "_duck", Watch())
    con.execute(COUNT).fetchall()
    assert not any("current_setting('ieee_floating_point_ops')::VARCHAR" in s for s in seen)
