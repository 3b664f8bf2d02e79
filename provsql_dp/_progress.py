"""Progress of long work, reported by the engine to whoever listens (the shell's status line).

The stages call :func:`report` at the start of a phase (and with a count as it advances) and
:func:`tick` once per unit of repeated work (an LP solved); both cost one context-variable
lookup when nobody listens. A listener is installed for the duration of a piece of work with
:func:`listening`; it is called in the worker's own thread — or in the thread of a charge
recorded beside the work's read (:mod:`provsql_dp.privacy.charge_ahead`), so it must be
thread-safe — and must be quick (the shell only stores the latest state, which its display
thread draws).

Privacy: after a release is charged, phase changes and counts are functions of the private data
(how many rows the capture returned, how many LPs the mechanism solved, when each group's
release ended). Every report therefore says whether it is ``public`` — known before any
protected row is read (the charge itself) — and a display for an analyst must show only public
reports and the total elapsed time, which the analyst observes anyway.

>>> seen = []
>>> with listening(lambda phase, done, total, public: seen.append((phase, done, total, public))):
...     report("ε charged", public=True)
...     tick("solving LPs"); tick("solving LPs")
>>> seen
[('ε charged', None, None, True), ('solving LPs', 1, None, False), ('solving LPs', 2, None, False)]
>>> report("nobody listens")  # a no-op
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable

__all__ = ["report", "tick", "listening", "interruptible", "Listener", "CHARGED"]

#: the phase the ledger reports once a release's charge is recorded (public: data-independent)
CHARGED = "ε charged; releasing"

Listener = Callable[[str, "int | None", "int | None", bool], None]


class _State:
    __slots__ = ("callback", "phase", "count", "interruptible")

    def __init__(self, callback: Listener, interruptible: bool):
        self.callback = callback
        self.interruptible = interruptible
        self.phase: str | None = None
        self.count = 0


_current: ContextVar[_State | None] = ContextVar("provsql_dp_progress", default=None)


def report(phase: str, done: int | None = None, total: int | None = None, *,
           public: bool = False) -> None:
    """Tell the listener (if any) that ``phase`` is under way, ``done`` of ``total`` units in."""
    state = _current.get()
    if state is None:
        return
    state.phase, state.count = phase, done or 0
    try:
        state.callback(phase, done, total, public)
    except Exception:  # a display's failure never stops the work
        pass


def tick(phase: str) -> None:
    """One more unit of ``phase`` (counted from 1 since the phase began)."""
    state = _current.get()
    if state is None:
        return
    count = state.count + 1 if state.phase == phase else 1
    report(phase, count)


def interruptible() -> bool:
    """Whether the listener asked for work that stops at Ctrl-C even inside a solver (the LPs
    then run in HiGHS's own thread, cancelled on ``KeyboardInterrupt``)."""
    state = _current.get()
    return state is not None and state.interruptible


@contextmanager
def listening(callback: Listener, *, interruptible: bool = False):
    """Send the reports made inside the ``with`` block (in this thread or context) to
    ``callback``; ``interruptible`` makes long solver runs stop at Ctrl-C (see :func:`interruptible`)."""
    token = _current.set(_State(callback, interruptible))
    try:
        yield
    finally:
        _current.reset(token)
