"""``Structure.phi``/``loads`` on the one-monomial-of-k-entries layout (row sums, no ``reduceat``
nor gather; ``q·coef`` built once) give bit-identical values to the general formulas, on
structures, their quotients and load views; and a release with the layout is the release without
it, value for value, under one seed."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from recursive_testkit import random_kr
from test_structure_fast_path import _kr

from provsql_dp.mechanisms.recursive import _structure
from provsql_dp.mechanisms.recursive import efficient as rm


def _phi_general(s, g):
    v = np.bincount(s.ent_mono, weights=g[s.ent_part] * s.ent_coef, minlength=s.n_mono)
    val = np.maximum(0.0, 1.0 - v)
    return np.maximum.reduceat(val, s.tuple_mono_ptr[:-1]) if s.n_tuples else val


def _loads_general(s, g):
    ph = _phi_general(s, g)
    return np.bincount(s.var_part, weights=s.q[s.var_tuple] * s.var_coef * ph[s.var_tuple],
                       minlength=s.n)


def _views(kr):
    st0 = _structure.Structure(kr)
    return [st0, st0.load_view(), _structure.reduced(st0, True)]


@settings(max_examples=120, deadline=None)
@given(st.integers(1, 4), st.integers(1, 30), st.integers(0, 2**32 - 1), st.booleans())
def test_fixed_layout_bit_identical(k, m, seed, general):
    rng = np.random.default_rng(seed)
    if general:  # disjunctions, empty and shared monomials: the general formulas themselves
        kr = random_kr(rng, n=6, n_tuples=m, max_monos=3, max_size=3)
    else:
        n = k + int(rng.integers(0, 6))
        rows = np.array([rng.choice(n, size=k, replace=False) for _ in range(m)])
        kr = _kr(rows, rng.integers(1, 9, size=m).astype(float) * rng.random(m), n)
    for s in _views(kr):
        for _ in range(4):
            g = np.round(rng.random(s.n) * rng.integers(1, 7)) / 6 if rng.random() < 0.5 \
                else rng.random(s.n)
            assert np.array_equal(s.phi(g), _phi_general(s, g))
            assert np.array_equal(s.loads(g), _loads_general(s, g))


def test_the_layout_is_found_on_fixed_arity_relations():
    rows = np.array([[0, 1], [1, 2], [0, 2], [2, 3]])
    st0 = _structure.Structure(_kr(rows, np.array([1.0, 2.0, 3.0, 4.0]), 5))
    assert st0._layout()[0] == 2
    mixed = random_kr(np.random.default_rng(0), n=5, n_tuples=6, max_monos=2)
    assert _structure.Structure(mixed)._layout()[0] in (0, 1, 2, 3)  # whatever fits, still exact


@pytest.mark.parametrize("k", [2, 3])
def test_release_equals_the_general_formulas_release(monkeypatch, k):
    rng = np.random.default_rng(5)
    n, m = 40, 400
    rows = np.array([rng.choice(n, size=k, replace=False) for _ in range(m)])
    kr = _kr(rows, rng.integers(1, 20, size=m).astype(float), n)
    fast = [rm.release(kr, 0.8, "node", np.random.default_rng(s)) for s in range(3)]

    def general_layout(self):
        return 0, self.q[self.var_tuple] * self.var_coef

    monkeypatch.setattr(_structure.Structure, "_layout", general_layout)
    kr2 = _kr(rows, kr.weights.copy(), n)  # a fresh relation: no structure cached
    slow = [rm.release(kr2, 0.8, "node", np.random.default_rng(s)) for s in range(3)]
    assert [(r.value, r.delta_hat) for r in fast] == [(r.value, r.delta_hat) for r in slow]
