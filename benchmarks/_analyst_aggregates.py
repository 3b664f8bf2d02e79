"""Benchmark section: the aggregates analysts use (issue 28, item 4) — accuracy at ε = 1 on a
300-row penguins table.

``aggregates_section()`` prints one table; ``benchmarks/analyst_sql.py`` imports it when present
(``from _analyst_aggregates import aggregates_section``), and this file also runs alone::

    python benchmarks/_analyst_aggregates.py            # 300 rows, 200 releases per statement
    python benchmarks/_analyst_aggregates.py --smoke    # 10 releases (seconds)

The data: the Palmer penguins' shape (three species of 146/68/119 birds as in the data set, body
mass ~ N(3700, 460), N(3730, 380), N(5080, 500) g clipped to [2700, 6300], sex alternating),
generated with a fixed seed (the real file is not in the repository), 300 rows. Declarations:
``SET BOUNDS ON penguins (body_mass_g) BETWEEN 2500 AND 6500`` and the three species as group
keys. Each statement is released ``--releases`` times through ``provsql_dp`` (a seeded
generator); per statement: the true value (plain DuckDB; for clamped statistics, of the
clamped values), the route, the RMSE of the releases, the share of 95 % intervals that cover the
truth, and their mean width ("bounds" when the interval is the declared bounds). "before" rows
show what the same question cost before issue 28 (the route it took then, forced with OPTIONS,
or the former mechanism called directly).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

import provsql_dp

EPS = 1.0
SPECIES = (("Adelie", 146, 3700, 460), ("Chinstrap", 68, 3730, 380), ("Gentoo", 119, 5080, 500))


def penguins(n: int = 300, seed: int = 28):
    """A provsql_dp connection holding ``penguins`` (protected, bounds and keys declared)."""
    rng = np.random.default_rng(seed)
    total = sum(s[1] for s in SPECIES)
    rows = []
    for name, k, mu, sd in SPECIES:
        for _ in range(round(k * n / total)):
            rows.append((name, float(np.clip(rng.normal(mu, sd), 2700, 6300))))
    con = provsql_dp.connect()
    con.execute("CREATE TABLE penguins(id INT PRIMARY KEY, species VARCHAR, sex VARCHAR, "
                "body_mass_g DOUBLE)")
    values = ", ".join(f"({i}, '{s}', '{'male' if i % 2 else 'female'}', {m!r})"
                       for i, (s, m) in enumerate(rows[:n]))
    con.execute(f"INSERT INTO penguins VALUES {values}")
    con.execute("PROTECT TABLE penguins")
    con.execute("SET PRIVACY BUDGET 1000000")
    con.execute("SET BOUNDS ON penguins (body_mass_g) BETWEEN 2500 AND 6500")
    con.execute("SET GROUP KEYS ON penguins (species) VALUES ('Adelie', 'Chinstrap', 'Gentoo')")
    con._rng = np.random.default_rng(seed + 1)
    return con


def _truth(con, sql: str) -> float:
    return float(con._duck.execute(sql).fetchone()[0])


CLAMPED = "LEAST(GREATEST(body_mass_g, 2500), 6500)"

#: (label, private statement, true value's SQL, what "before" means or None)
STATEMENTS = [
    ("SUM(CASE sex='male' 1 ELSE 0)", "SELECT SUM(CASE WHEN sex = 'male' THEN 1 ELSE 0 END) "
     "FROM penguins", "SELECT count(*) FILTER (WHERE sex = 'male') FROM penguins", None),
    ("  before: same, route of then", "SELECT SUM(CASE WHEN sex = 'male' THEN 1 ELSE 0 END) "
     "FROM penguins WITH EPSILON 1 OPTIONS (mechanism = 'recursive')",
     "SELECT count(*) FILTER (WHERE sex = 'male') FROM penguins", "options"),
    ("COUNT(*) WHERE sex='male'", "SELECT COUNT(*) FROM penguins WHERE sex = 'male'",
     "SELECT count(*) FILTER (WHERE sex = 'male') FROM penguins", None),
    ("COUNT(*) FILTER (sex='male')", "SELECT COUNT(*) FILTER (WHERE sex = 'male') FROM penguins",
     "SELECT count(*) FILTER (WHERE sex = 'male') FROM penguins", None),
    ("SUM(mass) FILTER (Gentoo)", "SELECT SUM(body_mass_g) FILTER (WHERE species = 'Gentoo') "
     "FROM penguins", f"SELECT sum({CLAMPED}) FILTER (WHERE species = 'Gentoo') FROM penguins",
     None),
    ("STDDEV(mass)", "SELECT STDDEV(body_mass_g) FROM penguins",
     f"SELECT stddev_samp({CLAMPED}) FROM penguins", None),
    ("VAR_POP(mass)", "SELECT VAR_POP(body_mass_g) FROM penguins",
     f"SELECT var_pop({CLAMPED}) FROM penguins", None),
    ("COUNT(DISTINCT species)", "SELECT COUNT(DISTINCT species) FROM penguins",
     "SELECT count(DISTINCT species) FROM penguins", None),
    ("  before: same, route of then", "SELECT COUNT(DISTINCT species) FROM penguins WITH "
     "EPSILON 1 OPTIONS (mechanism = 'recursive')", "SELECT count(DISTINCT species) FROM penguins",
     "options"),
    ("MEDIAN(mass) ε=1", "SELECT MEDIAN(body_mass_g) FROM penguins",
     f"SELECT median({CLAMPED}) FROM penguins", None),
    ("  before: Laplace (hi−lo)/ε", None, f"SELECT median({CLAMPED}) FROM penguins", "laplace"),
    ("MEDIAN(mass) ε=0.5", "SELECT MEDIAN(body_mass_g) FROM penguins WITH EPSILON 0.5",
     f"SELECT median({CLAMPED}) FROM penguins", None),
]


def _release(con, sql: str):
    text = sql if "WITH EPSILON" in sql else f"{sql} WITH EPSILON {EPS:g}"
    cur = con.execute(text)
    value = cur.fetchone()[0]
    return float(value), cur.privacy.intervals()[0][0], cur.privacy.routes


def _former_median(truth: float, releases: int, rng):
    """The route's former release under bounds: exact Laplace of scale (hi − lo)/ε, clamped."""
    from provsql_dp.mechanisms.global_sensitivity.quantile import (quantile_sensitivity,
                                                                   release_quantile)
    sens = quantile_sensitivity(2500.0, 6500.0)
    out = []
    for _ in range(releases):
        r = release_quantile(truth, 2500.0, 6500.0, sens, EPS, rng=rng)
        b = r.noise_bound(0.95)
        out.append((r.value, (r.value - b, r.value + b), ("quantile (Laplace)",)))
    return out


def measure(releases: int = 200, n: int = 300) -> list[dict]:
    """Per statement: truth, route, RMSE, 95 % coverage, mean interval width, time per release."""
    con = penguins(n)
    rows = []
    for label, sql, truth_sql, before in STATEMENTS:
        truth = _truth(con, truth_sql)
        t0 = time.perf_counter()
        if before == "laplace":
            got = _former_median(truth, releases, np.random.default_rng(5))
        else:
            got = [_release(con, sql) for _ in range(releases)]
        per = (time.perf_counter() - t0) / releases
        vals = np.array([g[0] for g in got])
        ivs = [g[1] for g in got]
        finite = [(lo, hi) for lo, hi in ivs if lo is not None and hi is not None]
        cover = np.mean([(lo is None or lo <= truth + 1e-9) and (hi is None or truth - 1e-9 <= hi)
                         for lo, hi in ivs])
        width = float(np.mean([hi - lo for lo, hi in finite])) if len(finite) == len(ivs) \
            else math.inf
        inside = all(2500 <= lo and hi <= 6500 for lo, hi in finite) \
            if label.startswith(("MEDIAN", "  before: Laplace")) else None
        rows.append(dict(statement=label, route="+".join(got[0][2]), truth=truth,
                         rmse=float(np.sqrt(np.mean((vals - truth) ** 2))),
                         coverage=float(cover), width=width, inside=inside,
                         ms=per * 1000))
    return rows


def aggregates_section(smoke: bool = False, releases: int = 200, n: int = 300,
                       out=sys.stdout) -> list[dict]:
    """Print the section's table (and the median's error in grid steps); returns its rows.
    ``smoke``: 10 releases (the calling convention of ``analyst_sql.py``'s sections)."""
    releases = 10 if smoke else releases
    rows = measure(releases, n)
    print(f"\n## Aggregates analysts use (issue 28 item 4): {n} penguins, ε = {EPS:g} unless "
          f"noted, {releases} releases each\n", file=out)
    print("| statement | route | truth | RMSE | 95 % coverage | mean 95 % width | ms/release |",
          file=out)
    print("|---|---|---:|---:|---:|---:|---:|", file=out)
    for r in rows:
        width = "one-sided/none" if math.isinf(r["width"]) else f"{r['width']:.4g}"
        if r["inside"] is not None:
            width += " (inside bounds)" if r["inside"] else " (LEAVES the bounds)"
        print(f"| {r['statement']} | {r['route']} | {r['truth']:.6g} | {r['rmse']:.4g} | "
              f"{r['coverage']:.2f} | {width} | {r['ms']:.1f} |", file=out)
    med = next(r for r in rows if r["statement"] == "MEDIAN(mass) ε=1")
    print(f"\nMEDIAN at ε = 1: RMSE {med['rmse']:.3g} g = {med['rmse'] / (4000 / 256):.2f} grid "
          f"steps of {4000 / 256:g} g (target: within a few grid steps).", file=out)
    print(f"ms/release: wall time per release including the first (cold) one; 1-minute load "
          f"average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.", file=out)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="10 releases per statement")
    ap.add_argument("--releases", type=int, default=200)
    ap.add_argument("--rows", type=int, default=300)
    args = ap.parse_args(argv)
    aggregates_section(args.smoke, args.releases, args.rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
