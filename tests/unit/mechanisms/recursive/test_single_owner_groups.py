"""The single-owner release with one ℓ1 bound across groups (mechanisms/recursive/single_owner_groups).

The privacy argument (module docstring) rests on three facts, each checked here by brute force
over every neighbour (one participant removed) of small random databases and by hypothesis:

1. the index ``j`` of Δ is the scalar closed form's on the participants' norms, so it moves by
   at most one between neighbours (the scalar proof's hypothesis);
2. given Δ̂, removing a participant moves the scaled vector ``X`` by ``min(t_p, Δ̂) ≤ Δ̂`` in ℓ1;
3. on the public grid of the vector's plan, the grid indices ``⌊X/γ⌋`` move by at most the
   plan's index sensitivity in ℓ1 — the exact condition for the discrete Laplace noise of
   ``noise_units`` to be ε₂-DP.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from provsql_dp.mechanisms.recursive import single_owner as so
from provsql_dp.mechanisms.recursive import single_owner_groups as sg
from provsql_dp.mechanisms.recursive._framework import resolve_params


def _db(rng, n_owners, n_groups, signed=False):
    """Random (owner, group) rows: each owner in a random subset of the groups."""
    owner, group = [], []
    for p in range(n_owners):
        gs = rng.choice(n_groups, size=rng.integers(1, n_groups + 1), replace=False)
        owner += [p] * len(gs)
        group += gs.tolist()
    k = 2 if signed else 1
    vals = rng.exponential(rng.choice([1.0, 10.0, 100.0]), size=(len(owner), k))
    vals[rng.random(vals.shape) < 0.2] = 0.0
    return np.array(owner), np.array(group), vals


def _without(owner, group, vals, p):
    keep = owner != p
    return owner[keep], group[keep], vals[keep]


def _j(owner, vals, beta=0.2):
    t = sg.owner_norms(owner, vals)
    return so.delta(t, 1.0, beta)[0]


@pytest.mark.parametrize("seed", range(12))
def test_every_neighbour_moves_j_by_one_and_x_by_at_most_delta_hat(seed):
    rng = np.random.default_rng(seed)
    G = int(rng.integers(2, 6))
    owner, group, vals = _db(rng, int(rng.integers(2, 9)), G, signed=bool(seed % 2))
    j = _j(owner, vals)
    for delta_hat in (0.5, 3.0, 40.0, 1e4):
        x = sg.scaled_sums(owner, group, vals, G, delta_hat)
        t = sg.owner_norms(owner, vals)
        for p in np.unique(owner):
            o2, g2, v2 = _without(owner, group, vals, p)
            assert abs(_j(o2, v2) - j) <= 1
            moved = np.abs(x - sg.scaled_sums(o2, g2, v2, G, delta_hat)).sum()
            assert moved == pytest.approx(min(t[p], delta_hat), rel=1e-9, abs=1e-9)
            assert moved <= delta_hat * (1 + 1e-12)
            plan = sg.x_plan_groups(delta_hat, 0.5, G * vals.shape[1])
            idx = np.floor(x / plan.grid) - np.floor(sg.scaled_sums(o2, g2, v2, G, delta_hat)
                                                     / plan.grid)
            assert np.abs(idx).sum() <= plan.index_sensitivity


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3),
                          st.floats(0, 1e6, allow_nan=False, allow_infinity=False)),
                min_size=1, max_size=40),
       st.floats(1e-3, 1e6))
def test_property_the_scaled_vector_has_l1_sensitivity_delta_hat(rows, delta_hat):
    owner = np.array([r[0] for r in rows])
    group = np.array([r[1] for r in rows])
    vals = np.array([[r[2]] for r in rows])
    x = sg.scaled_sums(owner, group, vals, 4, delta_hat)
    truth = np.bincount(group, weights=vals[:, 0], minlength=4)
    assert np.all(x[:, 0] <= truth * (1 + 1e-12) + 1e-9)  # X ≤ the truth: one-sided intervals
    for p in set(owner.tolist()):
        o2, g2, v2 = _without(owner, group, vals, p)
        moved = np.abs(x - sg.scaled_sums(o2, g2, v2, 4, delta_hat)).sum()
        assert moved <= delta_hat * (1 + 1e-9) + 1e-9
        assert abs(_j(o2, v2) - _j(owner, vals)) <= 1


@pytest.mark.parametrize("seed", range(6))
def test_one_group_is_the_scalar_single_owner_release(seed):
    """G = 1: the same ĵ draw, the same Δ̂, X = Σ min(c, Δ̂) and the same noisy value."""
    rng = np.random.default_rng(100 + seed)
    c = rng.exponential(20.0, size=30)
    a = so.release(c, 1.0, "edge", np.random.default_rng(seed))
    (b,) = sg.release_groups(np.arange(30), np.zeros(30, dtype=int), c, 1, 1.0, "edge",
                             np.random.default_rng(seed))
    assert b.delta_hat == a.delta_hat and b.value == a.value and b.changed == 1


def test_rows_in_any_order_give_the_same_release():
    rng = np.random.default_rng(4)
    owner, group, vals = _db(rng, 20, 5)
    perm = rng.permutation(len(owner))
    a = sg.release_groups(owner, group, vals, 5, 1.0, rng=np.random.default_rng(1))
    t = sg.owner_norms(owner, vals)
    b = sg.release_rows(t[np.unique(owner)], group[perm], vals[perm], t[owner][perm], 5, 1.0,
                        rng=np.random.default_rng(1))
    assert [r.value for r in a] == pytest.approx([r.value for r in b], rel=1e-12)
    assert {r.delta_hat for r in a} == {r.delta_hat for r in b}


def test_signed_groups_share_one_norm_and_the_full_epsilon():
    owner = np.array([0, 0, 1, 2])
    group = np.array([0, 1, 1, 0])
    vals = np.array([[3.0, 0.0], [0.0, 2.0], [1.0, 1.0], [0.0, 4.0]])
    rels = sg.release_groups(owner, group, vals, 2, 1.0, rng=np.random.default_rng(0))
    for r in rels:
        assert r.mechanism == "recursive-signed" and r.epsilon == 1.0 and r.changed == 4
        pos, neg = r.parts
        assert r.value == pos.value - neg.value and pos.delta_hat == neg.delta_hat
        assert pos.plan.index_sensitivity == sg.x_plan_groups(r.delta_hat, 0.5, 4).index_sensitivity
    assert sg.owner_norms(owner, vals).tolist() == [5.0, 2.0, 4.0]


def test_the_noise_is_the_plans_for_every_group():
    """The noise of each coordinate has the vector plan's scale, ≈ Δ̂/ε₂ (not ε₂/G)."""
    owner = np.repeat(np.arange(200), 4)
    group = np.tile(np.arange(4), 200)
    vals = np.ones(800)
    rels = sg.release_groups(owner, group, vals, 4, 1.0, rng=np.random.default_rng(2))
    scale = rels[0].noise_scale
    assert scale == pytest.approx(rels[0].delta_hat / 0.5, rel=1e-3)
    assert all(r.noise_scale == scale for r in rels)


def test_no_rows_is_data_independent():
    rels = sg.release_groups([], [], np.zeros((0, 1)), 3, 1.0, rng=np.random.default_rng(0))
    params = resolve_params(1.0, "node")
    assert len(rels) == 3 and rels[0].delta_hat == pytest.approx(math.exp(params["mu"]) * math.exp(
        params["beta"] * round(math.log(rels[0].delta_hat / math.exp(params["mu"])) / params["beta"])))


def test_invalid_inputs_raise():
    with pytest.raises(ValueError, match="nonnegative"):
        sg.release_groups([0], [0], [-1.0], 1, 1.0)
    with pytest.raises(ValueError, match="group indices"):
        sg.release_groups([0], [3], [1.0], 2, 1.0)
    with pytest.raises(ValueError, match="too many changed coordinates"):
        sg.check_vector_plan(2.0 ** -36, 10 ** 6)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 2),
                          st.lists(st.floats(0, 1e4, allow_nan=False, allow_infinity=False),
                                   min_size=3, max_size=3)),
                min_size=1, max_size=30),
       st.floats(1e-3, 1e5))
def test_property_several_aggregates_share_one_l1_ball(rows, delta_hat):
    """K = 3 coordinates per group (a statement's aggregates, aggregates_l1): removing one
    participant moves the G·K vector by min(t_p, Δ̂) ≤ Δ̂ in ℓ1, and its grid indices by at most
    the index sensitivity of the plan over G·K coordinates."""
    owner = np.array([r[0] for r in rows])
    group = np.array([r[1] for r in rows])
    vals = np.array([r[2] for r in rows])
    x = sg.scaled_sums(owner, group, vals, 3, delta_hat)
    t = sg.owner_norms(owner, vals)
    plan = sg.x_plan_groups(delta_hat, 0.5, 9)
    for p in set(owner.tolist()):
        o2, g2, v2 = _without(owner, group, vals, p)
        y = sg.scaled_sums(o2, g2, v2, 3, delta_hat)
        moved = np.abs(x - y).sum()
        assert moved <= min(t[p], delta_hat) * (1 + 1e-9) + 1e-9
        idx = np.floor(x / plan.grid) - np.floor(y / plan.grid)
        assert np.abs(idx).sum() <= plan.index_sensitivity


def test_group_releases_split_the_vector_by_aggregate():
    """release_matrix's columns, read per aggregate (a signed one: positive minus negative),
    are release_rows' values on the same draws; every release carries the whole charge."""
    owner = np.array([0, 0, 1, 2])
    group = np.array([0, 1, 1, 0])
    vals = np.array([[3.0, 1.0, 0.0], [0.0, 2.0, 1.0], [1.0, 1.0, 1.0], [0.0, 4.0, 0.0]])
    t = sg.owner_norms(owner, vals)
    out = sg.release_matrix(t, group, vals, t[owner], 2, 1.0, "edge", np.random.default_rng(3))
    noisy, delta_hat, params, changed = out
    a, b = sg.group_releases(*out, [(0,), (1, 2)])
    assert changed == 6 and [r.changed for r in a + b] == [6] * 4
    assert [r.value for r in a] == noisy[:, 0].tolist()
    assert [r.value for r in b] == (noisy[:, 1] - noisy[:, 2]).tolist()
    assert {r.epsilon for r in a + b} == {1.0} and {r.delta_hat for r in a + b} == {delta_hat}
    assert b[0].mechanism == "recursive-signed" and b[0].parts[0].value == noisy[0, 1]
