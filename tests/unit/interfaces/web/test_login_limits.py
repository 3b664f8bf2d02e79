"""The explorer's sign-in limits: after a few failures a client (or an account name) waits,
with backoff, and a refused attempt runs no PBKDF2. The clock is a list the test moves: nothing
is timed."""

from __future__ import annotations

import re

import pytest

from provsql_dp.interfaces.web.login_limits import LoginLimits


def _fail(limits, client="c", user="ann"):
    assert limits.begin(client, user) is None
    limits.end(client, user, ok=False)


def test_backoff_doubles_up_to_the_cap_and_success_clears():
    t = [100.0]
    limits = LoginLimits(clock=lambda: t[0], free=3, base=1.0, cap=4.0)
    for _ in range(3):
        _fail(limits)
    waits = []
    for _ in range(4):
        waits.append(limits.begin("c", "ann"))
        t[0] += waits[-1]
        _fail(limits)
    assert waits == [1.0, 2.0, 4.0, 4.0]
    t[0] += 1.0
    assert limits.begin("c", "ann") == 3.0
    t[0] += 3.0
    assert limits.begin("c", "ann") is None
    limits.end("c", "ann", ok=True)
    assert limits.begin("c", "ann") is None  # cleared


def test_per_name_across_clients_and_per_client_across_names():
    t = [0.0]
    limits = LoginLimits(clock=lambda: t[0], free=2)
    _fail(limits, "a", "ann"), _fail(limits, "b", "ann")
    assert limits.begin("z", "ann") == 1.0  # the name, from a new client
    _fail(limits, "x", "u1"), _fail(limits, "x", "u2")
    assert limits.begin("x", "u3") == 1.0  # the client, with a new name
    assert limits.begin("y", "bob") is None


def test_one_attempt_at_a_time_per_client_and_a_few_in_all():
    limits = LoginLimits(clock=lambda: 0.0, max_running=2)
    assert limits.begin("a", "u") is None
    assert limits.begin("a", "v") == 1.0  # the client's attempt still runs
    assert limits.begin("b", "u") is None
    assert limits.begin("c", "u") == 1.0  # two running in all
    limits.end("a", "u", ok=False)
    assert limits.begin("c", "u") is None


def test_counts_are_forgotten_and_bounded():
    t = [0.0]
    limits = LoginLimits(clock=lambda: t[0], free=1, forget=10.0, max_keys=4)
    _fail(limits, "c", "ann")
    t[0] = 10.0
    assert limits.begin("c", "ann") is None  # forgotten
    limits.end("c", "ann", ok=True)
    for i in range(50):
        _fail(limits, f"c{i}", f"u{i}")
    assert len(limits._counts) <= 4


starlette = pytest.importorskip("starlette")
pytest.importorskip("httpx")


def test_the_route_refuses_without_hashing(tmp_path, monkeypatch):
    from starlette.testclient import TestClient

    from provsql_dp.interfaces.web import accounts, example
    from provsql_dp.interfaces.web.app import create_app

    path = str(tmp_path / "demo.duckdb")
    example.prepare(path, {"curator": "curator-pass", "ann": "ann-pass-1"})
    app = create_app(path)
    t = [0.0]
    app.state.login_limits = LoginLimits(clock=lambda: t[0], free=2)
    hashed = []
    real = accounts.verify
    monkeypatch.setattr(accounts, "verify", lambda *a: hashed.append(1) or real(*a))
    c = TestClient(app, base_url="http://127.0.0.1")

    def attempt(password):
        token = re.search(r'name="token" value="([^"]+)"', c.get("/login").text).group(1)
        return c.post("/login", data={"user": "ann", "password": password, "token": token},
                      follow_redirects=False)
    try:
        assert [attempt("wrong").status_code for _ in range(2)] == [401, 401]
        r = attempt("ann-pass-1")  # right, but too early: refused before hashing
        assert r.status_code == 429 and r.headers["Retry-After"] == "1"
        assert "too many attempts" in r.text and len(hashed) == 2
        t[0] = 1.0
        r = attempt("ann-pass-1")
        assert r.status_code == 303 and len(hashed) == 3
    finally:
        app.state.engine.close()


def test_per_client_lets_a_few_attempts_of_one_client_run_together():
    limits = LoginLimits(clock=lambda: 0.0, per_client=2, max_running=3)
    assert limits.begin("a", "x") is None and limits.begin("a", "y") is None
    assert limits.begin("a", "z") == 1.0  # a third at once from one client
    assert limits.begin("b", "x") is None and limits.begin("c", "x") == 1.0  # 3 in all
    limits.end("a", "x", ok=True)
    assert limits.begin("c", "x") is None and limits.begin("a", "z") == 1.0
    limits.end("b", "x", ok=True)
    assert limits.begin("a", "z") is None
