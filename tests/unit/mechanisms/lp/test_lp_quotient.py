"""The LP quotient by an equitable partition (mechanisms/lp/_quotient.py): the same optimal value
as the LP itself on random LPs with and without symmetry, and the exact check refusing any
partition that is not equitable (what a hash collision would produce)."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import breadth
from hypothesis import given, settings
from hypothesis import strategies as st

from provsql_dp.errors import SolverError
from provsql_dp.mechanisms.lp import _quotient as lq
from provsql_dp.mechanisms.lp._highs import solve_lp


def _value(cost, clo, cup, a, rlo, rup):
    a = sp.csr_matrix(a)
    return solve_lp(len(cost), cost, clo, cup, rlo, rup, a.indptr, a.indices, a.data)[0]


def _lifted(seed: int, copies: int, coupled: bool):
    """``copies`` disjoint copies of one random block (symmetric under permuting them), with a
    row summing every column when ``coupled`` (like the mass row), plus a random non-symmetric
    part so that not everything merges."""
    rng = np.random.default_rng(seed)
    r, c = int(rng.integers(2, 5)), int(rng.integers(2, 5))
    block = rng.integers(-2, 3, size=(r, c)).astype(float)
    a = sp.block_diag([sp.csr_matrix(block)] * copies).tocsr()
    cost = np.tile(rng.integers(-3, 4, size=c).astype(float), copies)
    rlo = np.tile(rng.integers(-4, 0, size=r).astype(float), copies)
    rup = np.tile(rng.integers(1, 5, size=r).astype(float), copies)
    if coupled:
        a = sp.vstack([a, sp.csr_matrix(np.ones((1, a.shape[1])))]).tocsr()
        rlo = np.append(rlo, 1.0)
        rup = np.append(rup, 1.0 + copies)
    n = a.shape[1]
    return cost, np.zeros(n), np.ones(n), a, rlo, rup


@breadth(12, 60, seed=st.integers(0, 10**6), copies=st.integers(1, 5), coupled=st.booleans())
def test_quotient_has_the_lps_value(seed, copies, coupled):
    cost, clo, cup, a, rlo, rup = _lifted(seed, copies, coupled)
    q = lq.equitable_quotient(a, cost, clo, cup, rlo, rup)
    try:
        want = _value(cost, clo, cup, a, rlo, rup)
    except Exception:  # infeasible LP: the quotient must be infeasible too
        if q is not None:
            with pytest.raises(Exception):
                _value(q.cost, q.col_lo, q.col_up, q.a, q.row_lo, q.row_up)
        return
    if copies > 1:
        assert q is not None and q.a.shape[1] < a.shape[1]
    if q is not None:
        assert _value(q.cost, q.col_lo, q.col_up, q.a, q.row_lo, q.row_up) == pytest.approx(
            want, abs=1e-7)
        assert q.size.sum() == a.shape[1] and len(q.col_class) == a.shape[1]


def test_a_column_or_row_of_its_own_key_stays_alone():
    cost, clo, cup, a, rlo, rup = _lifted(3, 4, True)
    rk = np.zeros(a.shape[0], dtype=np.uint64)
    rk[-1] = 1
    ck = np.zeros(a.shape[1], dtype=np.uint64)
    ck[0] = 1
    q = lq.equitable_quotient(a, cost, clo, cup, rlo, rup, col_key=ck, row_key=rk)
    assert (q.row_class == q.row_class[-1]).sum() == 1
    assert (q.col_class == q.col_class[0]).sum() == 1


def test_a_partition_that_is_not_equitable_is_refused():
    """A path a–b–c: its ends look alike to one colour but the middle row differs; a refinement
    that stopped too early (as a hash collision would leave it) must fail the exact check."""
    a = sp.csr_matrix(np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]))
    one = np.zeros(3, dtype=np.int64)
    assert lq._blocks_equal(a, one, one, 1) is None
    with mock.patch.object(lq, "_refine", return_value=(one, one)):
        assert lq.equitable_quotient(a, np.zeros(3), np.zeros(3), np.ones(3), np.zeros(3),
                                     np.ones(3)) is None
    # unequal costs inside a class are refused too, even when the matrix is equitable
    cyc = sp.csr_matrix(np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0]]))
    with mock.patch.object(lq, "_refine", return_value=(one, one)):
        assert lq.equitable_quotient(cyc, np.array([0.0, 0.0, 1.0]), np.zeros(3), np.ones(3),
                                     np.zeros(3), np.ones(3)) is None


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), copies=st.integers(1, 4), coupled=st.booleans(),
       kappas=st.lists(st.floats(-3, 3), min_size=1, max_size=3))
def test_a_marker_serves_every_kappa(seed, copies, coupled, kappas):
    """One partition, refined and checked with the marker ``M`` apart, gives the value of the LP
    with ``A + κM`` at every κ as ``Q(A) + κ Q(M)``."""
    cost, clo, cup, a, rlo, rup = _lifted(seed, copies, coupled)
    rng = np.random.default_rng(seed + 1)
    # the marker: one random entry per copy of the block, at the same place in every copy
    rows_per, cols_per = (a.shape[0] - (1 if coupled else 0)) // copies, a.shape[1] // copies
    r0, c0 = int(rng.integers(0, rows_per)), int(rng.integers(0, cols_per))
    mark = sp.csr_matrix((np.ones(copies), (r0 + rows_per * np.arange(copies),
                                            c0 + cols_per * np.arange(copies))), shape=a.shape)
    q = lq.equitable_quotient(a, cost, clo, cup, rlo, rup, marker=mark)
    if q is None:
        return
    assert q.marker is not None and q.marker.sum() == pytest.approx(
        mark.sum() / copies if copies > 1 else mark.sum())
    for kappa in kappas:
        full = (a + kappa * mark).tocsr()
        try:
            want = _value(cost, clo, cup, full, rlo, rup)
        except SolverError:  # infeasible or unbounded at this κ: nothing to compare
            continue
        got = _value(q.cost, q.col_lo, q.col_up, (q.a + kappa * q.marker).tocsr(), q.row_lo,
                     q.row_up)
        assert got == pytest.approx(want, abs=1e-7)


def test_a_marker_on_one_copy_only_splits_it_off():
    """A marker that breaks the symmetry (on one copy only) keeps that copy apart; a partition
    equitable for A but not for M is refused."""
    cost, clo, cup, a, rlo, rup = _lifted(5, 3, False)
    mark = sp.csr_matrix(([1.0], ([0], [0])), shape=a.shape)
    q = lq.equitable_quotient(a, cost, clo, cup, rlo, rup, marker=mark)
    plain = lq.equitable_quotient(a, cost, clo, cup, rlo, rup)
    assert q is None or q.a.shape[1] > plain.a.shape[1]
    with mock.patch.object(lq, "_refine", return_value=(plain.row_class, plain.col_class)):
        assert lq.equitable_quotient(a, cost, clo, cup, rlo, rup, marker=mark) is None
    with pytest.raises(ValueError, match="marker has shape"):
        lq.equitable_quotient(a, cost, clo, cup, rlo, rup, marker=mark[:1])
