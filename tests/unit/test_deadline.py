"""The release clock (provsql_dp._deadline): arithmetic, nesting, and the HiGHS adapter's use of it."""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from provsql_dp import _deadline
from provsql_dp._deadline import DeadlineExceeded, check, deadline, remaining, time_limit
from provsql_dp.errors import SolverError
from provsql_dp.mechanisms.lp._highs import solve_lp


def test_no_clock_outside_a_release():
    assert remaining() is None
    check()  # nothing to check
    assert time_limit(None) is None and time_limit(7.5) == 7.5


def test_the_clock_ends_with_the_block():
    with deadline(30):
        assert 29 < remaining() <= 30
    assert remaining() is None
    with pytest.raises(RuntimeError):
        with deadline(30):
            raise RuntimeError
    assert remaining() is None  # reset on an exception too


@settings(max_examples=60, deadline=None)
@given(budget=st.floats(1.0, 1e6), own=st.one_of(st.none(), st.floats(1e-3, 1e7)))
def test_time_limit_is_the_smaller_of_own_and_left(budget, own):
    with deadline(budget):
        got = time_limit(own)
        left = remaining()
    assert 0 < got <= budget
    if own is not None:
        assert got <= own
        assert got == pytest.approx(min(own, left), abs=0.05)  # the clock moved a little between
    else:
        assert got == pytest.approx(left, abs=0.05)


def test_nested_budgets_keep_the_earlier_end():
    with deadline(100):
        with deadline(1000):  # longer inside: the outer end still applies
            assert remaining() <= 100
        with deadline(5):  # shorter inside: it applies, then the outer again
            assert remaining() <= 5
        assert 5 < remaining() <= 100
        with deadline(None):  # no budget of its own: the outer one
            assert 5 < remaining() <= 100


@pytest.mark.parametrize("bad", [0, -1.0, float("nan")])
def test_a_budget_must_be_positive(bad):
    with pytest.raises(ValueError, match="positive number of seconds"):
        with deadline(bad):
            pass


def test_past_the_end_check_and_time_limit_raise_a_solver_error():
    with deadline(0.01):
        time.sleep(0.02)
        with pytest.raises(DeadlineExceeded, match=r"time budget of 0\.01 s during colour"):
            check("colour refinement")
        with pytest.raises(SolverError, match="during the H LP"):
            time_limit(120.0, "the H LP")
    assert issubclass(DeadlineExceeded, SolverError)  # what every release path falls back on


def test_the_clock_stays_in_its_thread():
    seen = []
    with deadline(10):
        t = threading.Thread(target=lambda: seen.append(remaining()))
        t.start()
        t.join()
    assert seen == [None]


def test_the_default_budget_is_public_and_finite():
    assert 0 < _deadline.RELEASE_TIME_LIMIT < float("inf")


# ----------------------------------------------------------------------------- HiGHS adapter
def _tiny_lp():
    """min x0 + x1 subject to x0 + x1 ≥ 1, 0 ≤ x ≤ 1 (optimum 1)."""
    return (2, np.ones(2), np.zeros(2), np.ones(2), np.array([1.0]), np.array([np.inf]),
            np.array([0, 2]), np.array([0, 1]), np.ones(2))


def _option(h, name):
    v = h.getOptionValue(name)
    return v[1] if isinstance(v, tuple) else v  # (status, value) in some highspy versions


def test_an_lp_gets_the_smaller_limit():
    with deadline(3):
        obj, _, _, h = solve_lp(*_tiny_lp(), time_limit=120.0, keep=True)
    assert obj == pytest.approx(1.0)
    assert 0 < _option(h, "time_limit") <= 3
    with deadline(300):
        _, _, _, h = solve_lp(*_tiny_lp(), time_limit=2.0, keep=True)
    assert _option(h, "time_limit") == 2.0


def test_an_lp_after_the_end_raises_without_solving():
    with deadline(0.01):
        time.sleep(0.02)
        with pytest.raises(DeadlineExceeded, match="during the Δ LP"):
            solve_lp(*_tiny_lp(), what="Δ LP")
    assert solve_lp(*_tiny_lp())[0] == pytest.approx(1.0)  # no clock: solved as before


def test_reading_steps_share_one_watcher_thread():
    """Every DuckDB step is watched by the same thread (none started or joined per step), and
    a step that ended is never interrupted afterwards."""
    import duckdb

    from provsql_dp._deadline import reading

    con = duckdb.connect()
    with deadline(60), reading(con):
        con.execute("SELECT 1").fetchall()
    watcher = _deadline._WATCHER._thread
    before = threading.active_count()
    for _ in range(20):
        with deadline(60), reading(con):
            con.execute("SELECT 1").fetchall()
    assert _deadline._WATCHER._thread is watcher and watcher.is_alive()
    assert threading.active_count() == before
    assert not _deadline._WATCHER._steps  # every ended step was removed
    with deadline(0.05), reading(con):  # ends before its end: no interrupt comes later
        pass
    time.sleep(0.1)
    assert con.execute("SELECT 42").fetchall() == [(42,)]


def test_a_step_past_its_end_is_interrupted_by_the_shared_watcher():
    import duckdb

    from provsql_dp._deadline import reading

    con = duckdb.connect()
    t = time.monotonic()
    with pytest.raises(DeadlineExceeded):
        with deadline(0.2), reading(con):
            con.execute("SELECT count(*) FROM range(10000000000000)").fetchall()
    assert time.monotonic() - t < 5
    assert con.execute("SELECT 1").fetchall() == [(1,)]  # the next query is not interrupted


def test_the_watcher_is_woken_only_for_an_earlier_end_and_still_interrupts_in_time():
    """A step that ends after the time the watcher already waits for (a step removed since)
    does not wake it; it wakes then and waits on for the new step. A step ending sooner wakes
    it. Either way a step past its end is interrupted."""
    import duckdb

    w = _deadline._Watcher()
    con = duckdb.connect()
    try:
        step = w.add(None, time.monotonic() + 0.3)
        time.sleep(0.05)
        w.remove(step)  # the watcher still waits until ~0.3 s
        waits = w._wakes
        assert waits < math.inf
        t = time.monotonic()
        w.add(con, t + 0.6)  # later: no notify
        assert w._wakes == waits
        with pytest.raises(duckdb.InterruptException):
            con.execute("SELECT count(*) FROM range(10000000000000)").fetchall()
        assert 0.5 < time.monotonic() - t < 5
        w._steps.clear()
        con2 = duckdb.connect()
        step = w.add(None, time.monotonic() + 60)
        time.sleep(0.05)
        w.remove(step)  # the watcher now waits ~60 s
        t = time.monotonic()
        w.add(con2, t + 0.2)  # sooner: woken
        with pytest.raises(duckdb.InterruptException):
            con2.execute("SELECT count(*) FROM range(10000000000000)").fetchall()
        assert time.monotonic() - t < 5
    finally:
        w._steps.clear()
        w.stop()


def test_the_watcher_stops_at_exit_and_starts_again_when_needed():
    """``stop`` (registered with ``atexit``) ends the watcher thread, so none of ours is alive
    while the interpreter finalizes; a later step starts a new one."""
    import subprocess
    import sys

    w = _deadline._Watcher()
    step = w.add(None, time.monotonic() + 60)
    thread = w._thread
    assert thread.is_alive()
    w.remove(step)
    w.stop()
    assert not thread.is_alive()
    w.remove(w.add(None, time.monotonic() + 60))
    assert w._thread is not None and w._thread.is_alive() and w._thread is not thread
    w.stop()
    code = ("import atexit, time; seen = {}; "  # registered first: runs after our stop
            "atexit.register(lambda: print(seen['t'].is_alive())); "
            "from provsql_dp import _deadline as d; "
            "d._WATCHER.remove(d._WATCHER.add(None, time.monotonic() + 60)); "
            "seen['t'] = d._WATCHER._thread")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"  # our stop ran before the last atexit handler


def test_a_watcher_a_ctrl_c_marked_stopped_is_not_replaced():
    """On CPython 3.11 a Ctrl-C landing in ``Thread.is_alive``/``join`` marks a running thread
    stopped; the watcher judged its thread by ``is_alive`` and started a second one, leaving the
    first interrupting DuckDB with nothing to stop it at exit. Its end is now an Event."""
    w = _deadline._Watcher()
    w.remove(w.add(None, time.monotonic() + 60))
    first = w._thread
    first.is_alive = lambda: False  # what such a Ctrl-C leaves
    w.remove(w.add(None, time.monotonic() + 60))
    assert w._thread is first
    w.stop()
    assert w._ended.is_set()
