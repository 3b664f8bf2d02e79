"""``EXPLAIN PRIVACY`` of a query answered by the recursive mechanism: what a release will cost.

An analyst gets :data:`~provsql_dp.mechanisms.recursive.cost.PUBLIC_NOTE` only — the shapes of
the LPs, the number of Δ probes of the search in general, the time limit and the fallback —
because the LP sizes are functions of the private data. The **curator** (who may read the
data anyway) also gets the sizes: the K-relation is captured (no noise is drawn, no budget is
spent) and :func:`~provsql_dp.mechanisms.recursive.cost.lp_cost` reports its output tuples,
participants, the largest LP and the range the Δ search bisects.

A query on the **single-owner** route solves no LP (the closed forms of
:mod:`~provsql_dp.mechanisms.recursive.single_owner` over the per-participant totals, which stay
in the engine): its note is :data:`CLOSED_FORM_NOTE` for every role — LP sizes would describe
work that never runs, and capturing the K-relation to count them would cost the curator many
times the release itself (3.5 s against 0.3 s at 3·10^6 rows).

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE e(src INT, dst INT); INSERT INTO e VALUES (1,2),(2,3),(1,3)")
>>> _ = con.execute("PROTECT TABLE e BY (src, dst) AS node")
>>> rows = con.execute("EXPLAIN PRIVACY SELECT COUNT(*) FROM e a JOIN e b ON a.dst = b.src "
...                    "WITH EPSILON 1").fetchall()
>>> rows[0][0], "tuples=1" in rows[0][-1]
('recursive', True)
"""

from __future__ import annotations

import numpy as np

from ..mechanisms.recursive.cost import PUBLIC_NOTE, lp_cost
from ..errors import CaptureTooLarge
from ..provenance.backends import engine_of
from ..provenance.capture import capture, max_rows_of
from ..sql.plan import Aggregate
from .answer import privacy_style

__all__ = ["recursive_note", "CLOSED_FORM_NOTE"]

#: the single-owner route's note (data independent: every role)
CLOSED_FORM_NOTE = (
    "single-owner closed form: no linear program; the engine computes every participant's total "
    "(or reads the rows as the totals when each participant owns one row) and a bucketed summary "
    "of them in one pass, from which the Δ search and X are computed exactly; the release stops "
    "at the connection's release_time_limit (default 300 s), and then the data-independent "
    "fallback is released; the error depends on the data"
)


def recursive_note(con, plan, eps) -> str:
    """The note of the ``EXPLAIN PRIVACY`` row of a recursive-mechanism query (see module doc)."""
    if getattr(con, "role", "curator") != "curator" or not isinstance(plan, Aggregate):
        return PUBLIC_NOTE
    try:
        kr = capture(engine_of(con), plan, plan.bounds if plan.kind == "sum" else None,
                     max_rows=max_rows_of(con), columns=())
    except CaptureTooLarge as e:
        return (f"{PUBLIC_NOTE}. Curator only: {e} — a release would read no data and return the "
                "data-independent fallback")
    # a signed SUM's two parts have the structure of its |weights| (sizes only)
    kr = kr.with_weights(np.abs(np.asarray(kr.weights, dtype=np.float64)))
    cost = lp_cost(kr, 0.5 if eps is None else float(eps), privacy_style(plan))
    sizes = ", ".join(f"{k}={v}" for k, v in cost.rows())
    at = "ε = 0.5" if eps is None else "this ε"
    return f"{PUBLIC_NOTE}. Curator only (private sizes, {at}): {sizes}"
