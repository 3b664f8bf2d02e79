"""Progress of a long graph count on the terminal: the phase, its counts, and the LPs solved.

:func:`provsql_dp.graph.count` moves through five phases — load the graph, count the
occurrences, build the K-relation, charge the budget, release (the recursive mechanism's linear
programs). :class:`Progress` shows them as a ``tqdm`` bar on standard error with the counts known
so far (occurrences, tuples, participants; during the release the LPs solved and their seconds,
refreshed twice a second). It is silent when standard error is not a terminal (``progress=None``,
the default), always on with ``progress=True``, off with ``False``.

What it shows comes from the caller's own graph (the caller of ``count`` holds the data): the
counts and the LP work are not released quantities and must not be shown to an analyst.

>>> p = Progress("triangle", enabled=False)
>>> p.phase("counting occurrences", occurrences=45)
>>> p.close()
>>> p.phases_seen
['counting occurrences']
"""

from __future__ import annotations

import threading

__all__ = ["Progress", "PHASES"]

PHASES = ("loading the graph", "counting occurrences", "building the K-relation",
          "charging the budget", "releasing (recursive mechanism LPs)")


class Progress:
    """A phase bar for one count (see the module docstring); use as a context manager."""

    def __init__(self, what: str, enabled: bool | None = None):
        from tqdm import tqdm

        self.what = what
        self.phases_seen: list[str] = []
        self._counts: dict = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # tqdm: disable=None turns the bar off when the output is not a terminal
        disable = None if enabled is None else not enabled
        self.bar = tqdm(total=len(PHASES), desc=what, unit="phase", disable=disable, leave=False, mininterval=0,
                        bar_format="{desc} [{n_fmt}/{total_fmt} phases, {elapsed}]{postfix}")

    def phase(self, name: str, **counts) -> None:
        """Enter phase ``name``; ``counts`` (occurrences=…, tuples=…) are shown beside it."""
        self._counts.update(counts)
        self.bar.set_description(f"{self.what}: {name}", refresh=False)
        self.bar.set_postfix(self._shown(), refresh=False)
        if self.phases_seen:
            self.bar.update(1)  # redraws
        else:
            self.bar.refresh()
        self.phases_seen.append(name)

    def watch(self, stats) -> None:
        """During the release: show ``stats.n_lps`` and ``stats.lp_seconds`` as they grow."""
        if self.bar.disable:
            return

        def loop():
            while not self._stop.wait(0.5):
                self._counts.update(lps=stats.n_lps, lp_seconds=round(stats.lp_seconds, 1))
                self._show()

        self._thread = threading.Thread(target=loop, name="provsql_dp-progress", daemon=True)
        self._thread.start()

    def _shown(self) -> dict:
        """The counts as text (tqdm would write 30000 as 3e+4)."""
        return {k: f"{v:,}" if isinstance(v, int) else str(v) for k, v in self._counts.items()}

    def _show(self) -> None:
        self.bar.set_postfix(self._shown(), refresh=True)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        self.bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
