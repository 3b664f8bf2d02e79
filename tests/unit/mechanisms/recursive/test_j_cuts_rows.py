"""The Δ cut model's rows for the certificates are the blocks added to HiGHS, kept beside it
(``JCuts._model_arrays``), not read back from HiGHS: they are pinned equal, array for array, to
HiGHS's own copy (``_model_arrays_highs``, which drops entries of magnitude ≤ small_matrix_value),
and a release is the same, value for value, under one seed."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from recursive_testkit import random_kr
from test_recursive_certify import random_triangles

from provsql_dp.mechanisms.recursive import _j_cuts
from provsql_dp.mechanisms.recursive import efficient as rm
from provsql_dp.mechanisms.recursive._lp import Solver
from provsql_dp.mechanisms.recursive._structure import Structure
from provsql_dp.provenance.krelation import KRelation


def _checked(monkeypatch, seen):
    ours = _j_cuts.JCuts._model_arrays

    def both(self):
        a, b = ours(self), self._model_arrays_highs()
        assert a.shape == b.shape
        assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
        assert np.array_equal(a.data, b.data)
        seen.append(a.shape[0])
        return a

    monkeypatch.setattr(_j_cuts.JCuts, "_model_arrays", both)


@settings(max_examples=30, deadline=None)
@given(seed=hs.integers(0, 2**32 - 1), tiny=hs.booleans())
def test_kept_rows_are_highs_rows(seed, tiny):
    from _pytest.monkeypatch import MonkeyPatch

    rng = np.random.default_rng(seed)
    kr = random_triangles(rng) if seed % 2 else random_kr(rng, n=7, n_tuples=12)
    if tiny:  # weights around HiGHS's small_matrix_value (1e-9): some cut entries dropped
        kr = KRelation(kr.columns, kr.values, kr.weights * 10.0 ** rng.integers(-11, 1, len(kr)),
                       kr.tuple_ptr, kr.mono_ptr, kr.mono_part, kr.participant_list)
    st = Structure(kr)
    top = float(st.deg.max())
    seen = []
    with MonkeyPatch.context() as mp:
        _checked(mp, seen)
        s = Solver(st)
        for frac in (0.9, 0.5, 0.2):
            s.j_cuts(frac * top)
            s.j_cuts(frac * top, True)


@pytest.mark.parametrize("seed", range(3))
def test_release_is_the_release_with_highs_rows(monkeypatch, seed):
    rng = np.random.default_rng(40 + seed)
    kr = random_triangles(rng, n=14, p=0.6)
    fast = rm.release(kr, 0.8, "node", np.random.default_rng(seed))
    monkeypatch.setattr(_j_cuts.JCuts, "_model_arrays", _j_cuts.JCuts._model_arrays_highs)
    kr2 = KRelation(kr.columns, kr.values, kr.weights.copy(), kr.tuple_ptr, kr.mono_ptr,
                    kr.mono_part, kr.participant_list)  # no cached structure
    slow = rm.release(kr2, 0.8, "node", np.random.default_rng(seed))
    assert (fast.value, fast.delta_hat) == (slow.value, slow.delta_hat)
