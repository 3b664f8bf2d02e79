"""Domains, binning in SQL, policy building and the k-means sensitivity (unit level)."""

from fractions import Fraction

import duckdb
import numpy as np
import pytest

from provsql_dp.errors import DeclarationError
from provsql_dp.policies import blowfish as bf
from provsql_dp.policies.blowfish import clustering as km
from provsql_dp.policies.blowfish.sql import ColumnDomain, TablePolicy


def test_range_domain_bins_in_sql_match_python():
    con = duckdb.connect()
    for dom, typ, vals in [
        (ColumnDomain.range(0, 100, width=7), "INTEGER", list(range(-5, 110))),
        (ColumnDomain.range(Fraction(-1, 2), 2, bins=5), "DOUBLE", list(np.linspace(-1, 3, 41))),
    ]:
        con.execute(f"CREATE OR REPLACE TABLE x (v {typ})")
        con.executemany("INSERT INTO x VALUES (?)", [[float(v) if typ == 'DOUBLE' else v] for v in vals])
        got = [r[0] for r in con.execute(f"SELECT {dom.bin_sql('v', typ)} FROM x ORDER BY v").fetchall()]
        want = [min(max(int((Fraction(str(v)) - dom.low) // dom.width), 0), dom.k - 1) for v in sorted(vals)]
        assert got == want


def test_explicit_domain_bins_and_absent_values():
    con = duckdb.connect()
    dom = ColumnDomain.explicit(["b", "a", "c"])
    got = con.execute(f"SELECT {dom.bin_sql('v', 'VARCHAR')} FROM (VALUES ('a'), ('c'), ('z'), "
                      "(NULL)) t(v)").fetchall()
    assert [r[0] for r in got] == [1, 2, None, None]
    with pytest.raises(DeclarationError, match="twice"):
        ColumnDomain.explicit([1, 1])
    with pytest.raises(DeclarationError, match="empty"):
        ColumnDomain.range(3, 3, width=1)


def test_table_policies_build_the_intended_graphs():
    d10 = ColumnDomain.range(0, 10, width=1)
    d4 = ColumnDomain.explicit(["a", "b", "c", "d"])
    mk = lambda g, doms, bounded=True, src=None: TablePolicy("p", "main", "t", tuple("xy"[:len(doms)]),
                                                             doms, g, bounded, src).policy()
    assert mk({"kind": "LINE"}, [d10]) == bf.Policy.line(10)
    assert mk({"kind": "THRESHOLD", "params": [3]}, [d10], False, [0]) == \
        bf.Policy.threshold(10, 3, bounded=False, sources=[0])
    assert mk({"kind": "GRID", "params": [1]}, [d10, d4]) == bf.Policy.grid(10, 4, 1)
    assert mk({"kind": "COMPOSE", "parts": [{"kind": "LINE"}, {"kind": "FULL"}]}, [d10, d4]) == \
        bf.Policy.compose(bf.Policy.line(10), bf.Policy.full(4))
    part = mk({"kind": "PARTITION", "params": {"groups": [["a", "c"], ["b", "d"]]}}, [d4])
    assert part.labels.tolist() == [0, 1, 0, 1]
    assert mk({"kind": "PARTITION", "params": {"width": "5"}}, [d10]).labels.tolist() == [0] * 5 + [1] * 5
    assert mk({"kind": "FULL"}, [d10, d4], False).k == 40
    with pytest.raises(DeclarationError, match="two columns"):
        mk({"kind": "GRID", "params": [1]}, [d10])
    tp = TablePolicy("p", "main", "t", ("x",), [d10], {"kind": "LINE"}, True)
    assert TablePolicy.from_row(type("R", (), {"name": "p", "schema": "main", "table": "t",
                                              "columns": ("x",), "spec": tp.to_json()})).policy() \
        == tp.policy()


def _brute_sum_sensitivity(points, pairs, centers, count=False):
    """max over neighbouring pairs of the L1 change of (counts, sums) — one record moved."""
    lab = km._assign(np.asarray(points, float), np.asarray(centers, float))
    best = 0.0
    for i, j in pairs:
        x, y = points[i], points[j]
        if lab[i] == lab[j]:
            d = 0.0 if count else np.abs(x - y).sum()
        else:
            d = 2.0 if count else np.abs(x).sum() + np.abs(y).sum()
        best = max(best, d)
    return best


@pytest.mark.parametrize("policy,kw", [("dp", {}), ("attribute", {}), ("threshold", {"theta": 0.3}),
                                       ("partition", {"cells": 4})])
def test_kmeans_sensitivity_bounds_every_neighbouring_pair(policy, kw):
    rng = np.random.default_rng(3)
    grid = np.stack(np.meshgrid(np.linspace(0, 1, 9), np.linspace(0, 1, 9)), -1).reshape(-1, 2)
    for _ in range(5):
        centers = rng.uniform(0, 1, (3, 2))
        if policy == "dp":
            pairs = [(i, j) for i in range(len(grid)) for j in range(len(grid))]
        elif policy == "attribute":
            pairs = [(i, j) for i in range(len(grid)) for j in range(len(grid))
                     if np.sum(grid[i] != grid[j]) <= 1]
        elif policy == "threshold":
            pairs = [(i, j) for i in range(len(grid)) for j in range(len(grid))
                     if np.abs(grid[i] - grid[j]).sum() <= kw["theta"] + 1e-12]
        else:
            cell = np.minimum((grid * kw["cells"]).astype(int), kw["cells"] - 1)
            pairs = [(i, j) for i in range(len(grid)) for j in range(len(grid))
                     if np.all(cell[i] == cell[j])]
        sc, ss = km.sensitivities(policy, [0, 0], [1, 1], centers, **kw)
        assert _brute_sum_sensitivity(grid, pairs, centers) <= ss + 1e-9
        assert _brute_sum_sensitivity(grid, pairs, centers, count=True) <= sc + 1e-9


def test_partition_without_a_split_cell_releases_counts_exactly():
    # one cluster: no secret pair can be split, counts are exact and sums cost a cell's diameter
    assert km.sensitivities("partition", [0, 0], [1, 1], np.array([[0.3, 0.3]]), cells=4) == (0.0, 0.5)
    # a cell cut by the bisector of two centres: the cross-cluster term is kept
    sc, ss = km.sensitivities("partition", [0, 0], [1, 1], np.array([[0.2, 0.5], [0.7, 0.5]]), cells=4)
    assert (sc, ss) == (2.0, 4.0)
