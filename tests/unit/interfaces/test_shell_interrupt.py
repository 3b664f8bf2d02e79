"""provsql_dp.interfaces.shell.interrupt: a SIGINT reaches the connection's ``cancel()`` from the
watcher thread, whatever the main thread is doing (its event was once named like the stopper
and shadowed it: the watcher called the event, the error was swallowed, and Ctrl-C stopped a
long DuckDB query only when DuckDB happened to look at Python's signals)."""

import os
import signal
import threading
import time

from provsql_dp.interfaces.shell.interrupt import ctrl_c_interrupts


class _Con:
    def __init__(self):
        self.cancelled = threading.Event()

    def cancel(self):
        self.cancelled.set()
        return True


def test_sigint_calls_the_connections_cancel_from_the_watcher():
    con = _Con()
    with ctrl_c_interrupts(con):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.5)  # Python's own handler raises here; the watcher runs meanwhile
        except KeyboardInterrupt:
            pass
        assert con.cancelled.wait(2.0), "the watcher never called cancel()"


def test_the_watcher_is_woken_when_the_statement_ends(monkeypatch):
    """A statement's end wakes the watcher through its pipe instead of leaving it to its poll:
    the poll (50 ms) was paid by every statement of a script (a 200-statement ``.dump``
    restored in 11 s instead of 0.6 s). The poll is made long here: a watcher that woke only
    by its timeout shows as one."""
    from provsql_dp.interfaces.shell import interrupt

    real, woke = interrupt.select.select, []

    def select(r, w, x, timeout):
        ready = real(r, w, x, 30)
        woke.append(bool(ready[0]))
        return ready

    monkeypatch.setattr(interrupt.select, "select", select)
    with ctrl_c_interrupts(_Con()):
        pass
    assert woke and woke[-1], "the watcher ended by its poll's timeout, not woken"
