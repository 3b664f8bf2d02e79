"""What a recursive-mechanism release will cost, before it runs: LP sizes and Δ-search probes.

Two levels, by who may see them:

* :data:`PUBLIC_NOTE` — data independent (the shapes of the LPs, the per-LP time limit and the
  fallback), fit for an analyst;
* :func:`lp_cost` — the sizes, which are functions of the private data (numbers of output
  tuples, participants, annotation entries, the largest triangle degree). **Curator only**: an
  analyst must not learn them (``EXPLAIN PRIVACY`` shows them only to the curator role).

Examples
--------
>>> from provsql_dp.provenance.krelation import KRelation
>>> kr = KRelation.from_annotations(
...     rows=[("abc",), ("bcd",)],
...     annotations=[[{("v", "a"), ("v", "b"), ("v", "c")}], [{("v", "b"), ("v", "c"), ("v", "d")}]])
>>> c = lp_cost(kr, epsilon=1.0, privacy="node")
>>> c.tuples, c.participants, c.max_rows, c.delta_range
(2, 4, 6, 4)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ._framework import resolve_params
from ._structure import Structure

__all__ = ["PUBLIC_NOTE", "LPCost", "lp_cost"]

#: what can be said of the LPs without looking at the data
PUBLIC_NOTE = (
    "recursive mechanism: the Δ search solves one LP per probe (a bisection over j, typically "
    "1–4 probes), X needs 1–3 more; every LP has one row per monomial of an output tuple plus one "
    "per heavy participant, and one column per participant and per output tuple, so its size "
    "grows with the query's output (shown to the curator only). Each LP stops after the time "
    "limit, and each group's whole release (its LPs and their preparation) after the "
    "connection's release_time_limit (default 300 s); then the data-independent fallback is "
    "released; the error depends on the data"
)


@dataclass(frozen=True)
class LPCost:
    """Private sizes of a release's LPs (curator only; see the module doc)."""

    tuples: int  #: output tuples of positive weight
    participants: int  #: participants occurring in them
    entries: int  #: annotation length Σ |m|
    max_rows: int  #: rows of the largest possible LP (every monomial, every participant)
    max_cols: int  #: columns of the largest possible LP
    max_nonzeros: int  #: its non-zeros
    delta_range: int  #: the j range the Δ search bisects (``⌈ln(G_|P|/θ)/β⌉``, at most |P|)
    max_bisection_probes: int  #: ``⌈log₂(delta_range + 1)⌉``: plain bisection's probes

    def rows(self) -> list[tuple[str, int]]:
        return [(k, int(getattr(self, k))) for k in self.__dataclass_fields__]


def lp_cost(kr, epsilon: float = 0.5, privacy: str | None = "node", **params) -> LPCost:
    """The sizes of the LPs a release of ``kr`` may solve (**private**: curator only).

    No LP is solved and nothing is released; costs one pass over the annotation arrays.
    """
    p = resolve_params(epsilon, privacy, **params)
    st = Structure(kr)
    view = st.load_view()
    g_top = st.g_closed(0)
    if g_top <= p["theta"]:
        rng = 0
    else:
        rng = min(st.n, math.ceil(math.log(g_top / p["theta"]) / p["beta"]))
    incid = len(view.var_part)
    return LPCost(
        tuples=st.n_tuples,
        participants=st.n,
        entries=len(st.ent_part),
        max_rows=int(view.n_mono + view.n),
        max_cols=int(view.n + view.n_tuples),
        max_nonzeros=int(len(view.ent_part) + view.n_mono + incid),
        delta_range=int(rng),
        max_bisection_probes=math.ceil(math.log2(rng + 1)) if rng else 0,
    )
