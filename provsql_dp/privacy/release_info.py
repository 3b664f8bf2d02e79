"""What a private release tells the analyst: :class:`PrivacyInfo`, on ``Cursor.privacy``.

``epsilon`` and ``remaining`` read as plain floats; the ledger's exact values are
``epsilon_exact`` and ``remaining_exact`` (:class:`~fractions.Fraction`).

>>> from fractions import Fraction
>>> info = PrivacyInfo(mechanism="recursive", epsilon=Fraction(1, 5), remaining=Fraction(14, 5))
>>> info.remaining, info.remaining_exact, info.epsilon
(2.8, Fraction(14, 5), 0.2)
>>> info.noise_bound(), info.intervals()
([], [])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from .intervals import covers, interval_of

__all__ = ["PrivacyInfo"]


@dataclass(frozen=True)
class PrivacyInfo:
    """Privacy metadata of the last private release, on :attr:`Cursor.privacy`.

    Everything here is safe to show to an analyst: released values, the ε charged and the
    mechanism's public parameters — never the true answer or data-dependent internals.

    ``epsilon`` (charged by this statement) and ``remaining`` (left of the user's budget) are
    floats, for printing and arithmetic; ``epsilon_exact`` and ``remaining_exact`` are the
    ledger's exact :class:`~fractions.Fraction` values (the constructor accepts either).
    """

    mechanism: str
    epsilon: float
    remaining: float
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
    #: ``EXPLAIN PRIVACY … ESTIMATE ERROR`` (mechanism ``'error-estimate'``): per estimated
    #: aggregate, one :class:`~provsql_dp.mechanisms.recursive.error_estimate.NoiseEstimate` per group
    #: (released values: ``alpha(p)``, ``rmse()``, ``delta_interval(p)``, …)
    estimates: tuple = ()
    #: the names of the released value columns of the result set (set by the cursor; the last
    #: ``len(value_names)`` columns of each row), used to name the interval columns
    value_names: tuple = ()
    #: the positions, among those value columns, of GROUP BY keys the select list puts after an
    #: aggregate (``SELECT count(*) AS n, dept``): public, not released, so without interval
    #: columns (their intervals are ``(None, None)``)
    public_columns: tuple = ()
    #: the route of each released aggregate (or of the policy workload, or the quantile), in the
    #: order of ``EXPLAIN PRIVACY``'s rows, whose last column names the same routes
    #: (:data:`provsql_dp.privacy.routing.ROUTES`)
    routes: tuple = ()
    #: the unit of ``epsilon`` and ``remaining``: the user's budget unit ("epsilon", or "rho" for
    #: a zCDP budget, "epsilon-delta" with ``delta`` charged; :mod:`.accounting`)
    unit: str = "epsilon"
    delta: float = 0.0
    #: the exact values behind ``epsilon`` and ``remaining`` (filled in from them when not given)
    epsilon_exact: Fraction | None = field(default=None, repr=False)
    remaining_exact: Fraction | None = field(default=None, repr=False)
    #: an unbounded SUM's bucket pass on an external engine: "native" (one JVM aggregate,
    #: :mod:`._spark_native`) or "sql" (the SQL pass: no jar in this installation); None elsewhere
    bucket_pass: str | None = None

    def __post_init__(self):
        for name in ("epsilon", "remaining"):
            exact = getattr(self, f"{name}_exact")
            if exact is None:
                value = getattr(self, name)
                exact = value if isinstance(value, Fraction) else Fraction(str(value))
            if type(exact) is not Fraction:  # (a copy by dataclasses.replace keeps its own)
                exact = Fraction(exact)
            object.__setattr__(self, f"{name}_exact", exact)
            object.__setattr__(self, name, float(exact))

    def _per_column(self) -> list[tuple]:
        """Per released row, a tuple of its releases (one per value column)."""
        return [tuple(r) if self.columns else (r,) for r in self.releases]

    def intervals(self, p: float = 0.95) -> list[tuple]:
        """Per released row, one ``(low, high)`` per value column (``None``: unbounded on that
        side), holding with probability ≥ ``p`` the statistic :meth:`covers` names — computed
        from released and public quantities only (:func:`provsql_dp.privacy.intervals.interval_of`:
        one-sided for the recursive mechanism and R2T, two-sided for Laplace and linear Blowfish
        strategies, none for a signed SUM)."""
        return [tuple(interval_of(r, p) for r in row) for row in self._per_column()]

    def covers(self) -> list[str]:
        """Per value column, what its interval covers (e.g. ``'the true count'``, ``'the true
        SUM of the values clamped to the declared bounds'``, ``'noise only: …'``), read from
        the first released row (every row of a column has the same mechanism)."""
        rows = self._per_column()
        if not rows:
            return []
        return [covers(r) for r in rows[0]]

    def interval_names(self) -> list[tuple[str, str]]:
        """``(<col>_low, <col>_high)`` for each released value column."""
        names = self.value_names or self.columns or ("value",)
        return [(f"{n}_low", f"{n}_high") for n in names]

    def to_frame(self, p: float = 0.95):
        """The intervals at coverage ``p`` as a pandas DataFrame, one row per released row (in
        the result's order) and the columns ``<col>_low``, ``<col>_high`` per value column —
        for joining onto a frame read by ``pd.read_sql`` (``pd.concat([df, info.to_frame()],
        axis=1)``). Needs pandas (``pip install 'provsql_dp[pandas]'``)."""
        pd = _require("pandas")
        keep = [j for j in range(len(self.interval_names())) if j not in self.public_columns]
        names = [n for j in keep for n in self.interval_names()[j]]
        rows = [tuple(x for j in keep for x in row[j]) for row in self.intervals(p)]
        return pd.DataFrame.from_records(rows, columns=names)

    def noise_bound(self, p: float = 0.95) -> list:
        """Per released row, the bound ``b`` with ``Pr[|noise| ≤ b] ≥ p`` (a tuple per row, one
        per column, when several aggregates were released)."""
        if self.columns:
            return [tuple(r.noise_bound(p) for r in row) for row in self.releases]
        return [r.noise_bound(p) for r in self.releases]


def _require(module: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(f"{module} is needed here: pip install 'provsql_dp[pandas]' "
                          f"(installs pandas and pyarrow)") from e


@dataclass(frozen=True)
class AvgRelease:
    """An AVG released as the ratio of a released SUM and a released COUNT (post-processing),
    clamped to the SUM's bounds; a noisy COUNT below 1 counts as 1, so the value is always a
    number within the bounds (never NULL: whether an answer is NULL would follow the data, not
    only the noise, under a fixed generator). Its bound covers the true average whenever both
    parts are within their own bounds (union bound): the extreme ratios over that box."""

    value: float | None
    sum_release: object
    count_release: object
    lower: float
    upper: float
    mechanism: str = "avg"
    centre: float = 0.0  # the SUM part is Σ (x − centre) (:mod:`.centred_avg`); 0: the plain SUM

    @classmethod
    def of(cls, sum_part, count_part, bounds, centre=None) -> "AvgRelease":
        (s, s_rel), (c, c_rel) = sum_part, count_part
        lo, hi = bounds
        m = float(centre or 0.0)
        value = min(max(s / max(c, 1) + m, lo), hi)
        return cls(value, s_rel, c_rel, lo, hi, centre=m)

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
        ends = [min(max(a / b + self.centre, self.lower), self.upper)
                for a in (s - bs, s + bs) for b in (c - bc, c + bc)]
        return float(max(abs(e - self.value) for e in ends))

    def interval(self, p: float = 0.95) -> tuple[float, float]:
        """``value ± noise_bound(p)`` within ``[lower, upper]``: the mean of values clamped to
        the bounds lies there, so cutting the interval to them keeps what it covers."""
        b = self.noise_bound(p)
        return max(self.lower, self.value - b), min(self.upper, self.value + b)


def column_rows(plan, groups, col_bounds, part_at, centres=None) -> tuple[list[tuple], list[tuple]]:
    """The rows of an ``Aggregates`` plan (several aggregates, or an AVG) and their releases:
    per group its keys, then each column's value — its part's released value, or an AVG's
    :class:`AvgRelease` of its SUM and COUNT within ``col_bounds`` — and the tuple of the columns'
    releases. ``part_at(i, group index)`` is part ``i``'s ``(value, release)`` in that group;
    ``centres[j]`` the centre of column ``j``'s AVG SUM part, if centred (:mod:`.centred_avg`)."""
    centres = centres or [None] * len(plan.columns)
    rows, releases = [], []
    for gi, g in enumerate(groups):
        values, rels = [], []
        for col, bounds, m in zip(plan.columns, col_bounds, centres):
            parts = [part_at(i, gi) for i in col.parts]
            if col.kind == "avg":
                rel = AvgRelease.of(parts[0], parts[1], bounds, m)
                values.append(rel.value)
                rels.append(rel)
            else:
                values.append(parts[0][0])
                rels.append(parts[0][1])
        rows.append(tuple(g) + tuple(values))
        releases.append(tuple(rels))
    return rows, releases
