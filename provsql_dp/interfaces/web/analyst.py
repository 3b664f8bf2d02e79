"""The analyst tab's endpoints: query templates (Liu et al. Demo 2), the SQL editor, budget, history.

A request names a template — ``histogram`` (``SELECT c, COUNT(*) FROM t GROUP BY c``),
``cumulative`` (``COUNT CUMULATIVE c FROM t``), ``histogram2d`` (``SELECT a, b, COUNT(*) FROM t
GROUP BY a, b``) — or ``sql`` (any statement an analyst connection takes), and either an accuracy
requirement (α, β): every released count within α of the truth with probability ≥ 1 − β, run as
``… WITH ACCURACY α CONFIDENCE 1−β`` on every route whose error is public (a policy, the Laplace
route of a plain count, …; the others refuse it, saying why) — or an ε. The release
runs on the user's own connection; what comes back is what the engine released (rows and the
interval of each value at confidence 1 − β, or 0.95, with what it covers — the same intervals the
shell prints: :func:`released_intervals`), stored in the user's history.

>>> template_sql({"template": "cumulative", "table": "employees", "column": "salary"})
'COUNT CUMULATIVE "salary" FROM "employees"'
>>> template_sql({"template": "sql", "sql": "SELECT COUNT(*) FROM employees;  "})
'SELECT COUNT(*) FROM employees'
"""

from __future__ import annotations

import re

from ...errors import ProgrammingError
from ...privacy.intervals import shown
from . import history, sandbox
from .curator import _json
from .sandbox import quote

__all__ = ["template_sql", "ask", "budget", "catalog", "released_intervals"]

_HAS_EPSILON = re.compile(r"\bWITH\s+(EPSILON|ACCURACY)\b", re.I)
_RANGE_DOMAIN = re.compile(r"^\[(-?[\d.]+(?:e[+-]?\d+)?), (-?[\d.]+(?:e[+-]?\d+)?)\) WIDTH ([\d.]+(?:e[+-]?\d+)?)$")


def coarse_sql(f: dict, domain: str) -> str:
    """A histogram or cumulative histogram at granularity g: ``COUNT RANGES`` over groups of g
    consecutive bins of the policy's public ``[lo, hi) WIDTH w`` domain (Liu et al. Demo 2).

    >>> coarse_sql({"template": "histogram", "table": "t", "column": "a", "granularity": 2}, "[0, 8) WIDTH 2")
    'COUNT RANGES ("a" >= 0 AND "a" < 4, "a" >= 4 AND "a" < 8) FROM "t"'
    >>> coarse_sql({"template": "cumulative", "table": "t", "column": "a", "granularity": 2}, "[0, 8) WIDTH 2")
    'COUNT RANGES ("a" < 4, "a" < 8) FROM "t"'
    """
    m = _RANGE_DOMAIN.match(domain or "")
    if not m:
        raise ProgrammingError(f"a granularity needs a policy on the column with a [lo, hi) domain; "
                               f"this one is {domain!r}")
    lo, hi, w = (float(x) for x in m.groups())
    try:
        g = int(f.get("granularity"))
    except (TypeError, ValueError):
        raise ProgrammingError("the granularity is a whole number of bins") from None
    k = round((hi - lo) / w)
    if not 1 <= g <= k:
        raise ProgrammingError(f"the granularity must be between 1 and the {k} bins of the domain")
    c, edges = quote(f.get("column")), [lo + i * g * w for i in range(0, -(-k // g) + 1)]
    edges[-1] = min(edges[-1], hi)
    if f.get("template") == "cumulative":
        parts = [f"{c} < {b:g}" for b in edges[1:]]
    else:
        parts = [f"{c} >= {a:g} AND {c} < {b:g}" for a, b in zip(edges, edges[1:])]
    return f"COUNT RANGES ({', '.join(parts)}) FROM {quote(f.get('table'))}"


def _with_granularity(engine, role: str, user: str, f: dict) -> str:
    if f.get("template") not in ("histogram", "cumulative") or int(f.get("granularity") or 1) == 1:
        return template_sql(f)
    pol = engine.run(role, user, "SHOW POLICIES ON " + quote(f.get("table")))
    rows = [dict(zip(pol.columns, r)) for r in pol.rows]
    mine = [r for r in rows if r["columns"] == f.get("column")]
    if not mine:
        raise ProgrammingError(f"a granularity needs a policy on {f.get('column')!r} alone (SHOW POLICIES)")
    return coarse_sql(f, mine[0]["domain"])


def template_sql(f: dict) -> str:
    t = f.get("template")
    if t == "histogram":
        return f"SELECT {quote(f.get('column'))}, COUNT(*) FROM {quote(f.get('table'))} GROUP BY {quote(f.get('column'))}"
    if t == "cumulative":
        return f"COUNT CUMULATIVE {quote(f.get('column'))} FROM {quote(f.get('table'))}"
    if t == "histogram2d":
        a, b = quote(f.get("column")), quote(f.get("column2"))
        return f"SELECT {a}, {b}, COUNT(*) FROM {quote(f.get('table'))} GROUP BY {a}, {b}"
    if t == "sql":
        sql = str(f.get("sql") or "").strip().rstrip(";").strip()
        if not sql:
            raise ProgrammingError("the SQL editor is empty: write a query, e.g. SELECT COUNT(*) FROM t")
        return sql
    raise ProgrammingError(f"unknown query template {t!r}: histogram, cumulative, histogram2d or sql")


def budget(engine, role: str, user: str) -> dict:
    """The user's own budget (``SHOW PRIVACY BUDGET FOR USER``), or none set."""
    res = engine.run(role, user, "SHOW PRIVACY BUDGET FOR USER '" + user.replace("'", "''") + "'")
    if not res.rows:
        return {"user": user, "total": None, "spent": None, "remaining": None, "unit": None}
    with engine.checkout(role, user) as con:
        account = con._ledger.account(user)  # the user's own budget: its unit
    # the unit of total/spent/remaining: "epsilon" (plain numbers of ε), "epsilon-delta" or
    # "rho" (their texts name ε, δ or ρ), for the page's label
    return {**dict(zip(res.columns, res.rows[0])), "unit": account[0] if account else "epsilon"}


def catalog(engine, role: str, user: str) -> dict:
    """Public facts only: table and column names and types, protections and policies."""
    res = engine.run("curator", "_web", "SELECT table_name, column_name, data_type FROM information_schema.columns "
                     "WHERE table_schema = 'main' AND table_catalog = current_database() "
                     "ORDER BY table_name, ordinal_position")
    tables: dict[str, list] = {}
    for t, c, d in res.rows:
        tables.setdefault(t, []).append({"name": c, "type": d})
    pol = engine.run(role, user, "SHOW POLICIES")
    prot = engine.run(role, user, "SHOW PROTECTED")
    return {"tables": [{"name": t, "columns": c} for t, c in tables.items()],
            "policies": [dict(zip(pol.columns, map(_json, r))) for r in pol.rows],
            "protected": [dict(zip(prot.columns, map(_json, r))) for r in prot.rows]}


def _end(x):
    return None if x is None else float(x)


def released_intervals(info, confidence: float) -> dict:
    """What the page shows beside the released values, from
    :mod:`provsql_dp.privacy.intervals` (as the shell, the demo and ``cursor.privacy``):
    ``intervals`` — per row, ``[low, high]`` per value column (``null``: unbounded on that side),
    holding with probability ≥ ``confidence`` the statistic ``covers`` names per column;
    ``interval_text`` — the same as the shell prints them (``[lo, hi]``, ``≥ lo``, ``—``);
    ``bounds`` — the noise bound of the last released value column per row (``null`` without
    one), wherever it is: a GROUP BY key the select list puts after it (``SELECT count(*) AS n,
    dept``) is public and has none; ``value_column`` — that column's position counted from the
    end of the answer's columns (−1: the last), the one the page plots; ``public_columns`` —
    the positions, among the value columns, of such keys (no interval).

    >>> from provsql_dp.mechanisms.global_sensitivity import laplace
    >>> from provsql_dp.privacy.release_info import PrivacyInfo
    >>> rel = laplace.release(10, sensitivity=1, epsilon=1.0, integer=True)
    >>> out = released_intervals(PrivacyInfo("laplace", 1.0, 0.0, (rel,)), 0.95)
    >>> out["covers"], out["intervals"][0][0][1] - out["intervals"][0][0][0]
    (['the true count'], 6.0)
    """
    ivs = info.intervals(confidence)
    n = len(info.columns) or 1
    released = [j for j in range(n) if j not in info.public_columns] or [n - 1]
    j = released[-1]  # among the value columns (the answer's last n)
    bounds = []
    for b in info.noise_bound(confidence):
        last = b[j] if isinstance(b, tuple) else b
        try:
            bounds.append(float(last))
        except (TypeError, ValueError):
            bounds.append(None)
    return {"intervals": [[[_end(lo), _end(hi)] for lo, hi in row] for row in ivs],
            "interval_text": [[shown(iv) for iv in row] for row in ivs],
            "covers": info.covers(), "bounds": bounds, "value_column": j - n,
            "public_columns": list(info.public_columns)}


def ask(engine, role: str, user: str, f: dict) -> dict:
    """Run one analyst request; returns the answer and stores it in the user's history."""
    sql = _with_granularity(engine, role, user, f)
    mode = f.get("mode", "epsilon")
    confidence = 0.95
    if _HAS_EPSILON.search(sql) or (f.get("template") == "sql" and mode == "as_written"):
        statement = sql
    elif mode == "accuracy":
        alpha = sandbox._num(f.get("alpha"), "α")
        beta = sandbox._num(f.get("beta"), "β")
        if not alpha > 0 or not 0 < beta < 1:
            raise ProgrammingError("the accuracy needs α > 0 and 0 < β < 1 (β: the chance an answer misses α)")
        confidence = 1 - beta
        # every route whose error is public (policies, the Laplace route, quantiles…) takes WITH
        # ACCURACY; the others (recursive mechanism, R2T) refuse it, saying why
        statement = f"{sql} WITH ACCURACY {alpha!r} CONFIDENCE {confidence!r}"
    else:
        eps = sandbox._num(f.get("epsilon"), "ε")
        statement = f"{sql} WITH EPSILON {eps!r}"
    res = engine.run(role, user, statement)
    info = res.privacy
    answer = {"columns": res.columns, "rows": [[_json(v) for v in r] for r in res.rows[:5000]],
              "private": info is not None, "confidence": confidence}
    eps_text = None
    if info is not None:
        unit = getattr(info, "unit", "epsilon")
        eps_text = f"{'ρ' if unit == 'rho' else 'ε'} = {float(info.epsilon):g}"  # the history's
        answer.update(epsilon=float(info.epsilon), unit=unit, mechanism=info.mechanism,
                      strategy=getattr(info, "strategy", None), **released_intervals(info, confidence))
        if f.get("mode") == "accuracy":
            answer["alpha"] = float(f.get("alpha"))
    answer["history_id"] = history.add(engine.duck, user, statement, eps_text, answer,
                                       title=f.get("title") or statement[:80])
    answer["statement"] = statement + ";"
    answer["budget"] = budget(engine, role, user)
    return answer
