"""A release's charge recorded while its rows are read, where the known budget covers it.

A release must be charged before anything derived from protected rows reaches the caller, and
a refused charge must spend nothing and release nothing. The ledger's known-budget charge
(:meth:`.ledger.Ledger._charge_known`: one autocommit ``INSERT`` on a connection of its own,
1–2 ms) and the release's read of its rows (on the statement's connection) need not wait for
each other for that: :func:`charged_release` hands the charge to the process's charges' thread
(:class:`_Charger`) and lets the release read meanwhile. The route's ``charge_fn`` (called before any noise is drawn, as
always) is :meth:`PendingCharge.result`, which waits for the charge; so nothing computed from
the rows is released before the charge committed.

When the known charge does not go through (its number was taken meanwhile by another
connection of the same user, the budget row changed, DuckDB failed), the charge's thread
abandons the release at once (:func:`provsql_dp._cancel.abandoning`: its DuckDB read under way
is interrupted, and that read and every later one raise :class:`~provsql_dp._cancel.Abandoned`)
— and the release runs again the sequential way: charged through the ledger's reading path
(which may refuse: nothing spent, nothing released), then read. What the abandoned attempt read
is dropped unseen. A failure of the read itself waits for the charge: charged, the failure is
the statement's (as when the charge came first); not charged, the release runs again the
sequential way, unless the caller cancelled it (Ctrl-C, ``con.cancel()``): then the cancel is
the statement's outcome and nothing was charged.

Only where the known-budget path applies (the known state covers the cost, the charger is
free: :meth:`.ledger.Ledger._known_debit`) and the rows are read by the in-process DuckDB (whose
query the interrupt reaches); elsewhere the charge comes first, as before. Measured (idle, 10^7
rows, ``benchmarks/engine_speed_ab.py``): see ``benchmarks/engine_speed_measured.md``.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE p(id INT PRIMARY KEY, x DOUBLE); PROTECT TABLE p")
>>> _ = con.execute("SET PRIVACY BUDGET 3")
>>> _ = con.execute("SELECT count(*) FROM p WITH EPSILON 1")  # reading path: learns the budget
>>> ahead = []
>>> def release(charge_fn):
...     ahead.append(charge_fn.__self__ if hasattr(charge_fn, "__self__") else None)
...     return charge_fn().epsilon
>>> charged_release(con, 1, "SELECT 1", "test", release), type(ahead[0]).__name__
(Fraction(1, 1), 'PendingCharge')
>>> con._ledger.remaining("default")
Fraction(1, 1)
"""

from __future__ import annotations

import atexit
import contextvars
import functools
import threading
from typing import Callable, TypeVar

from .._cancel import (Abandonable, Abandoned, ProcessThread, abandoning, check_current,
                       wait_ended)
from .._progress import CHARGED, report
from ..provenance.backends import DuckDBBackend, engine_of
from ._ledger_rows import Charge, positive
from .accounting import Cost
from .shared_charge import shared

__all__ = ["charged_release", "charge_ahead", "PendingCharge"]

T = TypeVar("T")


def charged_release(con, epsilon, text: str, mechanism: str,
                    release: Callable[[Callable[[], Charge]], T]) -> T:
    """``release(charge_fn)`` charged ``epsilon`` for ``text`` (the module's docstring): its
    charge recorded while it reads where :func:`charge_ahead` can, else before it starts."""
    pending = charge_ahead(con, epsilon, text, mechanism)
    if pending is not None:
        try:
            with abandoning(pending.work):
                out = release(pending.result)
                pending.result()  # whatever the route did: never an answer without its charge
            return out
        except BaseException as e:  # noqa: BLE001 - every end waits for the charge
            if pending.settle() is not None or isinstance(e, KeyboardInterrupt) or (
                    getattr(con, "_cancel", None) is not None and con._cancel.cancelled):
                raise  # charged: the statement's outcome, as if charged first; or cancelled
            # not charged: what was read is dropped; the release again, charged first
    charge = con._ledger.charge(con.user, epsilon, text, mechanism)
    return release(lambda: charge)


def charge_ahead(con, epsilon, text: str, mechanism: str) -> PendingCharge | None:
    """The known-budget charge of ``epsilon`` started in a thread of its own, or None where it
    cannot be (the module's docstring: then charge first). Raises as the charge would when the
    statement was cancelled already (nothing charged)."""
    led = con._ledger
    if led.read_only or not isinstance(engine_of(con), DuckDBBackend) or shared() is not None:
        return None
    check_current()  # a statement cancelled before its charge charges nothing
    plan = led._known_debit(con.user, Cost(epsilon=positive(epsilon)))
    if plan is None or not led._charger_lock.acquire(blocking=False):
        return None
    try:
        pending = PendingCharge()  # its report of the charge reaches this context's listener
        job = functools.partial(contextvars.copy_context().run, pending._run, led,
                                led._charger_cursor(), con.user, plan, text, mechanism)
        if _CHARGER.submit(job):
            return pending
    except Exception:  # noqa: BLE001 - no thread to be had, say: the charge comes first
        pass
    except BaseException:
        led._charger_lock.release()
        raise
    led._charger_lock.release()  # the thread is busy with another connection's charge
    return None


class PendingCharge:
    """A known-budget charge under way in the charges' thread (:func:`charge_ahead`). Its end
    is an Event the thread sets once the charge is decided, never ``Thread.join`` (a Ctrl-C
    landing in a join on CPython 3.11 marks the running thread stopped)."""

    def __init__(self):
        self._done = threading.Event()
        #: the release reading meanwhile: abandoned when the charge did not go through
        self.work = Abandonable()
        self._charge: Charge | None = None

    def _run(self, led, cur, user, plan, text, mechanism) -> None:
        known, debited = plan
        try:
            self._charge = led._charge_on(cur, user, debited, text, mechanism, known)
        except BaseException:  # noqa: BLE001 - _charge_on rolled back: nothing written
            self._charge = None
        try:
            if self._charge is not None:  # the shell's status line; charge_watch (precheck)
                report(CHARGED, public=True)
        finally:
            led._charger_lock.release()
            self._done.set()  # first: a route waiting for its charge then stops by itself
            if self._charge is None:  # stop the read now: its rows will not be used
                self.work.abandon()

    def settle(self) -> Charge | None:
        """Wait for the charge (through a Ctrl-C, re-raised after it: a charge is recorded whole
        or not at all, and the caller must know which): the :class:`Charge` (reported as
        charged, :data:`~provsql_dp._progress.CHARGED`, by the charge's thread as it
        committed), or None when it did not go through."""
        if wait_ended(self._done):
            raise KeyboardInterrupt
        return self._charge

    def result(self) -> Charge:
        """The charge (a route's ``charge_fn``), or :class:`~provsql_dp._cancel.Abandoned`
        when it did not go through."""
        charge = self.settle()
        if charge is None:
            raise Abandoned()
        return charge


class _Charger(ProcessThread):
    """The one thread of the process that records charges ahead (:func:`charge_ahead`), started
    once: a thread started per charge makes the statement wait for the scheduler (~0.07 ms idle,
    2.7 ms measured at load 8), while a charge handed to a waiting thread does not. One charge
    at a time: busy, :meth:`submit` refuses and the statement charges first, itself. Stopped at
    exit like every :class:`~provsql_dp._cancel.ProcessThread`."""

    name = "provsql-dp-charge"

    def __init__(self):
        super().__init__()
        self._job = None
        self._busy = False

    def submit(self, job) -> bool:
        """Run ``job()`` in the thread (True), or nothing when a charge is under way (False)."""
        with self._cond:
            if self._busy:
                return False
            self._started()
            self._busy, self._job = True, job
            self._cond.notify()
            return True

    def _loop(self) -> None:
        while True:
            while self._job is None and not self._stopping:
                self._cond.wait()
            if self._job is None:
                return
            job, self._job = self._job, None
            self._cond.release()
            try:
                job()  # PendingCharge._run: catches everything, sets its end
            finally:
                job = None  # hold no connection while waiting (freed at exit)
                self._cond.acquire()
                self._busy = False


_CHARGER = _Charger()
atexit.register(_CHARGER.stop, 5.0)  # a charge under way ends first: ~1 ms
