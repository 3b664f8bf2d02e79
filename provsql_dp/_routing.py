"""Policy-based routes for private queries, tried before the recursive mechanism.

A histogram or range workload over one table whose rows are single participants can be answered
far more accurately under a Blowfish (or δ-neighbourhood) policy than by the recursive mechanism.
:func:`route` is the one place such routes plug in: it returns the answer of the first route that
applies, or None, and the query then goes to the recursive mechanism (``provsql_dp.private``).
Every route charges the budget ledger itself, before drawing noise.

>>> route(None, None, None, 1, "SELECT 1") is None
True
"""

from __future__ import annotations

__all__ = ["route", "ROUTES"]

# Each route: function(con, tree, plan, epsilon, text) -> (description, rows, PrivacyInfo) | None.
ROUTES: list = []


def _blowfish_route(con, tree, plan, epsilon, text):
    from .blowfish.route import route as blowfish  # imported lazily: blowfish imports the core

    return blowfish(con, tree, plan, epsilon, text)


ROUTES.append(_blowfish_route)  # histograms and ranges on row-per-participant tables (issue 5)


def route(con, tree, plan, epsilon, text):
    """The answer of the first applicable policy route, or None."""
    for r in ROUTES:
        out = r(con, tree, plan, epsilon, text)
        if out is not None:
            return out
    return None
