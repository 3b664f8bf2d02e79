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

    def noise_bound(self, p: float = 0.95) -> list[float]:
        return [r.noise_bound(p) for r in self.releases]
