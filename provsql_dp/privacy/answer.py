"""Releasing the aggregates of a private query: decide, charge, release.

The route of each aggregate is chosen by :func:`provsql_dp.privacy.routing.decide` (the table
:data:`provsql_dp.privacy.routing.ROUTES`, which also holds the statement routes tried first:
quantiles, refusals, Blowfish/δ policies). Here, for one aggregate or several:

1. :func:`facts` — the options every aggregate route shares, validated; the route's ``prepare``
   (:func:`as_r2t`, :func:`as_laplace`, :func:`as_recursive`) validates its own;
2. the pre-charge checks (``before_charge``), then the budget ledger is charged (before any
   noise is drawn; a refusal spends nothing);
3. each aggregate's route releases it (``release_*_route``) — the recursive mechanism's LPs
   release one group after another, ε split evenly across groups (sequential composition: a
   participant may contribute to several groups) unless the plan proves each participant's
   tuples fall in one group.

``GROUP BY`` keys must have a public set of values: the groups released are the keys the curator
declared for the column (``SET GROUP KEYS ON t (c) VALUES (…)`` or ``… FROM public_table (col)``),
else the values a *public* table holds (not only the values that occur in the answer) — several
keys from one public table range together over its DISTINCT key tuples, not over the product of
each column's values — so the set of groups reveals nothing about protected rows: every declared
group is released, empty or not, and rows whose key is not declared are dropped. Grouping by a protected column without
declared keys is refused, saying what to declare.

A ``SUM`` (or ``AVG``) is clamped to ``OPTIONS (lower = …, upper = …)`` when given, else to the
bounds the curator declared for its bare column (``SET BOUNDS ON t (c) BETWEEN a AND b``,
carried by the plan as ``Aggregate.bounds``).

The privacy style picks the recursive mechanism's default μ: "node" (μ = 1) when some protected
row has several owners (``PROTECT TABLE t BY (a, b)``), else "edge" (μ = 0.5).

>>> import provsql_dp, numpy as np
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE t(a INT); INSERT INTO t SELECT range FROM range(50)")
>>> _ = con.execute("PROTECT TABLE t")
>>> _ = con.execute("SET PRIVACY BUDGET 1")
>>> cur = con.execute("SELECT COUNT(*) FROM t WITH EPSILON 0.5")
>>> cur.description[0][0], cur.privacy.mechanism, str(cur.privacy.remaining)
('COUNT(*)', 'laplace', '0.5')
"""

from __future__ import annotations

import itertools
from fractions import Fraction
import math
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy as np

from .. import _deadline
from .._progress import report
from ..errors import CaptureTooLarge, ProgrammingError, SolverError, UnsupportedQueryError
from ..mechanisms.recursive import efficient as rm
from ..mechanisms.recursive._framework import check_beta, check_mu, resolve_params
from ..mechanisms.noise.sources import resolve_rng
from ..mechanisms.recursive.release import Release, release_x
from ..provenance.backends import engine_of
from ..provenance.capture import capture, capture_sql, max_rows_of, sum_clamp
from ..provenance.owners import owners
from ..provenance.slots import analyse
from ..sql.column_declarations import ColumnDeclarations
from ..sql.expressions import option_text
from ..sql._nonnegative import nonnegative_weight
from ..sql.key_domain import SELECTION_HINT, proved_domain, unproved_hint
from ..sql.public_groups import distinct_sql
from ..sql.plan import Aggregate, Aggregates, Scan, walk
from ._collated_keys import one_spelling_reader, refuse_collated_keys
from ._kept_texts import kept_for_plan
from .charge_ahead import charged_release
from .kstar_route import release_kstar
from .fast_path import laplace_applies, release_laplace, release_laplace_avg, release_single_owner
from . import aggregates_l1, centred_avg, group_l1
from .group_epsilon import l1_across_groups
from .r2t_release import R2T_OPTIONS, r2t_kwargs, release_r2t
from .release_info import PrivacyInfo, column_rows

__all__ = ["answer_private", "privacy_style", "group_domain", "Decision", "facts"]


def privacy_style(plan) -> str:
    """"node" when a protected row can have several owners, else "edge"."""
    return "node" if any(isinstance(n, Scan) and len(n.slots) > 1 for n in walk(plan)) else "edge"


def group_domain(con, plan: Aggregate, proved: bool = True) -> list[tuple]:
    """Every group a GROUP BY releases, a public set.

    A key with declared group keys (``SET GROUP KEYS``) ranges over its declared list. The keys
    that are columns of one *public* table (one scan of it) without declarations range together
    over that table's ``DISTINCT`` key tuples — a public quantity: ``GROUP BY depts.name,
    depts.id`` has as many groups as ``depts`` has distinct (name, id) pairs, not the product of
    the two columns' value counts. The groups are the cross product of these independent parts
    (declared lists, and one part per public scan), each sorted, the parts in the order of their
    first key in the ``GROUP BY``, keys in ``GROUP BY`` order. A computed key (or a protected
    column without declared keys) ranges over the values the statement proves it can take
    (:func:`~provsql_dp.sql.key_domain.proved_domain`: ``EXTRACT(year FROM d)`` under ``WHERE d
    BETWEEN …``; not with ``proved=False``, partition selection's test). Refuses the keys that
    are none of these."""
    refuse_collated_keys(plan, _key_names(plan), one_spelling_reader(con))  # h75cache-2
    info = analyse(plan.child)
    scans = {i: (n, c) for n in walk(plan.child) if isinstance(n, Scan) for c, i in zip(n.columns, n.ids)}
    declared = ColumnDeclarations(con._catalog)
    parts: list[tuple[list[int], list[tuple]]] = []  # (positions in GROUP BY, value tuples)
    public: dict[int, tuple[Scan, list[int], list[str]]] = {}  # id(scan) -> positions, columns
    for pos, (key, name) in enumerate(zip(plan.group_by, _key_names(plan))):
        base = info.base.get(key)
        keys = None if base not in scans else declared.group_keys(
            scans[base][0].schema, scans[base][0].table, scans[base][1])
        computed = proved and (base not in scans or keys is None and scans[base][0].slots)
        bounded = proved_domain(con._catalog, plan.child, key) if computed else None
        if bounded is not None:  # the statement bounds the key's values (sql.key_domain)
            parts.append(([pos], [(v,) for v in bounded]))
            continue
        if base is None or base not in scans:
            raise UnsupportedQueryError(
                f"GROUP BY {name} is not supported in a private query: a group key must be a "
                "column with declared group keys (SET GROUP KEYS ON t (c) VALUES (…)), a column "
                "of a public table, an expression of dates or numbers the statement bounds "
                "(WHERE d BETWEEN DATE '…' AND DATE '…'), or a CASE whose every result is a "
                "constant, so that the set of groups is public"
                + unproved_hint(plan.child, key) + SELECTION_HINT)
        scan, column = scans[base]
        if keys is not None:
            types = dict(zip(scan.columns, scan.types))
            values = declared.key_values(keys, types.get(column) or _column_type(con, scan, column))
            parts.append(([pos], [(v,) for v in values]))
            continue
        if scan.slots:
            raise UnsupportedQueryError(
                f"GROUP BY {name} is not supported in a private query: it is a column of the "
                f"protected table {scan.table}, so the groups themselves would reveal protected "
                f"rows. Declare the groups: SET GROUP KEYS ON {scan.table} ({column}) VALUES (…), "
                f"or SET GROUP KEYS ON {scan.table} ({column}) FROM a public table (column); or "
                "group by a column of a public table (join a public list of the values)"
                + SELECTION_HINT)
        entry = public.setdefault(id(scan), (scan, [], []))
        entry[1].append(pos)
        entry[2].append(column)
    for scan, positions, columns in public.values():  # narrowed by public conditions
        rows = engine_of(con).fetchall(distinct_sql(plan.child, scan, columns))
        parts.append((positions, [tuple(r) for r in rows]))
    parts.sort(key=lambda part: part[0][0])  # in the order of the first key of each part
    n = len(plan.group_by)
    out = []
    for combo in itertools.product(*(values for _, values in parts)):
        g = [None] * n
        for (positions, _), values in zip(parts, combo):
            for p, v in zip(positions, values):
                g[p] = v
        out.append(tuple(g))
    return out


def _column_type(con, scan: Scan, column: str) -> str:
    info = con._catalog.find_table([p for p in (scan.catalog, scan.schema, scan.table) if p])
    return dict(zip(info.columns, info.types))[column]


def _key_names(plan: Aggregate) -> list[str]:
    names = dict(zip(plan.child.ids, plan.child.names))
    return [names.get(k, k) for k in plan.group_by]


OPTIONS = {
    "theta": "θ, the smallest sensitivity the mechanism assumes (default 1; for a SUM, the scale "
             "of one participant's contribution)",
    "beta": "β (default min(ε/5, 1); at most 1)",
    "mu": "μ (default 1 for node-style, 0.5 for edge-style privacy)",
    "split": "the share of ε spent on the noisy sensitivity Δ̂ (ε₁ = split·ε; default 1/2)",
    "privacy": "'node' or 'edge': only picks the default μ",
}

#: the bounds of a SUM's values, for every mechanism: values are clamped to [lower, upper]
MECHANISMS = ("laplace", "recursive", "r2t")

BOUND_OPTIONS = {
    "mechanism": "'laplace', 'recursive' or 'r2t' (default: the Laplace mechanism when every "
                 "participant owns one tuple of bounded weight, else the recursive mechanism; "
                 "'r2t' is faster on large joins at an accuracy cost)",
    "lower": "the smallest value one tuple adds to a SUM (values below are clamped up)",
    "upper": "the largest value one tuple adds to a SUM (values above are clamped down)",
    "max_groups": "the most GROUP BY groups one participant's tuples may fall in, enforced by "
                  "keeping each participant's first k groups; each group then gets ε/k instead "
                  "of ε/groups (default: all groups; not needed when the plan proves one group "
                  "per participant)",
    "aggregates": "'joint' or 'split': whether a statement's several aggregates share one ℓ1 "
                  "bound at the full ε where the plan proves them one participant's (default "
                  "'joint'), or each gets its share of ε; one aggregate: the same either way",
}


def sum_bounds(options: dict) -> tuple[float, float] | None:
    """The ``OPTIONS (lower = …, upper = …)`` of a SUM, validated, or None when absent."""
    given = [k for k in ("lower", "upper") if k in options]
    if not given:
        return None
    if len(given) == 1:
        raise ProgrammingError("give both bounds of a SUM: OPTIONS (lower = a, upper = b)")
    lo, hi = options["lower"], options["upper"]
    if isinstance(lo, str) or isinstance(hi, str):
        raise ProgrammingError("options lower and upper must be numbers")
    lo, hi = float(lo), float(hi)
    if not lo < hi:
        raise ProgrammingError(f"option lower must be below upper, got [{lo}, {hi}]")
    if max(abs(lo), abs(hi)) > 1e15:
        raise ProgrammingError("SUM bounds must lie within ±1e15")
    return lo, hi


def _refuse_unknown(options: dict, also: dict | None = None) -> None:
    """An option no mechanism knows (a typo, ``foo``) is named as unknown, with the list."""
    known = {**OPTIONS, **BOUND_OPTIONS}
    unknown = sorted(set(options) - set(known) - set(also or ()))
    if unknown:
        raise ProgrammingError(
            f"unknown option {unknown[0]!r}; the options are "
            + ", ".join(f"{k} ({v})" for k, v in known.items())
        )


def mechanism_kwargs(options: dict, epsilon: float, style: str) -> tuple[str, dict]:
    """Validate a private query's OPTIONS into recursive-mechanism keyword arguments."""
    _refuse_unknown(options)
    kwargs = {}
    for key in ("theta", "beta", "mu"):
        if key in options:
            kwargs[key] = _number(options, key)
    if "split" in options:
        share = _number(options, "split")
        if not 0 < share < 1:
            raise ProgrammingError("option split must be strictly between 0 and 1")
        kwargs["eps1"] = share * epsilon
        kwargs["eps2"] = epsilon - kwargs["eps1"]
    if "privacy" in options:
        style = str(options["privacy"]).lower()
        if style not in ("node", "edge"):
            raise ProgrammingError("option privacy must be 'node' or 'edge'")
    try:
        if "beta" in kwargs:
            check_beta(kwargs["beta"])  # (0, BETA_CAP]: a larger β only adds noise
        params = resolve_params(epsilon, style, **kwargs)  # validate now: nothing charged yet
        if "mu" in kwargs:
            check_mu(params)  # past ln(2^53)·β/ε₁ a larger μ only adds noise
    except ValueError as e:
        raise ProgrammingError(f"invalid mechanism options: {e}") from e
    return style, kwargs


#: the range of the recursive mechanism's numeric options: outside it the LPs would see numbers
#: they cannot take (1e-300, 1e300), whatever the data
OPTION_RANGE = (1e-9, 1e15)


def _number(options: dict, key: str) -> float:
    value = options[key]
    if isinstance(value, str) or not value > 0:
        raise ProgrammingError(f"option {key} must be a positive number, got {option_text(value)}")
    lo, hi = OPTION_RANGE
    if not Fraction(repr(lo)) <= value <= Fraction(repr(hi)):  # the limits as written: included
        raise ProgrammingError(f"option {key} must lie between {lo:g} and {hi:g}, got {float(value):g}")
    return float(value)


@dataclass
class Decision:
    """How one aggregate will be released — decided from the statement, the schema, the
    declarations and public tables only, before any protected row is read or ε charged.
    ``route`` is its row of :data:`provsql_dp.privacy.routing.ROUTES`, ``path`` its name."""

    plan: Aggregate
    epsilon: float
    groups: list
    key_names: list
    path: str | None = None  # the route's name: "laplace", "single-owner", "k-star", …
    own: object = None
    bounds: tuple | None = None
    style: str = "edge"
    kwargs: dict = field(default_factory=dict)
    signed: bool = False
    max_groups: int | None = None
    star: object = None  # StarShape / TriangleShape (routes k-star, k-triangle)
    choice: str | None = None  # OPTIONS (mechanism = …), validated
    route: object = None
    memo: dict = field(default_factory=dict)  # what the routes' applies computed (shapes)


def facts(con, plan: Aggregate, epsilon, options: dict) -> Decision:
    """What every aggregate route is decided from, with the options they all share validated
    (bounds, ``max_groups``, ``mechanism``); no route chosen yet."""
    bounds = (sum_bounds(options) or plan.bounds) if plan.kind == "sum" else None
    if plan.kind == "count" and (set(options) & {"lower", "upper"}):
        raise ProgrammingError("options lower and upper bound the values of a SUM; a COUNT has none")
    groups = group_domain(con, plan) if plan.group_by else [()]
    names = _key_names(plan) if plan.group_by else []
    own = owners(plan.child)
    max_groups = _max_groups(options, plan, own)
    choice = _mechanism_choice(options)
    aggregates_l1.strategy_option(options)  # statement-level: validated, no effect on one
    if choice == "laplace" and not laplace_applies(plan, own, bounds):
        raise ProgrammingError(
            "the Laplace mechanism needs a sensitivity from the declarations: every participant "
            "must own at most one tuple (one row per participant, public tables joined on a "
            "declared key) and a SUM needs bounds: OPTIONS (lower = …, upper = …) or "
            "SET BOUNDS ON t (c) BETWEEN a AND b")
    return Decision(plan, float(epsilon), groups, names, own=own, bounds=bounds,
                    max_groups=max_groups, choice=choice)


def as_r2t(con, d: Decision, options: dict) -> Decision:
    """Route r2t: the user's choice, never the data's; its options validated."""
    return replace(d, max_groups=None, kwargs=r2t_kwargs(
        options, d.plan.kind, d.bounds, default_gap=getattr(con, "lp_gap", None)))


def as_laplace(con, d: Decision, options: dict) -> Decision:
    """Route laplace: refuses the options of the other mechanisms."""
    extra = sorted(set(options) - set(BOUND_OPTIONS))
    _refuse_unknown(options, R2T_OPTIONS)
    if extra:
        which = ("R2T (OPTIONS (mechanism = 'r2t', …))" if extra[0] not in OPTIONS
                 else "the recursive mechanism")
        raise ProgrammingError(
            f"option {extra[0]} applies to {which}; this query is answered by "
            "the Laplace mechanism (each participant owns one tuple of bounded weight)")
    return replace(d, max_groups=None)


def as_recursive(con, d: Decision, options: dict, star=None) -> Decision:
    """Routes single-owner, k-star, k-triangle and recursive-lp: the recursive mechanism's
    parameters at each group's ε; ``star`` the shape of a k-star or k-triangle count."""
    plan = d.plan
    eps = d.epsilon / max(1, min(len(d.groups), d.max_groups or len(d.groups)))  # 0 groups: none
    if l1_across_groups(d):  # one ℓ1 bound across the groups: the full ε (group_l1)
        eps = d.epsilon
    style, kwargs = mechanism_kwargs(options, eps, privacy_style(plan))
    # Signed or not is read from the statement and the schema, never from the data: a SUM is
    # released in two parts unless its bounds, or its argument (sql._nonnegative), are ≥ 0.
    nonneg = lambda: nonnegative_weight(con._catalog, plan)  # noqa: E731 (kept with the plan)
    signed = plan.kind == "sum" and (d.bounds[0] < 0 if d.bounds is not None
                                     else not kept_for_plan(con, plan, ("nonnegative",), nonneg))
    if signed and "split" in options:
        raise ProgrammingError("option split is not available for a signed SUM (each part gets ε/2); "
                               "declare nonnegative bounds, OPTIONS (lower = 0, upper = …)")
    return replace(d, style=style, kwargs=kwargs, signed=signed, star=star)


def release_r2t_route(con, d: Decision, charge_fn, rng):
    return release_r2t(con, d.plan, d.epsilon, d.groups, d.key_names, d.bounds, d.kwargs,
                       charge_fn, rng, lambda kr, g: _restrict(kr, d.key_names, g))


def release_laplace_route(con, d: Decision, charge_fn, rng):
    return release_laplace(con, d.plan, d.epsilon, d.groups, d.key_names, d.bounds, charge_fn, rng)


def release_single_owner_route(con, d: Decision, charge_fn, rng):
    if l1_across_groups(d):
        return group_l1.release(con, d, charge_fn, rng)
    return release_single_owner(con, d.plan, d.own, d.epsilon, d.groups, d.key_names, d.style,
                                d.kwargs, d.signed, d.bounds, charge_fn, rng,
                                fallback=lambda eps: _fallback(con, d.plan, eps, d, rng),
                                max_groups=d.max_groups)


def release_subgraph_route(con, d: Decision, charge_fn, rng):
    return release_kstar(con, d.plan, d.star, d.epsilon, d.style, d.kwargs, charge_fn, rng,
                         lambda eps, why: _fallback(con, d.plan, eps, d, rng, why=why),
                         LP_TIME_LIMIT)


def release_lp_route(con, d: Decision, charge_fn, rng):
    """The recursive mechanism's LPs, one release per group; ``charge_fn()`` charges the ledger
    before any row is read. Returns (description, rows, PrivacyInfo)."""
    plan = d.plan
    eps = d.epsilon / max(1, len(d.groups))  # no group: nothing released
    charge = charge_fn()
    try:
        kr, why = capture(engine_of(con), plan, sum_clamp(d.bounds, d.signed),
                          max_rows=max_rows_of(con), columns=d.key_names), None
    except (CaptureTooLarge, _deadline.DeadlineExceeded) as e:  # no data read (incident: why)
        kr, why = None, str(e)
    release = rm.release_signed if d.signed else rm.release
    releases, rows = [], []
    for i, g in enumerate(d.groups):
        report("releasing group", i + 1, len(d.groups))
        try:
            if kr is None:
                raise SolverError(why)
            with _deadline.deadline(_deadline.budget_of(con)):  # each group's whole release
                rel = release(_restrict(kr, d.key_names, g), eps, d.style, rng,
                              time_limit=LP_TIME_LIMIT, **d.kwargs)
        except SolverError as e:  # the LP's status or time limit: data-independent (group_epsilon)
            late = str(e) if isinstance(e, _deadline.DeadlineExceeded) else None
            rel = _fallback(con, plan, eps, d, rng, why=why or late)
        releases.append(rel)
        rows.append(tuple(g) + (rel.value,))
    desc = [(n, "VARCHAR") for n in d.key_names] + [(plan.label, "DOUBLE")]
    mech = releases[0].mechanism if releases else "recursive-signed" if d.signed else "recursive"
    info = PrivacyInfo(mechanism=mech, epsilon=charge.epsilon,
                       remaining=charge.remaining, releases=tuple(releases))
    return desc, rows, info


def answer_private(con, plan: Aggregate | Aggregates, epsilon, text: str, options: dict, rng,
                   *, decide, before_charge):
    """Release the aggregates of ``plan`` privately at ``epsilon``; returns (description, rows,
    PrivacyInfo). ``decide`` picks each aggregate's route
    (:func:`provsql_dp.privacy.routing.decide`); ``before_charge(con, decisions)`` runs the
    checks that precede the charge (:func:`provsql_dp.privacy.routing.before_charge`)."""
    if isinstance(plan, Aggregates):
        return answer_several(con, plan, epsilon, text, options, rng, decide=decide,
                              before_charge=before_charge)
    d = decide(con, plan, epsilon, options)
    before_charge(con, [d])
    mechanism = d.path if d.path in ("laplace", "r2t") else "recursive"
    # charged (ε never depends on the data) before anything read is released (charge_ahead)
    return charged_release(con, epsilon, text, mechanism,
                           lambda charge_fn: d.route.release(con, d, charge_fn, rng))


def answer_several(con, plan: Aggregates, epsilon, text: str, options: dict, rng, *, decide,
                   before_charge):
    """Several aggregates (or an AVG) in one select list: every aggregate column gets an equal
    share of ε (an AVG splits its share between its SUM and its COUNT), or the whole ε with one
    ℓ1 bound across them (:mod:`.aggregates_l1`); one ledger charge."""
    col_bounds = centred_avg.column_bounds(plan, sum_bounds(options))  # an AVG's refused
    # ε / aggregates, or one ℓ1 bound across them (aggregates_l1): validated before any charge
    decisions = aggregates_l1.decide_all(con, plan, epsilon, options, decide, mechanism_kwargs)[0]
    centres = centred_avg.centre_avg_sums(plan, decisions)  # an AVG (Laplace, single-owner): centred
    before_charge(con, decisions)
    paths = sorted({d.path if d.path in ("laplace", "r2t") else "recursive" for d in decisions})

    def release(charge_once):  # charged before anything read is released (charge_ahead)
        results = [None] * len(decisions)
        if decisions[0].memo.get("l1") is not None:  # one vector: every aggregate at the full ε
            results = aggregates_l1.release(con, decisions, charge_once, rng)
        for col in plan.columns if results[0] is None else ():  # noise drawn part after part
            ds = [decisions[i] for i in col.parts]
            if col.kind == "avg" and all(d.path == "laplace" for d in ds):  # SUM, COUNT: 1 scan
                s, c = col.parts
                results[s], results[c] = release_laplace_avg(
                    con, ds[0].plan, ds[1].plan, ds[0].epsilon, ds[1].epsilon, ds[0].groups,
                    ds[0].key_names, ds[0].bounds, charge_once, rng, ds[0].memo.get("centre"))
                continue
            for i in col.parts:
                results[i] = decisions[i].route.release(con, decisions[i], charge_once, rng)
        names = decisions[0].key_names
        rows, releases = column_rows(plan, decisions[0].groups, col_bounds, lambda i, gi: (
            results[i][1][gi][-1], results[i][2].releases[gi]), centres)
        desc = [(n, "VARCHAR") for n in names]
        for col in plan.columns:
            first = results[col.parts[0]][0][-1][1]
            desc.append((col.label, "DOUBLE" if col.kind == "avg" else first))
        charge = charge_once()
        info = PrivacyInfo(mechanism="+".join(paths), epsilon=charge.epsilon,
                           remaining=charge.remaining, releases=tuple(releases),
                           columns=tuple(c.label for c in plan.columns))
        return desc, rows, info
    return charged_release(con, epsilon, text, "+".join(paths), release)


#: seconds one linear program of a release may run; past it (or on any solver failure) the group
#: is released by :func:`_fallback`, so that no solver outcome reaches the analyst. A group's
#: whole release (its LPs and their preparation) also runs within
#: the connection's ``release_time_limit`` (:mod:`provsql_dp._deadline`), with the same
#: fallback past it
LP_TIME_LIMIT = 120.0


def _fallback(con, plan, eps: float, d: Decision, rng, why: str | None = None):
    """A release that reads no data, for a group whose LP failed (or whose capture passed
    ``max_capture_rows``, ``why``): ``0`` released like any
    recursive-mechanism release at ``Δ̂ = θe^μ`` (the ``Δ̂`` of ``ĵ = 0``), on the same public grid
    (:func:`~provsql_dp.mechanisms.recursive.release.release_x`); a signed release is two such parts at
    ε/2, like ``release_signed``. Its ε is spent either way. The curator finds the incident in
    ``_provsql_dp.incidents``; the analyst's outcome does not show it (same shape, same grid)."""
    what = why or "recursive-mechanism LP failed"
    con._catalog.record_incident(f"{what} ({plan.label!r}); released the data-independent fallback")
    gen = resolve_rng(rng)

    def part(e: float, mech: str) -> Release:
        params = resolve_params(e, d.style, **d.kwargs)
        delta_hat = params["theta"] * math.exp(params["mu"])
        value = release_x(0.0, delta_hat, params["eps2"], gen)
        return Release(value=value, epsilon=e, delta_hat=delta_hat, params=params, mechanism=mech)

    if not d.signed:
        return part(eps, "recursive")
    pos, neg = part(eps / 2, "recursive"), part(eps / 2, "recursive")
    params = dict(pos.params)
    params["split"] = "half the budget to each of the positive and negative parts"
    return Release(value=pos.value - neg.value, epsilon=pos.epsilon + neg.epsilon,
                   delta_hat=max(pos.delta_hat, neg.delta_hat), params=MappingProxyType(params),
                   mechanism="recursive-signed", parts=(pos, neg))


def _max_groups(options: dict, plan: Aggregate, own) -> int | None:
    """``OPTIONS (max_groups = k)``, validated: a positive whole number, on a GROUP BY whose
    tuples each have one owner (the bound is enforced per participant)."""
    if "max_groups" not in options:
        return None
    k = options["max_groups"]
    if isinstance(k, str) or not float(k).is_integer() or not 1 <= k <= 10**6:
        raise ProgrammingError(f"option max_groups must be a whole number from 1 to 10^6, got {option_text(k)}")
    if not plan.group_by:
        raise ProgrammingError("option max_groups bounds the groups of a GROUP BY; this query has none")
    if own is None:
        raise ProgrammingError(
            "option max_groups is enforced per participant, which needs every tuple to have one "
            "owner (no DISTINCT, UNION or join of two participants); this query has several")
    return int(k)


def _mechanism_choice(options: dict) -> str | None:
    choice = options.get("mechanism")
    if choice is None:
        return None
    if not isinstance(choice, str) or choice.lower() not in MECHANISMS:
        raise ProgrammingError(f"option mechanism must be one of {', '.join(MECHANISMS)}, got {option_text(choice)}")
    return choice.lower()


def _equals(col, v) -> np.ndarray:
    """Vectorised ``col == v`` over a result column (NULL equals only None, as in GROUP BY)."""
    if isinstance(col, np.ma.MaskedArray):
        null, data = np.ma.getmaskarray(col), col.data
    else:
        data = np.asarray(col)
        null = np.equal(data, None) if data.dtype == object else np.zeros(len(data), dtype=bool)
    if v is None:
        return null
    if data.dtype.kind == "M":
        v = np.datetime64(v)
    return ~null & np.asarray(data == v, dtype=bool)


def _restrict(kr, key_names, g):
    """The sub-relation of one GROUP BY group (the whole relation without GROUP BY)."""
    return kr.restrict(_group_mask(kr, key_names, g)) if key_names else kr


def _group_mask(kr, key_names, g):
    """The tuples of ``kr`` in group ``g``."""
    mask = np.ones(len(kr), dtype=bool)
    for name, v in zip(key_names, g):
        mask &= _equals(kr.values[kr.columns.index(name)], v)
    return mask
