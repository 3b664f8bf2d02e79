"""``CREATE POLICY … AS DELTA δ [METRIC L1 | EUCLIDEAN]``: δ-neighbourhood policies from SQL.

Registers the ``DELTA`` kind with the policy grammar (:func:`provsql_dp.sql.policy_grammar.
register_policy_kind`) and its builder with the Blowfish SQL layer
(:func:`provsql_dp.policies.blowfish.sql.register_builder`). A table's policy then discretises the
δ-neighbourhood over the declared bins, and range counts (``COUNT RANGES …``, ``COUNT
CUMULATIVE …``, ``SELECT count(*) … WHERE col BETWEEN …``) over the table are answered by the
Blowfish route on that policy:

* one column, ``DOMAIN [lo, hi) WIDTH w``: the threshold policy ``Gᶿ`` with ``θ = ⌈δ/w⌉`` — the
  route's candidate strategies include Laplace on the path tree, which *is* the cumulative
  strategy C_{n,δ} (sensitivity θ), and the least expected error wins;
* two columns: the grid policy ``Gᶿ`` (L1 on bin indices) with the smallest θ covering every
  pair of bins holding points within δ (Euclidean or L1) — a superset of the δ-neighbourhood's
  pairs, so the release protects at least what the declaration asks; the 2-D grid strategies
  apply.

Under a BOUNDED δ policy, ``OPTIONS (strategy = 'cumulative' | 'sorted_points' |
'shifted_histograms')`` releases Fang & Chang's own strategies from the values instead
(:mod:`provsql_dp.privacy.delta_route`).

``UNBOUNDED SOURCES (v, …)`` names source values; every bin within δ of a source's bin becomes a
⊥-neighbour (conservative: the source is known to its bin). Without sources, use ``BOUNDED``.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE pts(id INT PRIMARY KEY, x DOUBLE)")
>>> _ = con.execute("PROTECT TABLE pts")
>>> _ = con.execute("CREATE POLICY near ON pts (x) AS DELTA 0.05 DOMAIN [0, 1) WIDTH 0.01 BOUNDED")
>>> con.execute("SHOW POLICIES").fetchall()[0][4]
'DELTA 0.05'
"""

from __future__ import annotations

from fractions import Fraction

from sqlglot import exp

from ...errors import DeclarationError
from ...sql import policy_grammar as g
from ..blowfish import Policy as BlowfishPolicy
from ..blowfish import sql as bsql
from .policy import Policy

__all__ = ["delta_policy", "build_delta"]


def _parse_delta(parser):
    params = [g._number(parser, "the threshold δ")]
    if g._word(parser, "METRIC"):
        parser._advance()
        if parser._curr is None:
            parser.raise_error("Expected L1 or EUCLIDEAN after METRIC")
        word = parser._curr.text.upper()
        if word not in ("L1", "EUCLIDEAN"):
            parser.raise_error("Expected L1 or EUCLIDEAN after METRIC")
        parser._advance()
        params.append(exp.Var(this=word))
    return params


def delta_policy(graph, domains) -> Policy:
    """The :class:`~provsql_dp.policies.delta.Policy` of a ``DELTA`` declaration (box = the bins)."""
    params = graph.get("params") or []
    if not params:
        raise DeclarationError("DELTA needs the threshold: AS DELTA δ")
    metric = str(params[1]).lower() if len(params) > 1 else "euclidean"
    if len(domains) not in (1, 2):
        raise DeclarationError("DELTA is a policy on one or two numeric columns")
    box = []
    for dom in domains:
        if getattr(dom, "values", None) is not None or dom.width is None:
            raise DeclarationError("DELTA needs numeric columns with DOMAIN [lo, hi) WIDTH w "
                                   "(or BINS n): distances are measured between bins")
        lo = Fraction(dom.low)
        box.append((lo, lo + dom.k * Fraction(dom.width)))
    return Policy(Fraction(str(params[0])), dims=len(domains), bbox=box, metric=metric)


def _near_sources(pol: Policy, shape, sources):
    """Bins within δ of a source bin (conservative closed-cell test)."""
    if len(shape) == 1:
        th = pol.threshold_of(shape[0])
        out = {s + d for s in sources for d in range(-th, th + 1) if 0 <= s + d < shape[0]}
        return sorted(out)
    offs = [(0, 0)] + [(di, dj) for di, dj in pol.cell_offsets(shape)]
    offs += [(-di, -dj) for di, dj in offs]
    k1, k2 = shape
    out = set()
    for s in sources:
        i, j = divmod(int(s), k2)
        for di, dj in offs:
            if 0 <= i + di < k1 and 0 <= j + dj < k2:
                out.add((i + di) * k2 + j + dj)
    return sorted(out)


def build_delta(graph, domains, bounded, sources) -> BlowfishPolicy:
    """Blowfish builder for ``DELTA`` (see the module docstring)."""
    pol = delta_policy(graph, domains)
    shape = tuple(d.k for d in domains)
    if sources is not None and bounded:
        raise DeclarationError("SOURCES need UNBOUNDED (records appear and disappear there)")
    src = None if sources is None else _near_sources(pol, shape, sources)
    if len(shape) == 1:
        return BlowfishPolicy.threshold(shape[0], pol.threshold_of(shape[0]), bounded=bounded,
                                        sources=src)
    offs = pol.cell_offsets(shape)
    theta = max([abs(di) + abs(dj) for di, dj in offs] + [1])
    return BlowfishPolicy.grid(shape[0], shape[1], int(theta), bounded=bounded, sources=src)


g.register_policy_kind("DELTA", _parse_delta, attribute=False)
bsql.register_builder("DELTA", build_delta)

