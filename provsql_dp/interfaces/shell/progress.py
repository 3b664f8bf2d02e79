"""The elapsed-time spinner the shell shows on stderr while a statement runs long.

Nothing is drawn unless the stream is a terminal and the work outlasts the delay:

>>> import io
>>> with Progress(io.StringIO(), delay=0) as p:
...     pass
>>> p.shown
False
"""

from __future__ import annotations

import threading
import time

__all__ = ["Progress", "PROGRESS_DELAY"]

PROGRESS_DELAY = 1.0  # seconds before the spinner shows


class Progress:
    """An elapsed-time spinner on ``stream``, shown only if the work outlasts ``delay`` seconds
    and ``stream`` is a terminal. Use as a context manager around the work."""

    FRAMES = "|/-\\"

    def __init__(self, stream, delay: float = PROGRESS_DELAY, interval: float = 0.1):
        self.stream = stream
        self.delay = delay
        self.interval = interval
        self.shown = False
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

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
                self.stream.write(f"\r{self.FRAMES[i % len(self.FRAMES)]} running… {elapsed:.1f} s")
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
