"""One ℓ1 bound across groups vs ε split over groups, single-owner GROUP BY (issue 28).

On synthetic per-(group, owner) totals where each participant falls in ``spread`` of ``G``
groups (TPC-H Q21's shape: a customer's orders reach many suppliers), releases every group
both ways, in one run, at the same ε:

* **split** — the former route: each group with the scalar closed form
  (:func:`provsql_dp.mechanisms.recursive.single_owner.release`) at ε / G;
* **ℓ1** — :func:`provsql_dp.mechanisms.recursive.single_owner_groups.release_groups` at ε.

Prints the median (over releases) of the mean relative error over the groups, the ratio, and
the time per release of each. ``--smoke``: a tiny case.

A second table compares, for a statement with **several aggregates** (TPC-H Q12's two
complementary counts, each line item in one of them; Q8's numerator, a share ``f`` of the
denominator's line items), the former split — each aggregate with its own ℓ1 bound across the
groups at ε / A — with one ℓ1 bound across (aggregate × group) coordinates at ε
(:mod:`provsql_dp.privacy.aggregates_l1`, on
:func:`~provsql_dp.mechanisms.recursive.single_owner_groups.release_matrix`).

    python benchmarks/group_l1.py [--releases 20] [--smoke] [--q8 /path/to/tpch/sf1]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from provsql_dp.mechanisms.recursive import single_owner as so
from provsql_dp.mechanisms.recursive import single_owner_groups as sg


def data(rng, n: int, G: int, spread: int):
    """Each of ``n`` owners in ``spread`` random groups, a heavy-tailed count in each."""
    owner = np.repeat(np.arange(n), spread)
    group = np.concatenate([rng.choice(G, size=spread, replace=False) for _ in range(n)])
    vals = np.ceil(rng.pareto(2.0, size=n * spread) + 1.0)
    return owner, group, vals


def split_release(owner, group, vals, G, eps, rng):
    out = np.zeros(G)
    for g in range(G):
        sel = group == g
        c = np.bincount(owner[sel], weights=vals[sel])
        out[g] = so.release(c[c > 0], eps / G, "edge", rng).value
    return out


def l1_release(owner, group, vals, G, eps, rng):
    return np.array([r.value for r in sg.release_groups(owner, group, vals, G, eps, "edge", rng)])


def rel_err(est, truth):
    return float(np.mean(np.abs(est - truth) / np.maximum(truth, 1.0)))


def run(cases, releases: int, eps: float, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for n, G, spread in cases:
        owner, group, vals = data(rng, n, G, spread)
        truth = np.bincount(group, weights=vals, minlength=G)
        res = {}
        for name, fn in (("split", split_release), ("l1", l1_release)):
            errs, times = [], []
            for _ in range(releases):
                t = time.perf_counter()
                est = fn(owner, group, vals, G, eps, rng)
                times.append(time.perf_counter() - t)
                errs.append(rel_err(est, truth))
            res[name] = (float(np.median(errs)), float(np.median(times)))
        rows.append(dict(n=n, G=G, spread=spread, mean_true=float(truth.mean()), **{
            f"{k}_err": v[0] for k, v in res.items()}, **{f"{k}_s": v[1] for k, v in res.items()}))
    return rows


def aggregate_data(rng, n: int, G: int, spread: int, shape: str, f: float, scale: float = 1.0):
    """Per (owner, group) rows and their A = 2 aggregates' totals: ``complementary`` (Q12: each
    line in exactly one aggregate, with probability ``f`` in the first) or ``nested`` (Q8: the
    first sums the lines of a share ``f`` of the second's, each line's value in [0, scale])."""
    owner, group, lines = data(rng, n, G, spread)
    lines = lines.astype(np.int64)
    first = rng.binomial(lines, f).astype(float)
    if shape == "complementary":
        return owner, group, np.stack([first, lines - first], axis=1)
    value = rng.uniform(0.0, scale, size=len(lines))
    return owner, group, np.stack([first * value, lines * value], axis=1)


Q8_TOTALS = """SELECT EXTRACT(year FROM o_orderdate)::INT - 1995, c_custkey,
  sum(CASE WHEN n2.n_name = 'BRAZIL' THEN l_extendedprice * (1 - l_discount) ELSE 0 END),
  sum(l_extendedprice * (1 - l_discount))
FROM part, supplier, lineitem, orders, customer, nation n1, nation n2, region
WHERE p_partkey = l_partkey AND s_suppkey = l_suppkey AND l_orderkey = o_orderkey
  AND o_custkey = c_custkey AND c_nationkey = n1.n_nationkey AND n1.n_regionkey = r_regionkey
  AND r_name = 'AMERICA' AND s_nationkey = n2.n_nationkey
  AND o_orderdate BETWEEN DATE '1995-01-01' AND DATE '1996-12-31'
  AND p_type = 'ECONOMY ANODIZED STEEL' GROUP BY ALL"""


def q8_data(parquet_dir: str):
    """TPC-H Q8's per-(year, customer) numerator and denominator from Parquet files (the
    ``tpch.py`` data): the real shape of the two aggregates, owners as the customers."""
    import duckdb

    con = duckdb.connect()
    for t in ("part", "supplier", "lineitem", "orders", "customer", "nation", "region"):
        con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{parquet_dir}/{t}.parquet')")
    rows = con.execute(Q8_TOTALS).fetchall()
    owner = np.unique([r[1] for r in rows], return_inverse=True)[1]
    return (owner, np.array([r[0] for r in rows]),
            np.array([[float(r[2]), float(r[3])] for r in rows]))


def several_aggregates(cases, releases: int, eps: float, seed: int = 1) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for shape, f, n, G, spread, scale in cases:
        if shape == "tpch-q8":
            owner, group, vals = q8_data(scale)
            n, f, scale = int(owner.max()) + 1, 0.0, "real"
        else:
            owner, group, vals = aggregate_data(rng, n, G, spread, shape, f, scale)
        A = vals.shape[1]
        truth = np.stack([np.bincount(group, weights=vals[:, a], minlength=G) for a in range(A)], 1)
        errs = {"split": [], "joint": []}
        for _ in range(releases):
            split = np.stack([[r.value for r in sg.release_groups(owner, group, vals[:, a], G,
                                                                  eps / A, "edge", rng)]
                              for a in range(A)], 1)
            t = sg.owner_norms(owner, vals)
            joint = sg.release_matrix(t, group, vals, t[owner], G, eps, "edge", rng)[0]
            for name, est in (("split", split), ("joint", joint)):
                errs[name].append([rel_err(est[:, a], truth[:, a]) for a in range(A)])
        med = {k: np.median(np.array(v), axis=0) for k, v in errs.items()}
        rows.append(dict(shape=shape, f=f, n=n, G=G, spread=spread, scale=scale, split=med["split"],
                         joint=med["joint"]))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--releases", type=int, default=20)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--smoke", action="store_true", help="a tiny case (CI)")
    ap.add_argument("--q8", help="a directory of TPC-H Parquet files (tpch.py's): add TPC-H "
                                 "Q8's real per-customer totals to the second table")
    a = ap.parse_args()
    cases = ([(200, 4, 2)] if a.smoke else
             [(10_000, 2, 2), (10_000, 10, 1), (10_000, 10, 3), (10_000, 100, 5),
              (100_000, 411, 5), (100_000, 411, 40)])
    releases = 2 if a.smoke else a.releases
    rows = run(cases, releases, a.eps)
    print(f"single-owner GROUP BY, ε = {a.eps:g}, {releases} releases per cell, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'owners':>8} {'groups':>6} {'spread':>6} {'mean truth':>11} {'split err':>10} "
          f"{'ℓ1 err':>9} {'split/ℓ1':>9} {'split s':>8} {'ℓ1 s':>7}")
    for r in rows:
        print(f"{r['n']:>8} {r['G']:>6} {r['spread']:>6} {r['mean_true']:>11.1f} "
              f"{100 * r['split_err']:>9.2f}% {100 * r['l1_err']:>8.2f}% "
              f"{r['split_err'] / max(r['l1_err'], 1e-12):>9.1f} {r['split_s']:>8.3f} "
              f"{r['l1_s']:>7.3f}")
    agg_cases = ([("complementary", 0.4, 200, 3, 2, 1.0)] if a.smoke else
                 [(shape, f, 10_000, G, spread, 1.0) for shape, f in (("complementary", 0.4),
                                                                 ("complementary", 0.05),
                                                                 ("nested", 0.5), ("nested", 0.04))
                  for G, spread in ((1, 1), (7, 3))]
                 # TPC-H Q8 at SF 1: 2,385 owners, a line's volume up to 1e5
                 + [("nested", 0.04, 2_500, 2, 1, 1.0), ("nested", 0.04, 2_500, 2, 1, 1e5)]
                 + ([("tpch-q8", 0, 0, 2, 1, a.q8)] if a.q8 else []))
    print()
    print("two aggregates of one statement: each with its own ℓ1 bound at ε/2 (split) vs one ℓ1 "
          "bound across both at ε (joint); error of each aggregate")
    print(f"{'shape':>13} {'f':>5} {'owners':>7} {'groups':>6} {'spread':>6} {'values':>6} {'split 1st':>10} "
          f"{'joint 1st':>10} {'split 2nd':>10} {'joint 2nd':>10}")
    for r in several_aggregates(agg_cases, releases, a.eps):
        print(f"{r['shape']:>13} {r['f']:>5g} {r['n']:>7} {r['G']:>6} {r['spread']:>6} {r['scale']!s:>6} "
              f"{100 * r['split'][0]:>9.2f}% {100 * r['joint'][0]:>9.2f}% "
              f"{100 * r['split'][1]:>9.2f}% {100 * r['joint'][1]:>9.2f}%")


if __name__ == "__main__":
    main()
