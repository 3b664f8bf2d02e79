"""The explorer's sign-in attempts, limited per client and per account name, with backoff.

Each ``POST /login`` runs PBKDF2 (:data:`.accounts.ITERATIONS` rounds, ~20-40 ms of a core):
unlimited, a client could guess passwords as fast as the server hashes, and tie up its cores
doing so. :class:`LoginLimits` counts the failed attempts of each client address and of each
account name; after :attr:`free` failures of either, the next attempt must wait ``base ·
2^(failures − free)`` seconds (at most :attr:`cap`) after the last failure, and one made earlier
is answered 429 with ``Retry-After`` before any hashing. A client has :attr:`per_client`
attempts running at a time (the explorer: one; the wire server: a connection pool's few), and
the server :attr:`max_running` in all (more: 429 at once). A success clears both
counts; a count no failure renewed for :attr:`forget` seconds is dropped, and at most
:attr:`max_keys` are kept (the oldest dropped first), so made-up names cannot fill the memory.
The clock is injected (tests move it by hand: nothing is timed). Behind a proxy every client
has the proxy's address: the per-name limit still holds.

>>> t = [0.0]
>>> limits = LoginLimits(clock=lambda: t[0], free=2, base=1.0, cap=8.0)
>>> for _ in range(2):
...     assert limits.begin("10.0.0.1", "ann") is None
...     limits.end("10.0.0.1", "ann", ok=False)
>>> limits.begin("10.0.0.1", "bob"), limits.begin("10.0.0.2", "ann")  # the client; the name
(1.0, 1.0)
>>> t[0] = 1.0
>>> limits.begin("10.0.0.2", "ann") is None
True
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

__all__ = ["LoginLimits"]


@dataclass
class _Count:
    failures: int = 0
    last: float = 0.0


class LoginLimits:
    """Failed sign-in counts per client and per account name (see the module's docstring)."""

    def __init__(self, *, clock=time.monotonic, free: int = 5, base: float = 1.0,
                 cap: float = 60.0, forget: float = 900.0, max_keys: int = 10_000,
                 max_running: int = 4, per_client: int = 1):
        self.clock, self.free, self.base, self.cap = clock, free, base, cap
        self.forget, self.max_keys, self.max_running = forget, max_keys, max_running
        self.per_client = per_client
        self._counts: dict[tuple[str, str], _Count] = {}
        self._running: dict[str, int] = {}  # client -> attempts under way
        self._lock = threading.Lock()

    def _wait(self, key: tuple[str, str], now: float) -> float:
        c = self._counts.get(key)
        if c is None or c.failures < self.free:
            return 0.0
        if now - c.last >= self.forget:
            del self._counts[key]
            return 0.0
        delay = min(self.cap, self.base * 2 ** min(c.failures - self.free, 60))
        return max(0.0, c.last + delay - now)

    def begin(self, client: str, user: str) -> float | None:
        """None: the attempt may run (end it with :meth:`end`); else the seconds to wait."""
        with self._lock:
            now = self.clock()
            wait = max(self._wait(("client", client), now), self._wait(("user", user), now))
            if wait > 0:
                return wait
            if (self._running.get(client, 0) >= self.per_client
                    or sum(self._running.values()) >= self.max_running):
                return 1.0  # a few attempts at a time per client, a few more in all
            self._running[client] = self._running.get(client, 0) + 1
            return None

    def end(self, client: str, user: str, ok: bool) -> None:
        """The attempt :meth:`begin` let run is over: ``ok`` when the password was right."""
        with self._lock:
            left = self._running.pop(client, 0) - 1
            if left > 0:
                self._running[client] = left
            keys = (("client", client), ("user", user))
            if ok:
                for k in keys:
                    self._counts.pop(k, None)
                return
            now = self.clock()
            for k in keys:
                c = self._counts.pop(k, None) or _Count()  # re-inserted: the newest last
                c.failures, c.last = c.failures + 1, now
                self._counts[k] = c
            if len(self._counts) > self.max_keys:
                self._prune(now)

    def _prune(self, now: float) -> None:
        for k in [k for k, c in self._counts.items() if now - c.last >= self.forget]:
            del self._counts[k]
        while len(self._counts) > self.max_keys:  # the oldest renewed first out (dict order)
            del self._counts[next(iter(self._counts))]
