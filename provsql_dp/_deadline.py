"""One wall-clock budget for a whole private release: reading rows, building LPs, solving them.

A release runs ``with deadline(seconds):``. Inside it every HiGHS solve gets
``min(its own time limit, the time left)`` (:func:`time_limit`, applied in
:mod:`provsql_dp.mechanisms.lp._highs`), and the preparation between solves — colour refinement
rounds, per-threshold loops, the reading of a route's rows — calls :func:`check` at its loop
points. Past the end both raise :class:`DeadlineExceeded`, a
:class:`~provsql_dp.errors.SolverError`: the error an LP's own time limit raises, which every
release path already answers with its data-independent fallback (ε charged, same shape, the
incident recorded for the curator). So an analyst waits at most the budget plus one step
between two checks, whatever the data (issue 10's side-channel rule: the outcome differs only
within the class "release or fallback", which the LP time limit already has).

The DuckDB steps of a release — the reads of protected rows, run by
:class:`~provsql_dp.provenance.backends.DuckDBBackend` and the single-owner/Laplace paths inside
:func:`reading` — are *interrupted* at the end: a watcher thread calls the DuckDB connection's
``interrupt()`` when the budget (or the connection's ``release_time_limit`` for one read,
:func:`read_limit`) runs out, and the step raises :class:`DeadlineExceeded` like any other
step past the budget. So a DuckDB step is never awaited past the clock (measured: a read that
would take minutes returns within about 0.1 s of the budget); the release answers with its
data-independent fallback, the same shape and ε. A step that DuckDB stops itself — out of
memory, or past its own ``max_execution_time`` — ends the same way (:class:`ResourceExhausted`).
A cancel (:mod:`provsql_dp._cancel`) stops the
same points: :func:`check`, :func:`time_limit` and :func:`reading` raise
:class:`~provsql_dp.errors.StatementCancelled` once the statement was cancelled.

The clock is a context variable: it follows the work into the functions it calls (in the same
thread) and costs one lookup when no release is under way, where :func:`check` does nothing and
:func:`time_limit` returns the limit it is given. Nested budgets keep the earlier end.

>>> import time
>>> remaining() is None                    # no release under way: no clock
True
>>> with deadline(60):
...     0 < remaining() <= 60, time_limit(120.0) <= 60, time_limit(5.0)
(True, True, 5.0)
>>> with deadline(0.01):
...     time.sleep(0.02)
...     check("colour refinement")
Traceback (most recent call last):
...
provsql_dp._deadline.DeadlineExceeded: the release passed its time budget of 0.01 s during colour refinement; nothing was released from the data
"""

from __future__ import annotations

import atexit
import math
import numbers
import time
from contextlib import contextmanager
from contextvars import ContextVar

import duckdb

from ._cancel import POLL, ProcessThread, abandonable_read, check_current
from .errors import InterfaceError, SolverError

__all__ = ["RELEASE_TIME_LIMIT", "DeadlineExceeded", "ResourceExhausted", "deadline", "remaining", "check",
           "time_limit", "budget_of", "check_budget", "reading", "read_limit"]

#: seconds one private release may take as a whole by default — reading the protected rows it
#: needs, building its linear programs and solving every one of them (each LP also keeps its
#: own limit, the smaller applies). Public: it bounds an analyst's wait whatever the data; past
#: it the release's data-independent fallback is returned, with its ε charged. A connection's
#: own is ``con.release_time_limit`` (:func:`budget_of`)
RELEASE_TIME_LIMIT = 300.0

#: (end on time.monotonic(), the budget in seconds) of the release under way, or None
_clock: ContextVar[tuple[float, float] | None] = ContextVar("provsql_dp_deadline", default=None)

#: seconds one DuckDB step of the release under way may take (:func:`read_limit`), or None
_read_limit: ContextVar[float | None] = ContextVar("provsql_dp_read_limit", default=None)


class DeadlineExceeded(SolverError):
    """A release passed its time budget (:data:`RELEASE_TIME_LIMIT`); like an LP past its own
    time limit, the release returns its data-independent fallback."""

    def __init__(self, budget: float, where: str):
        self.budget = float(budget)
        super().__init__(f"the release passed its time budget of {budget:g} s during {where}; "
                         "nothing was released from the data")


class ResourceExhausted(DeadlineExceeded):
    """A DuckDB step of a release ran out of a resource the curator sized — memory
    (``memory_limit``; ``temp_directory`` and ``max_temp_directory_size`` for what spills) or
    DuckDB's own ``max_execution_time`` — and is answered as one past the release's time
    budget: the data-independent fallback, same shape and ε (red team h73attack-2). How much
    memory a step needs depends on the data beyond its size (a hash table holds the distinct
    keys, a join's build side the matching rows): an error there would tell an analyst about
    the values, where running out of time tells only what the clock does."""

    def __init__(self, what: str, where: str):
        SolverError.__init__(self, f"{what} during {where}; nothing was released from the data")
        self.budget = float("nan")


def budget_of(con) -> float | None:
    """The release budget of a provsql_dp connection: ``con.release_time_limit`` (``None``: no
    budget), :data:`RELEASE_TIME_LIMIT` for an object without one."""
    return getattr(con, "release_time_limit", RELEASE_TIME_LIMIT)


def check_budget(seconds) -> float | None:
    """A connection's ``release_time_limit``: a positive finite number of seconds as a float, or
    ``None`` for no budget; anything else is refused by name."""
    if seconds is None:
        return None
    if isinstance(seconds, (bool, str)) or not isinstance(seconds, numbers.Real) or not (
            0 < float(seconds) < float("inf")):
        raise InterfaceError(f"release_time_limit must be a positive number of seconds or None, "
                             f"got {seconds!r}")
    return float(seconds)


@contextmanager
def deadline(seconds: float | None):
    """Run the ``with`` block under a budget of ``seconds`` from now (``None``: no budget of
    its own). Inside an outer budget the earlier end applies."""
    outer = _clock.get()
    if seconds is None:
        yield
        return
    seconds = float(seconds)
    if not seconds > 0:
        raise ValueError(f"a time budget must be a positive number of seconds, got {seconds!r}")
    clock = (time.monotonic() + seconds, seconds)
    if outer is not None and outer[0] <= clock[0]:
        clock = outer
    token = _clock.set(clock)
    try:
        yield
    finally:
        _clock.reset(token)


def remaining() -> float | None:
    """Seconds left of the budget under way (≤ 0 once it has passed), or ``None`` without one."""
    clock = _clock.get()
    return None if clock is None else clock[0] - time.monotonic()


def check(where: str = "the preparation of the release") -> None:
    """Raise :class:`DeadlineExceeded` if the budget under way has passed (``where``: what was
    running, for the curator's incident). Without a budget: nothing."""
    check_current()
    clock = _clock.get()
    if clock is not None and time.monotonic() >= clock[0]:
        raise DeadlineExceeded(clock[1], where)


def time_limit(own: float | None, where: str = "a linear program") -> float | None:
    """The time limit for one solve: ``min(own, the time left)`` (``own``: the solve's own
    limit, ``None``: none). Raises :class:`DeadlineExceeded` when nothing is left."""
    check_current()
    clock = _clock.get()
    if clock is None:
        return own
    left = clock[0] - time.monotonic()
    if left <= 0:
        raise DeadlineExceeded(clock[1], where)
    return left if own is None else min(float(own), left)


@contextmanager
def read_limit(seconds: float | None):
    """Inside the block, every :func:`reading` step may take at most ``seconds`` (``None``: no
    limit of its own; the budget under way still applies). Set by
    :class:`~provsql_dp.privacy.release_clock.ReleaseClock` to the connection's
    ``release_time_limit``: a release's reads are bounded like its LPs."""
    token = _read_limit.set(None if seconds is None else float(seconds))
    try:
        yield
    finally:
        _read_limit.reset(token)


@contextmanager
def reading(duck, where: str = "the reading of the protected rows"):
    """Run the DuckDB queries of the ``with`` block (on ``duck``) as one step of the release under
    way: refused at once past the budget or after a cancel, **interrupted** when the budget (or
    :func:`read_limit`) runs out while they run — :class:`DeadlineExceeded` then, or
    :class:`~provsql_dp.errors.StatementCancelled` after a cancel. Without a budget or a read
    limit the queries run as they come (a cancel still stops them).

    >>> con = duckdb.connect()
    >>> with reading(con):                          # no budget: nothing changes
    ...     con.execute("SELECT 42").fetchall()
    [(42,)]
    >>> with deadline(0.2), reading(con):           # a step past its budget is cut off
    ...     con.execute("SELECT count(*) FROM range(10000000000000)").fetchall()
    Traceback (most recent call last):
    ...
    provsql_dp._deadline.DeadlineExceeded: the release passed its time budget of 0.2 s during the reading of the protected rows; nothing was released from the data
    """
    check(where)
    ends = []
    clock, limit = _clock.get(), _read_limit.get()
    if clock is not None:
        ends.append(clock)
    if limit is not None:
        ends.append((time.monotonic() + limit, limit))
    end = min(ends) if ends else None
    step = _WATCHER.add(duck, end[0]) if end is not None and duck is not None else None
    try:
        with abandonable_read(duck):  # _cancel.Abandonable: interrupted when its work is
            yield
    except duckdb.InterruptException:
        check_current()  # cancelled: say so, not "past the budget"
        if end is not None and time.monotonic() >= end[0]:
            raise DeadlineExceeded(end[1], where) from None
        # not this release's clock: DuckDB's own max_execution_time (refused before the charge
        # by privacy._session_settings, unless set meanwhile) or another thread's interrupt()
        raise ResourceExhausted("DuckDB interrupted it", where) from None
    except duckdb.OutOfMemoryException as e:  # memory_limit, temp_directory, its size cap
        check_current()
        raise ResourceExhausted(f"DuckDB ran out of memory ({str(e).splitlines()[0]})",
                                where) from None
    finally:
        if step is not None:  # no interrupt after this point can reach the caller's next query
            _WATCHER.remove(step)


class _Watcher(ProcessThread):
    """The one thread of the process that interrupts the DuckDB steps (:func:`reading`) past
    their end: from it on, every :data:`~provsql_dp._cancel.POLL` seconds until the step ends
    (DuckDB drops an interrupt that lands between two queries of the step).

    One thread for all steps, started once, instead of one started and joined per step: each
    start and join waits for the scheduler, measured 3–5 ms per step on a loaded machine (a
    COUNT over 10^7 rows takes 11 ms). A step is added and removed under the watcher's lock,
    which the watcher also holds while it interrupts: once :meth:`remove` returns, no
    interrupt of that step can come. Between steps the thread waits on a condition, never
    inside DuckDB; at exit it is stopped and waited for all the same
    (:class:`~provsql_dp._cancel.ProcessThread`)."""

    name = "provsql-dp-deadline"

    def __init__(self):
        super().__init__()
        self._steps: dict[int, list] = {}  # id -> [when next to interrupt, duck]
        self._next_id = 0
        #: when the thread wakes next (it waits on ``_cond`` until then; inf: until notified)
        self._wakes = math.inf

    def add(self, duck, end: float) -> int:
        with self._cond:
            self._started()
            self._next_id += 1
            self._steps[self._next_id] = [end, duck]
            if end < self._wakes:  # else it wakes in time anyway (a step removed since, say):
                self._wakes = -math.inf  # no wake-up of the thread per statement
                self._cond.notify()
            return self._next_id

    def remove(self, step: int) -> None:
        with self._cond:
            self._steps.pop(step, None)

    def _loop(self) -> None:
        while not self._stopping:
            now = time.monotonic()
            for due in self._steps.values():
                if due[0] <= now:
                    try:
                        due[1].interrupt()
                    except Exception:  # noqa: BLE001 - a closed connection: nothing to stop
                        pass
                    due[0] = now + POLL
            due = None  # hold no connection while waiting (it must be freed at exit)
            wait = min((s[0] for s in self._steps.values()), default=None)
            self._wakes = math.inf if wait is None else wait
            self._cond.wait(None if wait is None else max(wait - now, 0.0))
            self._wakes = -math.inf  # awake: add() notifies (harmless) until it waits again


_WATCHER = _Watcher()
atexit.register(_WATCHER.stop)
