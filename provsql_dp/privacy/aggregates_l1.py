"""Several aggregates of one statement released with ONE ℓ1 bound (single-owner route): no ε split.

A statement with several aggregates (TPC-H Q12: two ``SUM(CASE … THEN 1 ELSE 0 END)`` by ship
mode; Q8: a ratio of two SUMs by year) used to give each aggregate ε / (number of aggregates).
When every aggregate takes the single-owner route over **the same rows, owned by the same
participant** (:func:`shape` proves it from the plan), the statement is now released as one
vector of (aggregate part × group) coordinates with one ℓ1 bound:
:func:`~provsql_dp.mechanisms.recursive.single_owner_groups.release_matrix`, every aggregate
at the statement's ε.

What is proved (from the plan, never the data)
----------------------------------------------
The planner gives each aggregate its own plan ``Project(Filter*(R), keys + columns)`` over the
statement's rows ``R`` (a ``FILTER (WHERE …)`` or a ``COUNT(col)``'s ``col IS NOT NULL`` are the
filters). :func:`shape` requires that every aggregate's plan has that form over **the same**
``R`` (equal plans) with **the same** GROUP BY expressions, and builds one plan
``Project(R, keys + every aggregate's columns + each aggregate's filter as a boolean column)``.
That plan must itself be single-owner (:func:`~provsql_dp.provenance.owners.owners`): each of its
rows has one owner, and aggregate ``a`` sums its weight over the rows its filter keeps — exactly
its own plan's rows, with the same owners (a filter keeps a row's provenance). Anything else (a
different ``R``, other keys, a route other than single-owner for some aggregate, an
``OPTIONS (max_groups = k)`` truncation, an AVG, or aggregates whose per-tuple ranges differ)
keeps the split: a near-miss is never guessed.

*Alike ranges.* The ℓ1 ball treats every coordinate alike: a COUNT (each tuple adds 1) beside a
SUM of values up to 10⁵ would get the SUM's noise. The rule (public) asks that every aggregate's
per-tuple range ``max(|lower|, |upper|)`` be the same (a COUNT's is 1; a SUM's its bounds, the
declared or proved ones, else the default clamp): Q12's two CASE sums are in [0, 1], Q8's two
SUMs of ``volume`` in [0, 105000].

Privacy (ε = ε₁ + ε₂, add/remove one participant)
-------------------------------------------------
Participant ``p``'s contribution is the vector ``c_p`` of its totals, one coordinate per
(group, aggregate part) (a signed SUM has two nonnegative parts). Removing ``p`` removes its
tuples from every aggregate at once and changes no other participant's vector (single owner).
That is the setting of :mod:`~provsql_dp.mechanisms.recursive.single_owner_groups` with
``G·K`` coordinates (``K`` the parts of all aggregates): ``Δ̂`` from the norms ``t_p = ‖c_p‖₁``
is ε₁-DP (Chen & Zhou Lemma 4 on the multiset of norms), and given ``Δ̂`` the sum of the vectors
scaled into the ℓ1 ball of radius ``Δ̂`` moves by at most ``Δ̂`` in ℓ1 over at most ``G·K``
coordinates, released ε₂-DP on the exact sampler's plan with ``changed = G·K``. One charge ε
for every aggregate and group. When each participant's tuples fall in one group (the GROUP BY
keys are functions of the owner, or no GROUP BY), each group is its own vector of ``K``
coordinates with its own ``Δ̂``: the groups' participants are disjoint (parallel composition).

The intervals stay one-sided from below for nonnegative aggregates (scaling only lowers), as
on the single-aggregate route; signed ones get none.

Accuracy: a trade-off, not a free gain
--------------------------------------
Every coordinate gets noise ``Δ̂/ε₂`` with ``Δ̂`` sized for the participants' *total* over the
aggregates; the split gave aggregate ``a`` noise ``A·Δ̂_a/ε₂`` with ``Δ̂_a`` sized for its own
totals. So the joint release is better for the large aggregates and worse for a small one
(``Δ̂_a`` much below ``Δ̂/A``), and about even for complementary ones (Q12's two counts: the
norms add up). It also spends one ε₁ on one Δ̂ instead of ε₁/A on each, and a small aggregate
with few participants is no longer truncated by its own poorly estimated Δ̂ — TPC-H Q8's
numerator (107 Brazilian line items of 107 customers at SF 1, of 2,603): the ratio's error fell from 72 % to 25 %
over 20 releases (``benchmarks/tpch_measured.md``), while on synthetic data with a well-populated
small numerator (``benchmarks/group_l1.py``, second table) the numerator's error grew. The rule
is public either way; ``OPTIONS (aggregates = 'split')`` keeps the split.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE p(id INT PRIMARY KEY); PROTECT TABLE p")
>>> _ = con.execute("CREATE TABLE o(pid INT REFERENCES p(id), m VARCHAR, urgent BOOLEAN)")
>>> _ = con.execute("PROTECT TABLE o BY (pid) REFERENCES p")
>>> _ = con.execute("SET GROUP KEYS ON o (m) VALUES ('a', 'b')")
>>> _ = con.execute("INSERT INTO p SELECT range FROM range(40)")
>>> _ = con.execute("INSERT INTO o SELECT range % 40, ['a', 'b'][range % 2 + 1], range % 3 = 0 "
...                 "FROM range(400)")
>>> _ = con.execute("SET PRIVACY BUDGET 5")
>>> q = ("SELECT m, SUM(CASE WHEN urgent THEN 1 ELSE 0 END) AS hi, "
...      "SUM(CASE WHEN urgent THEN 0 ELSE 1 END) AS lo FROM o GROUP BY m WITH EPSILON 1")
>>> cur = con.execute(q)
>>> float(cur.privacy.epsilon), [r.epsilon for r in cur.privacy.releases[0]]
(1.0, [1.0, 1.0])
>>> con.execute("EXPLAIN PRIVACY " + q).fetchall()[0][2].startswith("single-owner closed form "
...                                                                  "with one ℓ1 bound across the 2 aggregates")
True
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np
from sqlglot import exp

from ..errors import ProgrammingError
from ..mechanisms.recursive._framework import resolve_params
from ..mechanisms.recursive.single_owner_groups import (check_vector_plan, group_releases,
                                                        release_matrix)
from ..provenance.capture import DEFAULT_BOUNDS
from ..provenance.owners import Owners, owners
from ..sql.plan import Aggregate, Aggregates, Filter, Project
from .group_epsilon import one_group_per_participant
from .group_l1 import fetch_rows, parts_sql
from .release_info import PrivacyInfo

__all__ = ["Joint", "STRATEGY", "decide_all", "release", "shape", "strategy"]

#: the strategy ``EXPLAIN PRIVACY`` shows (``{a}`` aggregates, ``{g}`` groups)
STRATEGY = ("single-owner closed form with one ℓ1 bound across the {a} aggregates × {g} groups: "
            "each participant's totals (every aggregate, every group) scaled into one ball of "
            "radius Δ̂, every aggregate released at the full ε")
#: … when each participant's tuples fall in one group (or there is no GROUP BY)
PARALLEL = ("single-owner closed form with one ℓ1 bound across the {a} aggregates, per group "
            "(a participant's tuples are in one group): each participant's totals scaled into "
            "one ball of radius Δ̂, every aggregate released at the full ε")


@dataclass(frozen=True)
class Joint:
    """The one plan of a statement's aggregates (:func:`shape`): ``plan`` the combined rows
    with the GROUP BY (a COUNT over them), per aggregate its ``weights`` (None: a count) and
    ``wheres`` (None: every row), both over ``plan``'s ids, and its owners."""

    plan: Aggregate
    weights: tuple
    wheres: tuple
    own: Owners | None = None


def _chain(part: Aggregate):
    """The nodes under one aggregate's Project, from the top down through its filters."""
    nodes = [part.child.child]
    while isinstance(nodes[-1], Filter):
        nodes.append(nodes[-1].child)
    return nodes


def _peel(plan: Aggregates):
    """Per aggregate ``(R, its Project, [its own filter predicates])`` with ``R`` the deepest
    rows every aggregate reads (the statement's WHERE stays in ``R``), or None."""
    if not all(isinstance(p.child, Project) for p in plan.parts):
        return None
    chains = [_chain(p) for p in plan.parts]
    rows = next((n for n in chains[0] if all(any(n is m for m in c) for c in chains[1:])), None)
    if rows is None:  # not the same objects (a copied plan): equal ones
        rows = next((n for n in chains[0] if all(n in c for c in chains[1:])), None)
    if rows is None:
        return None
    out = []
    for part, chain in zip(plan.parts, chains):
        above = next(i for i, n in enumerate(chain) if n is rows or n == rows)
        out.append((rows, part.child, [f.predicate for f in chain[:above]]))
    return out


def _range(part: Aggregate, bounds) -> float:
    if part.kind == "count":
        return 1.0
    lo, hi = bounds if bounds is not None else DEFAULT_BOUNDS
    return max(abs(float(lo)), abs(float(hi)))


def shape(plan: Aggregates) -> Joint | None:
    """The combined plan of ``plan``'s aggregates when they read the same rows with the same
    GROUP BY (module docstring), else None. Reads the plan only."""
    if any(c.kind == "avg" for c in plan.columns):
        return None
    peeled = _peel(plan)
    if peeled is None:
        return None
    rows, first, _ = peeled[0]
    n = len(plan.group_by)
    exprs, ids, names = list(first.exprs[:n]), list(first.ids[:n]), list(first.names[:n])
    seen: dict[str, exp.Expression] = {}
    weights, wheres = [], []
    for a, (part, (r, proj, preds)) in enumerate(zip(plan.parts, peeled)):
        if (r != rows or tuple(proj.ids[:n]) != tuple(part.group_by)
                or tuple(proj.exprs[:n]) != tuple(first.exprs[:n])):
            return None
        for e, i, nm in zip(proj.exprs[n:], proj.ids[n:], proj.names[n:]):
            if i in seen:
                if seen[i] != e:  # one id, two meanings: not provable
                    return None
                continue
            seen[i] = e
            exprs.append(e), ids.append(i), names.append(nm)
        if part.weight is not None and not {c.name for c in part.weight.find_all(exp.Column)} <= set(seen):
            return None
        weights.append(part.weight)
        where = None
        if preds:
            wid = f"__l1w{a}"  # no planner id starts with "__" (they are v0, v1, …)
            exprs.append(exp.and_(*[p.copy() for p in preds]))
            ids.append(wid), names.append(wid)
            where = exp.column(wid)
        wheres.append(where)
    combined = Aggregate(Project(rows, tuple(exprs), tuple(ids), tuple(names)), "count", None,
                         tuple(first.ids[:n]), "joint")
    own = owners(combined.child)
    return None if own is None else Joint(combined, tuple(weights), tuple(wheres), own)


def _joint(plan: Aggregates, decisions) -> Joint | None:
    """The :class:`Joint` of a statement whose decisions all allow it, else None (public)."""
    d0 = decisions[0]
    if not all(d.path == "single-owner" and d.own is not None for d in decisions):
        return None
    if any(d.groups != d0.groups or d.style != d0.style for d in decisions) or not d0.groups:
        return None
    if d0.max_groups is not None and d0.plan.group_by and d0.max_groups < len(d0.groups):
        return None  # the analyst's per-participant truncation: kept
    if len({_range(d.plan, d.bounds) for d in decisions}) != 1:
        return None
    return shape(plan)


def strategy_option(options: dict) -> str:
    """``OPTIONS (aggregates = …)`` validated: ``'joint'`` (the default) or ``'split'``. A
    statement-level option, accepted on any statement: with one aggregate there is nothing to
    split and either value gives the same release (:func:`.answer.facts` validates it there).

    >>> strategy_option({}), strategy_option({"aggregates": "SPLIT"})
    ('joint', 'split')
    """
    how = str(options.get("aggregates", "joint")).lower()
    if how not in ("joint", "split"):
        raise ProgrammingError(
            "option aggregates must be 'joint' (one ℓ1 bound across the aggregates where the "
            "plan proves they are one participant's, the default) or 'split' (each aggregate "
            "at its share of ε)")
    return how


def decide_all(con, plan: Aggregates, epsilon, options: dict, decide, kwargs_of):
    """Each aggregate's decision and the ε it is released at: ε / (aggregates) (an AVG's parts
    half that) as before, or — when :func:`_joint` holds — every aggregate at ``epsilon``, its
    decision marked (``memo["l1"]``: the :class:`Joint`) and its parameters at the full ε
    (``kwargs_of(options, ε, style)``: :func:`.answer.mechanism_kwargs`). Public: the same on
    every database; the vector's noise plan is validated here, before any charge.
    ``OPTIONS (aggregates = 'split')`` keeps the split (module docstring: the trade-off)."""
    options = dict(options)
    how = strategy_option(options)
    options.pop("aggregates", None)
    share = Fraction(epsilon) / len(plan.columns)
    part_eps = [None] * len(plan.parts)
    for col in plan.columns:
        for i in col.parts:
            part_eps[i] = share / len(col.parts)
    decisions = []
    for part, eps in zip(plan.parts, part_eps):
        opts = options if part.kind == "sum" else {k: v for k, v in options.items()
                                                   if k not in ("lower", "upper")}
        decisions.append(decide(con, part, eps, opts))  # everything validated before any charge
    joint = _joint(plan, decisions) if how == "joint" else None
    if joint is None:
        return decisions, part_eps
    rest = {k: v for k, v in options.items() if k not in ("max_groups", "mechanism", "lower", "upper")}
    full = []
    for d in decisions:
        style, kwargs = kwargs_of(rest, float(epsilon), d.style)
        full.append(replace(d, epsilon=float(epsilon), style=style, kwargs=kwargs,
                            memo={**d.memo, "l1": joint}))
    coords = len(decisions[0].groups) * sum(2 if d.signed else 1 for d in full)
    try:
        params = resolve_params(float(epsilon), full[0].style, **full[0].kwargs)
        check_vector_plan(params["eps2"], coords if not _parallel(full[0]) else coords // len(full[0].groups))
    except ValueError as e:
        raise ProgrammingError(f"invalid mechanism options: {e}; nothing was charged") from e
    return full, [Fraction(epsilon)] * len(full)


def _parallel(d) -> bool:
    j = d.memo["l1"]
    return one_group_per_participant(j.plan, j.own)


def strategy(d) -> str | None:
    """The ``EXPLAIN PRIVACY`` strategy of a jointly released aggregate, else None."""
    j = d.memo.get("l1")
    if j is None:
        return None
    how = PARALLEL if _parallel(d) else STRATEGY
    return how.format(a=len(j.weights), g=len(d.groups))


def release(con, decisions, charge_fn, rng):
    """Release the aggregates of ``decisions`` (all marked by :func:`decide_all`) as one
    vector: per aggregate ``(description, rows, PrivacyInfo)`` as its route would give.
    ``charge_fn()`` charges before any protected row is read."""
    d0 = decisions[0]
    j: Joint = d0.memo["l1"]
    cols, parts, ids = [], [], set()
    for d, w, where in zip(decisions, j.weights, j.wheres):
        sql, read = parts_sql(w, d.bounds, d.signed, where)
        cols.append(tuple(range(len(parts), len(parts) + len(sql))))
        parts += sql
        ids |= read
    charge = charge_fn()
    g, vals, rt, first = fetch_rows(con, j.plan, j.own, d0.groups, parts, ids)
    n_groups, eps = len(d0.groups), float(d0.epsilon)
    if _parallel(d0):  # disjoint participants per group: one vector (its own Δ̂) per group
        per = [[None] * n_groups for _ in decisions]
        for gi in range(n_groups):
            rows = g == gi
            out = release_matrix(rt[first & rows], np.zeros(int(rows.sum()), dtype=np.int64),
                                 vals[rows], rt[rows], 1, eps, d0.style, rng, **d0.kwargs)
            for a, rels in enumerate(group_releases(*out, cols)):
                per[a][gi] = rels[0]
    else:
        per = group_releases(*release_matrix(rt[first], g, vals, rt, n_groups, eps, d0.style,
                                             rng, **d0.kwargs), cols)
    results = []
    for d, rels in zip(decisions, per):
        rows = [tuple(grp) + (rel.value,) for grp, rel in zip(d.groups, rels)]
        desc = [(n, "VARCHAR") for n in d.key_names] + [(d.plan.label, "DOUBLE")]
        results.append((desc, rows, PrivacyInfo(mechanism=rels[0].mechanism, epsilon=charge.epsilon,
                                                remaining=charge.remaining, releases=tuple(rels))))
    return results
