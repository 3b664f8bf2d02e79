"""The policy route: histogram, range, rectangle, marginal and cumulative counts over one
row-per-participant table, released under its Blowfish policy (or plain DP without one).

Route policy of :data:`provsql_dp.privacy.routing.ROUTES`, tried before the aggregate routes.
It applies to a ``COUNT(*)`` over a single protected table whose rows are single participants
(``PROTECT TABLE t``, or ``BY (c)`` with ``c`` unique):

* ``SELECT c, COUNT(*) FROM t [WHERE …] GROUP BY c`` — a histogram over the policy's domain:
  every bin is released, empty ones too (2-D: ``GROUP BY a, b``; a marginal: ``GROUP BY a`` on
  a policy over ``(a, b)``). Without a policy on ``c`` the histogram is released under plain
  differential privacy (the unbounded complete graph) when ``c``'s type gives a public domain
  (BOOLEAN, ENUM, TINYINT, UTINYINT); with group keys declared for ``c`` (``SET GROUP KEYS``)
  the route steps aside (the Laplace mechanism releases the declared keys); otherwise it is
  refused with the fix;
* ``SELECT COUNT(*) FROM t WHERE c BETWEEN a AND b [AND d BETWEEN …]`` — one range (rectangle)
  count under the table's policy;
* ``COUNT RANGES (cond, …) FROM t`` and ``COUNT CUMULATIVE c FROM t`` — a batch of ranges, a
  cumulative histogram.

``WHERE`` conjuncts that are ranges over the policy's columns restrict the workload; other
conjuncts filter the rows in SQL, which is sound only when ⊥ is adjacent to every value (any
change of a record is then a removal plus an addition). Under a BOUNDED policy or with SOURCES
such filters are refused: the filtered row count would be published exactly, or records of
non-source values could move in and out of the count unprotected.

The histogram ``x`` comes from one DuckDB aggregation: rows are binned in SQL and, when the
workload is coarse, grouped straight into the cells of the projected (dynamic) policy
(:func:`provsql_dp.policies.blowfish.project`), so the full domain is never materialised. The ledger is
charged before any noise is drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from sqlglot import exp

from ..errors import (
    NotSupportedError,
    ProgrammingError,
    UnsupportedQueryError,
)
from ..policies.blowfish._engine import Answer, answer
from ..policies.blowfish._ops import SafeNoise
from ..policies.blowfish._plan import NOISE_INFLATION
from ..policies.blowfish.catalog import PolicyCatalog
from ..policies.blowfish.constraints import known_counts_plan
from ..policies.blowfish.dynamic import project
from ..policies.blowfish.policy import Policy
from ..policies.blowfish.sql import ColumnDomain, TablePolicy
from ..policies.blowfish.strategies import STRATEGIES, best_plan
from ..policies.blowfish.workload import Histogram, Prefix, Ranges, Rects
from ..provenance.backends import engine_of
from ..provenance.capture import q
from ..sql import dialect as d
from ..sql.column_declarations import ColumnDeclarations
from ..sql.expressions import option_text
from ..sql.key_domain import SELECTION_HINT, proved_domain
from ..sql.plan import Aggregate, Distinct, GroupFilter, Join, Scan, SemiJoin, Union, walk
from ..sql.policy_grammar import range_spec
from ..sql.total import make_total
from . import _range_predicates as rp
from .blowfish_release import BlowfishRelease
from .delta_route import DELTA_STRATEGIES
from .delta_route import answer as delta_answer
from .no_data import from_no_data, read_or_nothing
from .release_info import PrivacyInfo

__all__ = ["route", "prepare", "plan_for", "Prepared", "BlowfishRelease",
           "row_per_participant", "table_policies"]

#: above this many cells on an axis, rows are grouped by bin and folded into cells in numpy
MAX_CASE_CELLS = 256


# ---------------------------------------------------------------------------- participants
def row_per_participant(con, info, prot) -> tuple[bool, str]:
    """Whether each row of the table is one participant (Blowfish's one record per individual),
    from the declarations only: ``PROTECT TABLE t``, or ``BY (c)`` with ``c`` a declared key."""
    if prot is None:
        return False, (f"table {info.name!r} is not protected; declare its participants first "
                       f"(PROTECT TABLE {info.name}: each row one participant)")
    if prot.references is not None:
        return False, (f"rows of {info.name!r} are owned along a foreign key (REFERENCES "
                       f"{prot.references[1]}), so a participant may own several rows; a "
                       "Blowfish policy assumes one record per individual")
    if not prot.by_columns:
        return True, ""
    if len(prot.by_columns) > 1:
        return False, (f"rows of {info.name!r} have several owners (BY ({', '.join(prot.by_columns)}))"
                       "; a Blowfish policy assumes one record per individual (such queries go "
                       "to the recursive mechanism)")
    c = prot.by_columns[0]
    if any(list(key) == [c] for key in con._catalog.unique_keys(info)):
        return True, ""
    # Decided from the declarations alone, never by looking at the rows: whether the route
    # applies must not depend on the data (the side-channel rule).
    return False, (f"rows of {info.name!r} are owned by the participants named in {c!r}, which "
                   f"is not declared unique, so a participant may own several rows; a Blowfish "
                   f"policy assumes one record per individual. If each {c!r} owns one row, declare "
                   f"it: ALTER TABLE {info.name} ADD PRIMARY KEY ({c}) (or UNIQUE in CREATE TABLE)")


def _qualified(*parts) -> str:
    return ".".join(q(p) for p in parts if p)


def table_policies(con, schema, table) -> list[TablePolicy]:
    return [TablePolicy.from_row(r)
            for r in PolicyCatalog(con._duck, read_only=con.read_only, catalog=con._catalog).list(schema, table)]


# ---------------------------------------------------------------------------- query analysis
@dataclass
class Prepared:
    """Everything a release needs that does not depend on the data."""

    table: TablePolicy
    policy_name: str
    workload: object          # over the cells (projected) or the bins
    bpolicy: Policy           # the (projected) policy
    bins_per_axis: list       # None (group by bin) or the cell boundaries in bins, per axis
    cell_axes: list           # per axis: "cell" (CASE in SQL) or "bin" (fold in numpy)
    shape: tuple              # cells per axis
    residual: list            # SQL conjuncts filtering rows
    alias: str
    desc: list
    labels: list              # per query: the leading output values
    order: list = field(default_factory=list)


def _select(tree):
    while isinstance(tree, exp.Subquery) and not tree.alias:
        tree = tree.this
    return tree


def _plain_count(plan) -> bool:
    if not isinstance(plan, Aggregate) or plan.kind != "count" or plan.weight is not None:
        return False
    nodes = list(walk(plan))
    scans = [n for n in nodes if isinstance(n, Scan)]
    if len(scans) != 1 or any(isinstance(n, (Join, SemiJoin, GroupFilter, Union, Distinct)) for n in nodes):
        return False
    return bool(scans[0].slots)


def _default_domain(con, info, col, col_type) -> ColumnDomain | None:
    t = col_type.upper()
    if t == "BOOLEAN":
        return ColumnDomain.explicit([False, True])
    if t == "TINYINT":
        return ColumnDomain.range(-128, 128, width=1)
    if t == "UTINYINT":
        return ColumnDomain.range(0, 256, width=1)
    if t.startswith("ENUM"):
        vals = con._duck.execute(
            f"SELECT unnest(enum_range(NULL::{col_type}))").fetchall()
        return ColumnDomain.explicit([v[0] for v in vals])
    return None


def prepare(con, tree, plan) -> Prepared | None:
    """Analyse a private query for the policy route; None when the route does not apply."""

    sel = _select(tree)
    spec = range_spec(sel) if isinstance(sel, exp.Select) else None
    what = "COUNT RANGES" if spec and spec.get("ranges") else "COUNT CUMULATIVE"

    def not_ours(reason):
        if spec:
            raise UnsupportedQueryError(f"{what} cannot be answered: {reason}")
        return None

    if not isinstance(sel, exp.Select) or not _plain_count(plan):
        return not_ours("it needs COUNT(*) over one protected table")
    agg = [e for e in sel.expressions if e.find(exp.Count) is not None]
    if len(agg) != 1 or not isinstance(agg[0].unalias(), exp.Count) or \
            not isinstance(agg[0].unalias().this, exp.Star):
        return not_ours("only COUNT(*) is supported")
    scan = next(n for n in walk(plan) if isinstance(n, Scan))
    info = con.catalog.find_table([p for p in (scan.catalog, scan.schema, scan.table) if p])
    prot = con.catalog.protection(scan.schema, scan.table)
    if prot is None or len(prot.by_columns) > 1 or prot.references is not None:
        return not_ours(f"table {scan.table!r} is not protected row by row")
    from_ = sel.args.get("from_") or sel.args.get("from")
    if sel.args.get("joins") or from_ is None or not isinstance(from_.this, exp.Table):
        return not_ours("it reads one table directly")
    alias = from_.this.alias or scan.table
    types = dict(zip(info.columns, info.types))
    lower = {c.lower(): c for c in info.columns}

    def column(node, where):
        if not isinstance(node, exp.Column) or node.name.lower() not in lower:
            raise UnsupportedQueryError(f"{where} {node.sql(dialect='duckdb')} is not a column of "
                                        f"{scan.table!r}")
        return lower[node.name.lower()]

    # GROUP BY keys, resolved to columns
    keys = []
    group = sel.args.get("group")
    if group is not None:
        aliases = {i.alias.lower(): i.unalias() for i in sel.expressions if isinstance(i, exp.Alias)}
        for gk in group.expressions:
            src = gk
            if isinstance(gk, exp.Literal) and not gk.is_string:
                src = sel.expressions[int(gk.this) - 1].unalias()
            elif isinstance(gk, exp.Column) and gk.name.lower() not in lower and \
                    gk.name.lower() in aliases:
                src = aliases[gk.name.lower()]
            if not isinstance(src, exp.Column) or src.name.lower() not in lower:
                if spec:
                    raise UnsupportedQueryError(f"{what} takes no GROUP BY")
                return None  # grouping by an expression: not a histogram of a policy column
            keys.append(lower[src.name.lower()])
    needed = list(keys)
    items = []
    if spec and spec.get("ranges"):
        for cond in spec["ranges"]:
            atoms = []
            for conj in rp.conjuncts(cond):
                a = rp.atoms(conj)
                if a is None:
                    raise UnsupportedQueryError(
                        f"the range {cond.sql(dialect='duckdb')} must be a conjunction of "
                        "comparisons (c BETWEEN a AND b, c >= a, c < b, c = v) of policy columns "
                        "with constants")
                atoms += [(column(exp.column(c), "the range column"), op, v, conj) for c, op, v in a]
            items.append((cond, atoms))
            needed += [a[0] for a in atoms]
    if spec and spec.get("cumulative") is not None:
        needed.append(column(exp.column(spec["cumulative"].name), "COUNT CUMULATIVE"))
    where_parts = []  # (conjunct, atoms over table columns or None)
    where = sel.args.get("where")
    for conj in rp.conjuncts(where.this if where is not None else None):
        a = rp.atoms(conj)
        if a is not None and all(c.lower() in lower for c, _, _ in a):
            where_parts.append((conj, [(lower[c.lower()], op, v) for c, op, v in a]))
        else:
            where_parts.append((conj, None))

    # the policy
    ok, reason = row_per_participant(con, info, prot)
    candidates = table_policies(con, info.schema, info.name)
    if needed:
        pols = [p for p in candidates
                if {c.lower() for c in needed} <= {c.lower() for c in p.columns}]
        pols.sort(key=lambda p: len(p.columns))
    else:  # a plain count: a range over a policy's columns in WHERE
        ranged = {c.lower() for _, a in where_parts if a for c, _, _ in a}
        pols = [p for p in candidates if ranged & {c.lower() for c in p.columns}]
        pols.sort(key=lambda p: (-len(ranged & {c.lower() for c in p.columns}), len(p.columns)))
        if not pols:
            return None
    if pols:
        tp = pols[0]
        if not ok:
            raise UnsupportedQueryError(f"policy {tp.name} cannot be used: {reason}")
        name = tp.name
    else:
        if spec or not keys:
            if spec:
                raise UnsupportedQueryError(
                    f"{what} needs a policy on {scan.table} ({', '.join(dict.fromkeys(needed))}): "
                    f"it gives the public domain (CREATE POLICY … ON {scan.table} (…) AS …)")
            return None  # a plain count without a policy: the recursive mechanism
        if not ok or len(keys) != 1 or ColumnDeclarations(con.catalog).group_keys(
                info.schema, info.name, keys[0]) is not None:
            return None  # declared group keys: released by the Laplace mechanism, key by key
        dom = _default_domain(con, info, keys[0], types[keys[0]])
        if dom is None and len(plan.group_by) == 1 and proved_domain(
                con._catalog, plan.child, plan.group_by[0]) is not None:
            return None  # the statement bounds the key (WHERE y BETWEEN …): its proved groups
        if dom is None:
            raise UnsupportedQueryError(
                f"GROUP BY {keys[0]} is not supported in a private query without declared keys: "
                f"the set of groups must be public. Declare the groups: SET GROUP KEYS ON "
                f"{scan.table} ({keys[0]}) VALUES (…), or SET GROUP KEYS ON {scan.table} "
                f"({keys[0]}) FROM a public table (column), or bound it in the statement (WHERE "
                f"{keys[0]} BETWEEN … AND …, for an integer or a date column). Declare the domain "
                f"with a policy for "
                f"a Blowfish histogram, e.g. CREATE POLICY {scan.table}_{keys[0]} ON "
                f"{scan.table} ({keys[0]}) AS FULL DOMAIN (…) (FULL is plain differential privacy)"
                + SELECTION_HINT)
        tp = TablePolicy("(none)", info.schema, info.name, (keys[0],), [dom],
                         {"kind": "FULL"}, False, None)
        name = "plain DP (unbounded, no policy)"
    pcols = [c.lower() for c in tp.columns]
    axis = {c: i for i, c in enumerate(pcols)}
    doms = tp.domains
    where_atoms, residual = [], []
    for conj, a in where_parts:
        if a is not None and all(c.lower() in axis for c, _, _ in a):
            where_atoms.append((conj, a))
        else:
            residual.append(conj)

    if residual and not tp.unbounded_everywhere:
        raise UnsupportedQueryError(
            f"the condition {residual[0].sql(dialect='duckdb')} filters on more than ranges of "
            f"the policy's columns ({', '.join(tp.columns)}); under policy {tp.name}, which is "
            + ("BOUNDED (the filtered row count would be published exactly)" if tp.bounded else
               "UNBOUNDED with SOURCES (records away from the sources could enter or leave the "
               "count unprotected)")
            + ", filters on other columns are refused; use an UNBOUNDED policy without SOURCES")

    # filters on other columns run in DuckDB over protected rows: evaluated totally (a failing
    # row behaves as NULL) and checked against the allow-list, like every analyst expression
    residual = [make_total(r, types, predicate=True) for r in residual]

    def box_of(atoms):
        box = [[0, d.k - 1] for d in doms]
        for c, op, v, text in atoms:
            a = axis[c.lower()]
            i0, i1 = rp.interval(doms[a], types[tp.columns[a]], op, v, text.sql(dialect="duckdb"))
            box[a] = [max(box[a][0], i0), min(box[a][1], i1)]
        return box

    wbox = box_of([(c, op, v, conj) for conj, a in where_atoms for c, op, v in a])
    if any(b[0] > b[1] for b in wbox):
        raise UnsupportedQueryError("the WHERE ranges select no bin of the policy's domain")
    k = [d.k for d in doms]
    boxes, labels = [], []
    count_label = plan.label
    if keys:
        kax = [axis[c.lower()] for c in keys]
        if len(set(kax)) != len(kax):
            raise UnsupportedQueryError("GROUP BY lists a column twice")
        grids = np.meshgrid(*[np.arange(wbox[a][0], wbox[a][1] + 1) for a in kax], indexing="ij")
        for idx in zip(*[g.ravel() for g in grids]):
            b = [list(x) for x in wbox]
            for a, i in zip(kax, idx):
                b[a] = [int(i), int(i)]
            boxes.append(b)
            labels.append(tuple(doms[a].labels(types[tp.columns[a]])[i] if doms[a].values is None
                                else doms[a].values[i] for a, i in zip(kax, idx)))
        names = [_out_name(sel, c) for c in keys]
        desc = [(n, "VARCHAR" if doms[axis[c.lower()]].values is not None else "DOUBLE")
                for n, c in zip(names, keys)] + [(count_label, "DOUBLE")]
    elif spec and spec.get("ranges"):
        for cond, atoms in items:
            b = box_of(atoms)
            b = [[max(x[0], w[0]), min(x[1], w[1])] for x, w in zip(b, wbox)]
            if any(x[0] > x[1] for x in b):
                raise UnsupportedQueryError(
                    f"the range {cond.sql(dialect='duckdb')} selects no bin of the policy's domain"
                    + (" inside the WHERE ranges" if where_atoms else ""))
            boxes.append(b)
            labels.append((cond.sql(dialect="duckdb"),))
        desc = [("range", "VARCHAR"), ("count", "DOUBLE")]
    elif spec:
        c = needed[-1]
        a = axis[c.lower()]
        for i in range(wbox[a][0], wbox[a][1] + 1):
            b = [list(x) for x in wbox]
            b[a] = [wbox[a][0], i]
            boxes.append(b)
            labels.append((doms[a].labels(types[tp.columns[a]])[i],))
        desc = [(c, "VARCHAR" if doms[a].values is not None else "DOUBLE"),
                ("cumulative_count", "DOUBLE")]
    else:
        boxes.append(wbox)
        labels.append(())
        desc = [(count_label, "DOUBLE")]
    W = _workload(boxes, k, wbox)
    pol = tp.policy()
    cells, bounds = None, [None] * len(k)
    try:
        pr = project(W, pol)
        if pr.n_cells < int(np.prod(k)):
            W, pol, bounds = pr.workload, pr.policy, pr.bins
    except NotSupportedError:
        pass
    shape = tuple(len(b) - 1 if b is not None else kk for b, kk in zip(bounds, k))
    cell_axes = ["cell" if b is not None and len(b) - 1 <= MAX_CASE_CELLS else "bin"
                 for b in bounds]
    return Prepared(tp, name, W, pol, bounds, cell_axes, shape, residual, alias, desc, labels)


def _out_name(sel, col):
    for item in sel.expressions:
        body = item.unalias()
        if isinstance(body, exp.Column) and body.name.lower() == col.lower():
            return item.alias_or_name
    return col


def _workload(boxes, k, wbox):
    b = np.array(boxes, dtype=np.int64).reshape(len(boxes), len(k), 2)
    if len(k) == 1:
        lo, hi = b[:, 0, 0], b[:, 0, 1]
        if len(lo) == k[0] and np.array_equal(lo, np.arange(k[0])) and np.array_equal(hi, lo):
            return Histogram(k[0])
        if len(lo) == k[0] and not lo.any() and np.array_equal(hi, np.arange(k[0])):
            return Prefix(k[0])
        return Ranges(k[0], lo, hi)
    return Rects(tuple(k), b[:, 0, 0], b[:, 0, 1], b[:, 1, 0], b[:, 1, 1])


# ---------------------------------------------------------------------------- the data
def histogram(con, prep: Prepared) -> np.ndarray:
    """``x`` over the cells, from one DuckDB aggregation."""
    tp = prep.table
    cols = con.catalog.find_table([tp.schema, tp.table])
    types = dict(zip(cols.columns, cols.types))
    exprs, conds = [], []
    for c, dom, b, how in zip(tp.columns, tp.domains, prep.bins_per_axis, prep.cell_axes):
        binx = dom.bin_sql(f"{q(prep.alias)}.{q(c)}", types[c])
        conds.append(f"({binx}) IS NOT NULL")
        if b is not None and how == "cell":
            exprs.append(_case_cells(binx, b))
        else:
            exprs.append(binx)
    conds += [f"({r.sql(dialect='duckdb')})" for r in prep.residual]
    sel = ", ".join(f"{e} AS __a{i}" for i, e in enumerate(exprs))
    groups = ", ".join(str(i + 1) for i in range(len(exprs)))
    sql = (f"SELECT {sel}, COUNT(*) AS __n FROM {_qualified(cols.catalog, cols.schema, cols.name)} "
           f"AS {q(prep.alias)} WHERE {' AND '.join(conds)} GROUP BY {groups}")
    rows = engine_of(con).fetchnumpy(sql)[0]
    n = np.asarray(rows["__n"], dtype=float)
    flat = np.zeros(n.size, dtype=np.int64)
    for i, (b, how) in enumerate(zip(prep.bins_per_axis, prep.cell_axes)):
        idx = np.asarray(rows[f"__a{i}"], dtype=np.int64)
        if b is not None and how == "bin":
            idx = np.searchsorted(b, idx, side="right") - 1
        flat = flat * prep.shape[i] + idx
    return np.bincount(flat, weights=n, minlength=int(np.prod(prep.shape))).astype(float)


def _case_cells(binx, b):
    whens = " ".join(f"WHEN {binx} < {int(e)} THEN {i}" for i, e in enumerate(b[1:-1]))
    return f"CASE {whens} ELSE {len(b) - 2} END" if whens else "0"


# ---------------------------------------------------------------------------- the route
def route(con, tree, plan, epsilon, text, options: dict, prep: Prepared | None = None):
    """Answer under the table's policy (``prep``: :func:`prepare`'s, when the caller has it)."""

    prep = prep if prep is not None else prepare(con, tree, plan)
    strategy = strategy_of(options)
    if strategy in DELTA_STRATEGIES:  # Fang & Chang's own strategies, from the values
        return delta_answer(con, prep, strategy, epsilon, text)
    eps = float(epsilon)
    planned = plan_for(prep, strategy)  # validates before anything is spent
    # charged before the protected rows are read: whatever happens next, the ε charged is the
    # same on every database (the side-channel rule)
    charge = con.ledger.charge(con.user, epsilon, text, "blowfish")
    # past the budget or out of memory: no rows, every cell 0 with its noise (.no_data)
    x = read_or_nothing(con, lambda: histogram(con, prep), "every cell's count 0 plus its noise")
    late, x = x is None, np.zeros(int(np.prod(prep.shape))) if x is None else x
    if planned.name == "known_counts":
        ans = _known_counts_answer(planned, x, prep, eps, getattr(con, "_rng", None))
    else:
        ans = answer(prep.workload, x, prep.bpolicy, eps, strategy=planned.name,
                     rng=getattr(con, "_rng", None))
    rows = [tuple(lab) + (float(v),) for lab, v in zip(prep.labels, ans.values)]
    # ordered: the honest bound through its consistency (a simultaneous bound on its draws);
    # DAWA: the variances are the noise's given the released partition, whose bias is data
    # dependent (noise only, .intervals)
    sim = ans.simultaneous
    releases = from_no_data((BlowfishRelease(float(v), float(s), eps, consistent=sim is not None,
                                             simultaneous=None if sim is None else
                                             (sim, i, ans.noise_plans[0]),
                                             noise_only=bool(getattr(ans, "noise_only", False)))
                             for i, (v, s) in enumerate(zip(ans.values, ans.variances))),
                            0, None, late)
    info = PrivacyInfo(mechanism="blowfish", epsilon=charge.epsilon, remaining=charge.remaining,
                       releases=releases, policy=prep.policy_name, strategy=ans.detail,
                       expected_mse=float(ans.expected_mse),
                       mse_is_upper_bound=bool(ans.mse_is_upper_bound))
    return prep.desc, rows, info


def plan_for(prep: Prepared, strategy=None):
    """The plan a release of ``prep`` uses (public information and the analyst's option only):
    under KNOWN COUNTS the constrained histogram (He et al. §8), else the strategy named or the
    one of least expected error. Raises ProgrammingError (nothing spent) when none applies."""
    known = prep.table.known
    if known is not None:
        if _cells(prep) is None:
            raise UnsupportedQueryError(
                f"policy {prep.policy_name} declares KNOWN COUNTS {prep.table.known_sql}: only "
                f"the full histogram is released under it (SELECT {', '.join(prep.table.columns)}, "
                f"COUNT(*) FROM {prep.table.table} GROUP BY {', '.join(prep.table.columns)}, "
                "without WHERE); ranges, marginals and filters would need the constrained "
                "sensitivity of their own workload")
        if strategy is not None:
            raise ProgrammingError(f"policy {prep.policy_name} declares KNOWN COUNTS: its "
                                   "histogram has one mechanism (Laplace at the constrained "
                                   "sensitivity); drop OPTIONS (strategy)")
        return known_counts_plan(prep.table.policy(), known)
    if strategy in DELTA_STRATEGIES:
        raise ProgrammingError(f"OPTIONS (strategy = '{strategy}') releases from the values "
                               "(Fang & Chang); EXPLAIN PRIVACY covers the Blowfish strategies "
                               "over the bins only")
    try:  # the choice reads the user's option only
        return best_plan(prep.workload, prep.bpolicy, strategy)
    except ValueError as e:
        raise ProgrammingError(f"OPTIONS (strategy = {strategy!r}): {e}") from None


def _cells(prep):
    """The flat cell of each query when the workload is the full histogram (any GROUP BY
    order, no projection, no filter), else None."""
    w, k = prep.workload, prep.table.policy().k
    if any(b is not None for b in prep.bins_per_axis) or prep.residual or w.q != k:
        return None
    if isinstance(w, Histogram):
        return np.arange(k)
    if isinstance(w, Rects) and np.array_equal(w.r0, w.r1) and np.array_equal(w.c0, w.c1):
        flat = w.r0 * w.shape[1] + w.c0
        if np.array_equal(np.sort(flat), np.arange(k)):
            return flat
    return None


def _known_counts_answer(plan, x, prep, eps, rng):
    noise = SafeNoise(rng)
    cells = _cells(prep)
    vals = np.asarray(plan.run(x, None, eps, noise), dtype=float)[cells]
    infl = max([NOISE_INFLATION] + [float(p.inflation) for p in noise.plans])
    var = (plan.unit_var * (infl / eps) ** 2)[cells]
    return Answer(vals, eps, plan.name, plan.detail, float(np.mean(var)), var, prep.bpolicy,
                  False, tuple(noise.plans))


def strategy_of(options: dict):
    """``OPTIONS (strategy = 'name')`` (and ``raw``) of a query on the policy route: the
    strategy the analyst asks for (one of ``provsql_dp.policies.blowfish.STRATEGIES``, e.g.
    ``'dawa'``), or None for the least expected error. Other options are refused."""
    opts = options
    extra = set(opts) - {"raw", "intervals", "strategy"}
    if extra:
        raise ProgrammingError(f"OPTIONS apply to the recursive mechanism only "
                               f"({', '.join(sorted(extra))}), except raw (every COUNT) and "
                               "strategy (the policy route); this query is answered under a "
                               "Blowfish policy (drop them)")
    name = opts.get("strategy")
    if name is None:
        return None
    if not isinstance(name, str) or name.lower() not in STRATEGIES + DELTA_STRATEGIES:
        raise ProgrammingError(f"OPTIONS (strategy = {option_text(name)}) is not a strategy; "
                               f"choose one of {', '.join(STRATEGIES)} (or, under a DELTA "
                               f"policy, {', '.join(DELTA_STRATEGIES)})")
    return name.lower()
