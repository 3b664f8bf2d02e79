"""The status line the shell shows on stderr while a statement runs long: a spinner, the
phase under way with its count, and the elapsed time (``| solving LPs: 12 · 4.2 s``).

The engine reports phases through :mod:`provsql_dp._progress` (:meth:`Progress.update` is the
listener). For an analyst (``public_only``) only the reports known before any protected row is
read are shown — the charge — with the elapsed time: which phase a release is in, and how many
rows or LPs it has got through, are functions of the private data.

Nothing is drawn unless the stream is a terminal and the work outlasts the delay:

>>> import io
>>> with Progress(io.StringIO(), delay=0) as p:
...     p.update("solving LPs", 3, None, False)
>>> p.shown, p.status()
(False, 'solving LPs: 3')
>>> q = Progress(io.StringIO(), public_only=True)
>>> q.update("ε charged; releasing", None, None, True); q.update("solving LPs", 3, None, False)
>>> q.status()
'ε charged; releasing'
"""

from __future__ import annotations

import threading
import time

from ..._progress import CHARGED

__all__ = ["Progress", "PROGRESS_DELAY"]

PROGRESS_DELAY = 1.0  # seconds before the spinner shows


class Progress:
    """An elapsed-time spinner on ``stream``, shown only if the work outlasts ``delay`` seconds
    and ``stream`` is a terminal. Use as a context manager around the work."""

    FRAMES = "|/-\\"

    def __init__(self, stream, delay: float = PROGRESS_DELAY, interval: float = 0.1, *,
                 public_only: bool = False):
        self.stream = stream
        self.delay = delay
        self.interval = interval
        self.public_only = public_only
        self.shown = False
        self.charged = False  # a release was charged during the work (its ε stays spent)
        self._state: tuple[str, int | None, int | None] = ("running", None, None)
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def update(self, phase: str, done: int | None, total: int | None, public: bool) -> None:
        """The :mod:`provsql_dp._progress` listener: remember the latest report worth showing."""
        if phase == CHARGED:
            self.charged = True
        if public or not self.public_only:
            self._state = (phase, done, total)

    def status(self) -> str:
        """The phase and count as drawn (without the spinner and the time)."""
        phase, done, total = self._state
        if done is None:
            return phase
        count = f"{done:,}" + (f"/{total:,}" if total is not None else "")
        return f"{phase}: {count}" if not phase.endswith("group") else f"{phase} {count}"

    def __enter__(self) -> Progress:
        isatty = getattr(self.stream, "isatty", None)
        if isatty is not None and isatty():
            self._start = time.monotonic()
            self._thread = threading.Thread(target=self._spin, name="provsql-dp-progress", daemon=True)
            self._thread.start()
        return self

    def _spin(self) -> None:
        if self._done.wait(self.delay):
            return
        i = 0
        while not self._done.is_set():
            elapsed = time.monotonic() - self._start
            try:
                self.stream.write(f"\r\x1b[K{self.FRAMES[i % len(self.FRAMES)]} {self.status()}… "
                                  f"{elapsed:.1f} s")
                self.stream.flush()
            except (OSError, ValueError):
                return
            self.shown = True
            i += 1
            self._done.wait(self.interval)

    def __exit__(self, *exc) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
            if self.shown:
                try:
                    self.stream.write("\r\x1b[K")
                    self.stream.flush()
                except (OSError, ValueError):
                    pass
