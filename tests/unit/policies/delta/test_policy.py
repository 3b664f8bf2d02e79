"""The discretised δ-neighbourhood: cell adjacency checked against points, by brute force."""

import itertools
from fractions import Fraction as F

import numpy as np
import pytest

from provsql_dp.errors import DeclarationError
from provsql_dp.policies.blowfish import Policy as BP
from provsql_dp.policies.delta import Policy

M = 12  # sample points per cell and axis: i·w + t·w/M, t = 0 … M−1 (half-open cells)


def _cell_points(lo, w, i):
    return [lo + i * w + F(t, M) * w for t in range(M)]


def _brute_1d(delta, k):
    """Cells i < j are neighbours iff two sample points are within δ (exact rationals)."""
    w = F(1, k)
    pts = [_cell_points(F(0), w, i) for i in range(k)]
    out = set()
    for i, j in itertools.combinations(range(k), 2):
        if min(abs(a - b) for a in pts[i] for b in pts[j]) <= delta:
            out.add((i, j))
    return out


# δ values chosen off the sampling lattice (so a finite sample decides the strict relation),
# plus exact multiples of the width, where the half-open cells must *not* touch
@pytest.mark.parametrize("delta,k", [(F(13, 100), 10), (F(1, 4), 4), (F(3, 10), 10),
                                     (F(37, 100), 8), (F(1, 20), 5)])
def test_threshold_matches_points(delta, k):
    pol = Policy(delta)
    th = pol.threshold_of(k)
    want = {(i, j) for i in range(k) for j in range(i + 1, k) if j - i <= th}
    brute = _brute_1d(delta, k)
    if delta * k == int(delta * k):  # exact multiple: the gap (j−i−1)/k = δ is never attained
        assert want == {(i, j) for i, j in brute if F(j - i - 1, k) < delta}
    else:
        assert want == brute
    u, v = pol.blowfish(k).edges()
    assert set(zip(u.tolist(), v.tolist())) == want


@pytest.mark.parametrize("metric", ["euclidean", "l1"])
@pytest.mark.parametrize("delta", [F(13, 100), F(27, 100), F(1, 10), F(2, 10)])
def test_2d_cell_edges_match_points(metric, delta):
    k = 5
    pol = Policy(delta, dims=2, metric=metric)
    w = F(1, k)
    m = 6
    pts = {}  # a sample of each cell's points
    for i in range(k):
        for j in range(k):
            pts[i * k + j] = [(i * w + F(a, m) * w, j * w + F(b, m) * w)
                              for a in range(m) for b in range(m)]

    def gap(c1, c2):  # exact infimum distance between half-open cells
        (i1, j1), (i2, j2) = divmod(c1, k), divmod(c2, k)
        gx = max(0, abs(i1 - i2) - 1) * w
        gy = max(0, abs(j1 - j2) - 1) * w
        return gx + gy if metric == "l1" else gx * gx + gy * gy

    d_cmp = delta if metric == "l1" else delta * delta
    u, v = pol.cell_edges((k, k))
    got = set(zip(u.tolist(), v.tolist()))
    want = {(a, b) for a, b in itertools.combinations(range(k * k), 2) if gap(a, b) < d_cmp}
    assert got == want
    # sample points confirm it: within δ for every edge found by a finite sample
    for a, b in itertools.combinations(range(k * k), 2):
        near = any(((abs(p[0] - q[0]) + abs(p[1] - q[1])) if metric == "l1"
                    else (p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2) <= d_cmp
                   for p in pts[a][:: m + 1] + pts[a][m - 1:: m] for q in pts[b])
        if near:
            assert (a, b) in got


def test_sources_are_bottom_edges():
    pol = Policy(0.1, sources=[0.0])
    bp = pol.blowfish(20)
    assert not bp.bounded
    assert bp.sources.tolist() == [0, 1, 2]  # cells starting at 0, 0.05, 0.1 (closed start)
    assert isinstance(bp, BP)
    assert Policy(0.1).blowfish(20).bounded


def test_validation():
    with pytest.raises(DeclarationError):
        Policy(0)
    with pytest.raises(DeclarationError):
        Policy(0.1, dims=3)
    with pytest.raises(DeclarationError):
        Policy(0.1, metric="cosine")
    with pytest.raises(DeclarationError):
        Policy(0.1, bbox=[(1, 0)])
    with pytest.raises(ValueError):
        Policy(0.1).check_points([1.5])
    p = Policy("1/3", dims=2, bbox=[(0, 10), (-5, 5)], metric="l1", sources=[[0, 0]])
    assert Policy.from_dict(p.to_dict()).to_dict() == p.to_dict()
