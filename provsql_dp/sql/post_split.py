"""Post-processing in SQL: split a private aggregate statement into the aggregates it releases
and what it does with the released values afterwards.

``ORDER BY``, ``LIMIT``/``OFFSET``, ``HAVING`` and arithmetic over released aggregates
(``SUM(x) / COUNT(*)``, ``ROUND(COUNT(*), -1)``, aliases used in ``ORDER BY``) act on the *noisy*
answers after their release: post-processing, which costs no privacy (any function of a
differentially private release is as private as the release). :func:`split_post` rewrites

    SELECT k, SUM(x) / COUNT(*) AS r FROM t GROUP BY k HAVING COUNT(*) > 10 ORDER BY r DESC LIMIT 3

into the *core* statement the routes release — ``SELECT k, SUM(x), COUNT(*) FROM t GROUP BY k``,
each distinct aggregate once, keys first, every aggregate a separate release with an equal share
of ε (as any select list of several aggregates, :func:`provsql_dp.privacy.answer.answer_several`)
— and a :class:`Post` that names, over the released columns ``__k0, …`` (the GROUP BY keys, in
their order) and ``__a0, …`` (the aggregates), the output columns, the HAVING filter, the order
and the row window. :mod:`provsql_dp.privacy.post_sql` evaluates it on the released rows.

The set of groups stays the declared keys: HAVING and LIMIT drop released groups by their noisy
values (or their public keys), which is post-processing too.

>>> from provsql_dp.sql.dialect import parse_one
>>> core, post = split_post(parse_one(
...     "SELECT k, SUM(x) / COUNT(*) AS r FROM t GROUP BY k HAVING COUNT(*) > 10 ORDER BY r DESC LIMIT 3"))
>>> core.sql()
'SELECT k, SUM(x), COUNT(*) FROM t GROUP BY k'
>>> print(post.describe())
output k, r = SUM(x) / COUNT(*); HAVING COUNT(*) > 10; ORDER BY r DESC; LIMIT 3
>>> [e.sql() for _, e in post.outputs], post.having.sql(), post.limit
(['__k0', '__a0 / __a1'], '__a1 > 10', 3)
>>> split_post(parse_one("SELECT k, COUNT(*) FROM t GROUP BY k"))[1] is None
True

A select list of bare aggregates and keys that leaves a key out, with nothing after the release
(``SELECT COUNT(*) AS n FROM t GROUP BY k``), keeps the statement itself as the core — every
route judges, and refuses, what the analyst wrote — and its post only keeps the columns named:

>>> tree = parse_one("SELECT COUNT(*) AS n FROM t GROUP BY k")
>>> core, post = split_post(tree)
>>> core is tree, [(n, e.sql()) for n, e in post.outputs]
(True, [('n', '__a0')])
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from ..errors import ProgrammingError
from ._names import output_name
from .ordered_set import as_quantiles
from .scope import NOT_YET, refuse

__all__ = ["Post", "split_post"]


@dataclass(frozen=True)
class Post:
    """What a statement does with its released values (see the module docstring).

    ``outputs``: ``(name, expression)`` per output column, over ``__k{i}``/``__a{j}``;
    ``having``: a predicate over the same; ``order``: ``(expression, descending, nulls_first)``;
    ``limit``/``offset``: whole numbers of the statement; ``keys``/``aggregates``: the analyst's
    GROUP BY keys and aggregates (for messages); ``written``: the clauses as written;
    ``as_written``: the core is the statement itself (a select list leaving a key out)."""

    keys: tuple[exp.Expression, ...]
    aggregates: tuple[exp.Expression, ...]
    outputs: tuple[tuple[str, exp.Expression], ...]
    having: exp.Expression | None = None
    order: tuple[tuple[exp.Expression, bool, bool | None], ...] = ()
    limit: int | None = None
    offset: int = 0
    written: tuple[tuple[str, str], ...] = ()  # (clause, as written) for EXPLAIN PRIVACY
    as_written: bool = False  # the core is the statement itself: a projection of its release

    def sources(self, j: int) -> set[int]:
        """The aggregates (indices) output column ``j`` is computed from."""
        return {int(c.name[3:]) for c in self.outputs[j][1].find_all(exp.Column)
                if c.name.startswith("__a")}

    def describe(self) -> str:
        """The post-processing as written, one clause after the other."""
        return "; ".join(f"{clause} {text}" if text else clause for clause, text in self.written)


def _is_agg(node: exp.Expression) -> bool:
    """An aggregate released as one value: ``AGG(…)``, or ``AGG(…) FILTER (WHERE …)`` whole."""
    if isinstance(node, exp.Filter) and isinstance(node.this, exp.AggFunc):
        return node.find_ancestor(exp.Window) is None
    return isinstance(node, exp.AggFunc) and node.find_ancestor(exp.Window) is None \
        and not isinstance(node.parent, exp.Filter)


def _aggs_in(e: exp.Expression | None) -> list[exp.Expression]:
    if e is None:
        return []
    found = (a.parent if isinstance(a.parent, exp.Filter) else a for a in e.find_all(exp.AggFunc))
    return [a for a in found if a.find_ancestor(exp.Window) is None
            and not any(isinstance(p, exp.AggFunc) for p in _ancestors(a))]


def _all_spelled_out(tree: exp.Expression) -> exp.Expression:
    """DuckDB's ``GROUP BY ALL`` (every select-list item without an aggregate, by position),
    ``ORDER BY ALL`` (every output column, left to right) and ``count_if(c)`` (``COUNT(*)
    FILTER (WHERE c)``, its own FILTER joined by AND) of a SELECT, spelled out in place.

    >>> from provsql_dp.sql.dialect import parse_one
    >>> _all_spelled_out(parse_one(
    ...     "SELECT k, j, SUM(x) / 2 FROM t GROUP BY ALL ORDER BY ALL DESC")).sql("duckdb")
    'SELECT k, j, SUM(x) / 2 FROM t GROUP BY 1, 2 ORDER BY 1 DESC, 2 DESC, 3 DESC'
    >>> _all_spelled_out(parse_one("SELECT count_if(x > 1) AS n, count_if(y) FROM t")).sql("duckdb")
    'SELECT COUNT(*) FILTER(WHERE x > 1) AS n, COUNT(*) FILTER(WHERE y) AS "COUNT_IF(y)" FROM t'
    """
    if not isinstance(tree, exp.Select):
        return tree
    for i, item in enumerate(tree.expressions):  # an unnamed count_if keeps its own name
        if isinstance(item, exp.CountIf) or isinstance(item, exp.Filter) and isinstance(
                item.this, exp.CountIf):
            tree.expressions[i] = exp.alias_(item, output_name(item), quoted=True)
            tree.expressions[i].parent = tree
    for node in list(tree.find_all(exp.CountIf)):
        cond = node.this.copy()
        if isinstance(node.parent, exp.Filter):  # count_if(c) FILTER (WHERE f): both
            where = node.parent.expression
            where.set("this", exp.and_(cond, where.this.copy()))
            node.replace(exp.Count(this=exp.Star(), big_int=True))
        else:
            node.replace(exp.Filter(this=exp.Count(this=exp.Star(), big_int=True),
                                    expression=exp.Where(this=cond)))
    group, order = tree.args.get("group"), tree.args.get("order")
    if group is not None and group.args.get("all"):
        keys = [exp.Literal.number(i + 1) for i, item in enumerate(tree.expressions)
                if not _aggs_in(item)]
        tree.set("group", exp.Group(expressions=keys) if keys else None)
    by = order.expressions if order is not None else []
    if len(by) == 1 and isinstance(by[0].this, exp.Var) and by[0].this.name.upper() == "ALL":
        tree.set("order", exp.Order(expressions=[
            exp.Ordered(this=exp.Literal.number(i + 1), desc=by[0].args.get("desc"),
                        nulls_first=by[0].args.get("nulls_first"))
            for i in range(len(tree.expressions))]))
    return tree


def _ancestors(node: exp.Expression):
    p = node.parent
    while p is not None:
        yield p
        p = p.parent


def _body(item: exp.Expression) -> exp.Expression:
    return item.unalias() if isinstance(item, exp.Alias) else item


def _needs_post(sel: exp.Select, keys_sql: list[str]) -> bool:
    """Whether the select list is other than what the routes release as it is: every GROUP BY
    key once, in the GROUP BY's order, under its own name, then bare aggregates (anything
    else — an aggregate before a key, a key left out, repeated or renamed, arithmetic — is a
    projection of the released columns, so the answer has the select list's columns in its
    order)."""
    if any(sel.args.get(k) for k in ("having", "order", "limit", "offset", "fetch")):
        return True
    items = sel.expressions
    bodies = [_body(item) for item in items]
    if not keys_sql:  # no GROUP BY: bare aggregates only (no SQL text made: ~0.1 ms)
        return not all(_is_agg(b) for b in bodies)
    texts = [b.sql(dialect="duckdb").lower() for b in bodies]
    if not set(keys_sql) <= set(texts):
        return True
    head = texts[:len(keys_sql)]
    renamed = any(i.alias_or_name.lower() != b.output_name.lower()  # a key named by its alias
                  for i, b in zip(items[:len(keys_sql)], bodies))
    return head != keys_sql or renamed or not all(_is_agg(b) for b in bodies[len(keys_sql):])


def split_post(tree: exp.Expression) -> tuple[exp.Expression, Post | None]:
    """``(core, post)``: the statement its routes release and its post-processing, or
    ``(tree, None)`` when the statement does nothing after the release (see the module
    docstring). Only a top-level SELECT with aggregates (in its select list, HAVING or ORDER BY)
    is split; anything else is returned unchanged for the planner to judge. PostgreSQL's
    ``percentile_cont(q) WITHIN GROUP (ORDER BY c)`` is read as ``QUANTILE_CONT(c, q)`` first
    (:func:`.ordered_set.as_quantiles`)."""
    sel = _all_spelled_out(as_quantiles(tree))
    if not isinstance(sel, exp.Select):
        return tree, None
    items = list(sel.expressions)
    aggs = [a for e in items + [sel.args.get("having"), sel.args.get("order")] for a in _aggs_in(e)]
    if not aggs:
        return tree, None
    if any(isinstance(i, exp.Star) or (isinstance(i, exp.Column) and isinstance(i.this, exp.Star))
           for i in items):
        raise refuse("SELECT * with an aggregate", hint="select the GROUP BY keys and aggregates")
    aliases = {i.alias.lower(): _body(i) for i in items if isinstance(i, exp.Alias)}
    group = sel.args.get("group")
    keys: list[exp.Expression] = []
    for g in (group.expressions if group is not None else []):
        if isinstance(g, exp.Literal) and not g.is_string:
            pos = int(g.this)
            if not 1 <= pos <= len(items):
                raise ProgrammingError(f"GROUP BY position {pos} is out of range")
            g = _body(items[pos - 1])
        elif isinstance(g, exp.Column) and not g.table and g.name.lower() in aliases \
                and not _is_agg(aliases[g.name.lower()]):
            g = aliases[g.name.lower()]
        keys.append(g)
    keys_sql = [k.sql(dialect="duckdb").lower() for k in keys]
    if not _needs_post(sel, keys_sql) or group is not None and (
            group.args.get("rollup") or group.args.get("cube") or group.args.get("grouping_sets")):
        return tree, None
    if _keys_left_out(sel, keys_sql):
        return tree, _projection(items, keys, keys_sql)
    distinct: dict[str, int] = {}
    uniq: list[exp.Expression] = []
    for a in aggs:
        s = a.sql(dialect="duckdb").lower()
        if s not in distinct:
            distinct[s] = len(uniq)
            uniq.append(a.copy())

    def over_released(e: exp.Expression, where: str, outputs=None) -> exp.Expression:
        if any(isinstance(n, (exp.Subquery, exp.Select)) for n in e.walk()):
            raise refuse(f"a subquery in {where}", NOT_YET,
                         "release the aggregates it computes in a statement of their own and "
                         "compare the released values yourself")

        def swap(n: exp.Expression) -> exp.Expression:
            if _is_agg(n):
                return exp.column(f"__a{distinct[n.sql(dialect='duckdb').lower()]}")
            k = _key_of(n, keys)
            if k is not None:
                return exp.column(f"__k{k}")
            if outputs is not None and isinstance(n, exp.Column) and not n.table \
                    and n.name.lower() in outputs:
                return outputs[n.name.lower()].copy()
            return n

        out = e.copy().transform(swap)
        for c in out.find_all(exp.Column):
            if not c.name.startswith(("__a", "__k")) or c.table:
                raise ProgrammingError(
                    f"{c.sql(dialect='duckdb')} in {where} is neither a GROUP BY key nor inside "
                    "an aggregate: after GROUP BY, only the keys and the released aggregates "
                    "(COUNT, SUM, AVG, …) can be used")
        return out

    outputs = []
    for item in items:
        outputs.append((output_name(item), over_released(_body(item), "the select list")))
    by_alias = {n.lower(): e for n, e in outputs}
    having = sel.args.get("having")
    having_e = over_released(having.this, "HAVING", by_alias) if having is not None else None
    order = []
    for o in (sel.args["order"].expressions if sel.args.get("order") else []):
        target = o.this
        if isinstance(target, exp.Literal) and not target.is_string:
            pos = int(target.this)
            if not 1 <= pos <= len(outputs):
                raise ProgrammingError(f"ORDER BY position {pos} is out of range")
            e = outputs[pos - 1][1].copy()
        else:
            e = over_released(target, "ORDER BY", by_alias)
        order.append((e, bool(o.args.get("desc")), o.args.get("nulls_first")))
    limit, offset = _window(sel)
    core = sel.copy()
    for k in ("having", "order", "limit", "offset", "fetch"):
        core.set(k, None)
    core.set("expressions", [k.copy() for k in keys] + [a.copy() for a in uniq])
    if group is not None:
        core.set("group", exp.Group(expressions=[k.copy() for k in keys]))
    written = [("output", ", ".join(
        n if e.sql(dialect="duckdb") == n else f"{n} = {e.sql(dialect='duckdb')}"
        for n, e in ((output_name(i), _body(i)) for i in items)))]
    if having is not None:
        written.append(("HAVING", having.this.sql(dialect="duckdb")))
    if sel.args.get("order"):
        written.append(("ORDER BY", ", ".join(o.sql(dialect="duckdb")
                                               for o in sel.args["order"].expressions)))
    if limit is not None:
        written.append(("LIMIT", str(limit)))
    if offset:
        written.append(("OFFSET", str(offset)))
    post = Post(tuple(keys), tuple(uniq), tuple(outputs), having_e, tuple(order), limit, offset,
                tuple(written))
    return core, post


def _keys_left_out(sel: exp.Select, keys_sql: list[str]) -> bool:
    """A select list of bare aggregates and GROUP BY keys only that leaves a key out, with
    nothing after the release (no HAVING, ORDER BY, LIMIT): the routes release the statement
    as written (each key in the GROUP BY's order, then its aggregates in the select list's), and
    :func:`_projection` keeps the columns it names. The statement each route judges is then the
    analyst's own, so its refusals are the same sentences as without the projection (a core
    with the keys put back in front would be a statement some route refuses otherwise)."""
    if any(sel.args.get(k) for k in ("having", "order", "limit", "offset", "fetch")):
        return False
    texts = [_body(i).sql(dialect="duckdb").lower() for i in sel.expressions]
    return not set(keys_sql) <= set(texts) and all(
        _is_agg(_body(i)) or t in keys_sql for i, t in zip(sel.expressions, texts))


def _projection(items: list[exp.Expression], keys: list[exp.Expression],
                keys_sql: list[str]) -> Post:
    """The select list ``items`` (bare aggregates and keys) as columns of the statement's own
    release: a key as ``__k{i}`` (its place in the GROUP BY), the ``j``-th aggregate of the list
    as ``__a{j}`` (repeated ones too: each is released)."""
    aggs: list[exp.Expression] = []
    outputs = []
    for item in items:
        body = _body(item)
        text = body.sql(dialect="duckdb").lower()
        if text in keys_sql:
            outputs.append((output_name(item), exp.column(f"__k{keys_sql.index(text)}")))
        else:
            outputs.append((output_name(item), exp.column(f"__a{len(aggs)}")))
            aggs.append(body.copy())
    written = ", ".join(output_name(i) for i in items)
    return Post(tuple(keys), tuple(aggs), tuple(outputs), written=(("output", written),),
                as_written=True)


def _key_of(n: exp.Expression, keys: list[exp.Expression]) -> int | None:
    """The GROUP BY key ``n`` is (same expression; a column matches a key column of the same
    name unless both name different tables), or None."""
    s = n.sql(dialect="duckdb").lower()
    for i, k in enumerate(keys):
        if k.sql(dialect="duckdb").lower() == s:
            return i
    if isinstance(n, exp.Column) and not isinstance(n.this, exp.Star):
        for i, k in enumerate(keys):
            if isinstance(k, exp.Column) and k.name.lower() == n.name.lower() and (
                    not k.table or not n.table or k.table.lower() == n.table.lower()):
                return i
    return None


def _whole(node: exp.Expression | None, clause: str) -> int | None:
    if node is None:
        return None
    value = node.args.get("expression") if isinstance(node, (exp.Limit, exp.Offset)) else node
    if isinstance(node, exp.Limit) and (node.args.get("offset") is not None):
        raise refuse(f"{clause} with an offset inside it", hint="write LIMIT n OFFSET m")
    if isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit():
        return int(value.this)
    raise refuse(f"{clause} {value.sql(dialect='duckdb') if value is not None else ''}".strip(),
                 "only a whole number written in the statement can limit the released rows",
                 f"write {clause} 10")


def _window(sel: exp.Select) -> tuple[int | None, int]:
    if sel.args.get("fetch") is not None:
        raise refuse("FETCH FIRST", hint="write LIMIT n")
    limit = _whole(sel.args.get("limit"), "LIMIT")
    offset = _whole(sel.args.get("offset"), "OFFSET") or 0
    return limit, offset
