"""Two sections of ``benchmarks/analyst_sql.py`` (issue 28, items 2 and 3): accounting beyond pure
ε, and private partition selection. Each function prints its table and returns its text;
``smoke=True`` runs the same code paths at a tiny size (``tests/system/test_benchmarks_smoke.py``).

* :func:`zcdp_vs_pure_section` — **one budget, 100 counts**: the budget is (ε = 1, δ = 10⁻⁶).
  Pure ε spends it as 100 Laplace counts at ε = 0.01 each (δ unused); zCDP as 100 discrete
  Gaussian counts at ρ/100 each, ρ = the largest ρ with ρ + 2√(ρ ln(1/δ)) ≤ 1 (so the 100
  releases together are (1, 10⁻⁶)-DP). Printed: each one's planned σ and measured RMSE over the
  counts (released through SQL, ``WITH EPSILON`` / ``WITH RHO``), side by side.
* :func:`partition_selection_section` — ``GROUP BY g`` over 10⁶ rows (one per participant) with
  10⁴ true groups of Zipf sizes, no declared keys, ``WITH EPSILON 1 DELTA 1e-6``: groups
  released, the rows they hold, the error of the released counts, the time beside plain DuckDB's
  ``GROUP BY`` (target ≤ 3×); and the same with participants owning ten rows each over 10⁵
  participants (``max_groups = 1``: the hash-rank rule in DuckDB's window function).

All per-row work runs in DuckDB SQL; Python sees one row per group.
"""

from __future__ import annotations

import math
import statistics
import time
from fractions import Fraction

import numpy as np

import provsql_dp
from provsql_dp.mechanisms.noise.discrete_gaussian import epsilon_of, rho_for

__all__ = ["zcdp_vs_pure_section", "partition_selection_section"]

DELTA = Fraction(1, 10**6)


def _decimal_floor(x: Fraction, digits: int = 15) -> str:
    """A decimal literal ≤ x (so k releases at it never exceed k·x)."""
    scaled = math.floor(x * 10**digits)
    return f"{scaled / 10**digits:.{digits}f}".rstrip("0")


def _table(title: str, header: list[str], rows: list[list]) -> str:
    lines = [f"### {title}", "", "| " + " | ".join(header) + " |",
             "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    return text


def zcdp_vs_pure_section(smoke: bool = False) -> str:
    """(a) on one budget, ``k`` counts (100; 10 with ``smoke``) under zCDP and under pure ε."""
    k = 10 if smoke else 100
    n = 2_000 if smoke else 100_000
    con = provsql_dp.connect()
    con.execute("CREATE TABLE people(id INTEGER PRIMARY KEY, age INTEGER)")
    con.execute(f"INSERT INTO people SELECT range, (range * 7919) % 100 FROM range({n})")
    con.execute("PROTECT TABLE people")
    queries = [f"SELECT COUNT(*) FROM people WHERE age >= {j % 100}" for j in range(k)]
    truth = [con.execute(q).fetchone()[0] for q in queries]

    eps_each = Fraction(1, k)
    con.execute("SET PRIVACY BUDGET 1")
    start = time.perf_counter()
    pure = [con.execute(f"{q} WITH EPSILON {_decimal_floor(eps_each)} OPTIONS (raw = true)")
            .fetchone()[0] for q in queries]
    t_pure = time.perf_counter() - start

    rho = rho_for(1, DELTA)
    rho_each = _decimal_floor(rho / k)
    con.execute(f"SET PRIVACY BUDGET RHO {_decimal_floor(rho)} FOR USER 'z'")
    con.user = "z"
    start = time.perf_counter()
    gauss = [con.execute(f"{q} WITH RHO {rho_each} OPTIONS (raw = true)").fetchone()[0]
             for q in queries]
    t_gauss = time.perf_counter() - start
    spent = con.ledger.account("z")
    assert epsilon_of(spent[2], DELTA) <= 1 + 1e-12  # the k releases are (1, δ)-DP together

    def rmse(xs):
        return math.sqrt(statistics.fmean((x - t) ** 2 for x, t in zip(xs, truth)))

    sigma_pure = math.sqrt(2) * k  # Laplace scale 1/ε per count, ε = 1/k
    sigma_gauss = 1 / math.sqrt(2 * float(Fraction(rho_each)))
    rows = [["pure ε (Laplace)", f"ε = 1/{k} each", f"{sigma_pure:.1f}", f"{rmse(pure):.1f}",
             f"{t_pure / k * 1000:.1f}"],
            ["zCDP (discrete Gaussian)", f"ρ = {float(rho):.5f}/{k} each", f"{sigma_gauss:.1f}",
             f"{rmse(gauss):.1f}", f"{t_gauss / k * 1000:.1f}"]]
    con.close()
    return _table(f"{k} counts on one budget (ε = 1, δ = 1e-6), {n} rows",
                  ["accounting", "per count", "noise sd (planned)", "RMSE (measured)",
                   "ms per release"], rows)


def _zipf_groups(n_rows: int, n_groups: int) -> np.ndarray:
    """Group ids 0…n_groups−1 of Zipf sizes (size ∝ 1/rank) filling ``n_rows`` rows."""
    h = sum(1.0 / r for r in range(1, n_groups + 1))
    sizes = np.maximum(1, np.floor(n_rows / h / np.arange(1, n_groups + 1))).astype(np.int64)
    sizes[0] += n_rows - sizes.sum()  # the largest group takes the rounding
    return np.repeat(np.arange(n_groups, dtype=np.int64), sizes)


def _timed(fn, repeats: int):
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def partition_selection_section(smoke: bool = False) -> str:
    """(b) partition selection on 10⁶ rows with 10⁴ true groups (10⁴ / 10² with ``smoke``)."""
    n_rows, n_groups = (10_000, 100) if smoke else (1_000_000, 10_000)
    repeats = 1 if smoke else 7
    g = _zipf_groups(n_rows, n_groups)
    perm = np.random.default_rng(0).permutation(n_rows)
    con = provsql_dp.connect()
    con._duck.register("src", {"id": np.arange(n_rows, dtype=np.int64), "g": g[perm]})
    con.execute("CREATE TABLE people AS SELECT id, g FROM src ORDER BY id")
    owners = n_rows // 10
    con.execute(f"CREATE TABLE visits AS SELECT id % {owners} AS pid, g FROM people")
    con._duck.unregister("src")
    con.execute("ALTER TABLE people ADD PRIMARY KEY (id)")
    con.execute("PROTECT TABLE people; PROTECT TABLE visits BY (pid) AS people")
    con.execute("SET PRIVACY BUDGET EPSILON 1000 DELTA 0.5")
    rows = []
    for label, table, opts in (("one row per participant", "people", ""),
                               (f"10 rows per participant ({owners} participants), max_groups = 1",
                                "visits", " OPTIONS (max_groups = 1, max_rows = 1)")):
        plain_sql = f"SELECT g, COUNT(*) FROM {table} GROUP BY g"
        t_plain, truth = _timed(lambda: con._duck.execute(plain_sql).fetchall(), repeats)
        true = dict(truth)
        if table == "visits":  # the statistic released: participants per group after the rule
            true = None
        priv_sql = f"{plain_sql} WITH EPSILON 1 DELTA 1e-6{opts}"
        t_priv, released = _timed(lambda: con.execute(priv_sql).fetchall(), repeats)
        kept_rows = sum(dict(truth)[k] for k, _ in released)
        if true is not None:
            err = [abs(v - true[k]) for k, v in released]
            err_txt = f"{statistics.median(err):.0f} / {max(err):.0f}"
        else:
            err_txt = "—"
        rows.append([label, f"{len(released)} of {len(truth)}",
                     f"{kept_rows / sum(dict(truth).values()):.1%}", err_txt,
                     f"{t_plain * 1000:.0f}", f"{t_priv * 1000:.0f}", f"{t_priv / t_plain:.2f}×"])
    con.close()
    return _table(f"partition selection, {n_rows} rows, {n_groups} true groups (Zipf sizes), "
                  "ε = 1, δ = 1e-6", ["participants", "groups released", "rows in them",
                                      "|error| median / max", "DuckDB ms", "private ms",
                                      "ratio"], rows)
