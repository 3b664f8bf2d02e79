"""``SELECT COUNT(DISTINCT c) FROM t [WHERE …] WITH EPSILON ε`` over a column with a declared
domain (``SET GROUP KEYS ON t (c) VALUES (…)`` or ``FROM`` a public table): a histogram of
presence (:mod:`provsql_dp.mechanisms.global_sensitivity.presence`).

It applies when the statement is exactly that shape, without OPTIONS, on one protected table
(one row per participant, or ``BY (owner)`` with one owner column) whose column ``c`` has
declared keys — decided from the statement and the
declarations only.
Any other ``COUNT(DISTINCT …)`` keeps its route (the recursive mechanism, interval "≥ …").
One DuckDB aggregate counts the participants per declared value (``WHERE`` evaluated totally;
rows whose value is outside the domain are not read); each count gets exact discrete Laplace
noise of scale Δ/ε at the full ε, and the answer and its interval are post-processing of the
noisy counts. Δ = 1 on a row-per-participant table (a participant's row holds one value); on a
table protected ``BY (owner)`` whose owner may own several rows, the counts are of distinct
owners and Δ = the number of keys (a participant may hold every one) — said in the release's
strategy and in ``EXPLAIN PRIVACY``. (Rows with a NULL owner belong to no participant and are not
counted.)

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE p(id INT PRIMARY KEY, s VARCHAR)")
>>> _ = con.execute("INSERT INTO p SELECT i, ['a', 'b', 'c'][i % 3 + 1] FROM range(300) t(i)")
>>> _ = con.execute("PROTECT TABLE p; SET PRIVACY BUDGET 5")
>>> _ = con.execute("SET GROUP KEYS ON p (s) VALUES ('a', 'b', 'c', 'd')")
>>> import numpy as np; con._rng = np.random.default_rng(0)  # tests only: a fixed seed
>>> cur = con.execute("SELECT COUNT(DISTINCT s) FROM p WITH EPSILON 1")
>>> cur.fetchone()[0], cur.privacy.routes
(3, ('distinct',))
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from .._numbers import format_eps
from ..errors import Error, ProgrammingError
from ..mechanisms.global_sensitivity.presence import release_presence, threshold
from ..mechanisms.noise.safe_noise import plan_laplace
from ..mechanisms.noise.sources import tail_units
from ..provenance.backends import engine_of
from ..provenance.capture import q as quote
from ..sql.column_declarations import ColumnDeclarations
from ..sql._not_null import collated_columns
from ._single_table import key_filter, one_table, select_of
from .no_data import from_no_data, read_or_nothing
from .quantile_route import _where
from .release_info import PrivacyInfo

__all__ = ["DistinctQuery", "applies", "answer", "explain"]


@dataclass(frozen=True)
class DistinctQuery:
    """A decided presence release (public parts only)."""

    column: str
    label: str
    table_sql: str
    column_type: str
    keys: tuple
    where_sql: str | None = None
    owner: str | None = None  # participants may own several rows: counted by owner

    @property
    def sensitivity(self) -> int:
        """ℓ1 bound of the per-key participant counts: 1 with one row per participant, else
        every key (a participant may hold them all)."""
        return 1 if self.owner is None else max(len(self.keys), 1)

    def sql(self) -> str:
        conds = [f"({self.where_sql})"] if self.where_sql else []
        conds.append(key_filter(self.column, self.column_type, self.keys))
        n = "count(*)" if self.owner is None else f"count(DISTINCT {quote(self.owner)})"
        return (f"SELECT {quote(self.column)} AS __v, {n} AS __n FROM {self.table_sql} "
                f"WHERE {' AND '.join(conds)} GROUP BY 1")


def _shape(tree):
    """``(select, item, column expression)`` of ``SELECT COUNT(DISTINCT col) FROM …``, or None."""
    sel = select_of(tree)
    if not isinstance(sel, exp.Select) or len(sel.expressions) != 1:
        return None
    if any(sel.args.get(k) for k in ("group", "having", "distinct", "order", "limit", "with",
                                     "joins")):
        return None
    item = sel.expressions[0]
    agg = item.unalias()
    if not isinstance(agg, exp.Count) or not isinstance(agg.this, exp.Distinct):
        return None
    cols = agg.this.expressions
    if len(cols) != 1 or not isinstance(cols[0], exp.Column):
        return None
    return sel, item, cols[0]


def prepare(con, tree) -> DistinctQuery | None:
    """The decided release, or None when the route does not apply (from the statement and the
    declarations only; reads no protected row)."""
    shape = _shape(tree)
    if shape is None:
        return None
    sel, item, col_node = shape
    try:
        t = one_table(con, sel, "COUNT(DISTINCT …)", owned=True)
    except Error:
        return None
    col = t.column(col_node.name)
    if col is None or col in collated_columns(con._catalog, t.info):  # h75cache-2: keys by value
        return None
    decls = ColumnDeclarations(con._catalog)
    decl = decls.group_keys(t.info.schema, t.info.name, col)
    if decl is None:
        return None
    try:  # a WHERE beyond the table's own columns (a subquery, a join's): the former route
        where_sql, _ = _where(sel, t.lower, t.types, col)
    except Error:
        return None
    keys = tuple(decls.key_values(decl, t.types[col]))
    label = item.alias if isinstance(item, exp.Alias) else item.sql(dialect="duckdb")
    return DistinctQuery(col, label, t.table_sql, t.types[col], keys, where_sql, t.owner)


def applies(con, tree, options=None) -> bool:
    """Whether the statement takes this route (declarations only). A statement with OPTIONS
    (e.g. ``mechanism = 'recursive'``) keeps the route those options choose."""
    return not options and prepare(con, tree) is not None


def _detail(dq: DistinctQuery, epsilon) -> str:
    why = ("one row per participant" if dq.owner is None else
           f"a participant (owner {dq.owner}) may hold every key")
    return (f"COUNT(DISTINCT {dq.column}) over its {len(dq.keys)} declared keys: per key, the "
            f"count of participants with that value + exact discrete Laplace noise of scale "
            f"Δ/ε (ε = {format_eps(epsilon)}, ℓ1-sensitivity Δ = {dq.sensitivity}: {why}); a "
            f"key counts as present when its noisy count reaches τ = "
            f"{threshold(len(dq.keys), float(epsilon), dq.sensitivity)} (post-processing)")


def answer(con, tree, epsilon, text: str, options=None, rng=None):
    """Charge, read, release: ``(description, rows, PrivacyInfo)``."""
    if options:
        raise ProgrammingError("COUNT(DISTINCT …) over declared keys takes no OPTIONS")
    dq = prepare(con, tree)
    rng = rng if rng is not None else getattr(con, "_rng", None)
    charge = con._ledger.charge(con.user, epsilon, text, "presence")
    # past the budget or out of memory: no rows, every key's count 0 with the noise it would have
    rows = read_or_nothing(con, lambda: engine_of(con).fetchall(dq.sql()),
                           "every key's count 0 plus its noise")
    found = {r[0]: int(r[1]) for r in rows or ()}
    (rel,) = from_no_data((release_presence([found.get(k, 0) for k in dq.keys], float(epsilon),
                                            rng=rng, sensitivity=dq.sensitivity),),
                          0, len(dq.keys), rows is None)
    info = PrivacyInfo(mechanism="presence", epsilon=charge.epsilon, remaining=charge.remaining,
                       releases=(rel,), strategy=_detail(dq, epsilon))
    return [(dq.label, "BIGINT")], [(rel.value,)], info


def explain(con, tree, epsilon, options=None, confidence=0.95) -> list:
    """``EXPLAIN PRIVACY`` rows (without the route column): reads no protected row."""
    if options:
        raise ProgrammingError("COUNT(DISTINCT …) over declared keys takes no OPTIONS")
    dq = prepare(con, tree)
    if epsilon is None:
        raise ProgrammingError("WITH ACCURACY is not offered for COUNT(DISTINCT …) over "
                               "declared keys; give WITH EPSILON ε")
    units = plan_laplace(dq.sensitivity, float(epsilon), integer=True).noise_units
    t = tail_units(units, 1 - (1 - confidence) / max(len(dq.keys), 1))
    return [("presence", None, _detail(dq, epsilon), 1, format_eps(epsilon), None, None,
             float(confidence),
             f"interval: the keys whose noisy count is ≥ {t + 1} are surely present and those "
             f"below {1 - t} surely absent (every noise within ±{t} with the confidence, union "
             f"bound over {len(dq.keys)} keys)")]
