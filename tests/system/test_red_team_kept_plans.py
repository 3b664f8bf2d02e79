"""Red team h75cache: what a connection keeps between private statements (the plan and route kept
under a statement's text, the catalog reads of ``Catalog.snapshot``, the settings read with the
fingerprint) — never stale, never served past a change, and bounded.

Finding 1: the kept memo grew with every distinct text and every name looked up (an analyst's
10^5 distinct statements, or names that do not exist, held memory and lengthened every later
statement's fingerprint query); it is now bounded (``sql._catalog_kept.KEPT_ENTRIES``).
The other tests pin what held: a declaration or a budget changed by another connection
between two runs of one text, a curator's implicit transaction, an attached database with a
table of the same name, and every pinned setting refused between kept runs before the charge."""

from __future__ import annotations

import itertools
import warnings

import pytest

import provsql_dp
from provsql_dp.privacy import _session_settings
from provsql_dp.sql import _catalog_kept

_names = itertools.count()
COUNT = "SELECT COUNT(*) FROM p WHERE x > 5 WITH EPSILON 1"


def _db(budget="100000"):
    name = f":memory:red_team_kept_{next(_names)}"
    con = provsql_dp.connect(name)
    con.autocommit = True
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, owner INT, x DOUBLE CHECK (x >= 0))")
    con.execute("INSERT INTO p SELECT range, range % 10, range % 50 FROM range(200)")
    con.execute("PROTECT TABLE p")
    con.execute(f"SET PRIVACY BUDGET {budget}")
    return name, con


def _analyst(name, user="ann"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an analyst sharing the curator's process
        return provsql_dp.connect(name, role="analyst", user=user)


# ------------------------------------------------------------------ finding 1: bounded memo
def test_distinct_texts_keep_a_bounded_memo(monkeypatch):
    """Each distinct text keeps its plan, route and SQL; past the bound the next statement
    starts afresh (and still answers, by the same route)."""
    monkeypatch.setattr(_catalog_kept, "KEPT_ENTRIES", 40, raising=False)
    name, con = _db()
    for i in range(60):
        cur = con.execute(f"SELECT COUNT(*) FROM p WHERE x > {i % 50} + {i} * 0 WITH EPSILON 0.01")
        assert cur.privacy.mechanism == "laplace"
        cur.fetchall()
        assert len(con._catalog._persist) <= 40 + 25, f"after {i + 1} texts"
    con.close()


def test_names_not_found_do_not_lengthen_every_fingerprint(monkeypatch):
    """A name looked up joins the fingerprint of every later statement: an analyst naming
    tables that do not exist grew it (and the memo) without end."""
    monkeypatch.setattr(_catalog_kept, "KEPT_ENTRIES", 40, raising=False)
    name, curator = _db()
    curator.execute("SET PRIVACY BUDGET 10 FOR USER 'ann'")
    analyst = _analyst(name)
    for i in range(60):
        with pytest.raises(provsql_dp.ProgrammingError, match="does not exist"):
            analyst.execute(f"SELECT COUNT(*) FROM nosuch_{i} WITH EPSILON 1")
    kept = analyst._catalog
    assert len(kept._names(kept._persist)) <= 40 and len(kept._persist) <= 40 + 25
    assert analyst.ledger.remaining("ann") == 10  # refused, nothing charged
    analyst.execute(COUNT).fetchall()
    analyst.close(), curator.close()


# ------------------------------------------------------------------ what held
def test_a_declaration_changed_by_another_connection_takes_the_next_run():
    """p re-protected BY (owner) (20 rows per participant) by a second provsql_dp connection
    between two runs of one text: the next run is not the one-row-per-participant Laplace."""
    name, con = _db()
    analyst = _analyst(name)
    con.execute("SET PRIVACY BUDGET 100 FOR USER 'ann'")
    for _ in range(3):
        assert analyst.execute(COUNT).privacy.mechanism == "laplace"
    other = provsql_dp.connect(name)
    other.autocommit = True
    other.execute("UNPROTECT TABLE p")
    other.execute("PROTECT TABLE p BY (owner) AS person")
    cur = analyst.execute(COUNT)
    cur.fetchall()
    assert cur.privacy.mechanism != "laplace"
    other.close(), analyst.close(), con.close()


def test_a_declaration_in_a_curators_open_transaction_is_committed_first():
    """PEP 249: the curator's INSERT opened a transaction; PROTECT commits it first, so no
    analyst statement in between reads the old declarations under the new generation (which
    is not transactional) and keeps them."""
    name = f":memory:red_team_kept_{next(_names)}"
    curator = provsql_dp.connect(name)  # autocommit off
    curator.execute("CREATE TABLE p(id INT PRIMARY KEY, owner INT, x DOUBLE)")
    curator.execute("SET PRIVACY BUDGET 10 FOR USER 'ann'")
    curator.commit()
    analyst = _analyst(name)
    assert analyst.execute("SELECT count(*) FROM p").fetchall() == [(0,)]  # public, kept
    curator.execute("INSERT INTO p SELECT range, range % 3, range FROM range(30)")
    curator.execute("PROTECT TABLE p")
    for _ in range(2):
        with pytest.raises(provsql_dp.Error, match="protected"):
            analyst.execute("SELECT * FROM p")
    curator.commit()
    with pytest.raises(provsql_dp.Error, match="protected"):
        analyst.execute("SELECT * FROM p")
    analyst.close(), curator.close()


def test_a_budget_lowered_elsewhere_between_kept_runs_is_read():
    """The known-budget charge (one UPDATE … WHERE total = known AND spent = known, without
    the optimizer) never charges past a total another connection lowered."""
    name, con = _db(budget="100")
    con.execute("SET PRIVACY BUDGET 3 FOR USER 'ann'")
    analyst = _analyst(name)
    analyst.execute(COUNT).fetchall()
    analyst.execute(COUNT).fetchall()  # the known path from here on
    con.execute("SET PRIVACY BUDGET 2 FOR USER 'ann'")  # spent 2 of 2 now
    with pytest.raises(provsql_dp.Error, match="(?i)budget"):
        analyst.execute(COUNT)
    assert analyst.ledger.remaining("ann") == 0
    assert len(analyst.ledger.entries("ann")) == 2
    analyst.close(), con.close()


def test_an_attached_database_with_a_table_of_the_same_name_is_seen():
    """An ATTACHed database with its own p (unprotected): the name's tables changed, so the
    kept plan is not served; the unqualified name still reads the current database's p."""
    name, con = _db()
    for _ in range(2):
        assert con.execute(COUNT).privacy.mechanism == "laplace"
    con.execute("ATTACH ':memory:' AS other")
    con.execute("CREATE TABLE other.main.p(id INT, owner INT, x DOUBLE)")
    cur = con.execute(COUNT)
    assert cur.privacy.mechanism == "laplace" and cur.fetchall()
    con.execute("DETACH other")
    assert con.execute(COUNT).privacy.mechanism == "laplace"
    con.close()


#: a value other than DuckDB's default for each setting a release pins (a new pinned setting
#: must be added here: the test below refuses to pass without it)
NOT_DEFAULT = {
    "ieee_floating_point_ops": "false",
    "integer_division": "true",
    "max_execution_time": "600000",
    "default_order": "'DESC'",
    "default_null_order": "'NULLS_FIRST'",
    "default_collation": "'nocase'",
}


@pytest.mark.parametrize("setting", sorted(_session_settings.PINNED))
def test_every_pinned_setting_is_refused_between_kept_runs(setting):
    """The settings read with the fingerprint must cover PINNED or fall back to reading it:
    each pinned setting changed between two runs of a kept text is refused before the charge."""
    assert setting in NOT_DEFAULT, f"add a non-default value of {setting} to NOT_DEFAULT"
    name, con = _db()
    for _ in range(3):
        con.execute(COUNT).fetchall()
    before = con.ledger.remaining("default")
    con.execute(f"SET {setting} = {NOT_DEFAULT[setting]}")
    try:
        with pytest.raises(provsql_dp.OperationalError, match=f"{setting}.*Nothing was charged"):
            con.execute(COUNT)
        assert con.ledger.remaining("default") == before
    finally:
        con.execute(f"RESET {setting}")
    con.execute(COUNT).fetchall()
    con.close()
