"""Every route a private statement can take, in one ordered table: :data:`ROUTES`.

A private statement (``… WITH EPSILON ε``, ``WITH ACCURACY α``, or ``EXPLAIN PRIVACY …``) takes
the **first** route whose ``applies`` holds. ``applies`` reads the statement, its plan, its
OPTIONS and the declarations (with public tables) only — never a protected row — so the route,
like the ε charged, is the same on every database. ``EXPLAIN PRIVACY`` (:func:`explain`) and the
release (:func:`release`) both choose from this table, so they cannot disagree: each ``EXPLAIN
PRIVACY`` row names its route (column ``route``) and the release lists the routes it took
(``cursor.privacy.routes``), one per row of ``EXPLAIN PRIVACY``.

=====  ==============  ==========  =================================================================
order  route           scope       applies when
=====  ==============  ==========  =================================================================
0      mixed           statement   a quantile or variance beside other aggregates: each part by
                                   its own route at its share of ε, charged once
                                   (:mod:`.mixed_route`)
1      quantile        statement   MEDIAN / QUANTILE_CONT / QUANTILE_DISC of one column
1b     variance        statement   VAR_SAMP / VAR_POP / STDDEV_* of one bounded column
                                   (:mod:`.variance_route`)
1c     distinct        statement   COUNT(DISTINCT c) of a column with declared keys on a
                                   row-per-participant table (:mod:`.distinct_route`)
2      refused         statement   the plan releases raw rows, or reads no protected table
3      policy          statement   a COUNT histogram / range workload on a row-per-participant
                                   table under a Blowfish or δ policy (:mod:`.policy_route`)
4      r2t             aggregate   ``OPTIONS (mechanism = 'r2t')``
5      laplace         aggregate   not ``mechanism = 'recursive'``, and the declarations bound each
                                   participant's tuples and each tuple's weight (:mod:`.fast_path`)
6      single-owner    aggregate   every tuple has one owner (the closed form, no LP; groups a
                                   participant may span: one ℓ1 bound across them, :mod:`.group_l1`)
7      k-star          aggregate   a k-star count of a declared edge table (:mod:`.kstar_route`)
8      k-triangle      aggregate   a k-triangle count of one (:mod:`.ktriangle_route`)
9      recursive-lp    aggregate   everything else: the recursive mechanism's LPs on HiGHS
=====  ==============  ==========  =================================================================

A statement no *statement* route takes is a list of aggregates (one, several, or an AVG — a SUM
and a COUNT): each takes the first *aggregate* route that applies to it
(:func:`decide`), with its share of ε — or, when every aggregate takes the single-owner route
over the same rows, the full ε with one ℓ1 bound across them (:mod:`.aggregates_l1`, decided in
one place for the release and ``EXPLAIN PRIVACY``) — and the statement is charged once.

Charging: every route charges the ledger itself, before it reads a protected row — but the
aggregate routes, whose known-budget charge may run while they read (:mod:`.charge_ahead`;
still before anything read is released, and a charge that does not go through discards the
read and charges first). The checks every release shares before that charge run in one place,
:func:`before_charge`, after the routes are chosen and every option is validated.

>>> [r.name for r in ROUTES]  # doctest: +NORMALIZE_WHITESPACE
['mixed', 'quantile', 'variance', 'distinct', 'refused', 'policy', 'r2t', 'laplace', 'single-owner',
 'k-star', 'k-triangle', 'recursive-lp']
>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE p(id INT PRIMARY KEY, age INT); PROTECT TABLE p")
>>> _ = con.execute("SET PRIVACY BUDGET 2")
>>> con.execute("EXPLAIN PRIVACY SELECT COUNT(*) FROM p WITH EPSILON 1").fetchall()[0][8]
'laplace'
>>> con.execute("SELECT COUNT(*) FROM p WITH EPSILON 1").privacy.routes
('laplace',)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Callable

from ..errors import ProgrammingError, UnsupportedQueryError
# Policy kinds plug in from above: importing the δ-neighbourhood SQL layer registers the DELTA
# kind with the policy grammar (provsql_dp.sql.policy_grammar.register_policy_kind) and its
# builder with the Blowfish SQL layer; the grammar itself imports no policy.
from ..policies.delta import sql as _delta_sql  # noqa: F401  (imported for its registration)
from ..provenance.backends import engine_of
from ..provenance.capture import capture_sql
from ..sql import dialect as d
from ..sql.plan import Aggregate, Aggregates, Scan, walk
from ..sql.planner import plan_query
from . import (answer, distinct_route, explain_route, mixed_route, policy_route, quantile_route,
               variance_route)
from .explain_r2t import r2t_row
from .explain_policy import policy_rows
from .explain_route import with_route
from .fast_path import laplace_applies
from .key_types import typed_keys
from .kstar_route import star_shape
from .ktriangle_route import triangle_shape
from .postprocess import post_process, raw_option
from .post_sql import explain_row as post_row, prepare_post
from ..sql.public_statement import NOTHING_TO_PROTECT, split_private
from .precheck import check_decision

__all__ = ["ROUTES", "Route", "Statement", "choose", "decide", "release", "explain", "DESC",
           "before_charge"]

#: the columns of ``EXPLAIN PRIVACY`` (and of ``… ESTIMATE ERROR``): one row per released
#: aggregate (or per policy workload / quantile), with its route (the note stays last)
DESC = [("mechanism", "VARCHAR"), ("policy", "VARCHAR"), ("strategy", "VARCHAR"),
        ("queries", "INTEGER"), ("epsilon", "VARCHAR"), ("expected_rmse", "DOUBLE"),
        ("alpha", "DOUBLE"), ("confidence", "DOUBLE"), ("route", "VARCHAR"), ("note", "VARCHAR")]


@dataclass
class Statement:
    """A private statement as the routes see it: the query without its privacy clause, its
    OPTIONS (without ``intervals``, post-processing of the cursor's), and its plan, made on
    first use (``planner``: the cursor's cached planner; default :func:`plan_query`)."""

    con: object
    query: object
    options: dict
    planner: Callable | None = None
    memo: dict = field(default_factory=dict)

    @property
    def plan(self):
        if "plan" not in self.memo:
            self.memo["plan"] = (self.planner() if self.planner is not None
                                 else plan_query(self.query, self.con.catalog))
        return self.memo["plan"]

    @property
    def policy(self):
        """The policy route's analysis (:func:`.policy_route.prepare`), or None."""
        if "policy" not in self.memo:
            self.memo["policy"] = policy_route.prepare(self.con, self.query, self.plan)
        return self.memo["policy"]


@dataclass(frozen=True)
class Route:
    """One row of :data:`ROUTES`.

    Statement scope: ``applies(st)``, ``explain(st, eps, tree)`` → rows,
    ``release(st, epsilon, text, rng, raw)`` → ``(desc, rows, info)``.
    Aggregate scope: ``applies(con, dec)``, ``prepare(con, dec, options)`` → the decision,
    ``explain(con, dec, part_eps, eps, conf, alpha_goal)`` → one row,
    ``release(con, dec, charge_fn, rng)`` → ``(desc, rows, info)``.
    ``applies`` reads the statement, the plan, the OPTIONS and the declarations only."""

    name: str
    scope: str  # "statement" | "aggregate"
    applies: Callable
    explain: Callable
    release: Callable
    prepare: Callable | None = None


# ---------------------------------------------------------------------------- statement routes
def _releasable(plan) -> bool:
    return isinstance(plan, (Aggregate, Aggregates)) and any(
        isinstance(n, Scan) and n.slots for n in walk(plan))


def _refuse(st, *_):
    """The refusal of a plan no private release answers (the release's and EXPLAIN's words)."""
    if not isinstance(st.plan, (Aggregate, Aggregates)):
        raise UnsupportedQueryError(
            "a private query must end in COUNT(*), COUNT(col), COUNT(DISTINCT …), SUM(expr) or "
            "AVG(expr); raw rows are never released")
    raise UnsupportedQueryError(NOTHING_TO_PROTECT)


def _quantile_explain(st, eps, tree):
    return quantile_route.explain(st.con, st.query, eps, tree.args.get("accuracy"),
                                  tree.args.get("confidence"), st.options)[1]


def _quantile_release(st, epsilon, text, rng, raw):
    desc, rows, info = quantile_route.answer(st.con, st.query, epsilon, text, st.options, rng)
    return desc, rows, replace(info, value_names=(desc[-1][0],))


def _statement_route(module):
    """(explain, release) of a single-table statement route module (variance, distinct)."""
    def explain_(st, eps, tree):
        conf = tree.args.get("confidence")
        return module.explain(st.con, st.query, eps, st.options, 0.95 if conf is None
                              else float(d.exact_number(conf, "the confidence")))

    def release_(st, epsilon, text, rng, raw):
        desc, rows, info = module.answer(st.con, st.query, epsilon, text, st.options, rng)
        return desc, rows, replace(info, value_names=(desc[-1][0],))
    return explain_, release_


def _policy_release(st, epsilon, text, rng, raw):
    options = dict(st.options)
    keep_raw = raw_option(options.pop("raw", None), raw)
    desc, rows, info = policy_route.route(st.con, st.query, st.plan, epsilon, text, options,
                                          prep=st.policy)
    return _served(st.plan, desc, rows, info, keep_raw)


def _policy_explain(st, eps, tree):
    return policy_rows(st.con, st.policy, st.options, eps, tree)


# ---------------------------------------------------------------------------- aggregate routes
def _shape(con, dec, which):
    """The k-star / k-triangle shape of an aggregate (computed once per decision)."""
    if which not in dec.memo:
        dec.memo[which] = (star_shape if which == "k-star" else triangle_shape)(con, dec.plan)
    return dec.memo[which]


def _r2t_row(con, dec, part_eps, eps, conf, alpha_goal):
    row = r2t_row(con, dec, part_eps, float(conf))
    return row[:4] + (explain_route.shown(eps),) + row[5:]


ROUTES: tuple[Route, ...] = (
    Route("mixed", "statement", mixed_route.applies,
          lambda st, eps, tree: mixed_route.explain(st, eps, tree, choose=choose, decide=decide),
          lambda st, eps, text, rng, raw: mixed_route.release(
              st, eps, text, rng, raw, choose=choose, release_part=release)),
    Route("quantile", "statement", lambda st: quantile_route.is_quantile_query(st.query),
          _quantile_explain, _quantile_release),
    Route("variance", "statement", lambda st: variance_route.is_variance_query(st.query),
          *_statement_route(variance_route)),
    Route("distinct", "statement", lambda st: distinct_route.applies(st.con, st.query, st.options),
          *_statement_route(distinct_route)),
    Route("refused", "statement", lambda st: not _releasable(st.plan), _refuse, _refuse),
    Route("policy", "statement", lambda st: st.policy is not None, _policy_explain,
          _policy_release),
    Route("r2t", "aggregate", lambda con, dec: dec.choice == "r2t", _r2t_row,
          answer.release_r2t_route, answer.as_r2t),
    Route("laplace", "aggregate",
          lambda con, dec: dec.choice != "recursive" and laplace_applies(dec.plan, dec.own,
                                                                         dec.bounds),
          explain_route.laplace_row, answer.release_laplace_route, answer.as_laplace),
    Route("single-owner", "aggregate", lambda con, dec: dec.own is not None,
          explain_route.recursive_row, answer.release_single_owner_route, answer.as_recursive),
    Route("k-star", "aggregate", lambda con, dec: _shape(con, dec, "k-star") is not None,
          explain_route.recursive_row, answer.release_subgraph_route,
          lambda con, dec, options: answer.as_recursive(con, dec, options,
                                                        _shape(con, dec, "k-star"))),
    Route("k-triangle", "aggregate", lambda con, dec: _shape(con, dec, "k-triangle") is not None,
          explain_route.recursive_row, answer.release_subgraph_route,
          lambda con, dec, options: answer.as_recursive(con, dec, options,
                                                        _shape(con, dec, "k-triangle"))),
    Route("recursive-lp", "aggregate", lambda con, dec: True,
          explain_route.recursive_row, answer.release_lp_route, answer.as_recursive),
)

_STATEMENT = tuple(r for r in ROUTES if r.scope == "statement")
_AGGREGATE = tuple(r for r in ROUTES if r.scope == "aggregate")


def choose(st: Statement) -> Route | None:
    """The statement route of ``st``, or None: its aggregates each take an aggregate route."""
    return next((r for r in _STATEMENT if r.applies(st)), None)


def decide(con, plan: Aggregate, epsilon, options: dict):
    """The decision of one aggregate: the options validated, and the first aggregate route that
    applies (:attr:`~.answer.Decision.route`), before any protected row is read."""
    dec = answer.facts(con, plan, epsilon, options)
    rest = {k: v for k, v in options.items() if k not in ("max_groups", "mechanism", "aggregates")}
    route = next(r for r in _AGGREGATE if r.applies(con, dec))
    return route.prepare(con, replace(dec, path=route.name, route=route), rest)


def before_charge(st: Statement, decisions=()) -> None:
    """The one place of the checks every release runs after its route is chosen (and, for
    aggregates, each aggregate's route decided and its options validated) and before the ledger
    is charged: a refusal here spends nothing. ``decisions``: the aggregates' (none for a
    statement route). Another engine refuses what it cannot run; what the statement alone decides
    (a noise scale out of range) is refused by :func:`.precheck.check_decision`."""
    for dec in decisions:
        check_decision(dec)
    engine = engine_of(st.con)
    if engine.dialect != "duckdb":
        for dec in decisions:
            engine.check(capture_sql(dec.plan, dec.bounds, partitioned=bool(
                getattr(engine, "partitioned_ranks", False)))[0])


# ---------------------------------------------------------------------------- the two readers
_CHOOSE = object()  # release() was given no route: choose it


def release(st: Statement, epsilon, text: str, *, raw: bool = False, rng=None, route=_CHOOSE):
    """Release ``st`` at ``epsilon`` by its route (``route``: :func:`choose`'s, None included,
    when the caller chose it already); ``(desc, rows, PrivacyInfo)`` with ``info.routes`` the
    routes taken."""
    con = st.con
    rng = rng if rng is not None else getattr(con, "_rng", None)
    route = choose(st) if route is _CHOOSE else route
    if route is not None:
        before_charge(st)
        desc, rows, info = route.release(st, epsilon, text, rng, raw)
        # one EXPLAIN PRIVACY row (a mixed list: its parts' routes, one per row)
        return desc, rows, replace(info, routes=info.routes if route.name == "mixed"
                                   else (route.name,))
    options = dict(st.options)
    keep_raw = raw_option(options.pop("raw", None), raw)
    taken = []

    def decide_and_keep(con, plan, eps, opts):
        taken.append(decide(con, plan, eps, opts))
        return taken[-1]

    desc, rows, info = answer.answer_private(con, st.plan, epsilon, text, options, rng,
                                             decide=decide_and_keep,
                                             before_charge=lambda _, decs: before_charge(st, decs))
    desc, rows, info = _served(st.plan, desc, rows, info, keep_raw)
    return desc, rows, replace(info, routes=tuple(dec.path for dec in taken))


def _served(plan, desc, rows, info, raw):
    """Every route answering a plan ends here: its COUNTs post-processed, its GROUP BY keys
    described by their types (:func:`.key_types.typed_keys`; the routes leave them VARCHAR)."""
    desc, rows, info = post_process(plan, desc, rows, info, raw)  # free: post-processing
    desc = typed_keys(plan, desc, rows)  # the description only: the values stay
    k = len(info.columns) or 1
    return desc, rows, replace(info, value_names=tuple(c[0] for c in desc[-k:]))


def statement_of(con, tree) -> tuple[Statement, Fraction | None]:
    """The :class:`Statement` of an ``EXPLAIN PRIVACY`` node and the ε it asks (or None)."""
    inner, eps, options = tree.this, None, {}
    if isinstance(inner, d.PrivateQuery):
        if inner.args.get("epsilon") is not None:
            eps = d.exact_number(inner.args["epsilon"], "epsilon")
            if eps <= 0:
                raise ProgrammingError("epsilon must be positive")
        options = d.mechanism_options(inner)
        options.pop("intervals", None)  # post-processing: no effect on the route
        inner = inner.this
    return Statement(con, inner, options), eps


def explain(con, tree) -> tuple[list, list]:
    """``EXPLAIN PRIVACY``: ``(DESC, rows)``, each row from the route the release would take,
    its name in column ``route``. Reads no protected row (but the curator's private sizes)."""
    st, eps = statement_of(con, tree)
    st.query, post = split_private(con.catalog, st.query)  # ORDER BY, HAVING, …: afterwards
    route = choose(st)
    post = prepare_post(st, route, post)
    extra = [post_row(post.post, DESC)] if post is not None else []
    if route is not None:  # a mixed list's rows name their parts' routes already
        rows = route.explain(st, eps, tree)
        return DESC, (rows if route.name == "mixed" else
                      [with_route(row, route.name) for row in rows]) + extra
    options = dict(st.options)
    options.pop("raw", None)  # post-processing: no effect on the route
    return DESC, explain_route.explain_rows(con, st.plan, eps, tree, options, decide) + extra
