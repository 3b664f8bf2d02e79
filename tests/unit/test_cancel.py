"""provsql_dp._cancel: one token per connection stops DuckDB queries and HiGHS solves from
another thread; provsql_dp._deadline.reading interrupts a DuckDB step at the deadline."""

from __future__ import annotations

import threading
import time

import duckdb
import highspy
import numpy as np
import pytest
import scipy.sparse as sp

from provsql_dp import _cancel, _deadline
from provsql_dp._cancel import CancelToken, check_current, run_solve, solving
from provsql_dp.errors import StatementCancelled

LONG = "SELECT count(*) FROM range(10000000000000)"


def later(seconds, fn):
    t = threading.Timer(seconds, fn)
    t.start()
    return t


def lp(solver: str):
    """A random LP that takes a second or more to solve (simplex: ~1.3 s of CPU)."""
    n = 1500
    a = sp.random(n, n, density=0.02, random_state=1, format="csr")
    h = highspy.Highs()
    h.silent()
    h.setOptionValue("threads", 1)
    h.setOptionValue("solver", solver)
    h.passModel(n, n, a.nnz, 2, 1, 0.0, -np.random.default_rng(0).random(n), np.zeros(n),
                np.full(n, 10.0), np.full(n, -np.inf), np.full(n, 5.0),
                a.indptr[:n].astype(np.int32), a.indices.astype(np.int32), a.data,
                np.zeros(n, dtype=np.int32))
    return h


def test_a_token_acts_on_the_statement_under_way_only():
    tok = CancelToken()
    assert tok.cancel() is False and not tok.cancelled
    with tok.statement():
        with tok.statement():  # nested: one statement
            assert tok.cancel() is True
        with pytest.raises(StatementCancelled):
            check_current()
    assert not tok.cancelled
    check_current()  # no statement: nothing to check


@pytest.mark.parametrize("solver", ["simplex", "pdlp"])
def test_cancel_stops_a_solve(solver):
    """Simplex/IPM stop through highspy's interrupt callback; PDLP has none and is abandoned."""
    tok, h = CancelToken(), lp(solver)
    with tok.statement():
        timer = later(0.2, tok.cancel)
        t = time.monotonic()
        with pytest.raises(StatementCancelled):
            with solving(h):
                run_solve(h)
        assert time.monotonic() - t < 0.2 + 2.0  # measured: a few ms after the cancel
        timer.join()
    if solver == "pdlp":  # abandoned, not awaited: it ends in the background
        assert any(not done.is_set() for done in _cancel._abandoned)
    else:
        assert h.getModelStatus() == highspy.HighsModelStatus.kInterrupt  # stopped, not finished


def test_cancel_stops_a_duckdb_step():
    duck = duckdb.connect()
    tok = CancelToken(duck)
    with tok.statement():
        later(0.2, tok.cancel)
        t = time.monotonic()
        with pytest.raises(StatementCancelled):
            with _deadline.reading(duck):
                duck.execute(LONG).fetchall()
        assert time.monotonic() - t < 0.2 + 2.0
    assert duck.execute("SELECT 42").fetchall() == [(42,)]  # nothing left over for the next


def test_a_step_past_its_read_limit_is_interrupted_and_the_next_query_is_not():
    duck = duckdb.connect()
    with _deadline.read_limit(0.2):
        t = time.monotonic()
        with pytest.raises(_deadline.DeadlineExceeded, match="0.2 s"):
            with _deadline.reading(duck):
                duck.execute(LONG).fetchall()
        assert time.monotonic() - t < 1.0
        for _ in range(50):  # steps that end just before their limit never hit a later query
            with _deadline.reading(duck):
                duck.execute("SELECT 1").fetchall()
            assert duck.execute("SELECT 2").fetchall() == [(2,)]


def test_a_cancelled_plain_statement_says_so():
    import provsql_dp

    con = provsql_dp.connect()
    later(0.2, con.cancel)
    with pytest.raises(StatementCancelled, match="interrupted"):
        con.execute(LONG)
    assert con.execute("SELECT 1").fetchall() == [(1,)]


CTRL_C_DURING_A_SOLVE = r"""
import signal, threading, time
from provsql_dp._cancel import run_solve

class SlowToStop:  # a solve that takes 0.5 s to stop after its cancel
    def __init__(self):
        self.cancelled = threading.Event()
        self.returned = False
    def getOptionValue(self, name):
        return "simplex"
    def cancelSolve(self):
        self.cancelled.set()
    def run(self):
        self.cancelled.wait(30)
        time.sleep(0.5)
        self.returned = True
        return 0

h = SlowToStop()
main = threading.main_thread().ident
threading.Timer(0.3, lambda: signal.pthread_kill(main, signal.SIGINT)).start()
try:
    run_solve(h, threaded=True)
    print("no interrupt")
except KeyboardInterrupt:
    print("returned" if h.returned else "still solving")
"""


def test_ctrl_c_returns_only_once_the_solve_has_stopped():
    """The shell's Ctrl-C lands inside the wait for the solving thread; ``run_solve`` raises only
    once the solve has stopped. On CPython 3.11 a ``KeyboardInterrupt`` inside ``Thread.join``
    marks the thread stopped while it runs: waiting on it returned at once, and the shell's exit
    with the solve still under way aborted the process (CI's ``assert -6 == 0``). In a
    subprocess: the signal must reach a main thread that runs nothing else."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", CTRL_C_DURING_A_SOLVE], capture_output=True,
                         text=True, timeout=60)
    assert out.stdout.strip() == "returned", (out.stdout, out.stderr)


CTRL_C_DURING_A_STOP = r"""
import signal, threading, time
from provsql_dp.interfaces.shell.interrupt import ctrl_c_interrupts

class SlowToStop:  # a connection whose cancel (C++ in the real one) takes 0.5 s
    def __init__(self):
        self.stopped = False
        self._duck = self
    def interrupt(self):
        pass
    def cancel(self):
        time.sleep(0.5)
        self.stopped = True
        return True

con = SlowToStop()
main = threading.main_thread().ident
threading.Timer(0.2, lambda: signal.pthread_kill(main, signal.SIGINT)).start()
threading.Timer(0.45, lambda: signal.pthread_kill(main, signal.SIGINT)).start()
seen = None
try:
    with ctrl_c_interrupts(con):
        time.sleep(5)
except KeyboardInterrupt:
    seen = con.stopped  # as the block is left
try:
    time.sleep(1)
except KeyboardInterrupt:
    pass
print("returned" if seen else "still stopping")
"""


def test_ctrl_c_in_the_shell_returns_only_once_its_watcher_has_stopped():
    """The shell's watcher thread calls ``cancel()`` (DuckDB's interrupt, HiGHS' cancel: C++)
    on Ctrl-C; a second Ctrl-C landing in the wait for it returned with the watcher still in
    ``cancel()`` (CPython 3.11's ``Thread.join``), and the shell closed the wakeup pipe it
    reads. ``ctrl_c_interrupts`` now waits on an Event the watcher sets."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", CTRL_C_DURING_A_STOP], capture_output=True,
                         text=True, timeout=60)
    assert out.stdout.strip() == "returned", (out.stdout, out.stderr)
