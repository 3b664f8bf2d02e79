"""The calendar grain a function of a TIMESTAMP column reads: the candidates of a proved domain.

A TIMESTAMP has too many values (microseconds) to enumerate, but ``date_trunc('month', ts)``,
``EXTRACT(hour FROM ts)``, ``year(ts)``, ``CAST(ts AS DATE)`` … read it only down to a *grain*
``g`` (month, hour, day): each such wrapper ``w`` has ``w(ts) = w(date_trunc(g, ts))`` for every
``ts`` when ``g`` is its grain or a finer one. So when every occurrence of ``ts`` in a key sits
directly inside such wrappers, and ``g`` is the finest of their grains, the key is a function of
``date_trunc(g, ts)`` alone, and over ``lo ≤ ts ≤ hi`` the values ``date_trunc(g, ts)`` takes are
exactly the ``g``-starts ``s`` with ``date_trunc(g, lo) ≤ s ≤ hi`` (each is reached, by
``max(s, lo)``). Evaluating the key on those starts gives every value it can take on any row in
range — on any database, neighbours included — and nothing else (:mod:`.key_domain`).

A condition on ``ts`` filters the starts only when it is itself a function of
``date_trunc(g, ts)`` (``hour(ts) BETWEEN 9 AND 17``); a bound ``ts >= X`` is not (a start
before ``X`` can stand for rows after it): it bounds the range instead.

>>> import sqlglot
>>> k = sqlglot.parse_one("SELECT EXTRACT(hour FROM ts) * 100 + minute(ts)", read="duckdb")
>>> grain(k.expressions[0], "ts")
'minute'
>>> grain(sqlglot.parse_one("SELECT date_trunc('month', ts)", read="duckdb").expressions[0], "ts")
'month'
>>> grain(sqlglot.parse_one("SELECT epoch(ts)", read="duckdb").expressions[0], "ts") is None
True
"""

from __future__ import annotations

import datetime

from sqlglot import exp

__all__ = ["GRAINS", "grain", "guards", "starts_sql", "is_timestamp", "is_timestamptz",
           "literal", "reads_at_most"]

#: grains, coarsest first; the candidates step by ``INTERVAL 1 <grain>``
GRAINS = ("year", "month", "day", "hour", "minute", "second")

#: a calendar field (EXTRACT, date_part, date_trunc unit) → the grain it reads
_FIELD = {"year": "year", "years": "year", "decade": "year", "century": "year",
          "millennium": "year", "quarter": "month", "month": "month", "months": "month",
          "week": "day", "weeks": "day", "day": "day", "days": "day", "dow": "day",
          "isodow": "day", "doy": "day", "dayofweek": "day", "dayofmonth": "day",
          "dayofyear": "day", "weekday": "day", "weekofyear": "day", "isoyear": "day",
          "yearweek": "day", "hour": "hour", "hours": "hour", "minute": "minute",
          "minutes": "minute", "second": "second", "seconds": "second"}
#: function nodes of one timestamp argument → the grain they read
_FUNCTION = {exp.Year: "year", exp.Quarter: "month", exp.Month: "month", exp.Week: "day",
             exp.WeekOfYear: "day", exp.Day: "day", exp.DayOfMonth: "day",
             exp.DayOfWeek: "day", exp.DayOfWeekIso: "day", exp.DayOfYear: "day",
             exp.Hour: "hour", exp.Minute: "minute", exp.Second: "second"}


def is_timestamp(typ: str) -> bool:
    """A TIMESTAMP without time zone (microseconds): the type :func:`grain` is about."""
    return (typ or "").upper() in ("TIMESTAMP", "DATETIME", "TIMESTAMP WITHOUT TIME ZONE")


def is_timestamptz(typ: str) -> bool:
    """A TIMESTAMP WITH TIME ZONE: an instant, whose calendar fields (and so every wrapper of
    :func:`grain`) are read in the session's ``TimeZone``. :mod:`.key_domain` proves its keys
    under the zone the session has when the statement is planned (its grain starts are then
    the local ones: ``range`` and ``date_trunc`` step in that zone, 23- and 25-hour days
    included)."""
    return (typ or "").upper() in ("TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE")


def _text(e) -> str | None:
    if isinstance(e, exp.Literal) and e.is_string:
        return e.this.lower()
    if isinstance(e, (exp.Var, exp.Identifier)):
        return e.name.lower()
    return None


def _wrapper_grain(col: exp.Column) -> str | None:
    """The grain of the wrapper ``col`` sits directly in (through parentheses), or None."""
    node = col
    while isinstance(node.parent, exp.Paren):
        node = node.parent
    parent = node.parent
    if parent is None:
        return None
    if isinstance(parent, exp.TimestampTrunc) and parent.this is node:
        return _FIELD.get(_text(parent.args.get("unit")) or "")
    if isinstance(parent, exp.Extract) and parent.expression is node:
        return _FIELD.get(_text(parent.this) or "")
    if (isinstance(parent, exp.Anonymous) and parent.name.lower() in ("date_part", "datepart")
            and len(parent.expressions) == 2 and parent.expressions[1] is node):
        return _FIELD.get(_text(parent.expressions[0]) or "")
    if type(parent) in _FUNCTION and parent.this is node and len(parent.args) == 1 + sum(
            1 for v in parent.args.values() if v is None):
        return _FUNCTION[type(parent)]
    if (isinstance(parent, exp.Cast) and parent.this is node
            and parent.to.sql(dialect="duckdb").upper() == "DATE"):
        return "day"
    return None


def grain(e: exp.Expression, c: str) -> str | None:
    """The finest grain of the wrappers every occurrence of column ``c`` in ``e`` sits in
    (``e`` is then a function of ``date_trunc(grain, c)``), or None when one occurrence is in no
    wrapper, or ``c`` does not occur."""
    found = []
    for col in e.find_all(exp.Column):
        if col.name != c:
            continue
        g = _wrapper_grain(col)
        if g is None:
            return None
        found.append(g)
    return max(found, key=GRAINS.index) if found else None


def reads_at_most(e: exp.Expression, c: str, g: str) -> bool:
    """``e`` is a function of ``date_trunc(g, c)``: its grain is ``g`` or a coarser one."""
    own = grain(e, c)
    return own is not None and GRAINS.index(own) <= GRAINS.index(g)


def guards(e: exp.Expression, c: str) -> list[exp.Case]:
    """The totality guards ``CASE WHEN c BETWEEN L AND H THEN c END`` around column ``c`` in
    ``e`` (:mod:`.functions` keeps temporal arguments within ±100000 years). A guard is the
    identity on every row and start of a range inside ``[L, H]``: the caller checks that and
    replaces it by ``c``."""
    out = []
    for case in e.find_all(exp.Case):
        ifs = case.args.get("ifs") or []
        if len(ifs) != 1 or case.args.get("default") is not None:
            continue
        cond, then = ifs[0].this, ifs[0].args.get("true")
        if (isinstance(cond, exp.Between) and isinstance(cond.this, exp.Column)
                and cond.this.name == c and isinstance(then, exp.Column) and then.name == c):
            out.append(case)
    return out


def literal(t: datetime.datetime, typ: str = "TIMESTAMP") -> str:
    """``t`` as a TIMESTAMP or (tz-aware ``t``, its offset written) TIMESTAMPTZ literal.

    >>> literal(datetime.datetime(2024, 3, 10, 2, 30))
    "TIMESTAMP '2024-03-10 02:30:00'"
    >>> literal(datetime.datetime(2024, 3, 10, tzinfo=datetime.timezone.utc), "TIMESTAMPTZ")
    "TIMESTAMPTZ '2024-03-10 00:00:00+00:00'"
    """
    kind = "TIMESTAMPTZ" if is_timestamptz(typ) else "TIMESTAMP"
    return f"{kind} '{t.isoformat(sep=' ')}'"


def starts_sql(c: str, g: str, lo: datetime.datetime, hi: datetime.datetime,
               typ: str = "TIMESTAMP") -> tuple[str, str]:
    """``(count_sql, rows_sql)``: the number of ``g``-starts in ``[date_trunc(g, lo), hi]`` (an
    upper bound read first, so a huge range is never generated), and a query of them as column
    ``c`` (of type ``typ``: TIMESTAMP, or TIMESTAMPTZ run under the session's zone)."""
    start = f"date_trunc('{g}', {literal(lo, typ)})"
    count = f"SELECT date_diff('{g}', {start}, {literal(hi, typ)}) + 1"
    rows = (f"SELECT range AS \"{c}\" FROM range({start}, {literal(hi, typ)} + INTERVAL 1 "
            f"MICROSECOND, INTERVAL 1 {g.upper()})")
    return count, rows
