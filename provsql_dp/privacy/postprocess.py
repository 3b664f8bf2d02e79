"""Post-processing of released COUNTs: whole numbers, never negative — unless ``raw`` is asked.

A COUNT is a nonnegative integer, so its release is shown as ``max(0, round(X̂))``. This is
post-processing of a released value: it costs no privacy. It adds a **bias near zero**: for a true
count ``c`` the expected shown value is ``E[max(0, round(c + noise))] ≥ c`` once noise can push
the release below zero (for ``c = 0`` it is about half the mean absolute noise above 0); far
from zero (``c`` a few noise scales above 0) the bias vanishes. A statistician who wants the
unbiased raw release asks for it: ``OPTIONS (raw = true)`` on one statement,
``provsql_dp.connect(..., raw=True)`` or ``cursor.raw = True``.

Where the group-wise answers and their total are both released — a Blowfish histogram, whose
bins sum to the total (exact under a bounded policy) — the rounded bins keep that total
(:func:`consistent_counts`). The Laplace and recursive routes release no total beside their
groups, so their groups are rounded one by one.

The interval is transformed the same way, which keeps its coverage: the true count is a
nonnegative integer, so ``c ∈ [lo, hi]`` ⟺ ``c ∈ [max(0, ⌈lo⌉), ⌊hi⌋]``.

>>> from provsql_dp.mechanisms.global_sensitivity import laplace
>>> import numpy as np
>>> rel = laplace.release(0, sensitivity=1, epsilon=0.1, integer=True, rng=np.random.default_rng(2))
>>> c = CountRelease.of(rel)
>>> c.value >= 0, c.raw == rel.value, c.interval(0.95)[0]
(True, True, 0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..errors import ProgrammingError
from ..sql.expressions import option_text
from .intervals import covers, interval_of

__all__ = ["CountRelease", "count_value", "post_process", "raw_option"]


def count_value(x):
    """``max(0, round(x))`` as an int (None stays None)."""
    if x is None:
        return None
    return max(0, int(round(float(x))))


@dataclass(frozen=True)
class CountRelease:
    """A released COUNT after post-processing: :attr:`value` is ``max(0, round(raw))``."""

    release: object
    value: int

    @classmethod
    def of(cls, release) -> "CountRelease":
        return cls(release, count_value(release.value))

    @property
    def raw(self):
        """The release as the mechanism drew it."""
        return self.release.value

    @property
    def mechanism(self) -> str:
        return self.release.mechanism

    @property
    def epsilon(self):
        return self.release.epsilon

    @property
    def covers(self) -> str:
        return covers(self.release)

    def noise_bound(self, p: float = 0.95):
        """The noise bound of the raw release (see the mechanism's ``noise_bound``)."""
        return self.release.noise_bound(p)

    def interval(self, p: float = 0.95):
        """The raw release's interval, endpoints rounded inwards to whole numbers, at least 0,
        then widened (if need be) to hold the shown :attr:`value` — a superset, so the coverage
        is kept; it matters where the shown value is not the rounded raw one (the bins of a
        histogram made to keep their total, :func:`consistent_counts`)."""
        lo, hi = interval_of(self.release, p)
        if lo is None and hi is None:
            return (None, None)  # no interval (see covers)
        lo2 = 0 if lo is None else max(0, math.ceil(lo))
        hi2 = None if hi is None else max(lo2, math.floor(hi))
        if self.value is not None:
            lo2 = min(lo2, self.value)
            hi2 = None if hi2 is None else max(hi2, self.value)
        return (lo2, hi2)

    def __getattr__(self, name):  # delta_hat, params, plan, parts… of the underlying release
        if name == "release":
            raise AttributeError(name)
        return getattr(self.release, name)


def raw_option(value, default: bool) -> bool:
    """The ``raw`` of ``OPTIONS (raw = true|false)`` (``None``: ``default``), validated.

    >>> raw_option(True, False), raw_option(None, True)
    (True, True)
    """
    if value is None:
        return bool(default)
    if isinstance(value, bool):
        return value
    raise ProgrammingError(f"option raw takes true or false (OPTIONS (raw = true) keeps COUNTs as "
                           f"the mechanism released them), got {option_text(value)}")


def post_process(plan, desc: list, rows: list, info, raw: bool):
    """``(desc, rows, info)`` with every COUNT column post-processed (``raw``: unchanged).

    ``plan`` is the query's :class:`~provsql_dp.sql.plan.Aggregate` or ``Aggregates``: which
    value columns are COUNTs is read from it (never from the data); their type becomes BIGINT."""
    if raw:
        return desc, rows, info
    kinds = _column_kinds(plan, info)
    if not any(k == "count" for k in kinds):
        return desc, rows, info
    k = len(kinds)
    if _histogram_with_total(plan, info):
        return _consistent_histogram(desc, rows, info)
    new_rows, new_rels = [], []
    for row, rel in zip(rows, info.releases):
        rels = tuple(rel) if info.columns else (rel,)
        rels = tuple(CountRelease.of(r) if kind == "count" else r for r, kind in zip(rels, kinds))
        vals = tuple(r.value if kind == "count" else v
                     for r, v, kind in zip(rels, row[-k:], kinds))
        new_rows.append(tuple(row[:-k]) + vals)
        new_rels.append(rels if info.columns else rels[0])
    head = list(desc[:-k])
    tail = [(n, "BIGINT" if kind == "count" else t) for (n, t), kind in zip(desc[-k:], kinds)]
    return head + tail, new_rows, replace(info, releases=tuple(new_rels))


def _histogram_with_total(plan, info) -> bool:
    """A Blowfish histogram (GROUP BY over a partition of the domain): its bins sum to a total
    the release states too (exactly, under a bounded policy), so the rounded bins keep it."""
    return (info.mechanism == "blowfish" and not info.columns and len(info.releases) > 1
            and bool(getattr(plan, "group_by", ())))


def consistent_counts(values) -> list[int]:
    """Nonnegative integers summing to ``T = max(0, round(Σ values))``, closest to ``values``:
    the Euclidean projection onto ``{x ≥ 0, Σx = T}`` (``x = max(0, v − τ)``), floored, the
    remaining units to the largest fractional parts (ties to the first). Post-processing only.

    >>> consistent_counts([2.6, 3.7, -1.2, 4.9])
    [2, 3, 0, 5]
    >>> consistent_counts([-1.0, 0.4]), sum(consistent_counts([1.5, 1.5, 1.5, 1.5]))
    ([0, 0], 6)
    """
    v = np.asarray(values, dtype=np.float64)
    total = max(0, int(round(float(v.sum()))))
    if total == 0 or v.size == 0:
        return [0] * int(v.size)
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - total
    ks = np.arange(1, v.size + 1)
    rho = int(np.nonzero(u - css / ks > 0)[0][-1])
    x = np.maximum(v - css[rho] / (rho + 1), 0.0)
    base = np.floor(x + 1e-9)
    left = int(total - base.sum())
    if left > 0:
        order = np.argsort(-(x - base), kind="stable")[:left]
        base[order] += 1
    elif left < 0:
        order = np.argsort(x - base, kind="stable")
        order = order[base[order] > 0][:-left]
        base[order] -= 1
    return base.astype(np.int64).tolist()


def _consistent_histogram(desc, rows, info):
    values = consistent_counts([r.value for r in info.releases])
    rels = tuple(CountRelease(r, v) for r, v in zip(info.releases, values))
    new_rows = [tuple(row[:-1]) + (v,) for row, v in zip(rows, values)]
    return (list(desc[:-1]) + [(desc[-1][0], "BIGINT")], new_rows,
            replace(info, releases=rels))


def _column_kinds(plan, info) -> list[str]:
    parts = getattr(plan, "parts", None)
    if parts is None:
        kind = getattr(plan, "kind", None)
        if kind is None and info.mechanism == "blowfish":
            kind = "count"
        return [kind or ""]
    return [c.kind if c.kind == "avg" else parts[c.parts[0]].kind for c in plan.columns]
