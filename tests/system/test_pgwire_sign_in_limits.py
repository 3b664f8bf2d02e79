"""The wire server's sign-in is limited like the explorer's (web/login_limits.py): past 5
failures of a client address or of an account name, the next attempt is refused at once for a
while (1 s, doubling to 60 s), even with the right password, and refused alike for a known and
an unknown name; a success clears the counts; a connection pool's sign-ins from one address run
together. The clock is injected: nothing here is timed."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow  # real clients end to end: .ci/run's second step

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[test]')")

from pgwire_support import dsn, make_database, running_server  # noqa: E402

from provsql_dp.interfaces.web.login_limits import LoginLimits  # noqa: E402


@pytest.fixture
def server(tmp_path):
    path = str(tmp_path / "wire.duckdb")
    make_database(path)
    with running_server(path) as srv:
        yield srv


def _refusal(server, user, pw) -> str:
    with pytest.raises(psycopg.OperationalError) as e:
        psycopg.connect(dsn(server, user, password=pw))
    return str(e.value)


def test_failures_back_off_then_a_success_clears_them(server):
    t = [0.0]
    server.login_limits = LoginLimits(clock=lambda: t[0], per_client=16, max_running=256)
    for _ in range(5):
        assert "password authentication failed" in _refusal(server, "ann", "wrong")
    assert "too many sign-ins" in _refusal(server, "ann", "wrong")
    with pytest.raises(psycopg.OperationalError, match="too many sign-ins"):
        psycopg.connect(dsn(server, "ann"))  # the right password waits too
    assert "too many sign-ins" in _refusal(server, "nobody", "wrong")  # the address's count
    t[0] = 1.0  # the first wait is over
    with psycopg.connect(dsn(server, "ann"), autocommit=True) as c:
        assert c.execute("SELECT 1").fetchone() == (1,)
    assert "password authentication failed" in _refusal(server, "ann", "wrong")  # cleared


def test_a_pools_connections_sign_in_together(server):
    conns = [psycopg.connect(dsn(server, "ann"), autocommit=True) for _ in range(6)]
    try:
        assert all(c.execute("SELECT 1").fetchone() == (1,) for c in conns)
    finally:
        for c in conns:
            c.close()
