"""The fixed-arity fast path of ``Structure`` (one monomial of ``k`` distinct participants per
tuple, built without the general path's masks and pair deduplication) gives exactly the arrays of
the general path, including unsorted monomials, absent participants and duplicate tuples."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import breadth
from hypothesis import strategies as st

from provsql_dp.mechanisms.recursive import _structure
from provsql_dp.provenance.krelation import KRelation

FIELDS = ("q", "mono_tuple", "mono_ptr", "ent_part", "ent_mono", "tuple_mono_ptr", "var_tuple",
          "var_part", "deg", "order", "occurring", "mult", "ent_coef", "var_coef")


def _kr(rows: np.ndarray, weights: np.ndarray, n_total: int) -> KRelation:
    m, k = rows.shape
    return KRelation(
        columns=(), values=(), weights=weights, tuple_ptr=np.arange(m + 1),
        mono_ptr=np.arange(m + 1) * k, mono_part=rows.ravel().astype(np.int64),
        participant_list=tuple(("p", i) for i in range(n_total)),
    )


def _general(kr) -> _structure.Structure:
    st = _structure.Structure.__new__(_structure.Structure)
    st._fixed_arity = lambda *a: False
    _structure.Structure.__init__(st, kr)
    return st


@breadth(30, 150, st.integers(1, 4), st.integers(1, 25), st.integers(0, 3),
         st.integers(0, 2**32 - 1), st.booleans())
def test_fast_path_equals_general_path(k, m, extra, seed, unit):
    rng = np.random.default_rng(seed)
    n = k + int(rng.integers(0, 6))
    rows = np.array([rng.choice(n, size=k, replace=False) for _ in range(m)]).reshape(m, k)
    w = np.ones(m) if unit else rng.choice([0.5, 1.0, 3.0], size=m)
    kr = _kr(rows, w, n + extra)
    fast = _structure.Structure(kr)
    slow = _general(kr)
    assert hasattr(fast, "deg") and fast.n == slow.n and fast.n_absent == slow.n_absent
    assert fast.n_tuples == slow.n_tuples and fast.const_true == slow.const_true == 0.0
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_sorted_rows_network(k):
    mat = np.random.default_rng(k).integers(0, 9, size=(200, k))
    np.testing.assert_array_equal(_structure._sorted_rows(mat), np.sort(mat, axis=1))


def test_other_inputs_take_the_general_path():
    # a zero weight, a repeated participant and two monomials all fall back (no attribute set)
    for rows, w in ((np.array([[0, 1], [1, 2]]), np.array([1.0, 0.0])),
                    (np.array([[0, 0], [1, 2]]), np.array([1.0, 1.0]))):
        kr = _kr(rows, w, 3)
        st = _structure.Structure.__new__(_structure.Structure)
        assert not st._fixed_arity(kr, w, np.asarray(kr.tuple_ptr), np.asarray(kr.mono_ptr),
                                   np.asarray(kr.mono_part))
        assert not hasattr(st, "q")
