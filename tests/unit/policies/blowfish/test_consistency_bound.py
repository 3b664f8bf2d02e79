"""The ordered strategy's interval through its isotonic consistency (issue 13, gap (b)): the
lemma on random monotone truths and bounded noise, the plan itself under adversarial noise at the
quantile, and the bound's level (all draws at once at ≥ p, exact for the discrete law)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from conftest import breadth
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import isotonic_regression

from provsql_dp.mechanisms.noise.sources import tail_units
from provsql_dp.mechanisms.noise.safe_noise import plan_laplace
from provsql_dp.policies.blowfish import Policy
from provsql_dp.policies.blowfish._ops import SafeNoise
from provsql_dp.policies.blowfish.consistency import SimultaneousBound, per_draw_level
from provsql_dp.policies.blowfish.strategies import best_plan
from provsql_dp.policies.blowfish.workload import Prefix


@breadth(60, 300, steps=st.lists(st.integers(0, 50), min_size=1, max_size=40), a=st.floats(0, 100),
         u=st.lists(st.floats(-1, 1), min_size=40, max_size=40))
def test_isotonic_fit_and_clip_never_move_further_than_the_largest_draw_error(steps, a, u):
    c = np.cumsum(np.asarray(steps, dtype=float))  # a monotone truth in [0, n]
    n = float(c[-1]) + float(steps[0])
    y = c + a * np.asarray(u[: c.size])
    f = np.clip(isotonic_regression(y, increasing=True).x, 0.0, n)
    assert np.all(np.abs(f - c) <= a + 1e-9 * max(1.0, a, n))


class _Adversary(SafeNoise):
    """Draws on the plan's grid whose integer noise is chosen (any value within ±k units): the
    worst the bound must survive, not a random draw."""

    def __init__(self, pick, p):
        super().__init__(np.random.default_rng(0))
        self.pick, self.p = pick, p

    def release(self, values, sensitivity, epsilon, changed=None):
        v = np.asarray(values, dtype=float)
        plan = plan_laplace(sensitivity, epsilon,
                            changed=max(1, min(int(changed or v.size), max(1, v.size))))
        self.plans.append(plan)
        k = tail_units(plan.noise_units, per_draw_level(self.p, v.size))
        noise = np.array([math.floor(k * self.pick[i % len(self.pick)]) for i in range(v.size)])
        g = plan.grid
        return (np.floor(v / g) + noise) * g


@settings(max_examples=80, deadline=None)
@given(x=st.lists(st.integers(0, 40), min_size=3, max_size=20), eps=st.floats(0.05, 3.0),
       p=st.sampled_from([0.8, 0.9, 0.95, 0.99]),
       pick=st.lists(st.floats(-1, 1), min_size=1, max_size=20))
def test_ordered_release_stays_within_its_alpha_whenever_every_draw_is_within_its_quantile(
        x, eps, p, pick):
    k = len(x)
    pol = Policy.line(k)  # bounded: the ordered strategy applies to prefix counts
    plan = best_plan(Prefix(k), pol)
    assert plan.name == "ordered" and plan.simultaneous is not None
    adv = _Adversary(pick, p)
    vals = np.asarray(plan.run(np.asarray(x, float), None, eps, adv), dtype=float)
    truth = np.cumsum(x)
    alphas = plan.simultaneous.alphas(eps, p, plan=adv.plans[0])
    assert adv.plans[0] == plan.simultaneous.noise_plan(eps)  # ex ante = what was drawn
    assert np.all(np.abs(vals - truth) <= alphas + 1e-9 * max(1.0, truth[-1]))
    assert alphas[-1] == 0  # the total is public under a bounded policy


def test_all_draws_within_the_bound_at_once_with_probability_at_least_p():
    for m in (1, 2, 7, 100, 10_000):
        for p in (0.9, 0.95, 0.99):
            b = SimultaneousBound(np.ones(1), m, 1.0, 1)
            plan = b.noise_plan(0.5)
            a = b.draw_bound(plan, p)
            k = int(round(a / plan.grid)) - (1 if plan.grid < 1 else 0)  # slack: one grid step
            lam = float(plan.noise_units)
            q = math.exp(-1 / lam)
            inside = 1 - 2 * q ** (k + 1) / (1 + q)  # Pr[|K| ≤ k], exact
            assert inside ** m >= p - 1e-12
            # and not loose: one unit less would fail
            inside_less = 1 - 2 * q ** k / (1 + q)
            assert inside_less ** m < p


def test_epsilon_for_alpha_is_the_smallest_three_digit_epsilon_meeting_it():
    b = SimultaneousBound(np.array([1.0, 1.0, 2.0]), 3, 1.0, 1)
    for alpha in (0.5, 3.0, 40.0, 1000.0):
        eps = b.epsilon_for(alpha, 0.95)
        assert max(b.alphas(float(eps), 0.95)) <= alpha
        step = Fraction(10) ** (math.floor(math.log10(eps)) - 2)
        assert max(b.alphas(float(eps - step), 0.95)) > alpha


def test_accuracy_first_with_the_ordered_strategy_meets_its_honest_alpha():
    from provsql_dp.policies.blowfish import answer_with_accuracy, epsilon_for_accuracy

    x = np.arange(12) % 5
    eps, name = epsilon_for_accuracy(Prefix(12), Policy.line(12), alpha=10, beta=0.05,
                                     strategy="ordered")
    assert name == "ordered"
    ans = answer_with_accuracy(Prefix(12), x, Policy.line(12), alpha=10, beta=0.05,
                               strategy="ordered", rng=np.random.default_rng(3))
    assert ans.strategy == "ordered" and max(ans.alpha(0.05)) <= 10
