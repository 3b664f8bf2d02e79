"""Which Blowfish k-means policy (:mod:`.clustering`) a table's declarations give its columns.

``KMEANS CLUSTERS k OF (c₁, …) FROM t`` (:mod:`provsql_dp.privacy.kmeans_statement`) clusters
the points ``(c₁, …)`` of a row-per-participant table. Their public box and the neighbours to
protect come from the declarations alone, never from the data:

* a policy declared on exactly those columns (in any order), with ``[lo, hi)`` domains — the
  box is the domains' extent:

  - ``FULL`` — any change of a record: ``dp`` (``BOUNDED``: the record changes value;
    ``UNBOUNDED``: it is added or removed — only this one protects presence);
  - ``(FULL, FULL)`` (attribute composition of complete graphs) — a record changes in one
    attribute: ``attribute`` (BOUNDED);
  - ``DELTA δ METRIC L1`` — points within L1 distance δ are secrets: ``threshold`` θ = δ;
    ``DELTA δ`` (Euclidean) — within Euclidean distance δ, hence within L1 distance δ·√d:
    ``threshold`` θ = δ·√d, which protects every Euclidean pair (BOUNDED, no SOURCES);
  - ``PARTITION BY WIDTH w`` on one column, or ``(PARTITION BY WIDTH w₁, PARTITION BY WIDTH
    w₂)`` — changes inside a cell of the uniform grid: ``partition`` with ``(hi − lo)/w`` cells
    per axis (BOUNDED; each width must divide its domain). The 2-D grid cell holds every change
    the composition allows (one coordinate within its cell), so its sensitivity covers them;
* else ``SET BOUNDS ON t (c) BETWEEN lo AND hi`` on every column — ``dp``, unbounded (PROTECT's
  presence and absence: a record appears or disappears).

Other declarations are refused, naming what applies — so is a policy with KNOWN COUNTS (its
neighbours must keep the counts: He et al. §8's constrained sensitivity, not these). The sensitivities are those
:func:`.clustering.sensitivities` proves, including pairs split by a cluster boundary (He et al.
Lemma 6.1 states the same-cluster bound only, which is not private; see ``benchmarks/kmeans.py``).

>>> from fractions import Fraction
>>> from provsql_dp.policies.blowfish.sql import ColumnDomain, TablePolicy
>>> d = ColumnDomain.range(0, 1, width=Fraction(1, 100))
>>> tp = TablePolicy("near", "main", "pts", ("x", "y"), [d, d],
...                  {"kind": "DELTA", "params": ["0.05", "L1"]}, True)
>>> kp = kmeans_policy(tp, ["x", "y"])
>>> kp.policy, kp.kwargs, kp.lo, kp.hi, kp.bounded
('threshold', {'theta': 0.05}, [0.0, 0.0], [1.0, 1.0], True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from ...errors import DeclarationError, ProgrammingError

__all__ = ["KMeansPolicy", "kmeans_policy", "bounds_policy", "SUPPORTED"]

SUPPORTED = ("FULL (BOUNDED or UNBOUNDED), (FULL, FULL), DELTA δ [METRIC L1] BOUNDED, "
             "PARTITION BY WIDTH w or (PARTITION BY WIDTH w₁, PARTITION BY WIDTH w₂) BOUNDED "
             "— or SET BOUNDS on every column")


@dataclass
class KMeansPolicy:
    """The arguments of :func:`.clustering.kmeans` a declaration gives, and its description."""

    policy: str
    lo: list
    hi: list
    bounded: bool
    kwargs: dict = field(default_factory=dict)
    source: str = ""


def _box(tp, order):
    lo, hi = [], []
    for i in order:
        dom = tp.domains[i]
        if dom.values is not None or dom.width is None:
            raise DeclarationError(f"k-means needs numeric [lo, hi) domains; policy {tp.name} "
                                   f"declares explicit values for {tp.columns[i]!r}")
        lo.append(float(dom.low))
        hi.append(float(dom.high))
    return lo, hi


def _cells(tp, graph, i) -> int:
    dom = tp.domains[i]
    params = graph.get("params") or {}
    if not isinstance(params, dict) or "width" not in params or dom.values is not None:
        raise DeclarationError(f"k-means under a partition needs PARTITION BY WIDTH w on a "
                               f"[lo, hi) domain (policy {tp.name}); explicit groups are not "
                               "a uniform grid")
    ratio = (Fraction(dom.high) - Fraction(dom.low)) / Fraction(params["width"])
    if ratio.denominator != 1:
        raise DeclarationError(f"the partition width of {tp.columns[i]!r} does not divide its "
                               f"domain (policy {tp.name}): the cells would not be a uniform "
                               "grid")
    return int(ratio)


def kmeans_policy(tp, columns) -> KMeansPolicy:
    """The k-means policy of the table policy ``tp`` on ``columns`` (see the module docstring)."""
    lower = [c.lower() for c in tp.columns]
    order = [lower.index(c.lower()) for c in columns]
    kind = tp.graph.get("kind")
    lo, hi = _box(tp, order)
    name = f"policy {tp.name} ({tp.graph_sql()}"
    if getattr(tp, "known", None) is not None:
        raise DeclarationError(f"{name}) declares KNOWN COUNTS: its neighbours must keep those "
                               "counts, which the k-means sensitivities do not account for "
                               "(He et al. §8)")
    if tp.sources is not None:
        raise DeclarationError(f"{name}) has SOURCES: k-means releases sums over every record, "
                               "so its presence rule must be BOUNDED or UNBOUNDED without "
                               f"sources ({SUPPORTED})")
    if kind == "FULL":
        return KMeansPolicy("dp", lo, hi, tp.bounded,
                            source=f"{name}, {'BOUNDED' if tp.bounded else 'UNBOUNDED'})")
    if not tp.bounded:
        raise DeclarationError(f"{name}) is UNBOUNDED: the Blowfish k-means policies move a "
                               "record between values (declare it BOUNDED), or use FULL "
                               f"UNBOUNDED for presence ({SUPPORTED})")
    if kind == "COMPOSE":
        parts = [tp.graph["parts"][i] for i in order]
        kinds = {p.get("kind") for p in parts}
        if kinds == {"FULL"}:
            return KMeansPolicy("attribute", lo, hi, True, source=f"{name}, BOUNDED)")
        if kinds == {"PARTITION"}:
            cells = [_cells(tp, p, i) for p, i in zip(parts, order)]
            return KMeansPolicy("partition", lo, hi, True, {"cells": cells},
                                f"{name}, BOUNDED)")
    if kind == "PARTITION" and len(order) == 1:
        return KMeansPolicy("partition", lo, hi, True, {"cells": [_cells(tp, tp.graph, 0)]},
                            f"{name}, BOUNDED)")
    if kind == "DELTA":
        params = tp.graph.get("params") or []
        delta = float(Fraction(str(params[0])))
        metric = str(params[1]).upper() if len(params) > 1 else "EUCLIDEAN"
        theta = delta if metric == "L1" or len(order) == 1 else delta * math.sqrt(len(order))
        return KMeansPolicy("threshold", lo, hi, True, {"theta": theta}, f"{name}, BOUNDED)")
    raise DeclarationError(f"{name}) does not give a k-means neighbourhood; supported: "
                           f"{SUPPORTED}")


def bounds_policy(bounds, columns) -> KMeansPolicy:
    """``dp`` (unbounded) on the declared bounds ``[(lo, hi), …]`` of ``columns``."""
    lo, hi = [float(b[0]) for b in bounds], [float(b[1]) for b in bounds]
    for c, a, b in zip(columns, lo, hi):
        if not b > a:
            raise ProgrammingError(f"the declared bounds of {c!r} are empty ([{a:g}, {b:g}]); "
                                   "declare lower < upper")
    return KMeansPolicy("dp", lo, hi, False,
                        source="bounds (SET BOUNDS), differential privacy (records added or "
                               "removed)")
