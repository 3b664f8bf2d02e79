"""The curator tab's endpoints: tables and declarations, declaration forms, Demo 1 charts, budgets.

Every declaration form is turned into the statement the shell would take (``PROTECT TABLE …``,
``CREATE POLICY …``, ``SET PRIVACY BUDGET … FOR USER …``), run on the curator's connection and
returned as SQL beside its outcome. The histogram and trade-off views are in :mod:`.sandbox`.

>>> protect_sql({"table": "employees"})
'PROTECT TABLE "employees"'
>>> protect_sql({"table": "friendship", "by": "src, dst", "as": "member"})
'PROTECT TABLE "friendship" BY ("src", "dst") AS "member"'
>>> budget_sql({"user": "ann", "epsilon": "2.5"})
"SET PRIVACY BUDGET 2.5 FOR USER 'ann'"
>>> budget_sql({"user": "ann", "epsilon": "1e308"})
Traceback (most recent call last):
...
provsql_dp.errors.ProgrammingError: a privacy budget is a positive ε of at most 1000 (the guarantee is a factor e^ε: beyond that it protects nothing), got 1e+308
>>> protect_sql({"table": ""})
Traceback (most recent call last):
...
provsql_dp.errors.ProgrammingError: choose the table to protect (the form's table is empty)
"""

from __future__ import annotations

from ...errors import ProgrammingError
from . import accounts, policy_graphs, sandbox
from .sandbox import quote

__all__ = ["overview", "declare", "histogram", "tradeoff", "declared_graph", "protect_sql", "budget_sql", "policy_sql"]

NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
           "UBIGINT", "FLOAT", "DOUBLE", "REAL")


def _rows(res) -> list[dict]:
    return [dict(zip(res.columns, (_json(v) for v in r))) for r in res.rows]


def _json(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    try:
        return float(v)
    except (TypeError, ValueError):
        return str(v)


def overview(engine, user: str) -> dict:
    """Tables with their columns (and, for numeric ones, min/max), declarations, budgets, accounts."""
    run = lambda sql, p=None: engine.run("curator", user, sql, p)  # noqa: E731
    cols = run("SELECT table_schema, table_name, column_name, data_type FROM information_schema.columns "
               "WHERE table_schema NOT LIKE '\\_provsql\\_dp%' ESCAPE '\\' AND table_catalog = current_database() "
               "ORDER BY table_schema, table_name, ordinal_position").rows
    tables: dict[str, dict] = {}
    for schema, table, column, dtype in cols:
        name = table if schema == "main" else f"{schema}.{table}"
        t = tables.setdefault(name, {"name": name, "columns": []})
        c = {"name": column, "type": dtype, "numeric": dtype.split("(")[0] in NUMERIC or dtype.startswith("DECIMAL")}
        if c["numeric"] and schema == "main":
            lo, hi = run(f"SELECT MIN({quote(column)}), MAX({quote(column)}) FROM {quote(table)}").rows[0]
            c["min"], c["max"] = _json(lo), _json(hi)
        t["columns"].append(c)
    return {"tables": list(tables.values()),
            "protected": _rows(run("SHOW PROTECTED")),
            "policies": _rows(run("SHOW POLICIES")),
            "bounds": _rows(run("SHOW BOUNDS")),
            "group_keys": _rows(run("SHOW GROUP KEYS")),
            "budgets": _rows(run("SHOW PRIVACY BUDGET")),
            "accounts": [{"name": n, "role": r} for n, r in accounts.list_accounts(engine.duck)]}


def _columns(text: str) -> list[str]:
    return [c.strip() for c in str(text or "").split(",") if c.strip()]


#: the largest total budget the explorer's form sets: above it a budget protects nothing (the
#: guarantee is a factor e^ε) and is a typo, such as 1e308
MAX_BUDGET = 1000


def _table(f: dict, verb: str) -> str:
    table = str(f.get("table") or "").strip()
    if not table:
        raise ProgrammingError(f"choose the table to {verb} (the form's table is empty)")
    return quote(table)


def protect_sql(f: dict) -> str:
    sql = f"PROTECT TABLE {_table(f, 'protect')}"
    by = _columns(f.get("by"))
    if by:
        sql += " BY (" + ", ".join(quote(c) for c in by) + ")"
        if f.get("as"):
            sql += f" AS {quote(f['as'])}"
    return sql


def budget_sql(f: dict) -> str:
    eps = sandbox._num(f.get("epsilon"), "ε")
    user = str(f.get("user") or "").strip()
    if not user:
        raise ProgrammingError("name the user whose budget to set")
    if not 0 < eps <= MAX_BUDGET:
        raise ProgrammingError(f"a privacy budget is a positive ε of at most {MAX_BUDGET} (the guarantee "
                               f"is a factor e^ε: beyond that it protects nothing), got {eps:g}")
    return f"SET PRIVACY BUDGET {eps:.15g} FOR USER '" + user.replace("'", "''") + "'"


def policy_sql(f: dict) -> str:
    h = sandbox.Histogram(f.get("table"), f.get("column"), f.get("lo"), f.get("hi"), f.get("bins"))
    graph = sandbox.parse_graph(f.get("graph", "FULL"), h.bins)
    name = str(f.get("name") or "").strip() or f"{h.table}_{h.column}"
    return (f"CREATE POLICY {quote(name)} ON {quote(h.table)} ({quote(h.column)}) AS {graph} "
            f"{h.domain_sql()} {'BOUNDED' if f.get('bounded') else 'UNBOUNDED'}")


STATEMENTS = {
    "protect": protect_sql,
    "unprotect": lambda f: f"UNPROTECT TABLE {_table(f, 'unprotect')}",
    "create_policy": policy_sql,
    "drop_policy": lambda f: f"DROP POLICY {quote(f.get('name'))}",
    "set_budget": budget_sql,
}


def declare(engine, user: str, form: dict) -> dict:
    """Build the statement of a declaration form and run it on the curator's connection."""
    action = form.get("action")
    if action not in STATEMENTS:
        raise ProgrammingError(f"unknown declaration {action!r}; one of {', '.join(STATEMENTS)}")
    sql = STATEMENTS[action](form)
    engine.run("curator", user, sql)
    return {"sql": sql + ";"}


def histogram(engine, user: str, f: dict) -> dict:
    """True and noisy histogram of a column under a what-if policy (Demo 1), and its graph."""
    h = sandbox.Histogram(f.get("table"), f.get("column"), f.get("lo"), f.get("hi"), f.get("bins"))
    bounded = bool(f.get("bounded"))
    cumulative = f.get("query") == "cumulative"
    with engine.checkout("curator", user) as con:
        counts = sandbox.true_counts(con, h)
    truth = counts
    if cumulative:
        truth = [sum(counts[: i + 1]) for i in range(len(counts))]
    out = sandbox.noisy(counts, h, f.get("graph", "FULL"), bounded, f.get("epsilon", 1.0), cumulative)
    policy = sandbox.policy_for(f.get("graph", "FULL"), h.bins, bounded)
    return {"labels": h.labels(), "true": truth, **out, "graph": sandbox.graph(policy, h.labels())}


def tradeoff(f: dict) -> dict:
    """Expected error against ε for several thresholds (data independent; reads nothing)."""
    try:
        k = int(f.get("bins"))
        thetas = sorted({int(t) for t in f.get("thetas") or (1, 2, 4, 8)})
        epsilons = sorted({sandbox._num(e, "ε") for e in f.get("epsilons") or (0.1, 0.25, 0.5, 1, 2)})
    except (TypeError, ValueError):
        raise ProgrammingError("bins and thresholds must be whole numbers") from None
    if not 2 <= k <= sandbox.MAX_BINS or any(t < 1 for t in thetas) or any(e <= 0 for e in epsilons):
        raise ProgrammingError(f"bins must be in [2, {sandbox.MAX_BINS}], thresholds ≥ 1, ε > 0")
    if len(thetas) > 12 or len(epsilons) > 12:
        raise ProgrammingError("at most 12 thresholds and 12 values of ε")
    return {"rows": sandbox.tradeoff(k, thetas, epsilons, bool(f.get("bounded")), f.get("query") == "cumulative")}


def declared_graph(engine, user: str, f: dict) -> dict:
    """The graph of a declared policy, projected to one of its columns."""
    with engine.checkout("curator", user) as con:
        return policy_graphs.declared_graph(con, f.get("name"), f.get("column"))
