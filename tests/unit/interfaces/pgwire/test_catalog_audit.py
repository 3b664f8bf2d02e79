"""An analyst's catalog query that the schema replica refuses (or a session setting the server
refuses) is in the audit log, as any other refusal (follow-up of red team h94attack): it was
answered beside the cursor, whose refusals are logged, and left no row. A successful catalog query writes none — it releases nothing, and
drivers send many (psql's ``\\d``, JDBC's metadata calls) — as a successful public statement."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import provsql_dp
from provsql_dp.errors import Error
from provsql_dp.interfaces.pgwire import _execute
from provsql_dp.interfaces.pgwire._catalog import Replica


@pytest.fixture
def analyst(tmp_path):
    db = str(tmp_path / "c.duckdb")
    cu = provsql_dp.connect(db)
    cu.execute("CREATE TABLE t(x INT); INSERT INTO t VALUES (1); PROTECT TABLE t")
    cu.close()
    con = provsql_dp.connect(db, role="analyst", user="ann")
    yield SimpleNamespace(server=SimpleNamespace(replica=Replica()), con=con, catalog_cursor=None,
                          last_privacy=None)
    con.close()


def _log(session):
    return session.con._duck.execute(
        "SELECT user_name, client, outcome, statement, reason, detail FROM _provsql_dp.audit_log "
        "ORDER BY id").fetchall()


def test_a_refused_catalog_query_is_audited(analyst):
    bad = "SELECT no_such_column FROM pg_catalog.pg_namespace"
    with pytest.raises(Error, match="answered from the server's catalog"):
        _execute.execute(analyst, bad)
    [(user, _client, outcome, statement, reason, detail)] = _log(analyst)
    assert (user, outcome, statement) == ("ann", "refused", bad)
    assert reason and "could not be answered there" in detail


def test_a_successful_catalog_query_writes_no_row(analyst):
    out = _execute.execute(analyst, "SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname = 'main'")
    assert out.rows == [("main",)]
    assert _log(analyst) == []


@pytest.mark.parametrize("stmt", ["SET statement_timeout = 'soon'", "SET provsql_dp.interval_columns = 'lots'"])
def test_a_refused_session_setting_is_audited(analyst, stmt):
    """The wire's own settings are answered beside the cursor too: a value they cannot take is
    refused, and logged."""
    analyst.settings = {}
    with pytest.raises(Error):
        _execute.execute(analyst, stmt)
    [(user, _client, outcome, statement, reason, _detail)] = _log(analyst)
    assert (user, outcome, statement, reason) == ("ann", "refused", stmt, "ProgrammingError")


def test_an_analysts_limits_stand_before_a_catalog_query_is_parsed(analyst):
    """A catalog query skipped the analyst's size and depth limits (``check_statement`` runs in
    ``Cursor.execute``, which the replica's path never reaches), and the routing's parse of a
    deeply nested one overflowed Python's stack (a RecursionError, not a refusal). Refused now,
    naming the limit, and in the audit log as any refusal."""
    deep = "SELECT " + "(" * 3000 + "1" + ")" * 3000 + " FROM pg_catalog.pg_class"
    with pytest.raises(Error, match="max_expression_depth"):
        _execute.execute(analyst, deep)
    [(user, _client, outcome, statement, _reason, _detail)] = _log(analyst)
    assert (user, outcome) == ("ann", "refused") and statement.startswith("SELECT ((")
    long = "SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname <> '" + "x" * 70_000 + "'"
    with pytest.raises(Error, match="max_statement_bytes"):
        _execute.execute(analyst, long)
    assert [r[2] for r in _log(analyst)] == ["refused", "refused"]
