"""The data-independent fallback of the routes that read their rows in one step after the charge.

A release past its time budget — ``release_time_limit``, ``release_seconds`` — or out of memory
while DuckDB reads its rows (:class:`~provsql_dp._deadline.DeadlineExceeded`, of which
:class:`~provsql_dp._deadline.ResourceExhausted` is a kind) must answer like every release:
with a data-independent fallback of the same shape, its ε charged, the incident recorded for
the curator (README, "No side channels"). The quantile (grid and Laplace), smooth-median,
variance, ``COUNT(DISTINCT …)`` over declared keys, partition-selection, Blowfish and
δ-strategy (histograms, ``COUNT RANGES``, ``COUNT CUMULATIVE``) and ``KMEANS`` routes each read
their rows in one DuckDB step after their charge; :func:`read_or_nothing` runs that step and
returns ``None`` past the budget, and the route then releases **from no rows**: exactly what it
releases on an empty table (a midpoint or zero with the noise it would have, a grid point drawn
from equal scores, no group selected), so the outcome's distribution is that of a database
which exists and involves no row of this one, and its shape — columns, rows, mechanism, ε — is
the route's own.

A value released from no rows is honest only about its noise, not about the truth; so each
release of the fallback is wrapped in :class:`FromNoData`, whose interval is the **whole range
the statistic can take** (the declared bounds of a quantile, ``[0, h²]`` of a variance,
``[0, #keys]`` of a distinct count, ``[0, ∞)`` of a count): it covers the truth always, so as
often as it says. That an interval is the whole range tells an analyst the release fell back —
which the rule allows: whether the fallback answers depends on the data's size (and the memory
its reads need), never on a value.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE p(id INT PRIMARY KEY, x DOUBLE); PROTECT TABLE p")
>>> _ = con.execute("INSERT INTO p SELECT i, i % 10 FROM range(1000) t(i)")
>>> _ = con.execute("SET PRIVACY BUDGET 5; SET BOUNDS ON p (x) BETWEEN 0 AND 10")
>>> con.release_seconds = 1e-9            # over before the read starts
>>> cur = con.execute("SELECT VAR_POP(x) FROM p WITH EPSILON 1")
>>> len(cur.fetchall()), cur.privacy.epsilon, cur.privacy.intervals(0.95)  # [0, (10/2)²]
(1, 1.0, [((0.0, 25.0),)])
>>> [w for (w,) in con._duck.execute("SELECT what FROM _provsql_dp.incidents").fetchall()][0][:37]
'the release passed its time budget of'
"""

from __future__ import annotations

from typing import Callable, TypeVar

from .._deadline import DeadlineExceeded

__all__ = ["FromNoData", "read_or_nothing", "from_no_data", "total_range"]

T = TypeVar("T")


def read_or_nothing(con, read: Callable[[], T], fallback: str) -> T | None:
    """``read()`` — the DuckDB step of a release after its charge — or ``None`` when it passed
    the release's time budget or ran out of memory: the incident (what stopped it, and
    ``fallback``, the release made instead) is recorded for the curator, never shown to an
    analyst. Any other error propagates (the statement's failure, the fixed message)."""
    try:
        return read()
    except DeadlineExceeded as e:  # ResourceExhausted too: memory ends like time
        con._catalog.record_incident(f"{e}; released the data-independent fallback ({fallback})")
        return None


class FromNoData:
    """A release made from no rows (the fallback): its value, noise and public parameters are
    ``release``'s (delegated), its interval ``(low, high)`` the whole range of the statistic
    (``None``: unbounded on that side), whatever ``p``."""

    __slots__ = ("release", "low", "high")

    def __init__(self, release, low: float | None, high: float | None):
        self.release, self.low, self.high = release, low, high

    def interval(self, p: float = 0.95) -> tuple[float | None, float | None]:
        """The whole range: covers the truth with probability 1 ≥ ``p``.

        >>> class R: value = 3.0
        >>> FromNoData(R(), 0.0, 10.0).interval(0.99), FromNoData(R(), 0, None).value
        ((0.0, 10.0), 3.0)
        """
        if not 0 < p < 1:
            raise ValueError(f"p must be a probability strictly between 0 and 1, got {p!r}")
        return (self.low, self.high)

    def noise_bound(self, p: float = 0.95) -> float:
        """The larger distance from the value to an end of :meth:`interval` (∞ if unbounded)."""
        lo, hi = self.interval(p)
        v = float(self.release.value)
        return max(float("inf") if lo is None else v - lo, float("inf") if hi is None else hi - v)

    def __getattr__(self, name):  # value, epsilon, mechanism, covers, params… of the release
        if name in FromNoData.__slots__:
            raise AttributeError(name)
        return getattr(self.release, name)

    def __repr__(self) -> str:
        return f"FromNoData({self.release!r}, {self.low!r}, {self.high!r})"


def from_no_data(releases, low: float | None, high: float | None, late: bool) -> tuple:
    """``releases`` as a tuple, each wrapped in :class:`FromNoData` when ``late`` (the read
    gave nothing), unchanged otherwise."""
    return tuple(FromNoData(r, low, high) for r in releases) if late else tuple(releases)


def total_range(kind: str, bounds=None) -> tuple[float | None, float | None]:
    """The whole range of a COUNT (``kind == "count"``) or of a SUM of values within ``bounds``
    (``None``: of either sign) over a number of rows not known: ``[0, ∞)`` for a count, and for
    a sum ``[0, ∞)``, ``(−∞, 0]`` or unbounded by the bounds' signs.

    >>> total_range("count"), total_range("sum", (0, 10)), total_range("sum", (-5, 10))
    ((0, None), (0.0, None), (None, None))
    """
    if kind == "count":
        return (0, None)
    if bounds is None:
        return (None, None)
    lo, hi = float(bounds[0]), float(bounds[1])
    return (0.0 if lo >= 0 else None, 0.0 if hi <= 0 else None)
