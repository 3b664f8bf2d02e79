"""Policy-based routes for private queries, tried before the recursive mechanism.

A histogram or range workload over one table whose rows are single participants can be answered
far more accurately under a Blowfish (or δ-neighbourhood) policy than by the recursive mechanism.
:func:`route` is the one place such routes plug in: it returns the answer of the first route that
applies, or None, and the query then goes to the recursive mechanism (``provsql_dp.privacy.answer``).
Every route charges the budget ledger itself, before drawing noise.

>>> route(None, None, None, 1, "SELECT 1") is None
True
"""

from __future__ import annotations

# Policy kinds plug in from above: importing the δ-neighbourhood SQL layer registers the DELTA
# kind with the policy grammar (provsql_dp.sql.policy_grammar.register_policy_kind) and its
# builder with the Blowfish SQL layer; the grammar itself imports no policy.
from ..policies.delta import sql as _delta_sql  # noqa: F401  (imported for its registration)
from .policy_route import route as _policy_route

__all__ = ["route", "ROUTES"]

# Each route: function(con, tree, plan, epsilon, text) -> (description, rows, PrivacyInfo) | None.
# Histograms and ranges on row-per-participant tables under a Blowfish or δ policy come first.
ROUTES: list = [_policy_route]


def route(con, tree, plan, epsilon, text):
    """The answer of the first applicable policy route, or None."""
    for r in ROUTES:
        out = r(con, tree, plan, epsilon, text)
        if out is not None:
            return out
    return None
