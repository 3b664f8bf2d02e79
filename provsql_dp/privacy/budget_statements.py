"""``SET PRIVACY BUDGET`` in its three units and ``SHOW PRIVACY BUDGET``'s rows.

A pure-ε budget shows as before (``total``, ``spent``, ``remaining`` as exact decimals); an
(ε, δ) budget shows both parts, ``ε = 2, δ = 0.00001``; a zCDP budget shows ρ, and its remaining
ρ also as the (ε, δ) it guarantees at δ = 10⁻⁶ (:func:`.accounting.equivalent`).

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> con.execute("SET PRIVACY BUDGET RHO 0.5 FOR USER 'zed'").fetchall()
[("privacy budget of 'zed' set to ρ = 0.5 (zCDP)",)]
>>> con.execute("SHOW PRIVACY BUDGET FOR USER 'zed'").fetchall()
[('zed', 'ρ = 0.5', 'ρ = 0', 'ρ = 0.5 ≈ (ε = 5.757, δ = 0.000001)')]
>>> con.execute("SET PRIVACY BUDGET EPSILON 2 DELTA 1e-5 FOR USER 'ed'").fetchall()
[("privacy budget of 'ed' set to ε = 2, δ = 0.00001",)]
"""

from __future__ import annotations

from .._numbers import format_eps
from ..errors import ProgrammingError
from ..sql import dialect as d
from .accounting import budget_text, equivalent

__all__ = ["set_budget", "budget_rows", "with_budget_unit"]


def with_budget_unit(con, info):
    """``info`` with the unit of the user's budget (and the δ of the last charge): what its
    ``epsilon`` and ``remaining`` are counted in. The budget this connection's ledger charged
    last is known without a read (:class:`~.ledger.Known`: its unit, and the δ of that
    charge); another is read."""
    from dataclasses import replace

    ledger = con._ledger
    known = getattr(ledger, "_known", {}).get(con.user)
    if known is not None:
        unit, delta = known.unit, known.delta
    else:
        acct = ledger.account(con.user)
        unit = "epsilon" if acct is None else acct[0]
        last = ledger.entries(con.user, last=True) if unit == "epsilon-delta" else []
        delta = last[0].delta if last else 0
    if unit == "epsilon":
        return info
    return replace(info, unit=unit, delta=float(delta) if unit == "epsilon-delta" else 0.0)


def set_budget(ledger, name: str, tree) -> str:
    """Run a parsed ``SET PRIVACY BUDGET`` for user ``name``; the status line."""
    if tree.args.get("rho") is not None:
        rho = d.exact_number(tree.args["rho"], "the budget's ρ")
        ledger.set_budget(name, rho, unit="rho")
        return f"privacy budget of {name!r} set to ρ = {format_eps(rho)} (zCDP)"
    eps = d.exact_number(tree.args["epsilon"], "the privacy budget")
    if tree.args.get("delta") is not None:
        delta = d.exact_number(tree.args["delta"], "the budget's δ")
        if not 0 < delta < 1:
            raise ProgrammingError("the δ of a privacy budget must lie strictly between 0 and 1")
        ledger.set_budget(name, eps, unit="epsilon-delta", delta=delta)
        return f"privacy budget of {name!r} set to {budget_text('epsilon-delta', eps, delta)}"
    ledger.set_budget(name, eps)
    return f"privacy budget of {name!r} set to {format_eps(eps)}"


def budget_rows(ledger, names) -> list[tuple]:
    """``(user, total, spent, remaining)`` for each of ``names`` (as ``SHOW PRIVACY BUDGET``)."""
    wanted = set(names)
    rows = []
    for user, unit, total, spent, total_d, spent_d in ledger.accounts():
        if user not in wanted:
            continue
        if unit == "epsilon":
            rows.append((user, format_eps(total), format_eps(spent), format_eps(total - spent)))
            continue
        left = budget_text(unit, total - spent, total_d - spent_d)
        if unit == "rho":
            left = f"{left} ≈ {equivalent(unit, total - spent)}"
        rows.append((user, budget_text(unit, total, total_d), budget_text(unit, spent, spent_d),
                     left))
    return rows
