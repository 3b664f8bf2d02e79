"""Refusals at the protocol level of the wire server — an unknown prepared statement or portal, a
Parse of several statements and a Bind to it, a parameter of the wrong count, type or format
code (a binary int4 of 3 bytes was an internal error) — and the curator's ``ROLLBACK TO
SAVEPOINT``: each leaves an audit row with the client, user and role, as every refusal does, and
the ledger and declarations as they were (``interfaces/pgwire/_session.py``,
``dbapi/audit_failures.audit_refusal``)."""

from __future__ import annotations

import select

import pytest

pytestmark = pytest.mark.slow  # a real client end to end: .ci/run's second step

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[test]')")

from psycopg import pq  # noqa: E402

from pgwire_support import dsn, make_database, running_server  # noqa: E402


@pytest.fixture()
def server(tmp_path):
    path = str(tmp_path / "wire.duckdb")
    make_database(path)
    with running_server(path) as srv:
        yield srv


def _state(server):
    with server.engine.checkout("curator", "_test") as con:
        return (con.execute("SELECT * FROM _provsql_dp.ledger ORDER BY id").fetchall(),
                con.execute("SELECT * FROM _provsql_dp.budget ORDER BY ALL").fetchall(),
                [con.execute(s).fetchall() for s in ("SHOW PROTECTED", "SHOW GROUP KEYS")])


def _audit(server):
    with server.engine.checkout("curator", "_test") as con:
        return con.execute("SELECT user_name, role, client, outcome, epsilon, statement, reason, "
                           "detail FROM _provsql_dp.audit_log ORDER BY id").fetchall()


def _result(pg, send, *args):
    """The one result of a message sent with libpq's asynchronous calls (its blocking
    ``PQdescribePortal`` never flushes on psycopg's non-blocking connection)."""
    getattr(pg, f"send_{send}")(*args)
    while pg.flush():
        select.select([], [pg.socket], [], 5)
    results = []
    while True:
        while pg.is_busy():
            select.select([pg.socket], [], [], 5)
            pg.consume_input()
        result = pg.get_result()
        if result is None:
            assert len(results) == 1, results
            return results[0]
        results.append(result)


def _refused(pg, send, *args) -> str:
    result = _result(pg, send, *args)
    assert result.status == pq.ExecStatus.FATAL_ERROR, result.status
    return result.error_message.decode()


def test_protocol_refusals_are_audited(server):
    before, audited = _state(server), len(_audit(server))
    with psycopg.connect(dsn(server, "ann"), autocommit=True) as c:
        pg = c.pgconn
        detail = _refused(pg, "query_prepared", b"nope", [])
        assert "prepared statement 'nope' does not exist" in detail and "Parse it first" in detail
        assert "portal 'gone' does not exist: Bind it first" in _refused(
            pg, "describe_portal", b"gone")
        # several statements: refused, and none is left under its name for a Bind
        assert "one statement, not several" in _refused(
            pg, "prepare", b"two", b"SELECT 1; SELECT x FROM pub")
        assert "'two' does not exist" in _refused(pg, "query_prepared", b"two", [])
        ok = _result(pg, "prepare", b"one", b"SELECT x FROM pub WHERE x = $1")
        assert ok.status == pq.ExecStatus.COMMAND_OK
        assert "Bind gives 2 parameter(s)" in _refused(pg, "query_prepared", b"one", [b"1", b"2"])
        assert "format code 7" in _refused(pg, "query_prepared", b"one", [b"1"], [7])
        assert "format code 3" in _refused(pg, "query_prepared", b"one", [b"1"], None, 3)
        ok = _result(pg, "prepare", b"int", b"SELECT x FROM pub WHERE x = $1", [23])
        assert ok.status == pq.ExecStatus.COMMAND_OK
        assert "parameter $1 cannot be read as type 23" in _refused(  # 3 bytes for an int4
            pg, "query_prepared", b"int", [b"\x00\x00\x01"], [1])
        ok = _result(pg, "query_prepared", b"one", [b"1"])  # the way out
        assert ok.status == pq.ExecStatus.TUPLES_OK
        assert c.execute("SELECT 1 AS one").fetchone() == (1,)  # the session goes on
    rows = _audit(server)[audited:]
    assert {r[:5] for r in rows} == {("ann", "analyst", "wire", "refused", "0")}
    assert [(r[5], r[6]) for r in rows] == [
        ("(Bind of the prepared statement 'nope')", "InterfaceError"),
        ("(Describe of the portal 'gone')", "InterfaceError"),
        ("SELECT 1; SELECT x FROM pub", "InterfaceError"),
        ("(Bind of the prepared statement 'two')", "InterfaceError"),
        ("SELECT x FROM pub WHERE x = $1", "InterfaceError"),
        ("SELECT x FROM pub WHERE x = $1", "InterfaceError"),
        ("SELECT x FROM pub WHERE x = $1", "InterfaceError"),
        ("SELECT x FROM pub WHERE x = $1", "InterfaceError"),
    ]
    assert _state(server) == before


def test_the_curators_rollback_to_savepoint_is_audited(server):
    before, audited = _state(server), len(_audit(server))
    with psycopg.connect(dsn(server, "cu")) as c:
        c.execute("CREATE TABLE scratch(x INT)")
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="ROLLBACK the whole"):
            c.execute("ROLLBACK TO SAVEPOINT a")
    rows = _audit(server)[audited:]
    assert [r[:7] for r in rows] == [("cu", "curator", "wire", "refused", "0",
                                      "ROLLBACK TO SAVEPOINT a", "NotSupportedError")]
    assert _state(server) == before
