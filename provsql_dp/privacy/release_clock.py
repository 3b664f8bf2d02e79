"""A public running time for private releases: every release takes the same wall-clock time.

The side-channel rule (README, "No side channels") covers the running time too: once a private statement is
accepted, how long it takes must depend on the data only through the noise. The mechanisms'
work does depend on the data — a recursive-mechanism release over a large K-relation solves
bigger linear programs than one over a small one — so the time alone would tell an analyst how
big the protected relation is. ``release_seconds`` closes that channel the way *predictable
transactions* do (Haeberlen, Pierce and Narayan, "Differential privacy under fire", USENIX
Security 2011): each accepted release is padded to a public duration fixed by the curator, and
the release's own work is bounded by the same duration (LP time limits, construction deadlines,
``max_capture_rows``), past which the data-independent fallback is released — the statement's
outcome still has the same shape and the same ε. The padding is also the statement's
:func:`~provsql_dp._deadline.deadline`: every LP and every preparation step of its releases
stops by the padded end (within one step between two checks), inside the per-release
``release_time_limit`` (:func:`~provsql_dp._deadline.budget_of`) — and a DuckDB read of
protected rows still running at the padded end (or longer than ``release_time_limit``, the
``step_limit`` here) is **interrupted**, not awaited (:func:`~provsql_dp._deadline.reading`):
the release answers with its data-independent fallback, same shape and ε (measured: within
about 0.05 s of the padded end, ``benchmarks/interrupt.py``).

:class:`ReleaseClock` is the padding: a context manager that, on leaving, sleeps until
``seconds`` have passed since it was entered — whether the release answered or failed. A refusal
(:data:`~provsql_dp.privacy.failures.REFUSALS`: decided from the statement, the declarations and
the budget before any protected row is read) is not padded: its timing carries nothing about the
data, and an analyst should not wait for a typo; nor is a cancelled statement
(:class:`~provsql_dp.errors.StatementCancelled`: the caller chose when it ended) — and a cancel
that arrives while the padding runs ends the statement then, as a cancelled statement, exactly
as one that arrives while the work runs: which of the two a cancel met is not told. What can still
overrun ``seconds`` is what no interrupt reaches: Python work between two checks, HiGHS's presolve
on a huge model, the fallback's own milliseconds. Such a release returns when it is done (the
padding cannot shorten it), which is why the curator picks ``seconds`` above what a release's
preparation takes (see the README's "No side channels").

>>> import time
>>> t = time.monotonic()
>>> with ReleaseClock(0.05):
...     pass
>>> time.monotonic() - t >= 0.05
True
>>> with ReleaseClock(None):  # no padding: returns as soon as the release is done
...     pass
"""

from __future__ import annotations

import math
import numbers
import time
from contextlib import ExitStack

from .._cancel import POLL, check_current
from .._deadline import deadline, read_limit
from ..errors import InterfaceError, StatementCancelled
from .failures import REFUSALS

__all__ = ["ReleaseClock", "check_release_seconds"]


def check_release_seconds(seconds) -> float | None:
    """``seconds`` as a float, or ``None`` for no padding; anything else is refused by name."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, numbers.Real) or not (
            math.isfinite(seconds) and seconds > 0):
        raise InterfaceError(
            f"release_seconds must be a positive number of seconds or None, got {seconds!r}")
    return float(seconds)


class ReleaseClock:
    """Pad the enclosed release to ``seconds`` of wall-clock time (``None``: no padding); each
    DuckDB step of the release is also cut off after ``step_limit`` seconds (the connection's
    ``release_time_limit``, :func:`~provsql_dp._deadline.read_limit`)."""

    def __init__(self, seconds: float | None, step_limit: float | None = None):
        self.seconds = check_release_seconds(seconds)
        self.step_limit = step_limit
        self.start = time.monotonic()

    def __enter__(self) -> ReleaseClock:
        self.start = time.monotonic()
        # the release's work ends by the padded end too (provsql_dp._deadline: LPs and their
        # preparation stop there, and the data-independent fallback is released)
        self._work = ExitStack()
        self._work.enter_context(deadline(self.seconds))
        self._work.enter_context(read_limit(self.step_limit))
        return self

    def remaining(self) -> float | None:
        """Seconds left until the padded end (``None`` without padding; never negative)."""
        if self.seconds is None:
            return None
        return max(0.0, self.start + self.seconds - time.monotonic())

    def __exit__(self, exc_type, exc, tb) -> None:
        self._work.close()
        if self.seconds is None or (exc_type is not None and (
                issubclass(exc_type, (*REFUSALS, StatementCancelled))
                or not issubclass(exc_type, Exception))):
            return  # a refusal, or the caller's own interrupt (Ctrl-C, a cancel): nothing to hide
        left = self.remaining()
        while left:  # sleep may wake early (signals); the padded end is what counts
            time.sleep(min(left, POLL))
            # a cancel (or a wire client's statement_timeout) during the padding ends the
            # statement as one during the work does: otherwise a cancel at t answered "cancelled"
            # when the work was still running and the release when it was done, telling whether
            # the work took less than t — the time the padding hides (red team h73attack-5)
            check_current()
            left = self.remaining()
