"""What the Laplace and the Gaussian releases share: a value released on the public grid of a
plan made from public parameters only.

>>> from dataclasses import dataclass
>>> from provsql_dp.mechanisms.noise.safe_noise import plan_laplace
>>> @dataclass(frozen=True)
... class Unit(GridRelease):
...     value: float
...     integer: bool = True
...     def _plan(self):
...         return plan_laplace(1, 1.0, integer=self.integer)
>>> Unit(3).grid, Unit(3).covers
(1.0, 'the true count')
"""

from __future__ import annotations

from functools import cached_property

__all__ = ["GridRelease"]


class GridRelease:
    """Mixin of a frozen release dataclass with an ``integer`` field and a ``_plan()`` — its
    mechanism's public plan (grid, exact noise) from the sensitivity, the budget, ``integer``
    and ``changed``."""

    @cached_property
    def plan(self):
        """The public plan (grid, exact noise) the value was released with."""
        return self._plan()

    @property
    def grid(self) -> float:
        """The power-of-two grid ``γ`` every released value lies on."""
        return self.plan.grid

    @property
    def covers(self) -> str:
        """What ``value ± noise_bound(p)`` covers (:func:`provsql_dp.privacy.intervals.covers`)."""
        return ("the true count" if self.integer
                else "the true SUM of the values clamped to the declared bounds")
