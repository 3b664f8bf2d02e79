"""The sensitivity a ``PUBLISH STREAM`` release is calibrated to: the planner's, where it derives
one, never less.

A stream's release adds Laplace noise of scale sensitivity/ε to the curator's query, run as
written. The sensitivity was the curator's ``SENSITIVITY s`` (default 1), trusted: a SUM of an
unbounded column, or a COUNT over a self-join, was released at 1 while one participant moves it
by much more (red team leftover). Now the query is planned as a private one would be
(:func:`provsql_dp.sql.planner.plan_query`, :func:`provsql_dp.privacy.routing.decide`), and where
the planner releases it with a global sensitivity — a COUNT, or a SUM of a column with declared
bounds (``SET BOUNDS``), over tables protected row by row or by an owner column with a known
number of rows per participant (its ``laplace`` route) — that sensitivity is the floor:

* no ``SENSITIVITY``: the derived one is used;
* ``SENSITIVITY s`` below it: refused, naming both; at or above it: ``s`` is used.

Where the planner derives the sensitivity, the step runs the planner's statistic, the one a
private query releases: a SUM clamped to the bounds (its derived sensitivity holds for values
within them; the basis recorded says so), every expression made total — the query as
written could fail on one participant's row (``1 // (pay - 5)`` with ``pay = 5``) and release
without it, which ``SHOW STREAMS`` shows analysts (red team h103attack, finding 4).

The neighbourhood is the stream's, not a private query's. Theorem 2 (Fang & Chang §6; Kellaris et
al.'s w-event privacy) protects one entity whose data differ within δ consecutive steps: at each
of those steps its rows may appear, vanish *or be replaced* (entities appear through the null
sequence, and an entity present at a step may hold other values in the neighbouring stream). So a
step's release must hide one participant's rows of that step replaced, not only added or removed:
a COUNT moves by at most k (the rows per participant, as for add/remove), but a SUM clamped to
``[lo, hi]`` by ``k·(max(hi, 0) − min(lo, 0))`` — ``k·(hi − lo)`` when the bounds straddle 0,
more than the planner's add/remove ``k·max(|lo|, |hi|)`` (h104 leftover 5: a SUM over ``[-5,
10]`` was released at 10 where one participant's replaced row moves it by 15). The theorem also
needs each step's release to read that step's rows only (``… WHERE day = 12``, or a table
reloaded each step): a running total over every step so far moves with one entity's rows at
every later step, which no window bounds. provsql_dp cannot tell from the query which rows belong
to which step: that part is the curator's to keep (README, "streams").

Where the planner derives none (an owner with any number of rows, a self-join, a SUM without
bounds, a query it cannot plan) the stated ``SENSITIVITY`` is kept, unchecked, and a query that
reads a protected table without one is refused. A stated sensitivity's step runs the planner's
statistic too when the query plans as one ungrouped COUNT or SUM (a SUM clamped to its declared
bounds if any, else over its finite values); a query the planner cannot plan runs as written (a default of 1 would be the curator's word
unsaid). A query that reads no protected table keeps the default 1. The sensitivity used and its
basis are recorded with each release (``SHOW STREAMS name``, column ``sensitivity``).

>>> import provsql_dp
>>> from provsql_dp.sql import dialect as d
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE v(id INT PRIMARY KEY, x DOUBLE); PROTECT TABLE v")
>>> _ = con.execute("SET BOUNDS ON v (x) BETWEEN 0 AND 10")
>>> sens, basis, sql = stream_sensitivity(con, d.parse_one("SELECT sum(x) FROM v"), None, 1.0)
>>> sens, basis, "<= 10.0::DOUBLE" in sql  # the statistic runs with the clamp
(10.0, '10, derived (SUM clamped to [0, 10], at most 1 row per participant)', True)
"""

from __future__ import annotations

import sys

from sqlglot import exp

from .._numbers import format_eps, to_fraction
from ..errors import Error, PrivacyError
from ..sql.plan import Aggregate
from ..sql.planner import plan_query

__all__ = ["stream_sensitivity"]

_ROUTES = {
    "single-owner": "a participant may own any number of the rows it reads (protected by an "
                    "owner column), so no global sensitivity bounds it",
    "recursive-lp": "it joins protected rows (a self-join, or several protected tables), which "
                    "no global sensitivity bounds",
}


def stream_sensitivity(con, query: exp.Expression, stated, epsilon: float
                       ) -> tuple[float, str, str]:
    """``(sensitivity, its basis, the SQL to run)`` of a ``PUBLISH STREAM``'s ``query`` given
    the stated ``SENSITIVITY`` (a number, or None); raises
    :class:`~provsql_dp.errors.PrivacyError` before anything is spent when ``stated`` is below
    the planner's, or missing where the planner derives none for a protected table's query."""
    derived, why, sql = _derive(con, query, epsilon)
    if derived is not None:
        if stated is not None and to_fraction(stated) < to_fraction(derived):
            raise PrivacyError(
                f"SENSITIVITY {_n(stated)} is below the sensitivity the planner derives for the "
                f"stream's query, {_n(derived)} ({why}): noise calibrated to {_n(stated)} would "
                f"not hide one participant. State SENSITIVITY {_n(derived)} or more, or leave it "
                "out (the derived one is then used); nothing was spent")
        if stated is None:
            return float(derived), f"{_n(derived)}, derived ({why})", sql
        return float(stated), f"{_n(stated)}, stated (the planner derives {_n(derived)}: {why})", sql
    if stated is not None:
        return float(stated), f"{_n(stated)}, stated, not checked ({why})", sql
    if _reads_protected(con, query):
        raise PrivacyError(
            f"the planner derives no sensitivity for the stream's query ({why}), and none is "
            "stated: give SENSITIVITY s (how far one participant can move the statistic — "
            "yours to answer for), or publish a statistic the planner bounds (a COUNT of a table "
            "protected row by row, a SUM of a column with SET BOUNDS); nothing was spent")
    return 1.0, f"1, the default ({why})", sql


def _derive(con, query: exp.Expression, epsilon: float):
    """``(the planner's sensitivity or None, why, the SQL to run)``."""
    from . import routing
    from .explain_route import _sensitivity
    from .fast_path import _kept_laplace_sql

    sql = query.sql(dialect="duckdb")
    if not _reads_protected(con, query):
        return None, "it reads no protected table", sql
    try:
        with con._catalog.snapshot():
            plan = plan_query(query.copy(), con._catalog)
            if not isinstance(plan, Aggregate) or plan.group_by:
                return None, ("it is not one ungrouped COUNT or SUM (an AVG is two aggregates)"
                              ), sql
            dec = routing.decide(con, plan, float(epsilon), {})
    except Error as e:
        return None, f"the planner cannot release it: {str(e).splitlines()[0][:200]}", sql
    one_sum = plan.kind == "count" or len(list(query.find_all(exp.Sum))) == 1
    if dec.path != "laplace":  # no sensitivity derived; the stated one runs the statistic too
        statistic = _statistic(con, plan, dec.bounds) if one_sum else sql
        if plan.kind == "sum" and dec.bounds is None:
            return None, ("a SUM of a column with no declared bounds (SET BOUNDS ON t (c) "
                          "BETWEEN lo AND hi)"), statistic
        return None, _ROUTES.get(dec.path, f"the planner releases it by its {dec.path} route, "
                                           "with no global sensitivity"), statistic
    sens, _ = _sensitivity(dec)
    k = int(dec.own.rows_per_owner)
    rows = f"at most {k} row{'s' if k != 1 else ''} per participant"
    # the statistic as the planner computes it (a private query's): its expressions total, so
    # that no participant's row makes the step fail where the others' let it release (red team
    # h103attack, finding 4: the query as written failed on 1 // (pay - 5) with pay = 5)
    if plan.kind == "count":
        return sens, f"COUNT, {rows}", _kept_laplace_sql(con, plan, None, with_count=False)[0]
    if not one_sum or dec.memo.get("centre") is not None:
        return None, "it is not one SUM the planner bounds", sql
    lo, hi = (float(b) for b in dec.bounds)
    replaced = k * (max(to_fraction(hi), 0) - min(to_fraction(lo), 0))  # the stream's neighbour
    if replaced > to_fraction(sens):  # bounds straddling 0: a replaced row moves it by hi − lo
        sens, rows = float(replaced), (f"{rows}, which the stream's neighbour may replace: "
                                       f"{k} × ({_n(hi)} − ({_n(lo)}))")
    return (sens, f"SUM clamped to [{_n(lo)}, {_n(hi)}], {rows}",
            _kept_laplace_sql(con, plan, dec.bounds, with_count=False)[0])


def _statistic(con, plan, bounds) -> str:
    """The SQL of the planner's statistic for a step whose sensitivity is stated: a COUNT, or a
    SUM clamped to its declared bounds if any, else over its finite values (NaN and ±∞ add
    nothing: as written, one participant's NaN would make the release NaN), every expression
    total (a row that fails is NULL and left out, never the step's failure)."""
    from .fast_path import _kept_laplace_sql

    if plan.kind == "sum" and bounds is None:
        bounds = (-sys.float_info.max, sys.float_info.max)
    return _kept_laplace_sql(con, plan, bounds, with_count=False)[0]


def _reads_protected(con, query: exp.Expression) -> bool:
    """Whether ``query`` names a protected table, or a view (which may read one)."""
    cat = con._catalog
    for t in query.find_all(exp.Table):
        info = cat.find_table([p.name for p in t.parts])
        if info is not None and (info.view_sql is not None
                                 or cat.protection(info.schema, info.name) is not None):
            return True
    return False


def _n(x) -> str:
    return format_eps(to_fraction(x))
