"""Blowfish policies of SQL tables: domains, binning in SQL, and the policy graph over the bins.

A ``CREATE POLICY`` statement becomes a :class:`TablePolicy`: one :class:`ColumnDomain` per
column (explicit values in order, or ``[lo, hi)`` cut into bins), a policy graph description and
the ⊥ setting. :meth:`TablePolicy.policy` builds the :class:`~provsql_dp.policies.blowfish.Policy` over
the bins (row-major for two columns); :meth:`ColumnDomain.bin_sql` computes a row's bin in SQL.

Out-of-domain values: with ``[lo, hi)`` values below ``lo`` fall in the first bin and values
at or above ``hi`` in the last (clamping); with explicit values, a value not in the list (and
NULL, always) is not counted — it behaves like an absent record. Under a BOUNDED policy the
number of counted rows is public.

New policy kinds plug in through :data:`BUILDERS` (keyword → builder), next to
:func:`provsql_dp.sql.policy_grammar.register_policy_kind` for their syntax.

>>> d = ColumnDomain.range(0, 100, width=10)
>>> d.k, d.labels()[:3], d.bin_sql('"age"', "INTEGER")
(10, [0, 10, 20], 'CASE WHEN "age" < 0 THEN 0 WHEN "age" >= 100 THEN 9 ELSE (CAST("age" AS BIGINT) - 0) // 10 END')
>>> TablePolicy("p", "main", "t", ("age",), [d], {"kind": "THRESHOLD", "params": [2]}, False).policy()
Policy(threshold, shape=(10,), theta=2, unbounded)
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ...errors import DeclarationError
from .policy import Policy

__all__ = ["ColumnDomain", "TablePolicy", "BUILDERS", "register_builder", "MAX_BINS"]

#: the largest domain a policy may declare (bins over all columns)
MAX_BINS = 1 << 24

_INTEGER = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
            "UINTEGER", "UBIGINT", "UHUGEINT"}
#: integer types whose difference with a bin edge of at most 64 bits fits BIGINT
_NARROW_INTEGER = {"TINYINT", "SMALLINT", "INTEGER", "UTINYINT", "USMALLINT", "UINTEGER"}


def _num(x) -> Fraction:
    return Fraction(str(x)) if not isinstance(x, Fraction) else x


def _plain(f: Fraction):
    """An exact Fraction as an int when integral, else a float (for labels)."""
    return int(f) if f.denominator == 1 else float(f)


def _lit(f: Fraction) -> str:
    if f.denominator == 1:
        return str(f.numerator)
    return f"({f.numerator}::DOUBLE / {f.denominator})"


def _sql_value(v) -> str:
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return _lit(_num(v))


@dataclass(frozen=True)
class ColumnDomain:
    """One column's public domain: ``values`` (explicit, in order) or ``[low, high)`` in bins of
    ``width`` (the last bin may be shorter)."""

    values: tuple | None = None
    low: Fraction | None = None
    high: Fraction | None = None
    width: Fraction | None = None

    @classmethod
    def explicit(cls, values) -> "ColumnDomain":
        vals = tuple(values)
        if not vals:
            raise DeclarationError("a domain needs at least one value")
        if len(set(vals)) != len(vals):
            dup = next(v for v in vals if vals.count(v) > 1)
            raise DeclarationError(f"the domain lists {dup!r} twice")
        return cls(values=vals)

    @classmethod
    def range(cls, low, high, *, width=None, bins=None) -> "ColumnDomain":
        lo, hi = _num(low), _num(high)
        if not hi > lo:
            raise DeclarationError(f"the domain [{low}, {high}) is empty: the upper bound must be "
                                   "larger than the lower bound")
        if (width is None) == (bins is None):
            raise DeclarationError("give the bin WIDTH or the number of BINS of [lo, hi)")
        if bins is not None:
            if int(bins) != bins or bins < 1:
                raise DeclarationError(f"BINS must be a positive whole number, got {bins}")
            w = (hi - lo) / int(bins)
        else:
            w = _num(width)
            if not w > 0:
                raise DeclarationError("the bin WIDTH must be positive")
        d = cls(low=lo, high=hi, width=w)
        if d.k > MAX_BINS:
            raise DeclarationError(f"[{low}, {high}) in bins of {float(w):g} has {d.k} bins; at "
                                   f"most {MAX_BINS} are supported")
        return d

    @property
    def k(self) -> int:
        if self.values is not None:
            return len(self.values)
        return math.ceil((self.high - self.low) / self.width)

    def labels(self, col_type: str | None = None) -> list:
        """The label of each bin: the value, or the bin's lower edge. Given the column's
        ``col_type``, every edge is a float unless the column has an integer type and the
        edges are whole (a DOUBLE column's edge 2 is 2.0, as its values are; an INTEGER
        column's edges under WIDTH 2.5 are 0.0, 2.5, 5.0, … — one type for the column)."""
        if self.values is not None:
            return list(self.values)
        edges = [_plain(self.low + i * self.width) for i in range(self.k)]
        whole = self.low.denominator == 1 and self.width.denominator == 1
        if col_type is not None and not (col_type.upper() in _INTEGER and whole):
            return [float(e) for e in edges]
        return edges

    def edge(self, i: int) -> Fraction:
        return self.low + i * self.width

    def bin_sql(self, col: str, col_type: str) -> str:
        """SQL computing a row's bin index from the column (NULL: not counted)."""
        if self.values is not None:
            items = ", ".join(_sql_value(v) for v in self.values)
            return f"(list_position([{items}], {col}) - 1)"
        last = self.k - 1
        integral = (col_type.upper() in _INTEGER and self.low.denominator == 1
                    and self.width.denominator == 1)
        # in a type wide enough for col − low: a TINYINT's 0 − (−128) overflows TINYINT
        offset = (f"(CAST({col} AS BIGINT) - {_lit(self.low)}) // {_lit(self.width)}"
                  if col_type.upper() in _NARROW_INTEGER else
                  f"CAST((CAST({col} AS HUGEINT) - {_lit(self.low)}) // {_lit(self.width)} AS BIGINT)")
        inner = (offset if integral else
                 f"CAST(floor(({col} - {_lit(self.low)}) / {_lit(self.width)}) AS BIGINT)")
        return (f"CASE WHEN {col} < {_lit(self.low)} THEN 0 WHEN {col} >= {_lit(self.high)} "
                f"THEN {last} ELSE {inner} END")

    def index_of(self, value) -> int:
        """The bin of one value (for SOURCES): exact for explicit domains, clamped for ranges."""
        if self.values is not None:
            for i, v in enumerate(self.values):
                if v == value or (not isinstance(v, str) and not isinstance(value, str)
                                  and _num(v) == _num(value)):
                    return i
            raise DeclarationError(f"{value!r} is not a value of the domain")
        v = _num(value)
        if not self.low <= v < self.high:
            raise DeclarationError(f"{value} is outside the domain [{_plain(self.low)}, "
                                   f"{_plain(self.high)})")
        return int((v - self.low) // self.width)

    def to_dict(self) -> dict:
        if self.values is not None:
            return {"values": list(self.values)}
        return {"low": str(self.low), "high": str(self.high), "width": str(self.width)}

    @classmethod
    def from_dict(cls, d: dict) -> "ColumnDomain":
        if "values" in d:
            return cls(values=tuple(d["values"]))
        return cls(low=Fraction(d["low"]), high=Fraction(d["high"]), width=Fraction(d["width"]))

    def describe(self) -> str:
        if self.values is not None:
            vals = ", ".join(_sql_value(v) for v in self.values[:6])
            return f"({vals}{', …' if len(self.values) > 6 else ''})"
        return f"[{_plain(self.low)}, {_plain(self.high)}) WIDTH {_plain(self.width)}"


# ---------------------------------------------------------------------------- builders
def _one_column(kind, domains):
    if len(domains) != 1:
        raise DeclarationError(f"{kind} is a policy on one column; for two columns use GRID θ "
                               f"or an attribute composition (g1, g2)")
    return domains[0]


def _partition_labels(graph, dom: ColumnDomain):
    params = graph.get("params") or {}
    if "width" in params:
        if dom.values is not None:
            raise DeclarationError("PARTITION BY WIDTH needs a [lo, hi) domain; group explicit "
                                   "values with PARTITION BY ((v, …), (v, …))")
        w = Fraction(params["width"])
        ratio = w / dom.width
        if ratio.denominator != 1 or ratio < 1:
            raise DeclarationError(f"the partition width {_plain(w)} must be a multiple of the "
                                   f"bin width {_plain(dom.width)}")
        return np.arange(dom.k) // int(ratio)
    groups = params.get("groups") or []
    labels = np.full(dom.k, -1)
    for g, vals in enumerate(groups):
        for v in vals:
            i = dom.index_of(v)
            if labels[i] >= 0:
                raise DeclarationError(f"the value {v!r} is in two partition groups")
            labels[i] = g
    if (labels < 0).any():
        missing = dom.labels()[int(np.flatnonzero(labels < 0)[0])]
        raise DeclarationError(f"the value {missing!r} is in no partition group; every domain "
                               "value must be in exactly one group")
    return labels


def _attribute(graph, dom: ColumnDomain) -> Policy:
    kind = graph["kind"]
    k = dom.k
    if kind == "FULL":
        return Policy.full(k)
    if kind == "LINE":
        return Policy.line(k)
    if kind == "THRESHOLD":
        return Policy.threshold(k, int(graph["params"][0]))
    if kind == "PARTITION":
        return Policy.partition(_partition_labels(graph, dom))
    if kind in BUILDERS:
        return BUILDERS[kind](graph, [dom], True, None)
    raise DeclarationError(f"{kind} cannot describe one attribute of a composition")


def _build_1d(kind):
    def build(graph, domains, bounded, sources):
        dom = _one_column(kind, domains)
        if kind == "LINE":
            return Policy.line(dom.k, bounded=bounded, sources=sources)
        if kind == "THRESHOLD":
            return Policy.threshold(dom.k, int(graph["params"][0]), bounded=bounded, sources=sources)
        return Policy.partition(_partition_labels(graph, dom), bounded=bounded, sources=sources)
    return build


def _build_grid(graph, domains, bounded, sources):
    if len(domains) != 2:
        raise DeclarationError("GRID θ is a policy on two columns (an L1 threshold on the pair); "
                               "for one column use THRESHOLD θ")
    return Policy.grid(domains[0].k, domains[1].k, int(graph["params"][0]), bounded=bounded,
                       sources=sources)


def _build_compose(graph, domains, bounded, sources):
    parts = graph["parts"]
    if len(parts) != len(domains):
        raise DeclarationError(f"the attribute composition gives {len(parts)} graphs for "
                               f"{len(domains)} columns; give one graph per column")
    if len(parts) == 1:
        return Policy.compose(_attribute(parts[0], domains[0]), bounded=bounded, sources=sources)
    return Policy.compose(*[_attribute(g, d) for g, d in zip(parts, domains)], bounded=bounded,
                          sources=sources)


#: kind keyword → builder(graph, domains, bounded, sources) → Policy
BUILDERS: dict = {
    "LINE": _build_1d("LINE"),
    "THRESHOLD": _build_1d("THRESHOLD"),
    "PARTITION": _build_1d("PARTITION"),
    "GRID": _build_grid,
    "COMPOSE": _build_compose,
}


def register_builder(keyword: str, builder) -> None:
    """Build policies of a new kind: ``builder(graph, domains, bounded, sources) -> Policy``
    where ``graph = {"kind": keyword, "params": [...]}`` (parameters as parsed)."""
    BUILDERS[keyword.upper()] = builder


# ---------------------------------------------------------------------------- a table's policy
@dataclass
class TablePolicy:
    """A policy declared on columns of a table. ``sources`` are bin indices (flattened for two
    columns) or None; ``bounded`` False means ⊥ is present."""

    name: str
    schema: str
    table: str
    columns: tuple
    domains: list
    graph: dict
    bounded: bool
    sources: list | None = None
    _policy: Policy | None = field(default=None, repr=False)
    #: publicly known counts (He et al. §8): disjoint groups of flat bin indices, or None
    known: list | None = None
    #: how they were declared, for SHOW POLICIES: "TOTAL", "BY (col)" or "(groups)"
    known_sql: str | None = None

    @property
    def shape(self) -> tuple:
        return tuple(d.k for d in self.domains)

    def policy(self) -> Policy:
        """The :class:`Policy` over the bins (row-major for two columns)."""
        if self._policy is not None:
            return self._policy
        kind = self.graph["kind"]
        if kind == "FULL":  # the complete graph, over the product domain for two columns
            pol = Policy.full(int(np.prod(self.shape)), bounded=self.bounded, sources=self.sources)
        elif kind in BUILDERS:
            pol = BUILDERS[kind](self.graph, self.domains, self.bounded, self.sources)
        else:
            raise DeclarationError(f"unknown policy kind {kind}")
        self._policy = pol
        return pol

    @property
    def unbounded_everywhere(self) -> bool:
        """⊥ adjacent to every value: any change to a record is a removal plus an addition."""
        return not self.bounded and self.sources is None

    def to_json(self) -> str:
        d = {"graph": self.graph, "domains": [d.to_dict() for d in self.domains],
             "bounded": self.bounded, "sources": self.sources}
        if self.known is not None:
            d["known"] = self.known
            d["known_sql"] = self.known_sql
        return json.dumps(d, separators=(",", ":"))

    @classmethod
    def from_row(cls, row) -> "TablePolicy":
        d = json.loads(row.spec)
        return cls(row.name, row.schema, row.table, tuple(row.columns),
                   [ColumnDomain.from_dict(x) for x in d["domains"]], d["graph"], d["bounded"],
                   d.get("sources"), known=d.get("known"), known_sql=d.get("known_sql"))

    def describe(self) -> str:
        text = self.policy().describe()
        if self.known is not None:
            from .constraints import histogram_sensitivity  # local: constraints imports policy
            text += (f"; known counts {self.known_sql} (published exactly; histogram "
                     f"sensitivity {histogram_sensitivity(self.policy(), self.known)})")
        return text

    def graph_sql(self) -> str:
        return _graph_sql(self.graph)


def _graph_sql(g: dict) -> str:
    kind = g["kind"]
    if kind == "COMPOSE":
        return "(" + ", ".join(_graph_sql(p) for p in g["parts"]) + ")"
    if kind == "PARTITION":
        p = g.get("params") or {}
        if "width" in p:
            return f"PARTITION BY WIDTH {p['width']}"
        return "PARTITION BY (" + ", ".join(
            "(" + ", ".join(_sql_value(v) for v in grp) + ")" for grp in p.get("groups", [])) + ")"
    params = g.get("params") or []
    return " ".join([kind] + [str(x) for x in params])
