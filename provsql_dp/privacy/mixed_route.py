"""A select list mixing quantiles or variances with other aggregates, as SmartNoise and Tumult
users write it: ``SELECT [g,] COUNT(*), AVG(c), STDDEV(c), MEDIAN(c) FROM t [WHERE …]
[GROUP BY g] WITH EPSILON ε``.

A quantile (:mod:`.quantile_route`) and a variance (:mod:`.variance_route`) are each released
by a statement route of their own, which answers it alone. Here the statement is cut into
**parts** — each quantile or variance alone (with the GROUP BY keys), and the other aggregates
together — and ε is **split equally over the select list's k aggregates**: a quantile or a
variance gets ε/k, the m others together ε·m/k, released exactly as that statement of theirs
would be (its own split, or one ℓ1 bound across them). Sequential composition: the parts'
shares sum to ε exactly (as fractions), and the statement is charged ε once, in the ledger's
unit (:mod:`.shared_charge`: a part can never take more than is left). Every part is checked
before the charge (a refusal spends nothing); the parts with GROUP BY release the same declared
keys, and their rows are joined by key. ``EXPLAIN PRIVACY`` gives one row per released
aggregate, its ε the part's share; the release's ``strategy`` states the split.

Under ``WITH RHO`` / ``DELTA`` a quantile or variance is refused, as alone (pure-ε mechanisms).

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE p(id INT PRIMARY KEY, x DOUBLE)")
>>> _ = con.execute("INSERT INTO p SELECT i, i % 10 FROM range(1000) t(i)")
>>> _ = con.execute("PROTECT TABLE p; SET PRIVACY BUDGET 5; SET BOUNDS ON p (x) BETWEEN 0 AND 10")
>>> cur = con.execute("SELECT COUNT(*), STDDEV_POP(x), MEDIAN(x) FROM p WITH EPSILON 3")
>>> [c[0] for c in cur.description], cur.privacy.routes, cur.privacy.epsilon
(['COUNT(*)', 'stddev_pop(x)', 'median(x)'], ('laplace', 'variance', 'quantile'), 3.0)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from sqlglot import exp

from .._numbers import format_eps
from ..errors import ProgrammingError, UnsupportedQueryError
from . import quantile_route, variance_route
from .release_info import PrivacyInfo
from .shared_charge import sharing

__all__ = ["applies", "parts", "release", "explain", "columns"]


def _own(item: exp.Expression) -> bool:
    """Whether a select-list item is a quantile or a variance (a statement route's)."""
    return quantile_route.is_quantile_query(item) or variance_route.is_variance_query(item)


def _keys(sel: exp.Select) -> list[int]:
    """Positions of the select-list items that are GROUP BY expressions (public keys)."""
    group = sel.args.get("group")
    written = {g.sql(dialect="duckdb").lower() for g in (group.expressions if group else ())}
    return [i for i, e in enumerate(sel.expressions)
            if e.unalias().find(exp.AggFunc) is None
            and e.unalias().sql(dialect="duckdb").lower() in written]


def applies(st) -> bool:
    """A select list of two or more aggregates, one of them a quantile or a variance."""
    sel = st.query
    if not isinstance(sel, exp.Select):
        return False
    keys = set(_keys(sel))
    items = [e for i, e in enumerate(sel.expressions) if i not in keys]
    return len(items) >= 2 and any(_own(e) for e in items)


@dataclass(frozen=True)
class Part:
    """A statement of its own: the keys and ``items`` (select-list positions), at ``share``·ε."""

    tree: exp.Select
    items: tuple
    share: Fraction
    own: bool  # a quantile or variance (else the other aggregates, together)


def parts(st) -> tuple[list[int], list[Part]]:
    """The key positions and the parts (the others first), refusing what cannot be split."""
    sel = st.query
    keys = _keys(sel)
    rest = [i for i in range(len(sel.expressions)) if i not in keys]
    group = sel.args.get("group")
    if keys and len(keys) != len(group.expressions):
        raise UnsupportedQueryError("a select list mixing a quantile or variance with other "
                                    "aggregates lists every GROUP BY column or none. Nothing "
                                    "was charged")
    if keys and max(keys) > min(rest):
        raise UnsupportedQueryError("a select list mixing a quantile or variance with other "
                                    "aggregates lists its GROUP BY columns first. Nothing was "
                                    "charged")
    own = [i for i in rest if _own(sel.expressions[i])]
    others = [i for i in rest if i not in own]
    counted = [i for i in others if sel.expressions[i].find(exp.AggFunc) is not None]
    if others and not counted:
        raise UnsupportedQueryError("beside a quantile or variance, the select list holds its "
                                    "GROUP BY columns and aggregates only. Nothing was charged")
    k = len(own) + len(counted)

    def part(items, share, is_own):
        tree = sel.copy()
        tree.set("expressions", [sel.expressions[i].copy() for i in (*keys, *items)])
        return Part(tree, tuple(items), share, is_own)
    out = [part(others, Fraction(len(counted), k), False)] if others else []
    return keys, out + [part((i,), Fraction(1, k), True) for i in own]


def _sub(st, p: Part):
    """The routing ``Statement`` of a part (planned on first use, as any statement)."""
    return replace(st, query=p.tree, options=dict(st.options), planner=None, memo={})


def _check(st, ps: list[Part], epsilon, choose) -> None:
    """Every quantile or variance checked as its route checks it (refusals spend nothing)."""
    for p in ps:
        if not p.own:
            continue
        route = choose(_sub(st, p))
        module = quantile_route if route.name == "quantile" else variance_route
        q = module.prepare(st.con, p.tree, st.options)
        if route.name == "quantile" and not q.grid and epsilon is not None:
            from ..mechanisms.noise.safe_noise import plan_laplace

            plan_laplace(q.sensitivity, float(epsilon * p.share))


def release(st, epsilon, text: str, rng, raw: bool, *, choose, release_part):
    """Release every part at its share under one charge; the rows joined by key (``choose``,
    ``release_part``: :func:`.routing.choose`, :func:`.routing.release`)."""
    epsilon = epsilon if isinstance(epsilon, Fraction) else Fraction(str(epsilon))  # exact
    keys, ps = parts(st)
    _check(st, ps, epsilon, choose)
    results = []
    with sharing(st.con, epsilon, text, "mixed") as share:
        for p in ps:  # the others first: their own checks precede the (one) charge
            results.append(release_part(_sub(st, p), epsilon * p.share, text, raw=raw,
                                        rng=rng))
    # every part's rows begin with the GROUP BY keys (selected or not: a key the select list
    # leaves out is dropped by the post-processing afterwards), in GROUP BY order
    group = st.query.args.get("group")
    nk = len(group.expressions) if group else 0
    by_key = [{tuple(str(v) for v in row[:nk]): row for row in rows} for _, rows, _ in results]
    rels = [{tuple(str(v) for v in row[:nk]): r for row, r in zip(rows, info.releases)}
            for _, rows, info in results]
    first_desc, first_rows, _ = results[0]
    out_rows, out_rels = [], []
    for row in first_rows:
        key = tuple(str(v) for v in row[:nk])
        values, rr = list(row[:nk]), []
        for (desc, _, info), found, rel in zip(results, by_key, rels):
            got, r = found.get(key), rel.get(key)  # every part releases the same public keys
            values += list(got[nk:]) if got is not None else [None] * (len(desc) - nk)
            rr += list(r) if info.columns and r is not None else [r] * (len(desc) - nk)
        out_rows.append(tuple(values))
        out_rels.append(tuple(rr))
    desc = list(first_desc[:nk]) + [c for d, _, _ in results for c in d[nk:]]
    perm = _placed(keys, ps, nk)
    desc = [desc[j] for j in perm]
    out_rows = [tuple(row[j] for j in perm) for row in out_rows]
    out_rels = [tuple(r[j - nk] for j in perm[nk:]) for r in out_rels]
    routes = [r for _, _, info in results for r in info.routes]
    charge = share.charge
    info = PrivacyInfo(mechanism="+".join(i.mechanism for _, _, i in results),
                       epsilon=charge.epsilon, remaining=charge.remaining,
                       releases=tuple(out_rels), columns=tuple(c[0] for c in desc[nk:]),
                       value_names=tuple(c[0] for c in desc[nk:]),
                       strategy=_split_text(st, ps, epsilon, [i for _, _, i in results]),
                       routes=tuple(routes), unit=getattr(charge, "unit", "epsilon"))
    return desc, out_rows, info


def _placed(keys: list[int], ps: list[Part], nk: int) -> list[int]:
    """The permutation putting the parts' joined columns (keys, then each part's values in
    part order) in their places as written (keys first: :func:`parts` refuses a key after a
    value)."""
    order = list(range(nk)) + [i - len(keys) + nk for p in ps for i in p.items]
    return [order.index(i) for i in range(len(order))]


def columns(st, *, choose, columns_of):
    """``(columns, k)``: the ``(name, DuckDB type)`` columns :func:`release` releases (before
    post-processing), each part's as ``columns_of(part statement, its route)`` gives them
    (:func:`.route_columns.route_columns`), placed as written; or the first part's reason why
    they are known only from the released values. Reads no row, charges nothing."""
    keys, ps = parts(st)
    group = st.query.args.get("group")
    nk = len(group.expressions) if group else 0
    found = []
    for p in ps:
        sub = _sub(st, p)
        got = columns_of(sub, choose(sub))
        if isinstance(got, str):
            return got
        found.append(got[0])
    desc = list(found[0][:nk]) + [c for d in found for c in d[nk:]]
    return [desc[j] for j in _placed(keys, ps, nk)], len(desc) - nk


def _split_text(st, ps: list[Part], epsilon, infos) -> str:
    """The split, in words: each part's aggregates, its ε, its route and its strategy."""
    sel = st.query
    k = sum(len(p.items) if p.own else sum(1 for i in p.items if sel.expressions[i].find(
        exp.AggFunc) is not None) for p in ps)
    words = []
    for p, info in zip(ps, infos):
        names = ", ".join(sel.expressions[i].sql(dialect="duckdb") for i in p.items)
        how = f" — {info.strategy}" if info.strategy else ""
        words.append(f"{names} at ε = {format_eps(epsilon * p.share)} "
                     f"({'+'.join(info.routes)}){how}")
    return (f"ε = {format_eps(epsilon)} split equally over the {k} aggregates (sequential "
            f"composition, charged once): " + "; ".join(words))


def explain(st, eps, tree, *, choose, decide) -> list:
    """One ``EXPLAIN PRIVACY`` row per released aggregate, each its part's route's, its ε the
    part's share; reads no row (``choose``, ``decide``: :mod:`.routing`'s)."""
    from . import explain_route
    from .explain_route import with_route

    if eps is None:
        raise ProgrammingError("WITH ACCURACY cannot be met for a select list mixing a quantile "
                               "or variance with other aggregates (their errors are in different "
                               "units); give WITH EPSILON ε")
    _, ps = parts(st)
    _check(st, ps, eps, choose)
    rows = []
    for p in ps:
        sub = _sub(st, p)
        route = choose(sub)
        share = eps * p.share
        if route is not None:
            rows += [with_route(r, route.name) for r in route.explain(sub, share, tree)]
        else:
            options = dict(st.options)
            options.pop("raw", None)
            rows += explain_route.explain_rows(st.con, sub.plan, share, tree, options, decide)
    return rows

