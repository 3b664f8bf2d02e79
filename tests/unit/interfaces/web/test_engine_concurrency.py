"""The server's engine runs statements concurrently: no global lock, per-analyst limits, cancel of
one user's statement, a statement watchdog — for the explorer and the wire server alike."""

from __future__ import annotations

import threading
import time

import pytest

from provsql_dp.errors import Error
from provsql_dp.interfaces.web.engine import Engine, TooManyStatements

SLOW = ("SELECT COUNT(*) FROM range(3000) a, range(3000) b, range(3000) c "
        "WHERE (a.range * 7 + b.range * 13 + c.range) % 1000003 = 1")


@pytest.fixture
def engine(tmp_path):
    eng = Engine(str(tmp_path / "e.duckdb"), max_concurrent=1)
    yield eng
    eng.close()


def _in_thread(fn):
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the test
            out["error"] = e
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


def _wait_running(engine, user):
    deadline = time.time() + 30
    while not engine._running.get(user) and time.time() < deadline:
        time.sleep(0.02)
    assert engine._running.get(user), "the statement did not start"


def test_a_long_statement_blocks_nobody_else_and_is_cancelled_alone(engine):
    t, out = _in_thread(lambda: engine.run("curator", "slow", SLOW))
    _wait_running(engine, "slow")
    t0 = time.time()
    assert engine.run("curator", "quick", "SELECT 41 + 1").rows == [(42,)]  # not behind the slow one
    assert engine.run("analyst", "ann", "SELECT 1 AS one").rows == [(1,)]
    assert time.time() - t0 < 10 and t.is_alive()
    assert engine.cancel("quick") is False and engine.cancel("slow") is True
    t.join(30)
    assert not t.is_alive() and isinstance(out.get("error"), Error)
    assert engine.run("curator", "slow", "SELECT 2").rows == [(2,)]  # its connection is usable again


def test_per_analyst_limit_refuses_at_once(engine):
    with engine.checkout("analyst", "ann") as con, engine.running("analyst", "ann", con):
        with pytest.raises(TooManyStatements, match="nothing was run or charged"):
            engine.run("analyst", "ann", "SELECT 1")
        assert engine.run("analyst", "bob", "SELECT 1").rows == [(1,)]  # another analyst is not held
        with engine.checkout("curator", "cu") as c2, engine.running("curator", "cu", c2):
            assert engine.run("curator", "cu", "SELECT 1").rows == [(1,)]  # curators have no limit
    assert engine.run("analyst", "ann", "SELECT 1").rows == [(1,)]


def test_statement_watchdog(tmp_path):
    eng = Engine(str(tmp_path / "w.duckdb"), statement_timeout=0.3)
    try:
        assert eng.release_time_limit == 0.3  # private releases stop their own work by then
        t0 = time.time()
        with pytest.raises(Error):
            eng.run("curator", "cu", SLOW)
        assert time.time() - t0 < 15
    finally:
        eng.close()
    with pytest.raises(ValueError):
        Engine(":memory:", max_concurrent=0)
