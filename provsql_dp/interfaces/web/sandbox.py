"""The curator's what-if releases (Liu et al. Demo 1), through the engine, away from the real data.

The curator chooses a numeric column of a table, a public domain ``[lo, hi)`` cut into ``bins``,
a policy graph (``FULL`` = differential privacy, ``LINE``, ``THRESHOLD θ``) and ε. The true
histogram is read on the curator's connection (the curator may see it). The noisy one is released
by the engine itself — ``PROTECT TABLE``, ``CREATE POLICY`` and ``… WITH EPSILON ε`` on a private
in-memory provsql_dp connection holding one row per record at its bin — so exploring thresholds
changes no declaration and spends no analyst's budget. The SQL the curator would declare is
returned beside each chart.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE t(id INT PRIMARY KEY, a INT); INSERT INTO t SELECT i, i % 10 FROM range(50) r(i)")
>>> h = Histogram("t", "a", 0, 10, 5)
>>> h.labels(), true_counts(con, h)
(['0', '2', '4', '6', '8'], [10, 10, 10, 10, 10])
>>> out = noisy(true_counts(con, h), h, "THRESHOLD 2", True, 1.0)
>>> len(out["noisy"]), out["strategy"] != "", out["policy_sql"]
(5, True, 'CREATE POLICY t_a ON t (a) AS THRESHOLD 2 DOMAIN [0, 10) BINS 5 BOUNDED')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ... import connect
from ...errors import ProgrammingError
from ...policies.blowfish import workload as wl
from ...policies.blowfish.policy import Policy
from ...policies.blowfish.tradeoff import tradeoff as engine_tradeoff
from ...privacy.intervals import shown

__all__ = ["Histogram", "true_counts", "noisy", "graph", "tradeoff", "quote", "parse_graph"]

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_BINS = 200


def quote(name: str) -> str:
    """A safely quoted SQL identifier."""
    if not isinstance(name, str) or not name or len(name) > 128:
        raise ProgrammingError("a table or column name is missing")
    return '"' + name.replace('"', '""') + '"'


def _num(x, what: str) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ProgrammingError(f"{what} must be a number, got {x!r}") from None
    if v != v or v in (float("inf"), float("-inf")):
        raise ProgrammingError(f"{what} must be a finite number")
    return v


@dataclass
class Histogram:
    """A 1-D histogram over a public domain: ``bins`` equal bins of ``[lo, hi)``."""
    table: str
    column: str
    lo: float
    hi: float
    bins: int

    def __post_init__(self):
        self.lo, self.hi = _num(self.lo, "lo"), _num(self.hi, "hi")
        if not self.lo < self.hi:
            raise ProgrammingError("the domain [lo, hi) must have lo < hi")
        try:
            self.bins = int(self.bins)
        except (TypeError, ValueError):
            raise ProgrammingError("bins must be a whole number") from None
        if not 2 <= self.bins <= MAX_BINS:
            raise ProgrammingError(f"bins must be between 2 and {MAX_BINS}")

    @property
    def width(self) -> float:
        return (self.hi - self.lo) / self.bins

    def labels(self) -> list[str]:
        return [f"{self.lo + i * self.width:g}" for i in range(self.bins)]

    def domain_sql(self) -> str:
        return f"DOMAIN [{self.lo:g}, {self.hi:g}) BINS {self.bins}"

    def policy_sql(self, graph: str, bounded: bool, name: str | None = None) -> str:
        name = name or re.sub(r"\W", "_", f"{self.table}_{self.column}")
        return (f"CREATE POLICY {name} ON {self.table} ({self.column}) AS {graph} "
                f"{self.domain_sql()} {'BOUNDED' if bounded else 'UNBOUNDED'}")


def parse_graph(graph: str, bins: int) -> str:
    """``FULL``, ``LINE`` or ``THRESHOLD θ`` (θ a whole number ≥ 1), normalised."""
    g = " ".join(str(graph).upper().split())
    if g in ("FULL", "LINE"):
        return g
    m = re.fullmatch(r"THRESHOLD (\d{1,4})", g)
    if m and 1 <= int(m.group(1)):
        return g
    raise ProgrammingError(f"the policy graph must be FULL, LINE or THRESHOLD θ, got {graph!r}")


def true_counts(con, h: Histogram) -> list[int]:
    """The true histogram, binned as a policy's domain bins it (curator connection)."""
    sql = (f"SELECT LEAST(GREATEST(CAST(FLOOR((CAST({quote(h.column)} AS DOUBLE) - ?) / ?) AS BIGINT), 0), ?) "
           f"AS b, COUNT(*) FROM {quote(h.table)} WHERE {quote(h.column)} IS NOT NULL GROUP BY b")
    counts = [0] * h.bins
    for b, n in con.execute(sql, [h.lo, h.width, h.bins - 1]).fetchall():
        counts[int(b)] = int(n)
    return counts


def noisy(counts: list[int], h: Histogram, graph: str, bounded: bool, epsilon: float,
          cumulative: bool = False) -> dict:
    """Release the histogram (or cumulative histogram) of ``counts`` under the policy, by the engine:
    the noisy counts with their 95 % intervals (``intervals``, ``interval_text``, ``covers``: as
    the shell shows them, :mod:`provsql_dp.privacy.intervals`)."""
    graph = parse_graph(graph, h.bins)
    eps = _num(epsilon, "ε")
    scratch = connect(":memory:", user="curator")
    try:
        scratch.execute("CREATE TABLE s(id BIGINT PRIMARY KEY, v DOUBLE)")
        values = ", ".join(f"({h.lo + (i + 0.5) * h.width!r}, {n})" for i, n in enumerate(counts) if n)
        if values:
            scratch.execute("INSERT INTO s SELECT row_number() OVER (), v FROM "
                            f"(SELECT v, unnest(range(n)) FROM (VALUES {values}) t(v, n))")
        scratch.execute("PROTECT TABLE s")
        scratch.execute("SET PRIVACY BUDGET 1000000")
        scratch.execute(f"CREATE POLICY p ON s (v) AS {graph} DOMAIN [{h.lo!r}, {h.hi!r}) BINS {h.bins} "
                        f"{'BOUNDED' if bounded else 'UNBOUNDED'}")
        q = "COUNT CUMULATIVE v FROM s" if cumulative else "SELECT v, COUNT(*) FROM s GROUP BY v"
        cur = scratch.execute(f"{q} WITH EPSILON {eps!r}")
        rows = cur.fetchall()
        info = cur.privacy
        ivs = [row[0] for row in info.intervals(0.95)]
        return {"noisy": [float(r[-1]) for r in rows], "bound95": list(info.noise_bound(0.95)),
                "intervals": [[None if lo is None else float(lo), None if hi is None else float(hi)]
                              for lo, hi in ivs],
                "interval_text": [shown(iv) for iv in ivs], "covers": info.covers()[0],
                "strategy": info.strategy, "expected_rmse": float(info.expected_mse) ** 0.5,
                "policy_sql": h.policy_sql(graph, bounded)}
    finally:
        scratch.close()


def policy_for(graph: str, k: int, bounded: bool) -> Policy:
    g = parse_graph(graph, k)
    if g == "FULL":
        return Policy.full(k, bounded=bounded)
    if g == "LINE":
        return Policy.line(k, bounded=bounded)
    theta = int(g.split()[1])
    return Policy.threshold(k, theta, bounded=bounded) if theta < k else Policy.full(k, bounded=bounded)


def graph(policy: Policy, labels: list[str]) -> dict:
    """Nodes and edges of a 1-D policy graph (``⊥`` added when records may appear or vanish)."""
    a, b = policy.value_edges()
    nodes = list(labels)
    edges = [[int(i), int(j)] for i, j in zip(a, b)]
    if policy.has_bottom:
        nodes.append("⊥")
        edges += [[len(labels), int(j)] for j in policy.bottom_neighbours()]
    return {"nodes": nodes, "edges": edges, "meaning": policy.describe()}


def tradeoff(k: int, thetas, epsilons, bounded: bool, cumulative: bool) -> list[dict]:
    """Expected RMSE per query for each threshold θ and ε (the engine's trade-off view; reads no data)."""
    W = wl.Prefix(k) if cumulative else wl.Histogram(k)
    rows = engine_tradeoff(W, k, thetas=tuple(t for t in thetas if t < k), epsilons=tuple(epsilons),
                           bounded=bounded)
    return [{"policy": r["policy"], "theta": r["theta"], "epsilon": r["epsilon"], "strategy": r["detail"],
             "expected_rmse": float(r["expected_mse"]) ** 0.5} for r in rows]
