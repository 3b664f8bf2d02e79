"""What a private release tells the analyst: :class:`PrivacyInfo`, on ``Cursor.privacy``.

>>> from fractions import Fraction
>>> info = PrivacyInfo(mechanism="recursive", epsilon=Fraction(1, 2), remaining=Fraction(1, 2))
>>> info.noise_bound()
[]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

__all__ = ["PrivacyInfo"]


@dataclass(frozen=True)
class PrivacyInfo:
    """Privacy metadata of the last private release, on :attr:`Cursor.privacy`.

    Everything here is safe to show to an analyst: released values, the ε charged and the
    mechanism's public parameters — never the true answer or data-dependent internals.
    """

    mechanism: str
    epsilon: Fraction
    remaining: Fraction
    releases: tuple = field(default=())  # one Release per group (or one)
    # Blowfish policy route (issue 5): the policy, the strategy, the data-independent expected
    # squared error per query (an upper bound for the ordered strategy).
    policy: str | None = None
    strategy: str | None = None
    expected_mse: float | None = None
    mse_is_upper_bound: bool = False

    #: for several aggregates in one select list: their labels; each entry of ``releases`` is
    #: then a tuple of releases, one per column
    columns: tuple = ()

    def noise_bound(self, p: float = 0.95) -> list:
        """Per released row, the bound ``b`` with ``Pr[|noise| ≤ b] ≥ p`` (a tuple per row, one
        per column, when several aggregates were released)."""
        if self.columns:
            return [tuple(r.noise_bound(p) for r in row) for row in self.releases]
        return [r.noise_bound(p) for r in self.releases]


@dataclass(frozen=True)
class AvgRelease:
    """An AVG released as the ratio of a released SUM and a released COUNT (post-processing),
    clamped to the SUM's bounds. Its bound covers the true average whenever both parts are
    within their own bounds (union bound): the extreme ratios over that box."""

    value: float | None
    sum_release: object
    count_release: object
    lower: float
    upper: float
    mechanism: str = "avg"

    @classmethod
    def of(cls, sum_part, count_part, bounds) -> "AvgRelease":
        (s, s_rel), (c, c_rel) = sum_part, count_part
        lo, hi = bounds
        value = None if c < 1 else min(max(s / c, lo), hi)
        return cls(value, s_rel, c_rel, lo, hi)

    @property
    def epsilon(self) -> float:
        return self.sum_release.epsilon + self.count_release.epsilon

    def noise_bound(self, p: float = 0.95) -> float:
        if not 0 < p < 1:
            raise ValueError(f"p must be a probability strictly between 0 and 1, got {p!r}")
        q = (1 + p) / 2
        bs, bc = self.sum_release.noise_bound(q), self.count_release.noise_bound(q)
        s, c = self.sum_release.value, self.count_release.value
        if self.value is None or c - bc < 1:
            return float(self.upper - self.lower)
        ends = [min(max(a / b, self.lower), self.upper) for a in (s - bs, s + bs) for b in (c - bc, c + bc)]
        return float(max(abs(e - self.value) for e in ends))
