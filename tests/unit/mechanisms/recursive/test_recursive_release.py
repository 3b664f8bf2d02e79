"""The released object, parameters, signed sums, the general mechanism, and seeded statistics."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from recursive_testkit import make_kr, random_kr

from provsql_dp.mechanisms.recursive import general
from provsql_dp.mechanisms.recursive import efficient as rm
from provsql_dp.mechanisms.recursive.release import Release
from provsql_dp.mechanisms.noise.safe_noise import on_grid, plan_laplace

# two triangles sharing an edge plus a separate one (node privacy)
KR = make_kr(
    [[[0, 1, 2]], [[1, 2, 3]], [[4, 5, 6]], [[0, 4]], [[2, 5], [3, 6]]],
    [1.0, 1.0, 1.0, 2.0, 1.5],
    n_participants=8,
)


def test_release_holds_released_quantities_only():
    rel = rm.release(KR, epsilon=0.5, rng=np.random.default_rng(0))
    names = {f.name for f in dataclasses.fields(rel)}
    assert names == {"value", "epsilon", "delta_hat", "params", "mechanism", "parts"}
    assert rel.mechanism == "recursive" and rel.epsilon == pytest.approx(0.5)
    assert dict(rel.params) == {
        "theta": 1.0, "beta": 0.1, "mu": 1.0, "eps1": 0.25, "eps2": 0.25, "privacy": "node"
    }
    with pytest.raises(TypeError):
        rel.params["mu"] = 3  # read-only
    with pytest.raises(dataclasses.FrozenInstanceError):
        rel.value = 0.0


def test_privacy_picks_mu_and_parameters_are_explicit():
    rel = rm.release(KR, epsilon=1.0, privacy="edge", rng=np.random.default_rng(0))
    assert rel.params["mu"] == 0.5 and rel.params["beta"] == pytest.approx(0.2)
    rel = rm.release(
        KR, epsilon=1.0, privacy="edge", rng=np.random.default_rng(0),
        theta=2.0, beta=0.05, mu=0.7, eps1=0.3,
    )
    assert dict(rel.params) == pytest.approx(
        {"theta": 2.0, "beta": 0.05, "mu": 0.7, "eps1": 0.3, "eps2": 0.7, "privacy": "edge"}
    ) or rel.params["eps2"] == pytest.approx(0.7)
    with pytest.raises(ValueError):
        rm.release(KR, epsilon=1.0, eps1=0.4, eps2=0.4)
    with pytest.raises(ValueError):
        rm.release(KR, epsilon=-1.0)
    with pytest.raises(ValueError):
        rm.release(KR, epsilon=1.0, privacy="table")


def test_seeded_release_is_reproducible_and_default_is_os_entropy():
    a = rm.release(KR, 0.5, rng=np.random.default_rng(42))
    b = rm.release(KR, 0.5, rng=np.random.default_rng(42))
    assert a == b
    c = rm.release(KR, 0.5)
    d = rm.release(KR, 0.5)
    assert c.value != d.value


def test_release_reproduces_the_mechanism_steps():
    """Δ̂ = θe^{μ+βĵ} (ĵ = j + DLap(1/ε₁), i.e. e^{μ+Y}Δ with Y = βK₁) and X̂ = X + noise of
    scale Δ̂/ε₂ on the public grid of plan_laplace(Δ̂, ε₂), with X from eq. 12 at that Δ̂."""
    seed = 3
    rel = rm.release(KR, 0.8, rng=np.random.default_rng(seed))
    p = rel.params
    g = np.random.default_rng(seed)
    e = rm.explain(KR, 0.8)
    j_hat = plan_laplace(1, p["eps1"], integer=True).release(e.delta_j, rng=g)
    y = p["beta"] * (j_hat - e.delta_j)
    assert rel.delta_hat == pytest.approx(e.delta * math.exp(p["mu"] + y))
    x = rm.explain(KR, 0.8, delta_hat=rel.delta_hat).x
    plan = plan_laplace(rel.delta_hat, p["eps2"])
    assert rel.grid == plan.grid and on_grid(rel.value, plan.grid)
    assert rel.value == pytest.approx(plan.release(x, rng=g))


def test_noise_bound_formula():
    rel = rm.release(KR, 0.5, rng=np.random.default_rng(1))
    assert rel.noise_bound(0.95) == pytest.approx(rel.delta_hat / 0.25 * math.log(20))
    with pytest.raises(ValueError):
        rel.noise_bound(1.0)


def test_explain_reports_private_quantities():
    e = rm.explain(KR, 0.5)
    assert e.true_answer == pytest.approx(6.5)
    assert e.us_tilde == pytest.approx(3.5)  # participant 2 occurs in 1 + 1 + 1.5
    assert e.ls_tilde == pytest.approx(3.0)  # participant 0 kills 1 + 2; 2 alone kills only 2
    assert e.x <= e.true_answer + 1e-9 and e.truncation_bias >= -1e-9
    assert e.n_participants == 8 and e.n_occurring == 7
    assert e.g_values[8] == pytest.approx(7.0)  # G_|P| = 2 US̃
    bound, prob = e.accuracy
    assert bound > 0 and 0 < prob < 1


def test_signed_sum_splits_the_budget():
    kr = make_kr([[[0, 1]], [[1, 2]], [[2]], [[0]]], [3.0, -2.0, 1.0, -0.5], n_participants=3)
    rel = rm.release_signed(kr, epsilon=1.0, rng=np.random.default_rng(0))
    pos, neg = rel.parts
    assert rel.mechanism == "recursive-signed" and rel.epsilon == pytest.approx(1.0)
    assert pos.epsilon == pytest.approx(0.5) and neg.epsilon == pytest.approx(0.5)
    assert rel.value == pytest.approx(pos.value - neg.value)
    assert rel.noise_bound(0.9) == pytest.approx(pos.noise_bound(0.95) + neg.noise_bound(0.95))
    with pytest.raises(AttributeError):
        rel.noise_scale


def test_release_of_an_empty_relation():
    kr = make_kr([], [], n_participants=3)
    rel = rm.release(kr, 1.0, rng=np.random.default_rng(0))
    assert math.isfinite(rel.value)
    assert rm.explain(kr, 1.0).x == 0.0


def test_general_mechanism_sequences_and_release():
    people = list(range(4))

    def edges_within(world):  # a monotone query: pairs {a, a+1} present
        return float(sum(1 for a in range(3) if a in world and a + 1 in world))

    h, g = general.sequences(edges_within, people)
    assert h.tolist() == [0.0, 0.0, 0.0, 1.0, 3.0]
    assert g[-1] == 2.0  # participant 1 or 2 removes two pairs
    rel = general.release(edges_within, people, epsilon=1.0, rng=np.random.default_rng(0))
    assert isinstance(rel, Release) and rel.mechanism == "general"
    with pytest.raises(ValueError):
        general.sequences(lambda w: 1.0, people)  # not 0 on the empty world
    with pytest.raises(ValueError):
        general.sequences(lambda w: float(len(w) == 1), people)  # not monotone
    with pytest.raises(ValueError):
        general.sequences(lambda w: 0.0, list(range(general.MAX_PARTICIPANTS + 1)))


def _rate_floor(p, runs):
    return p - 3 * math.sqrt(p * (1 - p) / runs)


@pytest.mark.slow  # 4-10 s (a rate or brute-force check): CI's second step
def test_noise_bound_holds_at_its_rate():
    """|X̂ − X| ≤ noise_bound(p) in at least a fraction p of seeded runs (with sampling slack)."""
    runs, p = 300, 0.9
    hits = 0
    for seed in range(runs):
        rel = rm.release(KR, 0.5, rng=np.random.default_rng(seed))
        x = rm.explain(KR, 0.5, delta_hat=rel.delta_hat).x
        hits += abs(rel.value - x) <= rel.noise_bound(p)
    assert hits / runs >= _rate_floor(p, runs)


@pytest.mark.parametrize("privacy", ["node", "edge"])
@pytest.mark.slow  # 4-10 s (a rate or brute-force check): CI's second step
def test_theorem_1_accuracy_at_its_rate(privacy):
    kr = random_kr(np.random.default_rng(11), n=8, n_tuples=12, integer_weights=True)
    runs, c = 300, math.log(20)
    e = rm.explain(kr, 1.0, privacy, c=c)
    bound, prob = e.accuracy
    hits = sum(
        abs(rm.release(kr, 1.0, privacy, rng=np.random.default_rng(s)).value - e.true_answer)
        <= bound
        for s in range(runs)
    )
    assert hits / runs >= _rate_floor(prob, runs)
