"""Cancel a statement from another thread: one token per connection stops DuckDB and the LPs.

A :class:`CancelToken` belongs to one provsql_dp connection (``con._cancel``; the public call is
``con.cancel()``). Every ``Cursor.execute`` runs inside :meth:`CancelToken.statement`, which
makes the token the *current* one (a context variable, so it follows the work into the
functions it calls). :meth:`CancelToken.cancel`, from any thread (the shell's Ctrl-C watcher,
the explorer's Cancel request, a wire protocol's CancelRequest):

* sets the token's flag: the release's loop points (:func:`provsql_dp._deadline.check`, every
  LP's :func:`~provsql_dp._deadline.time_limit`, the start of every read of protected rows)
  raise :class:`~provsql_dp.errors.StatementCancelled` from then on;
* calls ``cancelSolve()`` on every HiGHS solve under way (registered by :func:`solving`; they
  run with highspy's user-interrupt callback, which stops simplex and interior-point solves
  within a few milliseconds). PDLP has no interrupt callback: a PDLP solve runs in HiGHS's own
  thread (:func:`run_solve`) and a cancel *abandons* it — the statement returns at once, the
  solve goes on in the background until it ends or reaches its time limit (the release's budget
  bounds it), and its result is dropped. The process waits for abandoned solves when it exits
  (HiGHS aborts the process if it exits while one runs);
* interrupts the connection's DuckDB query, again every :data:`POLL` seconds until the
  statement ends (an ``interrupt()`` that lands between two queries is a no-op in DuckDB, so
  one call could miss the next query);
* interrupts, the same way, every other engine's step under way (registered by
  :func:`interrupting`: a Spark read cancels the jobs tagged with its statement's tag,
  :mod:`provsql_dp.provenance.backends._spark_jobs`), and any step registered after the cancel.

A cancel never touches the ledger's own DuckDB connection (``Ledger`` writes through a cursor,
which ``interrupt()`` does not reach), so a charge is either recorded whole or not at all; and
:func:`check_current` at the start of a charge means a cancel that arrives before it charges
nothing. ε charged before the cancel stays charged: the release may have read protected rows.

>>> tok = CancelToken()
>>> tok.cancel()               # no statement under way: nothing to stop
False
>>> with tok.statement():
...     tok.cancel()
...     check_current()
Traceback (most recent call last):
...
provsql_dp.errors.StatementCancelled: the statement was interrupted (cancelled) before it finished; nothing was released. ε already charged for a release stays spent (SHOW PRIVACY BUDGET shows what is left)
>>> with tok.statement():      # the next statement starts afresh
...     check_current()
"""

from __future__ import annotations

import atexit
import os
import threading
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar

import duckdb

from .errors import Error, StatementCancelled

__all__ = ["CancelToken", "current", "check_current", "solving", "run_solve", "interrupting",
           "wait_ended", "Abandoned", "Abandonable", "abandoning", "abandonable_read",
           "ProcessThread",
           "POLL"]

#: seconds between two ``interrupt()`` calls of a cancelled statement's DuckDB connection (and
#: between two looks at the clock of a deadline watcher, :mod:`provsql_dp._deadline`)
POLL = 0.02

_current: ContextVar[CancelToken | None] = ContextVar("provsql_dp_cancel", default=None)

#: PDLP solves abandoned by a cancel, still running in the background (each its end's event,
#: waited for at exit)
_abandoned: set[threading.Event] = set()


class CancelToken:
    """The cancel switch of one connection (``duck``: its DuckDB connection, or ``None``)."""

    def __init__(self, duck=None):
        self.duck = duck
        self._lock = threading.Lock()
        self._requested = False
        self._running = 0  # statements under way (an execute may run inside another's release)
        self._solvers: set = set()
        self._stopped = threading.Condition(self._lock)
        self._interrupters: list[threading.Thread] = []  # joined when the statement ends
        self._steps: list = []  # other engines' steps under way (:func:`interrupting`)

    @property
    def cancelled(self) -> bool:
        """Whether the statement under way was cancelled."""
        return self._requested

    def cancel(self) -> bool:
        """Stop the statement under way (DuckDB, LPs, the release's loops); ``False`` when no
        statement runs. Thread-safe and quick: it does not wait for the statement to stop."""
        with self._lock:
            if not self._running:
                return False
            first = not self._requested
            self._requested = True
            solvers = list(self._solvers)
            steps = list(self._steps)
        for h in solvers:
            h.cancelSolve()
        for step in steps:
            _interrupt(step)
        if self.duck is not None or steps:
            if self.duck is not None:
                _interrupt(self.duck)  # at once (again at every cancel), then until the end
            if first:
                interrupter = threading.Thread(target=self._interrupt_until_done,
                                               name="provsql-dp-cancel", daemon=True)
                interrupter.start()
                with self._lock:
                    self._interrupters.append(interrupter)
        return True

    def _interrupt_until_done(self) -> None:
        with self._lock:
            while self._requested and self._running:
                for target in [self.duck, *self._steps] if self.duck is not None else self._steps:
                    _interrupt(target)
                self._stopped.wait(POLL)

    def check(self) -> None:
        """Raise :class:`~provsql_dp.errors.StatementCancelled` if the statement was cancelled."""
        if self._requested:
            raise StatementCancelled()

    @contextmanager
    def statement(self):
        """Run one statement under this token (nested statements share the outer one's state).
        Once cancelled, whatever error the statement ends with (DuckDB's "Interrupted!", an
        LP's status) is raised as :class:`~provsql_dp.errors.StatementCancelled`."""
        with self._lock:
            if not self._running:
                self._requested = False
            self._running += 1
        token = _current.set(self)
        try:
            yield self
        except (Error, duckdb.Error) as e:
            if not self._requested or isinstance(e, StatementCancelled):
                raise
            raise StatementCancelled() from e
        finally:
            _current.reset(token)
            ended = []
            with self._lock:
                self._running -= 1
                if not self._running:
                    self._requested = False
                    self._stopped.notify_all()
                    ended, self._interrupters = self._interrupters, []
            # they stop now (the statement ended): none outlives it. A join, not an Event
            # (wait_ended): an interrupter calls DuckDB only while it holds self._lock, and
            # _running is 0 once we release it, so even a join a Ctrl-C cuts short (CPython
            # 3.11) leaves it no C++ call to make: it re-checks _running and returns
            for t in ended:
                t.join()

    def _add(self, h) -> None:
        with self._lock:
            self._solvers.add(h)
            requested = self._requested
        if requested:
            h.cancelSolve()

    def _remove(self, h) -> None:
        with self._lock:
            self._solvers.discard(h)

    def _add_step(self, step) -> None:
        with self._lock:
            self._steps.append(step)
            requested = self._requested
        if requested:
            _interrupt(step)

    def _remove_step(self, step) -> None:
        with self._lock:
            self._steps.remove(step)


def _interrupt(duck) -> None:
    try:
        duck.interrupt()
    except Exception:  # noqa: BLE001 - a closed connection: nothing left to stop
        pass


def current() -> CancelToken | None:
    """The token of the statement under way in this context, or ``None``."""
    return _current.get()


def check_current() -> None:
    """Raise :class:`~provsql_dp.errors.StatementCancelled` if the statement under way was
    cancelled (nothing without a statement), :class:`Abandoned` if its work under way was
    abandoned (:func:`abandoning`)."""
    work = _abandon.get()
    if work is not None and work.abandoned:
        raise Abandoned()
    token = _current.get()
    if token is not None:
        token.check()


class Abandoned(BaseException):
    """The work under way was abandoned: its result will not be used, whatever it is
    (:mod:`provsql_dp.privacy.charge_ahead`: the charge recorded beside a release's reads did not
    go through, and the release runs again, charged first). Raised by :func:`check_current`, so
    at the start of every read, and by a read interrupted meanwhile
    (:func:`provsql_dp._deadline.reading`). A ``BaseException``: no fallback of a release
    (``except DeadlineExceeded``, ``except Exception``) takes it for the read's own end; only
    the one who abandoned the work catches it."""


class Abandonable:
    """The switch of a piece of work that another thread may abandon (:func:`abandoning`).
    :meth:`abandon` interrupts the DuckDB reads under way in it (:meth:`reading`), again every
    :data:`POLL` seconds until each has ended (DuckDB drops an interrupt that lands just
    before its query starts), and only those: a read's block is left under the lock, so no
    query outside a read step is ever interrupted."""

    def __init__(self):
        self._cond = threading.Condition()
        self.abandoned = False
        self._reads: list = []

    def abandon(self) -> None:
        """From any thread: every later :func:`check_current` inside the work raises
        :class:`Abandoned`, and the reads under way are interrupted (they raise it too);
        returns once none is under way."""
        with self._cond:
            self.abandoned = True
            while self._reads:
                for duck in self._reads:
                    _interrupt(duck)
                self._cond.wait(POLL)

    @contextmanager
    def reading(self, duck):
        """A read of the work on ``duck``: interrupted by :meth:`abandon` while in the block."""
        with self._cond:
            self._reads.append(duck)
        try:
            yield
        finally:
            with self._cond:
                self._reads.remove(duck)
                self._cond.notify_all()


#: the work under way in this context that :func:`abandoning` runs
_abandon: ContextVar[Abandonable | None] = ContextVar("provsql_dp_abandon", default=None)


@contextmanager
def abandoning(work: Abandonable):
    """Run the block as ``work``: once it is abandoned, :func:`check_current` raises
    :class:`Abandoned` and its reads (:func:`provsql_dp._deadline.reading`) are interrupted.

    >>> work = Abandonable()
    >>> with abandoning(work):
    ...     check_current()
    ...     work.abandon()
    ...     check_current()
    Traceback (most recent call last):
    ...
    provsql_dp._cancel.Abandoned
    >>> check_current()  # outside the block: nothing
    """
    token = _abandon.set(work)
    try:
        yield
    finally:
        _abandon.reset(token)


def abandonable_read(duck):
    """The context of one read on ``duck`` of the work under way (:meth:`Abandonable.reading`),
    or a no-op outside :func:`abandoning`."""
    work = _abandon.get()
    return nullcontext() if work is None or duck is None else work.reading(duck)


@contextmanager
def solving(h):
    """Run one HiGHS solve ``h`` so that a cancel stops it (highspy's user-interrupt callback;
    measured overhead about 2 % of a simplex solve). Raises
    :class:`~provsql_dp.errors.StatementCancelled` after a cancelled solve, before its status
    is read as a solver failure."""
    token = _current.get()
    if token is None:
        yield
        return
    token.check()
    h.HandleUserInterrupt = True
    token._add(h)
    try:
        yield
    finally:
        token._remove(h)
    token.check()


@contextmanager
def interrupting(step):
    """Run the ``with`` block as a step of the statement under way that a cancel stops by
    calling ``step.interrupt()`` (at once, then every :data:`POLL` seconds until the statement
    ends, like its DuckDB query: a step whose work starts after the cancel is reached too).
    Without a statement under way: nothing.

    >>> class Step:
    ...     calls = 0
    ...     def interrupt(self): Step.calls += 1
    >>> tok = CancelToken()
    >>> with tok.statement(), interrupting(Step()):
    ...     tok.cancel()
    True
    >>> Step.calls >= 1
    True
    """
    token = _current.get()
    if token is None:
        yield
        return
    token._add_step(step)
    try:
        yield
    finally:
        token._remove_step(step)


def run_solve(h, *, threaded: bool = False):
    """``h.run()``, stoppable: in a thread of its own when ``threaded`` (the shell's Ctrl-C: a
    ``KeyboardInterrupt`` in this thread cancels the solve) or for a PDLP solve under a token
    (which no callback can stop: on a cancel it is abandoned, see the module docstring).
    Inside :func:`solving`, which raises once a cancelled solve has stopped. (Not highspy's
    ``startSolve``: its locks are shared by every ``Highs`` of the process, so a second
    threaded solve anywhere — another connection's, an abandoned one — would fail.)

    The solve's end is an :class:`threading.Event` the solving thread sets, never
    ``Thread.join``/``is_alive``: on CPython 3.11 a ``KeyboardInterrupt`` that lands inside
    ``join`` marks the thread stopped while it still runs (``_wait_for_tstate_lock`` releases
    the running thread's lock), so the shell's Ctrl-C returned with the solve still under way,
    and HiGHS aborted the process when it exited (``terminate called without an active
    exception``)."""
    token = _current.get()
    pdlp = _solver(h) == "pdlp"
    if not (threaded or (pdlp and token is not None)):
        return h.run()
    out = {}
    done = threading.Event()

    def work():
        try:
            out["status"] = h.run()  # releases the interpreter lock while it solves
        finally:
            done.set()

    solver = threading.Thread(target=work, name="provsql-dp-highs", daemon=True)
    solver.start()
    try:
        while not done.wait(POLL * 5):
            if token is not None and token.cancelled and not done.is_set():
                if pdlp:
                    _abandoned.difference_update([d for d in _abandoned if d.is_set()])
                    _abandoned.add(done)  # it ends in the background, by its time limit
                    raise StatementCancelled()
                _wait_stopped(done)
        return out.get("status")
    except KeyboardInterrupt:
        h.cancelSolve()
        if pdlp:
            _abandoned.add(done)  # PDLP ignores the cancel: waited for at exit like the others
        else:
            _wait_stopped(done)
        raise


def _wait_stopped(done: threading.Event) -> None:
    """Wait until a cancelled (simplex/IPM) solve has stopped: milliseconds (a second Ctrl-C
    meanwhile is dropped: the solver stops in a moment anyway)."""
    wait_ended(done)


class ProcessThread:
    """One thread of the process that waits on :attr:`_cond` between its jobs (never inside
    DuckDB), started on first use (:meth:`_started`, under the lock; again after a fork, whose
    child has no thread), stopped and waited for at exit (:meth:`stop`, registered with
    ``atexit`` by its owner), so that no thread of ours is alive inside DuckDB's C++ while the
    interpreter finalizes (which aborts the process). Its end is an Event it sets last, never
    ``Thread.join``/``is_alive``: on CPython 3.11 a Ctrl-C landing in either marks a running
    thread stopped, and a second thread would be started beside the first. A subclass
    implements :meth:`_loop`, run holding the lock until :attr:`_stopping`."""

    name = "provsql-dp"

    def __init__(self):
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._ended = threading.Event()  # set by the thread as it ends
        self._pid = None
        self._stopping = False

    def _started(self) -> None:
        """Start the thread unless it runs (call it holding :attr:`_cond`)."""
        if self._thread is None or self._pid != os.getpid() or self._ended.is_set():
            self._pid = os.getpid()
            self._stopping = False
            self._ended = threading.Event()
            self._thread = threading.Thread(target=self._run, args=(self._ended,),
                                            name=self.name, daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        """End the thread and wait for it, ``timeout`` seconds at most (it ends its job
        first)."""
        with self._cond:
            thread, self._thread, ended = self._thread, None, self._ended
            self._stopping = True
            self._cond.notify_all()
        if thread is not None and thread is not threading.current_thread():
            wait_ended(ended, timeout)  # (a Ctrl-C meanwhile: at exit, dropped)
            if ended.is_set():  # past its last job, no C++ left: a join only tidies up
                thread.join(timeout)

    def _run(self, ended: threading.Event) -> None:
        try:
            with self._cond:
                self._loop()
        finally:
            ended.set()

    def _loop(self) -> None:
        raise NotImplementedError


def wait_ended(ended: threading.Event, timeout: float | None = None) -> bool:
    """Wait until ``ended`` — an Event a thread sets as its last step — is set (or ``timeout``
    seconds pass), through any ``KeyboardInterrupt``; return whether one landed, for the caller
    to raise once it has cleaned up. What to wait for a thread that may run C/C++ code (DuckDB,
    HiGHS) with, never ``Thread.join``/``is_alive``: on CPython 3.11 an interrupted ``join``
    marks the thread stopped while it runs (see :func:`run_solve`).

    >>> import threading
    >>> ended = threading.Event()
    >>> threading.Thread(target=ended.set).start()
    >>> wait_ended(ended), ended.is_set()
    (False, True)
    """
    import time

    end = None if timeout is None else time.monotonic() + timeout
    interrupted = False
    while not ended.is_set() and (end is None or time.monotonic() < end):
        try:
            ended.wait(POLL if end is None else max(0.0, min(POLL, end - time.monotonic())))
        except KeyboardInterrupt:
            interrupted = True
    return interrupted


def _solver(h) -> str:
    alg = h.getOptionValue("solver")
    return str(alg[1] if isinstance(alg, tuple) else alg)


@atexit.register
def _join_abandoned() -> None:
    """Let abandoned PDLP solves end before the process does (bounded by their time limits)."""
    for done in list(_abandoned):
        done.wait()
    _abandoned.clear()
