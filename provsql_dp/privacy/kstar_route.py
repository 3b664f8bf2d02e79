"""k-star counts written in SQL, released with the degree construction (issue 15).

A k-star count is a self-join of an edge table on a common centre with distinct leaves. Its
K-relation has one tuple per star (Σ_v C(d_v, k): 2.5 M 3-stars on ca-GrQc), which the general
path captures and hands to LPs of that size. :func:`star_shape` recognises such a query and
:func:`release_kstar` releases it with :class:`~provsql_dp.mechanisms.subgraph.kstar.KStarCount`, whose
LPs have O(|V| + |E|) columns whatever k. The recursive mechanism is the same (Chen & Zhou §4.1,
the same ε, θ, β, μ, split and the same public grid); only its H and G sequences are built over
degrees instead of over the enumerated stars (proofs in :mod:`provsql_dp.mechanisms.subgraph.kstar`).

**What is recognised** — decided from the plan (the query text) and the declarations only, never
from the data. ``COUNT(*)`` without ``GROUP BY``/``DISTINCT`` over ``k ≥ 2`` instances of one
*arc relation* ``A`` of a protected table ``T``, joined (``JOIN … ON`` or ``WHERE``, any order)
by equalities that put one *centre* column of every instance in a single class, and strict
comparisons ``<``/``>`` between the instances' *leaf* columns whose transitive closure orders all
k leaves. Nothing else may appear in the conditions. ``A`` is either

* ``T`` itself, centre ``X`` and leaf ``Y`` (two columns of T, the same in every instance): each
  row is an arc counted at its X; right for a table that stores both directions of an edge
  (``friend(person, friend)``), or
* ``(SELECT X, Y FROM T UNION ALL SELECT Y, X FROM T)``: each row is an undirected edge counted
  at both ends; right for a table that stores each edge once (``load_edges``' ``src < dst``) —
  the SQL of :func:`provsql_dp.graph.pattern_sql` for ``"k-star"``.

And the declarations must make the query's count the number of k-sets of arcs with a common
centre (stars whose leaves are distinct), which is what the construction counts:

* ``T`` is ``PROTECT TABLE T`` (edge privacy: a participant is a row) or
  ``PROTECT TABLE T BY (X, Y)`` (node privacy: a participant is a node with its rows);
* a declared ``PRIMARY KEY`` or ``UNIQUE`` key of T lies within ``{X, Y}`` (no repeated arc);
* for the undirected form, also ``CHECK (X < Y)`` (or ``X > Y``): no self-loop and no edge
  stored in both directions, so no leaf repeats at a centre.

Rows with a NULL in X or Y join nothing in SQL and are left out here too. Anything else — another
predicate, a missing declaration, a GROUP BY, ``<=`` or ``<>`` between leaves, a triangle — goes
the general path with its usual semantics. ``OPTIONS (mechanism = 'r2t')`` keeps R2T.

>>> import provsql_dp, numpy as np
>>> from provsql_dp.sql.planner import plan_query
>>> con = provsql_dp.connect()
>>> con._rng = np.random.default_rng(0)
>>> _ = con.execute("CREATE TABLE edge(src INT, dst INT, PRIMARY KEY (src, dst), CHECK (src < dst))")
>>> _ = con.execute("INSERT INTO edge VALUES (1, 2), (1, 3), (1, 4), (2, 3)")
>>> _ = con.execute("PROTECT TABLE edge; SET PRIVACY BUDGET 5")
>>> sql = '''SELECT COUNT(*) FROM
...   (SELECT src, dst FROM edge UNION ALL SELECT dst, src FROM edge) AS a
...   JOIN (SELECT src, dst FROM edge UNION ALL SELECT dst, src FROM edge) AS b ON a.src = b.src
...   WHERE a.dst < b.dst WITH EPSILON 1'''
>>> con.execute(sql).privacy.mechanism
'recursive-kstar'
>>> tree = sqlglot.parse_one("SELECT COUNT(*) FROM edge a, edge b, edge c WHERE a.src = b.src "
...                          "AND c.src = a.src AND a.dst < b.dst AND b.dst < c.dst", read="duckdb")
>>> star_shape(con, plan_query(tree, con._catalog)).describe()
'3-stars: arcs (src → dst) of edge, edge privacy, degree construction'
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from .. import _deadline
from ..errors import CaptureTooLarge, SolverError
from ..mechanisms.recursive._framework import resolve_params
from ..mechanisms.subgraph.kstar import KStarCount
from ..provenance.backends import engine_of
from ..provenance.capture import max_rows_of, q
from ..sql.plan import Aggregate, Filter, Join, Project, Scan, Union
from .release_info import PrivacyInfo
from ..sql._conjuncts import conjuncts

__all__ = ["StarShape", "star_shape", "load_kstar", "release_kstar", "kstar_note", "arcs_sql",
           "read_arcs"]


@dataclass(frozen=True)
class StarShape:
    """A recognised k-star count: ``k`` leaves over the arcs ``centre → leaf`` of ``scan``'s
    table (``undirected``: both directions of every row), under ``privacy``."""

    k: int
    scan: Scan
    centre: str
    leaf: str
    undirected: bool
    privacy: str

    def describe(self) -> str:
        arcs = (f"undirected edges {{{self.centre}, {self.leaf}}}" if self.undirected
                else f"arcs ({self.centre} → {self.leaf})")
        return (f"{self.k}-stars: {arcs} of {self.scan.table}, {self.privacy} privacy, "
                "degree construction")

    mechanism = "recursive-kstar"
    how = "degree construction for k-stars, linear programs on HiGHS"
    lp_size = ("LPs over node degrees, O(|V| + |E|) columns whatever k, instead of one "
               "K-relation tuple per star")

    def load(self, con, *, time_limit: float | None = None) -> KStarCount:
        """The construction over the table's rows (private: reads protected rows)."""
        return load_kstar(con, self, time_limit=time_limit)

    @staticmethod
    def sizes(ks) -> str:
        """The curator's (private) sizes of a loaded construction."""
        return (f"nodes={ks.n}, arcs={ks.m}, stars={ks.true_answer:.0f}, "
                f"participants={ks.n_participants}")


class _NoMatch(Exception):
    """The plan is not a k-star count (internal: the caller returns None)."""


def star_shape(con, plan) -> StarShape | None:
    """The :class:`StarShape` of ``plan`` when it is a k-star count the degree construction
    releases with the same semantics (see the module doc), else None. Reads the plan and the
    declarations (schema constraints, ``PROTECT TABLE``) only."""
    if (not isinstance(plan, Aggregate) or plan.kind != "count" or plan.weight is not None
            or plan.group_by):
        return None
    try:
        return _match(con, plan.child)
    except _NoMatch:
        return None


def _bare(e: exp.Expression) -> str:
    e = e.unnest() if isinstance(e, exp.Paren) else e
    if not isinstance(e, exp.Column) or e.table or not isinstance(e.this, exp.Identifier):
        raise _NoMatch
    return e.name


def _collect(root):
    """Walk a plan of scans, ``UNION ALL`` arc relations, projections, filters and joins:
    ``(instances, resolve, conds)`` with ``instances`` a list of ``(kind, scan, columns)``
    (``"directed"``: a scan of T; ``"undirected"``: :func:`_both_directions`), ``resolve`` mapping
    a column id of the plan to ``(instance, column tag)`` (tags ``"first"``/``"second"`` for an
    undirected instance) and ``conds`` the conjuncts of every ``ON`` and ``WHERE``. Raises
    :class:`_NoMatch` on any other node. Shared by the k-star and k-triangle routes."""
    rename: dict[str, str] = {}   # a Project's output id -> its child's id
    role: dict[str, tuple[int, str]] = {}  # base id -> (instance, column tag)
    instances: list[tuple] = []   # (kind, scan, columns)
    conds: list[exp.Expression] = []

    def visit(node):
        if isinstance(node, Project):
            for out, e in zip(node.ids, node.exprs):
                src = _bare(e)
                if src != out:
                    rename[out] = src
            visit(node.child)
        elif isinstance(node, Filter):
            conds.extend(conjuncts(node.predicate))
            visit(node.child)
        elif isinstance(node, Join):
            if node.condition is not None:
                conds.extend(conjuncts(node.condition))
            visit(node.left)
            visit(node.right)
        elif isinstance(node, Scan):
            if not node.slots:
                raise _NoMatch
            i = len(instances)
            instances.append(("directed", node, node.columns))
            for c, i_d in zip(node.columns, node.ids):
                role[i_d] = (i, c)
        elif isinstance(node, Union):
            scan, pair = _both_directions(node)
            i = len(instances)
            instances.append(("undirected", scan, pair))
            role[node.ids[0]], role[node.ids[1]] = (i, "first"), (i, "second")
        else:
            raise _NoMatch

    visit(root)

    def resolve(name: str) -> tuple[int, str]:
        seen = set()
        while name in rename and name not in seen:
            seen.add(name)
            name = rename[name]
        if name not in role:
            raise _NoMatch
        return role[name]

    return instances, resolve, conds


def _match(con, root) -> StarShape:
    instances, resolve, conds = _collect(root)
    k = len(instances)
    kinds = {kind for kind, _, _ in instances}
    scans = {(s.catalog, s.schema, s.table) for _, s, _ in instances}
    if k < 2 or len(kinds) != 1 or len(scans) != 1:
        raise _NoMatch
    if len({pair for kind, _, pair in instances if kind == "undirected"}) > 1:
        raise _NoMatch

    eq_classes, order = _conditions(conds, resolve)
    less: set[tuple[int, int]] = set()
    leaf_tag: dict[int, str] = {}
    for a, b in order:
        for inst, tag in (a, b):
            if leaf_tag.setdefault(inst, tag) != tag:
                raise _NoMatch
        if a[0] == b[0]:
            raise _NoMatch
        less.add((a[0], b[0]))
    groups = eq_classes
    if len(groups) != 1 or len(groups[0]) != k or {i for i, _ in groups[0]} != set(range(k)):
        raise _NoMatch
    centre_tag = dict(groups[0])
    if set(leaf_tag) != set(range(k)) or any(leaf_tag[i] == centre_tag[i] for i in range(k)):
        raise _NoMatch
    _total_order(less, k)
    kind, scan, pair = instances[0]
    if kind == "directed":
        if len({centre_tag[i] for i in range(k)}) != 1 or len({leaf_tag[i] for i in range(k)}) != 1:
            raise _NoMatch
        centre, leaf = centre_tag[0], leaf_tag[0]
    else:
        centre, leaf = pair
    return _declared(con, scan, k, centre, leaf, kind == "undirected")


def _conditions(conds, resolve) -> tuple[list[set], list[tuple]]:
    """Split the conjuncts into the equality classes of roles (those with ≥ 2 members) and the
    strict comparisons ``(a, b)`` meaning ``a < b``; any other conjunct is no match."""
    parent: dict = {}

    def find(x):
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    order: list[tuple] = []
    for c in conds:
        if isinstance(c, exp.EQ):
            a, b = resolve(_bare(c.this)), resolve(_bare(c.expression))
            parent.setdefault(a, a)
            parent.setdefault(b, b)
            parent[find(a)] = find(b)
            continue
        if not isinstance(c, (exp.LT, exp.GT)):
            raise _NoMatch
        a, b = resolve(_bare(c.this)), resolve(_bare(c.expression))
        order.append((b, a) if isinstance(c, exp.GT) else (a, b))
    classes: dict = {}
    for x in list(parent):
        classes.setdefault(find(x), set()).add(x)
    return [g for g in classes.values() if len(g) > 1], order


def _both_directions(node: Union) -> tuple[Scan, tuple[str, str]]:
    """``(SELECT X, Y FROM T UNION ALL SELECT Y, X FROM T)``: the scan and ``(X, Y)``."""
    if len(node.inputs) != 2 or len(node.ids) != 2:
        raise _NoMatch
    cols = []
    for part in node.inputs:
        if not isinstance(part, Project) or not isinstance(part.child, Scan):
            raise _NoMatch
        scan = part.child
        if not scan.slots:
            raise _NoMatch
        base = dict(zip(scan.ids, scan.columns))
        names = [base.get(_bare(e)) for e in part.exprs]
        if None in names:
            raise _NoMatch
        cols.append((scan, tuple(names)))
    (s1, (x, y)), (s2, back) = cols
    if x == y or back != (y, x) or (s1.catalog, s1.schema, s1.table) != (s2.catalog, s2.schema,
                                                                         s2.table):
        raise _NoMatch
    return s1, (x, y)


def _total_order(less: set, k: int) -> None:
    """The transitive closure of ``less`` must be a strict total order on ``range(k)``."""
    reach = {i: {b for a, b in less if a == i} for i in range(k)}
    for _ in range(k):
        for i in range(k):
            reach[i] |= set().union(*(reach[j] for j in reach[i])) if reach[i] else set()
    for i in range(k):
        if i in reach[i]:
            raise _NoMatch
        for j in range(i + 1, k):
            if j not in reach[i] and i not in reach[j]:
                raise _NoMatch


def _declared(con, scan: Scan, k: int, centre: str, leaf: str, undirected: bool) -> StarShape:
    """Check the declarations that make the count the construction's (module doc)."""
    prot = con._catalog.protection(scan.schema, scan.table)
    if prot is None or prot.references is not None:
        raise _NoMatch
    if not prot.by_columns:
        privacy = "edge"
    elif len(prot.by_columns) == 2 and set(prot.by_columns) == {centre, leaf}:
        privacy = "node"
    else:
        raise _NoMatch
    if not any(key and set(key) <= {centre, leaf} for key in scan.unique_keys):
        raise _NoMatch
    types = dict(zip(scan.columns, scan.types))
    if types.get(centre) != types.get(leaf):
        raise _NoMatch
    if undirected and not _ordered_check(con, scan, centre, leaf):
        raise _NoMatch
    return StarShape(k, scan, centre, leaf, undirected, privacy)


def _ordered_check(con, scan: Scan, x: str, y: str) -> bool:
    """Whether ``scan``'s table declares ``CHECK (x < y)`` or ``CHECK (x > y)`` (schema only)."""
    texts = con._catalog.check_expressions(scan.catalog, scan.schema, scan.table)
    for text in texts:
        try:
            e = sqlglot.parse_one(text, read="duckdb")
            e = e.unnest() if isinstance(e, exp.Paren) else e
            if isinstance(e, (exp.LT, exp.GT)) and {_bare(e.this).lower(),
                                                    _bare(e.expression).lower()} == {x.lower(),
                                                                                     y.lower()}:
                return True
        except (sqlglot.errors.ParseError, _NoMatch):
            continue
    return False


def arcs_sql(scan: Scan, x: str, y: str, limit: int | None = None) -> str:
    """The SQL reading the rows ``(x, y)`` of ``scan``'s table without NULLs, node values replaced
    by their rank (columns ``s``, ``d``; ordered), so any column type works; at most ``limit``
    rows when given."""
    x, y, t = q(x), q(y), scan.qualified
    return (f"WITH a AS (SELECT {x} AS s, {y} AS d FROM {t} WHERE {x} IS NOT NULL AND {y} IS NOT NULL), "
            "n AS (SELECT v, row_number() OVER (ORDER BY v) - 1 AS i "
            "FROM (SELECT s AS v FROM a UNION SELECT d FROM a)) "
            "SELECT ns.i AS s, nd.i AS d FROM a JOIN n AS ns ON ns.v = a.s "
            "JOIN n AS nd ON nd.v = a.d ORDER BY 1, 2"
            + ("" if limit is None else f" LIMIT {int(limit)}"))


def read_arcs(con, scan: Scan, x: str, y: str) -> tuple:
    """The rows of :func:`arcs_sql` as arrays ``(s, d)`` (private: reads protected rows). Like a
    provenance capture, the read stops one row past the connection's ``max_capture_rows`` and
    raises :class:`~provsql_dp.errors.CaptureTooLarge` then (a release answers it with its
    data-independent fallback)."""
    limit = max_rows_of(con)
    cols, _ = engine_of(con).fetchnumpy(arcs_sql(scan, x, y, None if limit is None else limit + 1))
    if limit is not None and len(cols["s"]) > limit:
        raise CaptureTooLarge(limit)
    _deadline.check("the reading of the protected rows")
    return cols["s"], cols["d"]


def load_kstar(con, shape: StarShape, *, time_limit: float | None = None) -> KStarCount:
    """Read the arcs of ``shape`` (private: reads protected rows) and build the construction."""
    src, dst = read_arcs(con, shape.scan, shape.centre, shape.leaf)
    return KStarCount(src, dst, shape.k, shape.privacy, directed=not shape.undirected,
                      time_limit=time_limit)


def release_kstar(con, plan, shape, epsilon: float, style: str, kwargs: dict,
                  charge_fn, rng, fallback, time_limit: float | None = None):
    """Charge (``charge_fn``, before any protected row is read), then release ``shape``'s
    construction (a :class:`StarShape`, or a k-triangle shape of
    :mod:`provsql_dp.privacy.ktriangle_route`).

    The whole release — reading the rows, building the construction, every LP — runs within
    the connection's ``release_time_limit`` (default
    :data:`~provsql_dp._deadline.RELEASE_TIME_LIMIT`) seconds (each LP also within
    ``time_limit``). A failed LP (time limit, solver status), the budget passed or more rows
    than ``max_capture_rows`` release ``fallback(ε, why)`` — data independent, same shape and
    mechanism name — and the incident (``why``: None for a failed LP) is recorded for the
    curator; any other error is the statement's failure (:mod:`.group_epsilon`). Returns
    (description, rows, PrivacyInfo)."""
    charge = charge_fn()
    p = resolve_params(epsilon, style, **kwargs)  # μ from the query's style, as the LP path
    params = {key: p[key] for key in ("theta", "beta", "mu", "eps1", "eps2")}
    try:
        with _deadline.deadline(_deadline.budget_of(con)):
            construction = shape.load(con, time_limit=time_limit)
            _deadline.check("the construction's preparation")
            rel = construction.release(epsilon, rng=rng, **params)
    except (_deadline.DeadlineExceeded, CaptureTooLarge) as e:
        rel = dataclasses.replace(fallback(epsilon, str(e)), mechanism=shape.mechanism)
    except SolverError:  # the LP's status or time limit (anything else: the statement fails)
        rel = dataclasses.replace(fallback(epsilon, None), mechanism=shape.mechanism)
    info = PrivacyInfo(mechanism=rel.mechanism, epsilon=charge.epsilon, remaining=charge.remaining,
                       releases=(rel,))
    return [(plan.label, "DOUBLE")], [(rel.value,)], info


def kstar_note(con, shape) -> str:
    """The ``EXPLAIN PRIVACY`` note of a k-star (or k-triangle) release: the construction, its
    public time budget, and for the curator (who may read the data) the LP sizes, read from the
    table without drawing noise."""
    note = f"{shape.describe()} ({shape.lp_size}). {budget_note(con)}"
    if getattr(con, "role", "curator") != "curator":
        return note
    try:
        sizes = shape.sizes(shape.load(con))
    except CaptureTooLarge as e:
        return (f"{note}. Curator only: {e} — a release would read no more than that and return "
                "the data-independent fallback")
    return f"{note}. Curator only (private sizes): {sizes}"


def budget_note(con) -> str:
    """The public bounds of a route's release on its running time and on the rows it reads
    (the EXPLAIN PRIVACY notes)."""
    limit = max_rows_of(con)
    rows = "any number of rows" if limit is None else f"at most {limit:,} rows (max_capture_rows)"
    seconds, padded = _deadline.budget_of(con), getattr(con, "release_seconds", None)
    if padded is not None and (seconds is None or padded < seconds):
        within = f"within {padded:g} s (release_seconds)"
    else:
        within = "with no time limit" if seconds is None else f"within {seconds:g} s"
    return (f"The whole release (reading the rows, building the construction, every LP) runs "
            f"{within} and reads {rows}; past either the data-independent fallback is "
            "released, its ε charged")
