"""Fang & Chang's own range strategies on the policy route: ``OPTIONS (strategy = 'cumulative' |
'sorted_points' | 'shifted_histograms')`` on a count under a ``DELTA`` policy.

By default a range count under a δ policy is answered by the Blowfish strategies over the
policy's bins (:mod:`provsql_dp.policies.delta.sql`). These options release instead, from the
column values themselves (read once, after the ledger is charged):

* ``'cumulative'`` (one column) — C_{n,δ} (Fang & Chang §5.4.1,
  :func:`provsql_dp.policies.delta.cumulative`) on the policy's declared bins: Laplace on the
  cumulative counts with sensitivity ⌈δ/w⌉. The ranges fall on bin edges, so each answer is a
  difference of two noisy cumulative counts: unbiased, with a data-independent variance — its
  interval covers the true count;
* ``'sorted_points'`` (one column) — the sorted values with Laplace(δ/ε) noise each, made
  consistent (Fang & Chang §5.5.1, :func:`provsql_dp.policies.delta.sorted_points`); a range count
  is the number of published points inside it. Its error depends on how many points lie near
  the range's ends, so no interval is stated (``covers``: nothing);
* ``'shifted_histograms'`` (two columns) — the series of shifted equi-width histograms
  (Fang & Chang §5.3, :func:`provsql_dp.policies.delta.shifted_histograms`) at the default bin
  width of δ, ε and the box (data independent), rectangles answered by eq. 8. Its variance is
  the noise's; the approximation of partly covered bins is a data-dependent bias, so the
  interval covers the noise only.

They need a ``BOUNDED`` δ policy (Fang & Chang's setting: the table size is public) without KNOWN
COUNTS (constraints change the neighbours, He et al. §8), the whole workload on the policy's
columns without a ``WHERE`` that filters rows. Values outside the
domain are clamped into it (as the bins count them); NULLs are not counted. Clamping is a
contraction, so two δ-neighbours stay δ-neighbours.

>>> import numpy as np, provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE pts(id INT PRIMARY KEY, x DOUBLE)")
>>> _ = con.execute("INSERT INTO pts SELECT i, (i % 100) / 100 FROM range(1000) t(i)")
>>> _ = con.execute("PROTECT TABLE pts")
>>> _ = con.execute("SET PRIVACY BUDGET 10")
>>> _ = con.execute("CREATE POLICY near ON pts (x) AS DELTA 0.01 DOMAIN [0, 1) WIDTH 0.1 BOUNDED")
>>> cur = con.execute("COUNT RANGES (x >= 0 AND x < 0.5) FROM pts WITH EPSILON 1 "
...                   "OPTIONS (strategy = 'cumulative')")
>>> abs(cur.fetchone()[1] - 500) < 30, cur.privacy.strategy[:7]
(True, 'C_{n,δ}')
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ProgrammingError, UnsupportedQueryError
from ..policies.blowfish import accuracy as _acc
from ..policies.blowfish.workload import Ranges, Rects
from ..policies.delta import cumulative, shifted_histograms, sorted_points
from ..policies.delta.histograms import default_bin_width
from ..policies.delta.sql import delta_policy
from ..provenance.backends import engine_of
from ..provenance.capture import q
from .no_data import from_no_data, read_or_nothing
from .release_info import PrivacyInfo

__all__ = ["DELTA_STRATEGIES", "DeltaRangeRelease", "answer"]

#: the strategies of Fang & Chang selectable with OPTIONS (strategy = …) under a DELTA policy
DELTA_STRATEGIES = ("cumulative", "sorted_points", "shifted_histograms")


@dataclass(frozen=True)
class DeltaRangeRelease:
    """One range count released by a Fang & Chang strategy (see the module docstring)."""

    value: float
    variance: float
    epsilon: float
    covers: str
    mechanism: str = "blowfish"

    def noise_bound(self, p: float = 0.95) -> float:
        """A bound on the noise at confidence ``p`` (Chebyshev/Chernoff on its variance); for
        sorted points none exists (``inf``)."""
        if not 0 < p < 1:
            raise ValueError(f"p must be a probability strictly between 0 and 1, got {p!r}")
        if not np.isfinite(self.variance):
            return float("inf")
        return float(_acc.alpha_bound(self.variance, 1 - p))

    def interval(self, p: float = 0.95):
        if not np.isfinite(self.variance):
            return (None, None)
        b = self.noise_bound(p)
        return (self.value - b, self.value + b)


def _bin_boxes(prep):
    """Per query and axis, the inclusive range of declared bins (projected cells mapped back)."""
    w = prep.workload
    if isinstance(w, Ranges):
        axes = [(w.lo, w.hi)]
    elif isinstance(w, Rects):
        axes = [(w.r0, w.r1), (w.c0, w.c1)]
    else:  # pragma: no cover - the route builds Ranges or Rects
        raise UnsupportedQueryError("this workload has no δ strategy")
    out = []
    for (lo, hi), b in zip(axes, prep.bins_per_axis):
        if b is not None:  # cells of the projection: cell i holds bins b[i] … b[i+1] − 1
            b = np.asarray(b, dtype=np.int64)
            lo, hi = b[lo], b[hi + 1] - 1
        out.append((np.asarray(lo), np.asarray(hi)))
    return out


def _check(prep, strategy):
    tp = prep.table
    if tp.graph.get("kind") != "DELTA":
        raise ProgrammingError(f"OPTIONS (strategy = '{strategy}') is Fang & Chang's and needs a "
                               f"DELTA policy; policy {tp.name} is {tp.graph_sql()}")
    if not tp.bounded or tp.sources is not None:
        raise ProgrammingError(f"OPTIONS (strategy = '{strategy}') needs a BOUNDED δ policy "
                               f"(the table size public, Fang & Chang's setting); policy {tp.name} "
                               "has SOURCES")
    if tp.known is not None:
        raise ProgrammingError(f"policy {tp.name} declares KNOWN COUNTS {tp.known_sql}: its "
                               "neighbours must keep those counts, which Fang & Chang's "
                               "sensitivities do not account for; drop OPTIONS (strategy)")
    if prep.residual:
        raise UnsupportedQueryError(f"OPTIONS (strategy = '{strategy}') answers ranges of the "
                                    "policy's columns only: drop the WHERE filter on other "
                                    "columns")
    dims = len(tp.columns)
    need = 2 if strategy == "shifted_histograms" else 1
    if dims != need:
        raise ProgrammingError(f"OPTIONS (strategy = '{strategy}') is for a δ policy on "
                               f"{'two columns' if need == 2 else 'one column'}; policy "
                               f"{tp.name} is on {dims}")


def answer(con, prep, strategy, epsilon, text):
    """Charge, read the values, release with ``strategy``: ``(description, rows, info)``."""
    _check(prep, strategy)
    tp = prep.table
    pol = delta_policy(tp.graph, tp.domains)
    eps = float(epsilon)
    boxes = _bin_boxes(prep)
    edges = []
    for dom, (lo, hi) in zip(tp.domains, boxes):
        low, w = float(dom.low), float(dom.width)
        edges.append((low + lo * w, low + (hi + 1) * w))  # [a, b) in the column's units
    if strategy == "shifted_histograms":
        default_bin_width(pol, eps)  # validates the public parameters before the charge
    # charged before the protected column is read: the ε charged never depends on the data
    charge = con.ledger.charge(con.user, epsilon, text, "blowfish")
    info = con.catalog.find_table([tp.schema, tp.table])
    table_sql = ".".join(q(p) for p in (info.catalog, info.schema, info.name) if p)
    cols = ", ".join(f"CAST({q(c)} AS DOUBLE) AS __c{i}" for i, c in enumerate(tp.columns))
    nonnull = " AND ".join(f"{q(c)} IS NOT NULL" for c in tp.columns)
    # past the budget or out of memory: no points, every range count 0 with its noise
    rows = read_or_nothing(con, lambda: engine_of(con).fetchnumpy(
        f"SELECT {cols} FROM {table_sql} WHERE {nonnull}")[0], "no points, counts 0 plus noise")
    pts = np.stack([np.asarray([] if rows is None else rows[f"__c{i}"], dtype=float)
                    for i in range(len(tp.columns))], axis=1)
    hi_box = np.nextafter(np.asarray(pol.hi, dtype=float), -np.inf)
    pts = np.clip(pts, np.asarray(pol.lo, dtype=float), hi_box)
    rng = getattr(con, "_rng", None)
    if strategy == "cumulative":
        rel = cumulative(pts[:, 0], pol, eps, cells=tp.domains[0].k, rng=rng)
        a, b = edges[0]
        values, variances = rel.range_count(a, b), rel.variance(a, b)
        covers, detail, mse = "the true count", rel.detail, float(np.mean(variances))
    elif strategy == "sorted_points":
        rel = sorted_points(pts[:, 0], pol, eps, rng=rng)
        a, b = edges[0]
        values = rel.range_count(a, b)
        variances = np.full(values.size, np.inf)
        covers = ("nothing: a count of noisy sorted points errs by how many points lie near the "
                  "range's ends, which no released quantity bounds")
        detail = (f"sorted points: the {pts.shape[0]} sorted values with Laplace noise of scale "
                  f"{rel.scale:.6g} (δ/ε) each, made consistent (Fang & Chang §5.5.1)")
        mse = float("nan")
    else:
        rel = shifted_histograms(pts, pol, eps, rng=rng)
        (x0, x1), (y0, y1) = edges
        values, variances = rel.range_count(x0, x1, y0, y1), rel.variance(x0, x1, y0, y1)
        covers = ("noise only: the approximation of partly covered bins is a data-dependent "
                  "bias that no released quantity bounds")
        detail, mse = rel.detail, float(np.mean(variances))
    releases = from_no_data((DeltaRangeRelease(float(v), float(s), eps, covers)
                             for v, s in zip(values, variances)), 0, None, rows is None)
    out = [tuple(lab) + (float(v),) for lab, v in zip(prep.labels, values)]
    pinfo = PrivacyInfo(mechanism="blowfish", epsilon=charge.epsilon, remaining=charge.remaining,
                        releases=releases, policy=prep.policy_name, strategy=detail,
                        expected_mse=mse, mse_is_upper_bound=strategy != "sorted_points")
    return prep.desc, out, pinfo
