"""Ctrl-C that always reaches DuckDB and the LPs while the shell runs a statement.

DuckDB's Python client notices Ctrl-C only where its query loop asks Python for pending
signals; a query whose work happens elsewhere (measured: about one run in two of a long
``SELECT COUNT(*) FROM range(10^12) …`` on a pseudo-terminal) never saw the signal, and the
shell kept running it whatever the user pressed. :func:`ctrl_c_interrupts` closes that gap:
Python's C-level signal handler writes the signal number to a *wakeup fd*
(:func:`signal.set_wakeup_fd`) even while the main thread is inside DuckDB, and a watcher
thread reading it calls the connection's ``cancel()`` (:mod:`provsql_dp._cancel`: it interrupts
the DuckDB query, again until the statement ends, and cancels the HiGHS solve under way — which
releases the interpreter lock, so a solve in the main thread never saw Ctrl-C before it ended),
or, between statements or for a bare DuckDB connection, ``interrupt()`` — DuckDB's own,
thread-safe way to stop the running query. Python's handler still raises :class:`KeyboardInterrupt` in the main thread once it runs
Python code again, so the shell's existing handling (and the "nothing was charged" message) is
unchanged. ``interrupt()`` with no query running is a no-op for the next query.

>>> import duckdb
>>> duck = duckdb.connect()
>>> with ctrl_c_interrupts(duck):
...     duck.execute("SELECT 42").fetchall()
[(42,)]
"""

from __future__ import annotations

import os
import select
import signal
import threading
from contextlib import contextmanager

from ..._cancel import wait_ended

__all__ = ["ctrl_c_interrupts"]


@contextmanager
def ctrl_c_interrupts(con):
    """Inside the block, a SIGINT also stops ``con``'s statement from a watcher thread:
    ``con.cancel()`` for a provsql_dp connection (``duck.interrupt()`` when it runs none), or
    ``con.interrupt()`` for a DuckDB connection.

    A no-op outside the main thread (where :func:`signal.set_wakeup_fd` is not allowed) or
    without a connection."""
    stop = _stopper(con)
    if stop is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    r, w = os.pipe()
    os.set_blocking(w, False)
    try:
        old = signal.set_wakeup_fd(w)
    except ValueError:  # not the main interpreter's main thread
        os.close(r)
        os.close(w)
        yield
        return
    done = threading.Event()  # not ``stop``: that name is the stopper the watcher calls
    ended = threading.Event()  # the watcher's last step (never Thread.join: _cancel.wait_ended)

    def watch():
        try:
            while not done.is_set():
                ready, _, _ = select.select([r], [], [], 0.05)
                if ready and signal.SIGINT in os.read(r, 64):
                    try:
                        stop()
                    except Exception:  # a closed connection: nothing to stop
                        pass
        finally:
            ended.set()

    watcher = threading.Thread(target=watch, name="provsql-dp-ctrl-c", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        try:  # wake the watcher now: its 50 ms poll made a script pay up to 50 ms a statement
            os.write(w, b"\0")
        except OSError:  # the pipe is full: the watcher has bytes to read, it wakes anyway
            pass
        # a second Ctrl-C in a join returned with the watcher still in cancel() (DuckDB's and
        # HiGHS' C++) and closed the pipe it reads: wait for its end, then raise that Ctrl-C
        interrupted = wait_ended(ended)
        signal.set_wakeup_fd(old)
        os.close(r)
        os.close(w)
        if interrupted:
            raise KeyboardInterrupt


def _stopper(con):
    """What stops ``con``'s running work, or None without a connection."""
    if con is None:
        return None
    cancel, duck = getattr(con, "cancel", None), getattr(con, "_duck", con)
    interrupt = getattr(duck, "interrupt", None)
    if cancel is None:
        return interrupt

    def stop():
        if not cancel() and interrupt is not None:  # no statement of ours: DuckDB's own
            interrupt()

    return stop
