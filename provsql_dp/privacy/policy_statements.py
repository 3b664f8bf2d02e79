"""Executing the policy statements: ``CREATE POLICY``, ``DROP POLICY``, ``SHOW POLICIES`` and
``EXPLAIN PRIVACY`` (see ``provsql_dp.sql.policy_grammar`` for their syntax).

Every statement validates everything before writing anything, so a refused statement leaves
the catalog unchanged. ``EXPLAIN PRIVACY`` reads only public metadata (the catalog, the policy,
the query text) — never the data — and charges nothing.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from sqlglot import exp

from ..errors import DeclarationError, OperationalError, ProgrammingError
from ..policies.blowfish.catalog import PolicyCatalog
from ..policies.blowfish.constraints import check_groups, histogram_sensitivity, marginal_groups
from ..policies.blowfish.sql import ColumnDomain, TablePolicy
from ..provenance.capture import q
from ..sql import dialect as d
from ..sql import policy_grammar as g
from ..sql._orphan_declarations import status
from . import gaussian_route, routing
from .policy_route import row_per_participant, table_policies
from .precheck import MAX_EPSILON, check_epsilon, checked_accuracy

__all__ = ["execute_policy_statement", "create_policy", "explain_privacy", "accuracy_epsilon",
           "POLICY_COLUMNS"]


#: the columns of ``SHOW POLICIES``
POLICY_COLUMNS = [("name", "VARCHAR"), ("schema", "VARCHAR"), ("table", "VARCHAR"),
                  ("columns", "VARCHAR"), ("graph", "VARCHAR"), ("domain", "VARCHAR"),
                  ("presence", "VARCHAR"), ("sources", "INTEGER"), ("meaning", "VARCHAR"),
                  ("status", "VARCHAR")]


def execute_policy_statement(con, tree):
    """Run one policy statement; returns ``(description, rows)``."""
    cat = PolicyCatalog(con._duck, read_only=con.read_only, catalog=con._catalog)
    if isinstance(tree, (g.CreatePolicy, g.DropPolicy)) and con.read_only:
        raise OperationalError("the database is open read-only; policies cannot change")
    if isinstance(tree, g.CreatePolicy):
        tp = create_policy(con, tree, cat)
        return _status(f"created policy {tp.name} on {tp.table} ({', '.join(tp.columns)}): "
                       f"{tp.describe()}")
    if isinstance(tree, g.DropPolicy):
        row = cat.drop(tree.name)
        if row is None:
            if tree.args.get("exists"):
                return _status(f"policy {tree.name} does not exist; nothing dropped")
            names = ", ".join(r.name for r in cat.list()) or "none"
            raise DeclarationError(f"policy {tree.name!r} does not exist (policies: {names})")
        return _status(f"dropped policy {row.name} on {row.table}")
    if isinstance(tree, g.ShowPolicies):
        table = tree.args.get("table")
        rows = cat.list(table.text("db") or None, table.name) if table is not None else cat.list()
        out = []
        for r in rows:
            tp = TablePolicy.from_row(r)
            out.append((r.name, r.schema, r.table, ", ".join(r.columns), tp.graph_sql(),
                        ", ".join(dd.describe() for dd in tp.domains),
                        "BOUNDED" if tp.bounded else "UNBOUNDED",
                        None if tp.sources is None else len(tp.sources), tp.describe(),
                        status(con._catalog, r.schema, r.table, r.columns, f"DROP POLICY {r.name}")))
        return list(POLICY_COLUMNS), out
    if isinstance(tree, g.ExplainPrivacy):
        return explain_privacy(con, tree)
    if isinstance(tree, g.KMeans):
        return _kmeans(con, tree)
    raise ProgrammingError(f"unhandled policy statement {type(tree).__name__}")  # pragma: no cover


def _kmeans(con, tree):
    """``KMEANS CLUSTERS …`` (He et al. §6): :mod:`provsql_dp.privacy.kmeans_statement`."""
    from .kmeans_statement import run_kmeans

    return run_kmeans(con, tree)


def _status(msg):
    return [("status", "VARCHAR")], [(msg,)]


# ---------------------------------------------------------------------------- CREATE POLICY
def _literal(node):
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Neg) or (isinstance(node, exp.Literal) and not node.is_string):
        return _num_out(_number(node, "a value"))
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        return _num_out(_number(node, "a value"))
    raise DeclarationError(f"expected a value, got {node.sql()}")


def _num_out(f: Fraction):
    return int(f) if f.denominator == 1 else float(f)


def _number(node, what) -> Fraction:
    if isinstance(node, exp.Neg):
        return -_number(node.this, what)
    return d.exact_number(node, what)


def _graph_dict(node: g.PolicyGraph) -> dict:
    kind = node.name
    params = node.expressions or []
    if kind == "COMPOSE":
        return {"kind": "COMPOSE", "parts": [_graph_dict(p) for p in params]}
    if kind == "PARTITION":
        if params and isinstance(params[0], exp.Var):
            return {"kind": "PARTITION", "params": {"width": str(_number(params[1], "the width"))}}
        return {"kind": "PARTITION",
                "params": {"groups": [[_literal(v) for v in t.expressions] for t in params]}}
    out = []
    for p in params:
        if isinstance(p, exp.Literal) and not p.is_string:
            f = _number(p, kind)
            if f <= 0:
                raise DeclarationError(f"the parameter of {kind} must be positive")
            out.append(_num_out(f))
        else:
            out.append(_literal(p) if isinstance(p, (exp.Literal, exp.Boolean)) else p.sql())
    return {"kind": kind, "params": out}


def _domain(node: g.PolicyDomain) -> ColumnDomain:
    if node.expressions:
        return ColumnDomain.explicit([_literal(v) for v in node.expressions])
    low, high = _number(node.args["low"], "the lower bound"), _number(node.args["high"], "the upper bound")
    if node.args.get("width") is not None:
        return ColumnDomain.range(low, high, width=_number(node.args["width"], "the width"))
    return ColumnDomain.range(low, high, bins=int(_number(node.args["bins"], "the bin count")))


def create_policy(con, tree: g.CreatePolicy, cat: PolicyCatalog) -> TablePolicy:
    name = tree.name
    if cat.get(name) is not None:
        raise DeclarationError(f"a policy named {name!r} already exists; DROP POLICY {name} first")
    parts = [p.name for p in tree.args["table"].parts]
    info = con.catalog.find_table(parts)
    if info is None:
        raise DeclarationError(f"cannot create policy {name}: no table {'.'.join(parts)!r}")
    if info.view_sql is not None:
        raise DeclarationError(f"cannot create policy {name} on view {info.name!r}: declare it "
                               "on the protected base table")
    lower = {c.lower(): c for c in info.columns}
    types = dict(zip(info.columns, info.types))
    cols = []
    for c in tree.expressions:
        if c.name.lower() not in lower:
            raise DeclarationError(f"table {info.name!r} has no column {c.name!r}; its columns "
                                   f"are {', '.join(info.columns)}")
        cols.append(lower[c.name.lower()])
    if len(cols) > 2:
        raise DeclarationError("a policy covers one or two columns (histograms, ranges and "
                               "rectangles over them)")
    if len(set(cols)) != len(cols):
        raise DeclarationError(f"the column {cols[0]!r} is listed twice")
    prot = con.catalog.protection(info.schema, info.name)
    ok, reason = row_per_participant(con, info, prot)
    if not ok:
        raise DeclarationError(f"cannot create policy {name} on {info.name!r}: {reason}")
    for other in table_policies(con, info.schema, info.name):
        if {c.lower() for c in other.columns} == {c.lower() for c in cols}:
            raise DeclarationError(f"table {info.name!r} already has policy {other.name} on "
                                   f"({', '.join(other.columns)}); DROP POLICY {other.name} first")
    graph = _graph_dict(tree.args["graph"])
    doms = tree.args.get("domains")
    if doms:
        domains = [_domain(x) for x in doms]
    elif graph["kind"] == "PARTITION" and "groups" in graph["params"] and len(cols) == 1:
        domains = [ColumnDomain.explicit([v for grp in graph["params"]["groups"] for v in grp])]
    else:
        raise DeclarationError("give the public domain of each column: DOMAIN (v, …) or "
                               "DOMAIN [lo, hi) WIDTH w (or BINS n)")
    if len(domains) != len(cols):
        raise DeclarationError(f"the policy has {len(cols)} column(s) but {len(domains)} "
                               "domain(s); give one domain per column, in order")
    bounded_node = tree.args.get("bounded")
    bounded = bool(bounded_node.this) if bounded_node is not None else False
    sources = None
    src = tree.args.get("sources")
    if src is not None:
        sources = []
        for item in src.expressions:
            vals = item.expressions if isinstance(item, exp.Tuple) else [item]
            if len(vals) != len(cols):
                raise DeclarationError(f"a source is a value of each of the {len(cols)} "
                                       f"column(s); got {item.sql()}")
            idx = [dom.index_of(_literal(v)) for dom, v in zip(domains, vals)]
            flat = idx[0] if len(idx) == 1 else idx[0] * domains[1].k + idx[1]
            sources.append(int(flat))
        sources = sorted(set(sources))
    tp = TablePolicy(name, info.schema, info.name, tuple(cols), domains, graph, bounded, sources)
    tp.policy()  # validates the kind against the columns and domains
    if tree.args.get("known") is not None:
        tp.known, tp.known_sql = _known_groups(tree.args["known"], cols, domains)
        histogram_sensitivity(tp.policy(), tp.known)  # validates the groups

    binned = ", ".join(dom.bin_sql(q(c), types[c]) for c, dom in zip(cols, domains))
    try:  # type-check the domain values against the columns, reading no row
        con._duck.execute(f"SELECT {binned} FROM {_qualified(info)} LIMIT 0").fetchall()
    except Exception as e:  # duckdb.Error: the values do not fit the column's type
        raise DeclarationError(f"the domain does not fit the column types "
                               f"({', '.join(types[c] for c in cols)}): {str(e).splitlines()[0]}")
    cat.add(name, info.schema, info.name, cols, tp.to_json(), None)
    return tp


def _known_groups(node, cols, domains):
    """``KNOWN COUNTS …`` as disjoint groups of flat bin indices and its SQL text."""
    if isinstance(node, exp.Var):  # TOTAL
        return [list(range(int(np.prod([d.k for d in domains]))))], "TOTAL"
    if isinstance(node, exp.Column):
        lower = [c.lower() for c in cols]
        if node.name.lower() not in lower:
            raise DeclarationError(f"KNOWN COUNTS BY ({node.name}): the marginal must be over a "
                                   f"column of the policy ({', '.join(cols)})")
        if len(cols) == 1:
            raise DeclarationError(f"KNOWN COUNTS BY ({node.name}) on a one-column policy would "
                                   "publish the histogram itself; name groups of values instead: "
                                   "KNOWN COUNTS ((v, …), (v, …))")
        axis = lower.index(node.name.lower())
        return marginal_groups([d.k for d in domains], axis), f"BY ({cols[axis]})"
    if len(cols) != 1:
        raise DeclarationError("KNOWN COUNTS ((v, …), …) names groups of values of a one-column "
                               "policy; on two columns declare a marginal: KNOWN COUNTS BY (c)")
    groups = []
    for grp in node.expressions:
        groups.append(sorted({domains[0].index_of(_literal(v)) for v in grp.expressions}))
    text = "(" + ", ".join("(" + ", ".join(v.sql() for v in grp.expressions) + ")"
                           for grp in node.expressions) + ")"
    try:
        check_groups(groups, domains[0].k)
    except ValueError as e:
        raise DeclarationError(f"KNOWN COUNTS {text}: {e}") from None
    return groups, text


def _qualified(info) -> str:
    return ".".join(q(p) for p in (info.catalog, info.schema, info.name))


# ---------------------------------------------------------------------------- EXPLAIN PRIVACY
def explain_privacy(con, tree: g.ExplainPrivacy):
    """``EXPLAIN PRIVACY``: per released aggregate (or policy workload, or quantile) the
    strategy and expected error of the route the release would take, or the smallest ε for an
    accuracy; the route is read from :data:`provsql_dp.privacy.routing.ROUTES`, as the release
    reads it (:func:`provsql_dp.privacy.routing.explain`).

    Data independent: it plans the query and builds the workload from public metadata only —
    except that the curator also gets the private LP sizes of a recursive-mechanism or R2T
    query (:mod:`.explain_recursive`, :mod:`.explain_r2t`). An ε, accuracy or confidence no
    release can use is a :class:`~provsql_dp.errors.ProgrammingError` naming it
    (:mod:`.precheck`), never a numeric exception."""
    if tree.args.get("estimate") is not None:  # a charged release: Cursor runs it, never here
        raise ProgrammingError("EXPLAIN PRIVACY … ESTIMATE ERROR spends budget: run it through a "
                               "cursor (provsql_dp.privacy.error_estimate.estimate_error)")
    inner = tree.this
    if gaussian_route.cost_of(inner) is not None:  # WITH EPSILON ε DELTA δ / WITH RHO ρ
        return routing.DESC, gaussian_route.explain(con, tree)
    if isinstance(inner, d.PrivateQuery) and inner.args.get("epsilon") is not None:
        eps = d.exact_number(inner.args["epsilon"], "epsilon")
        if eps <= 0 or eps > MAX_EPSILON:
            check_epsilon(eps)  # names the problem
    return checked_accuracy(_number_arg(tree, "accuracy", "the accuracy α"),
                            _number_arg(tree, "confidence", "the confidence"),
                            lambda: routing.explain(con, tree))


def _number_arg(tree, key: str, what: str) -> Fraction | None:
    node = tree.args.get(key)
    return None if node is None else d.exact_number(node, what)


def accuracy_epsilon(con, tree: d.PrivateQuery) -> Fraction:
    """The ε of an accuracy-first ``<query> WITH ACCURACY α [CONFIDENCE c]`` (Liu et al. §3):
    the smallest ε that ``EXPLAIN PRIVACY`` finds for α — from public information only, so
    reading it spends nothing and looks at no data. Refused (nothing spent) when the route's
    error cannot be known in advance."""
    alpha = _number_arg(tree, "accuracy", "the accuracy α")
    conf = _number_arg(tree, "confidence", "the confidence")
    ex = g.ExplainPrivacy(this=tree.this, accuracy=tree.args["accuracy"],
                          confidence=tree.args.get("confidence"))
    names, rows = explain_privacy(con, ex)  # α and the confidence checked there
    rec = dict(zip([n for n, _ in names], rows[0]))
    if rec.get("epsilon") is None:
        raise ProgrammingError(f"WITH ACCURACY is not available for this query: {rec['note']}. "
                               "Give WITH EPSILON ε instead; nothing was spent")
    return checked_accuracy(alpha, conf, lambda: Fraction(rec["epsilon"]))
