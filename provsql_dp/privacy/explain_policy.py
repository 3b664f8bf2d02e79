"""``EXPLAIN PRIVACY`` of route policy (:mod:`.policy_route`): the strategy the release would
use under the table's Blowfish or δ policy, its expected error and α, or the smallest ε for an
accuracy — from the statement, its OPTIONS and the policy alone (no data is read).

The strategy is the one the release picks: the analyst's ``OPTIONS (strategy = …)``, validated
as the release validates it, else the least expected error.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE p(id INT PRIMARY KEY, age INT); PROTECT TABLE p")
>>> _ = con.execute("CREATE POLICY a ON p (age) AS LINE DOMAIN [0, 100) WIDTH 10")
>>> row = con.execute("EXPLAIN PRIVACY SELECT age, COUNT(*) FROM p GROUP BY age "
...                   "WITH EPSILON 1").fetchall()[0]
>>> row[0], row[1], row[3], row[8]
('blowfish', 'a', 10, 'policy')
"""

from __future__ import annotations

import math
from fractions import Fraction

from .._numbers import format_eps
from .._numbers import round_up_decimal as _round_up
from ..errors import ProgrammingError
from ..sql import dialect as d
from .policy_route import plan_for, strategy_of

__all__ = ["policy_rows"]


def policy_rows(con, prep, options: dict, eps, tree) -> list[tuple]:
    """The one row of a policy release of ``prep`` (:func:`.policy_route.prepare`) at ``eps``,
    or at the smallest ε whose α meets ``tree``'s accuracy."""
    planned = plan_for(prep, strategy_of(options))  # the release's strategy, validated alike
    conf = Fraction(95, 100)
    if tree.args.get("confidence") is not None:
        conf = d.exact_number(tree.args["confidence"], "the confidence")
        if not 0 < conf < 1:
            raise ProgrammingError("the confidence must be strictly between 0 and 1 (e.g. 0.95)")
    beta = float(1 - conf)
    note = "α: per query, P(|error| ≤ α) ≥ confidence"
    if planned.upper_bound:
        note += ("; the ordered strategy's expected error is an upper bound (consistency only "
                 "helps on average) and its α holds for every prefix count at once, through the "
                 "isotonic consistency")
    if eps is None:
        alpha = float(d.exact_number(tree.args["accuracy"], "the accuracy α"))
        if alpha <= 0:
            raise ProgrammingError("the accuracy α must be positive")
        need = planned.epsilon_for_alpha(alpha, beta)
        eps = _round_up(need)
        note = f"run the query WITH EPSILON {format_eps(eps)}; " + note
    e = float(eps)
    rmse = math.sqrt(planned.expected_mse(e))
    alpha_out = float(max(planned.alphas(e, beta))) if planned.unit_var.size else 0.0
    return [("blowfish", prep.policy_name, planned.detail, int(prep.workload.q),
             format_eps(eps), rmse, alpha_out, float(conf), note)]
