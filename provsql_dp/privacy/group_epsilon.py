"""The ε each group of a recursive-mechanism route is released at, from the plan and the
declarations only, and the check — before anything is charged — that the mechanism can be
planned at it.

A route of the recursive mechanism (single-owner, recursive-lp, k-star, k-triangle) releases
each group at one ε: the statement's share when each participant's tuples fall in one group
(parallel composition: every GROUP BY key is a column of the owner's own row) or when the
single-owner route releases the groups together with one ℓ1 bound across them
(:func:`l1_across_groups`, :mod:`.group_l1`: signed SUMs not halved), else that share over the
number of groups (or over ``OPTIONS (max_groups = k)``), halved for each part of a signed SUM. These are public: the route's parameters (θ, β, μ, ε₁, ε₂) at that ε are validated
here, so that a release never meets parameters it cannot take once the ledger is charged. After
the charge, only the data-independent outcomes of a release — a solver failure, the release's
time limit, ``max_capture_rows`` — select its data-independent fallback; anything else raised
there is a failure of the statement (:mod:`.failures`: recorded for the curator and in the audit
log, a fixed message for an analyst), never a silently different mechanism.

>>> from types import SimpleNamespace as NS
>>> d = NS(path="recursive-lp", epsilon=1.0, groups=[("x",), ("y",)], plan=None, signed=False,
...        max_groups=None, own=None, style="edge", kwargs={})
>>> group_epsilon(d)
0.5
>>> check_plannable(NS(**{**vars(d), "kwargs": {"theta": 2.0}}))
>>> check_plannable(NS(**{**vars(d), "epsilon": 4e7, "groups": [()]}))
Traceback (most recent call last):
...
provsql_dp.errors.ProgrammingError: invalid mechanism options: eps1 = 2e+07 (the part of epsilon that releases the noisy scale) exceeds the recursive mechanism's maximum 2**24 = 1.678e+07: its noise would fall below the exact sampler's smallest scale, i.e. no privacy at all; use epsilon below 3.355e+07; nothing was charged
"""

from __future__ import annotations

from ..errors import ProgrammingError
from ..mechanisms.recursive._framework import resolve_params
from ..mechanisms.recursive.single_owner_groups import check_vector_plan
from ..provenance.slots import analyse

__all__ = ["one_group_per_participant", "group_epsilon", "check_plannable", "l1_across_groups"]


def one_group_per_participant(plan, own) -> bool:
    """Whether every GROUP BY key of ``plan`` is a function of its owner (``own``: the plan's
    :func:`~provsql_dp.provenance.owners.owners`, whose ``owner_row_ids`` :mod:`provsql_dp.sql.owner_fd`
    proves), so that each participant's tuples fall in one group; True without a GROUP BY."""
    if own is None or not plan.group_by:  # no GROUP BY: one group (no lineage to analyse)
        return not plan.group_by
    info = analyse(plan.child)  # a key id itself (a computed key) or the scan column it passes
    return all(k in own.owner_row_ids or info.base.get(k) in own.owner_row_ids
               for k in plan.group_by)


def l1_across_groups(d) -> bool:
    """Whether decision ``d`` takes the single-owner release with ONE ℓ1 bound across its groups
    (:mod:`.group_l1`, every group at the full ε) instead of splitting ε over them. Public: the
    route, the plan's GROUP BY, the declarations (a participant may fall in several groups) and
    the number of groups; an ``OPTIONS (max_groups = k)`` below it keeps its truncation."""
    return (d.path == "single-owner" and bool(d.plan.group_by) and len(d.groups) > 1
            and not (d.max_groups is not None and d.max_groups < len(d.groups))
            and not one_group_per_participant(d.plan, d.own))


def group_epsilon(d) -> float:
    """The ε each group of decision ``d`` (a recursive-mechanism route) is released at, before
    a signed SUM halves it: the single-owner route's parallel or ``max_groups`` composition, the
    others' ε / groups."""
    n = max(1, len(d.groups))
    if d.path != "single-owner":
        return float(d.epsilon) / (1 if d.path in ("k-star", "k-triangle") else n)
    if one_group_per_participant(d.plan, d.own) or l1_across_groups(d):
        return float(d.epsilon)
    if d.max_groups is not None and d.plan.group_by and d.max_groups < len(d.groups):
        return float(d.epsilon) / int(d.max_groups)
    return float(d.epsilon) / n


def check_plannable(d) -> None:
    """Refuse (ProgrammingError, nothing charged) a decision whose groups' release parameters
    are invalid at the ε each is released at (:func:`group_epsilon`, halved per signed part)."""
    l1 = l1_across_groups(d)
    eps = group_epsilon(d) / (2 if d.signed and not l1 else 1)
    try:
        params = resolve_params(eps, d.style, **d.kwargs)
        if l1:  # the vector's noise plan: its limits depend on ε₂ and the coordinates only
            check_vector_plan(params["eps2"], len(d.groups) * (2 if d.signed else 1))
    except ValueError as e:
        raise ProgrammingError(f"invalid mechanism options: {e}; nothing was charged") from e
