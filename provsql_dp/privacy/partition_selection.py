r"""Private partition selection: a ``GROUP BY`` whose groups are not public, under (ε, δ).

``SELECT city, COUNT(*) FROM people GROUP BY city WITH EPSILON 1 DELTA 1e-6`` with no keys
declared for ``city`` (or ``GROUP BY ROUND(age, -1)``, ``FLOOR(x / 10)``, ``date_trunc('month',
d)`` — any expression of protected columns) releases the groups whose noisy number of distinct
participants clears a threshold, each with its noisy aggregate. Declared keys stay the pure-ε way
(every declared group released, no δ).

The mechanism (Korolova et al. 2009; Desfontaines, Voss, Gipson, Mandayam, "Differentially
private partition selection", PoPETs 2022; the Laplace threshold of OpenDP's
``make_laplace_threshold`` and Tumult's ``get_groups``):

1. **Bound the groups of each participant.** A participant keeps its rows in at most ``m`` groups
   (``OPTIONS (max_groups = m)``; default: the number k of rows one participant can own, when the
   declarations bound it — then nothing is dropped), chosen by the rank of ``hash(participant,
   key)``: a rule fixed in advance that reads that participant's own rows only. Within a group a
   participant adds at most ``r`` (``OPTIONS (max_rows = r)``, default k) to a COUNT; a SUM adds
   its rows clamped to the bounds, the participant's group total clamped to ``r`` times them.
2. **Count distinct participants per group**, ``u_g``, and add discrete Laplace noise of scale
   ``λ ≥ m/ε_s`` (``plan_laplace(m, ε_s, integer=True)``: u has ℓ₁ sensitivity m).
3. **Release a group iff ``u_g + K_g ≥ T``** with

   .. math:: T = 1 + \lceil λ\,(\ln(m/δ) − \ln(1 + p)) \rceil, \qquad p = e^{−1/λ}.

   *Derivation.* For a participant added to D, the groups present in both D and D' see u change
   by at most 1 in at most m groups: the noisy counts of those are ε_s-DP (ℓ₁ sensitivity m,
   noise λ ≥ m/ε_s). The groups only the added participant populates (at most m of them, each
   with u = 1) are released with probability ``P[1 + K ≥ T] = P[K ≥ T − 1] = p^{T−1}/(1 + p)``
   (the discrete Laplace tail), so with probability at most ``m·p^{T−1}/(1 + p) ≤ δ`` for the T
   above — the discrete analogue of the continuous ``τ = 1 + (m/ε)·ln(m/(2δ))``. The selection
   is (ε_s, δ)-DP.
4. **The released values.** A COUNT with ``r = 1`` *is* ``u_g`` (each participant adds one
   row per group): the noisy count that cleared the threshold is released, and ε_s = ε. Otherwise
   ε is split in halves: ε/2 for the selection, ε/2 for the values (discrete Laplace of ℓ₁
   sensitivity ``m·r`` for a COUNT, ``m·r·max|bound|`` for a SUM), drawn for every group and
   kept for the released ones. The statement is (ε, δ)-DP and is charged (ε, δ).

Nothing else depends on the data: the released rows (their number included) are a function of
the noisy counts only; errors and the charge are decided from the statement, the declarations and
the budget. Caveat, stated: the noise is drawn for every non-empty group, so the running time
grows with their number (within the time DuckDB's GROUP BY over those groups takes anyway).

>>> threshold(Fraction(1), 1, Fraction(1, 10**6))
15
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from .._numbers import format_eps
from ..errors import ProgrammingError, UnsupportedQueryError
from ..mechanisms.global_sensitivity import laplace
from ..mechanisms.noise.safe_noise import plan_laplace
from ..provenance.backends import engine_of
from ..provenance.capture import compile_node, q
from ..provenance.clamp import clamp_sql
from ..provenance.owners import owners
from ..provenance.slots import slot_sources
from ..sql.plan import Aggregate, Aggregates
from .accounting import Cost
from ._collated_keys import one_spelling_reader, refuse_collated_keys
from .answer import _key_names, group_domain, sum_bounds
from .no_data import read_or_nothing
from .release_info import PrivacyInfo

__all__ = ["needs_selection", "refuse_several", "threshold", "release", "explain_row",
           "selection_sql"]

#: the options of a partition selection (besides raw)
OPTIONS = ("max_groups", "max_rows", "lower", "upper")


def needs_selection(con, plan: Aggregate) -> bool:
    """Whether ``plan`` groups by keys whose set is not public (no declared keys, not a public
    table's column): then only partition selection answers it. Reads public tables only. A key
    whose values the statement proves (``sql.key_domain``) is public under pure ε only: with
    DELTA the statement asks for partition selection (its OPTIONS are selection's), as before."""
    if not plan.group_by:
        return False
    refuse_collated_keys(plan, _key_names(plan), one_spelling_reader(con))  # h75cache-2
    try:
        group_domain(con, plan, proved=False)
    except UnsupportedQueryError:
        return True
    return False


def refuse_several(con, plan) -> None:
    """Several aggregates (a ratio ``SUM(x) / COUNT(*)``, TPC-H Q8's shape) over groups that
    only partition selection releases are refused before any charge: the selection releases
    the groups one aggregate's noisy counts choose, and a second aggregate would choose again."""
    if isinstance(plan, Aggregates) and any(needs_selection(con, p) for p in plan.parts):
        raise UnsupportedQueryError(
            "several aggregates over groups without declared keys are not supported in a private "
            "query: partition selection releases the groups one aggregate's noisy counts choose, "
            "so a second aggregate (or a ratio of two) has no common set of groups. Release one "
            "aggregate per statement, or make the groups public: declare the keys (SET GROUP "
            "KEYS), or bound a computed key's column in WHERE (d BETWEEN DATE '…' AND DATE '…') "
            "and write WITH EPSILON ε alone")


def threshold(lam: Fraction, m: int, delta: Fraction) -> int:
    """The least integer T with ``m·p^{T−1}/(1 + p) ≤ δ`` for ``p = exp(−1/λ)`` (module
    docstring), computed in floats with a safety margin (never below the exact one)."""
    lam_f = float(lam)
    p = math.exp(-1.0 / lam_f)
    x = lam_f * (math.log(m) - math.log(float(delta)) - math.log1p(p))
    return 1 + max(0, math.ceil(x + 1e-9 * max(1.0, abs(x))))


def _parameters(con, plan: Aggregate, cost: Cost, options: dict):
    """Everything decided before the charge: (owners, m, r, bounds, ε_selection, ε_values)."""
    if cost.rho is not None or not cost.delta:
        raise ProgrammingError(
            "GROUP BY without declared keys needs private partition selection, which is "
            "(ε, δ)-DP: write WITH EPSILON ε DELTA δ (on an (ε, δ) budget), or declare the groups "
            "(SET GROUP KEYS) to stay in pure ε")
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ProgrammingError(f"option {unknown[0]!r} does not apply to partition selection; its "
                               f"options are {', '.join(OPTIONS)}")
    own = owners(plan.child)
    if own is None:
        raise UnsupportedQueryError(
            "partition selection bounds each participant's groups, which needs every tuple to "
            "have one owner (no DISTINCT, UNION or join of two participants' rows)")
    k = own.rows_per_owner
    m = _whole(options, "max_groups", k)
    r = _whole(options, "max_rows", k)
    if m is None or r is None:
        raise ProgrammingError(
            "the declarations do not bound how many rows one participant owns, so say how many "
            "groups one participant may fall in and how many of its rows count in each: "
            "OPTIONS (max_groups = m, max_rows = r)")
    bounds = None
    if plan.kind == "sum":
        bounds = sum_bounds(options) or plan.bounds
        if bounds is None:
            raise ProgrammingError(f"{plan.label} needs bounds: SET BOUNDS ON t (c) BETWEEN a AND b "
                                   "or OPTIONS (lower = …, upper = …)")
    elif "lower" in options or "upper" in options:
        raise ProgrammingError("options lower and upper bound the values of a SUM; a COUNT has none")
    shared = plan.kind == "count" and r == 1
    eps_sel = cost.epsilon if shared else cost.epsilon / 2
    return own, m, r, bounds, eps_sel, (None if shared else cost.epsilon / 2)


def _whole(options: dict, key: str, default):
    if key not in options:
        return default
    v = options[key]
    if isinstance(v, str) or not float(v).is_integer() or not 1 <= v <= 10**6:
        raise ProgrammingError(f"option {key} must be a whole number from 1 to 10^6, got {v!r}")
    return int(v)


def selection_sql(plan: Aggregate, own, m: int, r: int, bounds) -> str:
    """``SELECT keys…, u, v FROM … GROUP BY keys…``: per group, the distinct participants ``u``
    (after each keeps ≤ m groups by hash rank) and the bounded aggregate ``v``."""
    compiled = compile_node(plan.child, disc=False)
    keys = [q(k) for k in plan.group_by]
    klist = ", ".join(keys)
    if plan.kind == "sum":
        lo, hi = (float(b) for b in bounds)
        w = clamp_sql(plan.weight.sql(dialect="duckdb"), lo, hi)
    else:
        w = None
    if own.rows_per_owner == 1:  # one row per participant: it is its own group's contributor
        v = "count(*)" if w is None else f"coalesce(sum({w}), 0)"
        return f"SELECT {klist}, count(*) AS u, {v} AS v FROM ({compiled.sql}) AS t GROUP BY {klist}"
    kind, ref = slot_sources(plan.child)[own.slot]
    owner = [q(i) for i in ref] if kind == "value" else [f"__s{own.slot}"]
    olist = ", ".join(owner)
    if m == 1 and r == 1 and w is None:
        # one group per participant, counted once: the group of least hash, in one aggregate
        # over the participants (no per-(participant, group) pass, no window); ties of the
        # hash are broken by the key itself, so the choice reads that participant's rows only
        ks = "struct_pack(" + ", ".join(f"k{j} := {k}" for j, k in enumerate(keys)) + ")"
        pick = f"arg_min({ks}, struct_pack(h := hash({olist}, {klist}), k := {ks}))"
        out = ", ".join(f"s.k{j} AS {k}" for j, k in enumerate(keys))
        return (f"SELECT {out}, count(*) AS u, count(*) AS v FROM (SELECT {pick} AS s FROM "
                f"({compiled.sql}) AS t GROUP BY {olist}) AS o GROUP BY "
                + ", ".join(f"s.k{j}" for j in range(len(keys))))
    per = "count(*)" if w is None else f"coalesce(sum({w}), 0)"
    inner = (f"SELECT {klist}, {olist}, {per} AS c FROM ({compiled.sql}) AS t "
             f"GROUP BY {klist}, {olist}")
    if own.rows_per_owner is None or m < own.rows_per_owner:
        rank = (f"row_number() OVER (PARTITION BY {olist} ORDER BY hash({olist}, {klist}), "
                f"{klist})")
        inner = f"SELECT * FROM (SELECT *, {rank} AS __rank FROM ({inner}) AS o) WHERE __rank <= {m}"
    if w is None:
        c = f"least(c, {r})"
    else:
        lo, hi = (float(b) for b in bounds)
        c = clamp_sql("c", min(0.0, r * lo), max(0.0, r * hi))
    return f"SELECT {klist}, count(*) AS u, sum({c}) AS v FROM ({inner}) AS g GROUP BY {klist}"


def _value_sensitivity(plan, m: int, r: int, bounds) -> tuple[float, bool]:
    if plan.kind == "count":
        return float(m * r), True
    return m * r * max(abs(float(bounds[0])), abs(float(bounds[1]))), False


def release(con, plan: Aggregate, cost: Cost, text: str, options: dict, rng):
    """Select and release the groups of ``plan`` at ``cost`` (ε, δ): ``(desc, rows, info,
    final)``, ``final`` when the values are post-processed already (a COUNT that is the noisy
    participant count: integers ≥ T ≥ 1, wrapped as :class:`~.postprocess.CountRelease`)."""
    own, m, r, bounds, eps_sel, eps_val = _parameters(con, plan, cost, options)
    try:
        sel_plan = plan_laplace(m, float(eps_sel), integer=True)
        val_plan = None
        if eps_val is not None:
            sens, integer = _value_sensitivity(plan, m, r, bounds)
            val_plan = plan_laplace(sens, float(eps_val), integer=integer, changed=m)
    except ValueError as e:
        raise ProgrammingError(f"cannot release at {cost.describe()}: {e}") from e
    if sel_plan.grid != 1:  # the threshold is in counts: the participant counts stay exact
        raise ProgrammingError(f"cannot release at {cost.describe()}: ε is too small for "
                               f"max_groups = {m} (the noise would pass 2**50 participants)")
    t = threshold(sel_plan.noise_units, m, cost.delta)
    sql = selection_sql(plan, own, m, r, bounds)
    order = ", ".join(f"{j + 1} NULLS LAST" for j in range(len(plan.group_by)))
    charge = con._ledger.charge(con.user, cost.epsilon, text, "partition-selection", cost=cost)
    n_keys = len(plan.group_by)
    keys, u, v = _fetch(con, f"SELECT * FROM ({sql}) AS s ORDER BY {order}", n_keys,
                        values=eps_val is not None)
    noisy_u = sel_plan.release_array(u, rng=rng) if len(u) else np.zeros(0)
    keep = np.flatnonzero(noisy_u >= t)
    if eps_val is None:  # already post-processed: an integer ≥ T ≥ 1 is its max(0, round(·))
        base = laplace.LaplaceRelease(0, float(eps_sel), float(m), True)
        values = noisy_u[keep].astype(np.int64).tolist()
        releases = SelectedCounts(values, base)
    else:
        # one plan for the vector of values: a participant moves at most m of them (changed)
        noisy_v = val_plan.release_array(np.round(v) if integer else v, rng=rng) if len(v) else v
        e = float(eps_val)
        releases = tuple(laplace.LaplaceRelease(int(x) if integer else float(x), e, sens, integer)
                         for x in noisy_v[keep].tolist())
        values = [rel.value for rel in releases]
    out = _released_rows(keys, keep, values)
    desc = [(name, "VARCHAR") for name in _key_names(plan)] + [
        (plan.label, "BIGINT" if plan.kind == "count" else "DOUBLE")]
    info = PrivacyInfo(mechanism="partition-selection", epsilon=charge.epsilon,
                       remaining=charge.remaining, releases=releases)
    return desc, out, info, eps_val is None


def _fetch(con, sql: str, n_keys: int, values: bool = True):
    """``(key columns, u, v)`` of the selection query (one row per group): each key column
    holding the values DuckDB returns (NULL as None, DECIMAL as Decimal; a numpy array or a
    tuple, :meth:`~provsql_dp.provenance.backends.duckdb.DuckDBBackend.fetchcolumns`), u and v
    as float arrays (v None unless ``values``: a COUNT released as its noisy u reads no v)."""
    # past the budget or out of memory: no rows, so no group is selected (an empty table's
    # release, the same columns)
    columns = read_or_nothing(con, lambda: _columns(engine_of(con), sql), "no group selected")
    if not columns or not len(columns[0]):
        return [], np.zeros(0), np.zeros(0)
    u = np.asarray(columns[n_keys], dtype=np.float64)
    if not values:
        return columns[:n_keys], u, None
    v = columns[n_keys + 1]
    if isinstance(v, np.ma.MaskedArray):  # a group whose bounded SUM has no value adds 0
        v = v.filled(0)
    elif None in v:
        v = [0 if x is None else x for x in v]
    return columns[:n_keys], u, np.asarray(v, dtype=np.float64)


def _columns(engine, sql: str) -> list:
    """The query's result by column (an engine without ``fetchcolumns``: transposed in C)."""
    fetch = getattr(engine, "fetchcolumns", None)
    if fetch is not None:
        return fetch(sql)
    rows = engine.fetchall(sql)
    return list(zip(*rows)) if rows else []


def _released_rows(key_columns: list, keep, values: list) -> list[tuple]:
    """The rows of the released groups: their keys in one spelling (:func:`_one_spelling`;
    a group not selected is never spelled out), then the released value. A key column is a
    numpy array (:func:`_columns`) or a sequence.

    >>> _released_rows([(1, 2, 3), (-0.0, 0.5, 1.5)], np.array([0, 2]), [10, 30])
    [(1, 0.0, 10), (3, 1.5, 30)]
    >>> _released_rows([np.ma.masked_array([1, 2], [False, True]), np.array([-0.0, 1.0])],
    ...                np.array([1, 0]), [5, 6])
    [(None, 1.0, 5), (1, 0.0, 6)]
    """
    if len(keep) == 0:
        return []
    picked = []
    for col in key_columns:
        if isinstance(col, np.ndarray):  # ints, bools, strs (fetchcolumns): one spelling each
            values_of = col[keep].tolist()
            respell = col.dtype.kind == "f"
        else:
            values_of = _take(col, keep)
            respell = not set(map(type, values_of)) <= _ONE_SPELLING  # only these need it
        picked.append([_one_spelling(k) for k in values_of] if respell else values_of)
    return list(zip(*picked, values))


def _take(col, keep) -> list:
    """``[col[i] for i in keep]``, in C (itemgetter of one index gives a value, not a tuple)."""
    picked = operator.itemgetter(*keep.tolist())(col)
    return list(picked) if len(keep) > 1 else [picked]


#: key types with one spelling per group already (exact types: a subclass takes the long way)
_ONE_SPELLING = frozenset((int, str, bool, type(None)))


def _one_spelling(value):
    """A released key in the one spelling of its group (red team h85attack-7). DuckDB groups
    ``-0.0`` with ``0.0`` (and ``-NaN`` with ``NaN``), as ``=`` compares them, and returns the
    group's key as the *first row's* value: a group of 299 zeros and one participant's ``-0.0``
    was released as ``-0.0`` with that row first, ``0.0`` without it — on every run, whatever
    the noise. Floats (also inside lists and structs) are spelled ``0.0`` and ``nan``.

    >>> _one_spelling(-0.0), _one_spelling([-0.0, 2.5]), _one_spelling({"a": -float("nan")})
    (0.0, [0.0, 2.5], {'a': nan})
    >>> import math; math.copysign(1, _one_spelling(-float("nan")))
    1.0
    >>> import numpy as np; _one_spelling(np.float64(-0.0)), _one_spelling(7), _one_spelling("a")
    (0.0, 7, 'a')
    """
    if type(value) in _ONE_SPELLING:  # the common keys: nothing to respell
        return value
    if isinstance(value, float):
        return 0.0 if value == 0 else math.nan if value != value else value
    if isinstance(value, (list, tuple)):
        return type(value)(_one_spelling(v) for v in value)
    if isinstance(value, dict):
        return {k: _one_spelling(v) for k, v in value.items()}
    return value


class SelectedCounts(Sequence):
    """The releases of a partition selection's COUNTs, one :class:`SelectedCount` per released
    group, made when read (10^4 groups: no 10^4 objects per release when nobody reads their
    intervals).

    >>> base = laplace.LaplaceRelease(0, 1.0, 1.0, True)
    >>> rels = SelectedCounts([20, 31], base)
    >>> len(rels), rels[1].value, [r.value for r in rels], rels[-1].noise_scale == base.noise_scale
    (2, 31, [20, 31], True)
    """

    __slots__ = ("_values", "_base")

    def __init__(self, values: list, base):
        self._values, self._base = values, base

    def __len__(self) -> int:
        return len(self._values)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(SelectedCount(v, self._base) for v in self._values[i])
        return SelectedCount(self._values[i], self._base)

    def __iter__(self):
        return (SelectedCount(v, self._base) for v in self._values)


class SelectedCount:
    """A COUNT released by partition selection: the noisy participant count that cleared the
    threshold (an integer ≥ T ≥ 1, so already its own post-processing); the public noise
    parameters are ``base``'s (one :class:`~provsql_dp.mechanisms.global_sensitivity.laplace.
    LaplaceRelease` shared by every group). Its interval covers the true count with the stated
    probability *before* selection: a group near the threshold is released more often when its
    noise is positive."""

    __slots__ = ("value", "_base")
    mechanism = "laplace"
    integer = True
    covers = ("the true count (before selection: a group near the threshold is released more "
              "often when its noise is positive)")

    def __init__(self, value: int, base):
        self.value, self._base = value, base

    @property
    def raw(self):
        return self.value

    @property
    def epsilon(self):
        return self._base.epsilon

    @property
    def sensitivity(self):
        return self._base.sensitivity

    @property
    def noise_scale(self):
        return self._base.noise_scale

    def noise_bound(self, p: float = 0.95) -> float:
        return self._base.noise_bound(p)


def explain_row(con, plan: Aggregate, cost: Cost, options: dict, conf: float = 0.95) -> tuple:
    """The ``EXPLAIN PRIVACY`` row (without the route): threshold, noise, split of ε."""
    own, m, r, bounds, eps_sel, eps_val = _parameters(con, plan, cost, options)
    sel_plan = plan_laplace(m, float(eps_sel), integer=True)
    t = threshold(sel_plan.noise_units, m, cost.delta)
    strategy = (f"distinct participants per group + discrete Laplace scale "
                f"{sel_plan.noise_scale:.4g}, released when ≥ {t}; each participant in ≤ {m} "
                f"group(s) (hash rank), ≤ {r} row(s) counted per group")
    if eps_val is None:
        rmse = math.sqrt(sel_plan.noise_variance)
        note = (f"{plan.label}: the noisy participant count that clears the threshold is the "
                f"released COUNT (ε = {format_eps(cost.epsilon)} on it); groups are not public, "
                "so which groups appear is itself released under δ")
    else:
        sens, integer = _value_sensitivity(plan, m, r, bounds)
        val_plan = plan_laplace(sens, float(eps_val), integer=integer)
        rmse = math.sqrt(val_plan.noise_variance)
        note = (f"{plan.label}: ε/2 = {format_eps(eps_sel)} selects the groups, ε/2 releases "
                f"the values (discrete Laplace, ℓ₁ sensitivity {sens:g}); δ bounds the chance "
                "that a group only one participant populates is released")
    return ("partition-selection", None, strategy, None, cost.describe(), rmse, None, conf, note)
