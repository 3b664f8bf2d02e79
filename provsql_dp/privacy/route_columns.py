"""The columns a private statement releases, known before it runs: from the statement, its plan
and the declarations, route by route — nothing charged, no protected row read. A wire client
that decodes rows by its prepared statement's Describe (asyncpg) reads them
(:func:`provsql_dp.interfaces.pgwire._describe.private_columns`).

Each route's columns are typed as its release types them, from the objects it prepares before
its charge (its release, named below, builds its description from them; each is checked against
its run in tests/unit/interfaces/pgwire/test_describe_routes.py):

* quantile, variance (:func:`.quantile_route.answer`, :func:`.variance_route.answer`): the
  GROUP BY key as its column's type, the statistic ``DOUBLE``;
* ``COUNT(DISTINCT …)`` over declared keys (:func:`.distinct_route.answer`): ``BIGINT``;
* Blowfish and δ policy histograms and ranges (:func:`.policy_route.route`): the route's
  description of its bins, the keys typed over its public labels, the count ``BIGINT`` (``DOUBLE``
  under ``OPTIONS (raw = true)``);
* ``WITH EPSILON ε DELTA δ`` / ``WITH RHO ρ`` (:func:`.gaussian_route.release`): a smooth-
  sensitivity median ``DOUBLE``; the Gaussian or Laplace release of aggregates and partition
  selection, as the aggregate routes: keys typed by the plan, a COUNT ``BIGINT``, others ``DOUBLE``
  (raw or not: their integer noise is drawn so);
* a select list mixing a quantile or variance with other aggregates (:func:`.mixed_route.
  columns`): each part's columns by its own route, placed as written;
* the aggregate routes (Laplace, single-owner, R2T, the recursive mechanism): keys typed by the
  plan, a COUNT ``BIGINT``, any other aggregate ``DOUBLE``; a raw COUNT is typed by the route
  its run decides for it (:data:`RAW_COUNT`).

A GROUP BY key the plan cannot type is typed at the run from its released values: such a
statement's columns are not known before it runs (a string: the reason and the way out).

>>> import provsql_dp
>>> from provsql_dp.privacy import routing
>>> from provsql_dp.sql import dialect as d
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE p(id INT PRIMARY KEY, g INT, x DOUBLE); PROTECT TABLE p")
>>> _ = con.execute("SET BOUNDS ON p (x) BETWEEN 0 AND 10; SET GROUP KEYS ON p (g) VALUES (1, 2)")
>>> st = routing.Statement(con, d.parse_one("SELECT g, MEDIAN(x) AS m FROM p GROUP BY g"), {})
>>> route_columns(st, routing.choose(st))
([('g', 'INTEGER'), ('m', 'DOUBLE')], 1)
"""

from __future__ import annotations

from ..errors import InternalError
from ..sql.plan import Aggregate, Aggregates
from . import (distinct_route, gaussian_route, mixed_route, quantile_route, smooth_median_route,
               variance_route)
from .answer import _key_names
from .key_types import plan_key_types, typed_keys

__all__ = ["route_columns", "aggregate_columns", "UNTYPED_KEY", "RAW_COUNT"]

#: why a statement whose GROUP BY key its plan cannot type is not described, and the way out
UNTYPED_KEY = ("a GROUP BY key's type is known from its released values: group by a column, or "
               "by a CAST of the expression to the type wanted")
#: why a raw COUNT in pure ε is not described: its aggregate route (decided as it runs) types it
RAW_COUNT = ("a raw COUNT is typed by the aggregate route its run decides (BIGINT on the Laplace "
             "route, DOUBLE on the others): leave out OPTIONS (raw = true), and the COUNT is "
             "BIGINT")


def route_columns(st, route, cost=None, raw: bool = False) -> tuple[list, int] | str:
    """``(columns, k)``: the ``(name, DuckDB type)`` columns statement ``st`` releases by
    ``route`` (:func:`.routing.choose`'s; ``cost``: a δ or ρ cost, whose release chooses its own),
    before post-processing and interval columns, the last ``k`` its released values; or the
    reason they are known only from the released values. A refusal decided from the statement is
    raised, as its run would (nothing charged)."""
    if cost is not None:
        if smooth_median_route.applies(st, cost):
            qq, _ = smooth_median_route._prepare(st)  # its checks, before the charge
            return [(qq.label, "DOUBLE")], 1
        gaussian_route.no_mixed(st, cost)  # refused, as its release refuses them
        gaussian_route._no_quantile(st, cost)
        if isinstance(st.plan, Aggregate) and not gaussian_route._is_partition_selection(st):
            gaussian_route._decision(st, cost)  # its route's refusals (a SUM not on Laplace's)
        return aggregate_columns(st.plan, raw=False)
    if route is None:
        return aggregate_columns(st.plan, raw)
    if route.name == "mixed":  # each part's columns by its own route, placed as written
        from . import routing  # (routing imports this module's users)

        return mixed_route.columns(st, choose=routing.choose, columns_of=lambda sub, r:
                                   route_columns(sub, r, raw=raw))
    if route.name in ("quantile", "variance"):
        module = quantile_route if route.name == "quantile" else variance_route
        q = module.prepare(st.con, st.query, st.options)
        keys = [] if q.group is None else [(q.group_label, q.group_type)]
        return keys + [(q.label, "DOUBLE")], 1
    if route.name == "distinct":
        return [(distinct_route.prepare(st.con, st.query).label, "BIGINT")], 1
    if route.name == "policy":
        prep = st.policy
        desc = typed_keys(st.plan, prep.desc, prep.labels)
        return desc[:-1] + [(desc[-1][0], "DOUBLE" if raw else "BIGINT")], 1
    raise InternalError(f"no columns known for route {route.name}")  # pragma: no cover


def aggregate_columns(plan, raw: bool = False) -> tuple[list, int] | str:
    """An Aggregate's or Aggregates' columns (see the module), or the reason they are not known
    (:data:`UNTYPED_KEY`, :data:`RAW_COUNT`)."""
    first = plan.parts[0] if isinstance(plan, Aggregates) else plan
    keys = plan_key_types(plan)
    if any(t is None for t in keys):
        return UNTYPED_KEY
    if isinstance(plan, Aggregate):
        values = [(plan.label, plan.kind == "count")]
    else:
        values = [(c.label, c.kind != "avg" and plan.parts[c.parts[0]].kind == "count")
                  for c in plan.columns]
    if raw and any(count for _, count in values):
        return RAW_COUNT
    desc = [(nm, str(t)) for nm, t in zip(_key_names(first), keys)]
    return desc + [(nm, "BIGINT" if count else "DOUBLE") for nm, count in values], len(values)
