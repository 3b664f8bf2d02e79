"""eq. 20 through its merged dual (``_eq20_dual``): the same value as the plain primal model and
as an independent PuLP/CBC model, the same integer H next to the argmin, and the same release
quantities, on random small conjunctive K-relations (with twins, so quotients with
multiplicities and coefficients are exercised too)."""

from __future__ import annotations

import math

import numpy as np
import pulp
import pytest
from conftest import breadth
from hypothesis import strategies as st
from pulp_cbc import cbc_solver
from recursive_testkit import make_kr, random_kr
from test_recursive_symmetry import blown_up_triangles, symmetric_kr

from provsql_dp.mechanisms.recursive import _eq20_dual
from provsql_dp.mechanisms.recursive import _lp
from provsql_dp.mechanisms.recursive import efficient as rm


def close(a, b, tol=1e-6):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def pulp_eq20(kr, dh: float) -> float:
    """min over f ∈ [0,1]^P of Σ_t q_t φ_t(f) + Δ̂ Σ_p (1 − f_p) (one monomial per tuple)."""
    index = kr.participant_index
    n = kr.n_participants
    prob = pulp.LpProblem("eq20", pulp.LpMinimize)
    f = [prob.add_variable(f"f{p}", 0, 1) for p in range(n)]
    obj = []
    for t in range(kr.n_tuples):
        (mono,) = kr.annotation(t)
        phi = prob.add_variable(f"phi{t}", 0)
        prob += phi >= pulp.lpSum(f[index[p]] for p in mono) - len(mono) + 1
        obj.append(float(kr.weights[t]) * phi)
    prob += pulp.lpSum(obj) + dh * pulp.lpSum(1 - x for x in f)
    prob.solve(cbc_solver())
    assert pulp.LpStatus[prob.status] == "Optimal"
    return float(pulp.value(prob.objective) or 0.0)


def kr_of(kind: int, seed: int):
    rng = np.random.default_rng(seed)
    if kind == 0:
        return random_kr(rng, n=7, n_tuples=12, max_monos=1, max_size=3, integer_weights=True)
    if kind == 1:
        return symmetric_kr(seed, n=7, n_base=4, conjunctive=True)
    return blown_up_triangles(seed, n=7, p=0.6) or symmetric_kr(seed, conjunctive=True)


def solvers(kr, symmetry=True):
    plain = _lp.Solver(_lp.Structure(kr), symmetry=symmetry, cuts=False)
    dual = _lp.Solver(_lp.Structure(kr), symmetry=symmetry, cuts=False)
    return plain, dual


@breadth(8, 40, st.integers(0, 2), st.integers(0, 10_000), st.sampled_from([0.3, 1.0, 2.5, 6.0]),
         st.booleans())
def test_dual_eq20_equals_primal_and_pulp(kind, seed, dh, symmetry):
    kr = kr_of(kind, seed)
    stc = _lp.Structure(kr)
    if stc.n == 0:
        return
    plain = _lp.Solver(stc, symmetry=symmetry, cuts=False)
    v0, j0 = plain.x_real(dh)
    saved = _eq20_dual.DUAL_MIN
    try:
        _eq20_dual.DUAL_MIN = 0
        dual = _lp.Solver(_lp.Structure(kr), symmetry=symmetry, cuts=False)
        v1, j1 = dual.x_real(dh)
        used = dual._xmodel is not None and "dual" in dual._xmodel
        # the integer H next to the argmin, from the kept dual model
        for j in sorted({math.floor(j1), math.ceil(j1), math.floor(j1) + 1}):
            j = min(max(j, 0), stc.n)
            ref = _lp.Solver(_lp.Structure(kr), symmetry=False).h(j)
            assert close(dual.h_anchored(j, dh), ref), (kind, seed, dh, j)
    finally:
        _eq20_dual.DUAL_MIN = saved
    assert used or not (stc.deg > dh).any()
    assert close(v0, v1), (v0, v1)
    # eq. 20 over all of P: absent participants only add Δ̂ each if withdrawn, so never are
    assert close(v1, pulp_eq20(kr, dh)), (kind, seed, dh)
    assert 0 <= j1 <= stc.n + 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_release_quantities_unchanged_by_the_dual(seed, monkeypatch):
    kr = blown_up_triangles(seed, n=8, p=0.6) or symmetric_kr(seed, conjunctive=True)
    monkeypatch.setattr(_lp, "CUTS", False)  # the plain LPs: primal against merged dual
    ref = rm.explain(kr, 1.0, delta_hat=None)
    monkeypatch.setattr(_eq20_dual, "DUAL_MIN", 0)
    got = rm.explain(kr, 1.0, delta_hat=None)
    assert got.delta_j == ref.delta_j and close(got.x, ref.x) and got.x_index == ref.x_index
    for dh in (0.5 * ref.delta_hat, 2.0 * ref.delta_hat):
        assert close(rm.explain(kr, 1.0, delta_hat=dh).x, x_plain(kr, dh, monkeypatch))


def x_plain(kr, dh, monkeypatch):
    monkeypatch.setattr(_eq20_dual, "DUAL_MIN", 10**12)
    try:
        return rm.explain(kr, 1.0, delta_hat=dh).x
    finally:
        monkeypatch.setattr(_eq20_dual, "DUAL_MIN", 0)


def test_merging_keeps_distinct_rows_apart():
    # tuples {0,1,2} and {0,1,3} with only 0 and 1 candidates merge; {0,2,3} does not
    kr = make_kr([[[0, 1, 2]], [[0, 1, 3]], [[0, 2, 3]]], weights=[1.0, 2.0, 4.0])
    stc = _lp.Structure(kr)
    cand = np.zeros(stc.n, dtype=bool)
    cand[:2] = True
    m = _eq20_dual.DualEq20(stc, cand, 0.5)
    assert m.n_s == 2 and sorted(m.Q.tolist()) == [3.0, 4.0]
