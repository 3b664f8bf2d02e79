"""release_many: a participant who can move k coordinates costs one grid step more per extra
coordinate (each moved value can cross a grid line), so the loss bound c/λ stays ≤ ε exactly."""

import math
from fractions import Fraction

import numpy as np

from provsql_dp.mechanisms.global_sensitivity import laplace


def test_changed_coordinates_widen_the_index_sensitivity():
    one = laplace.release_many([1.5, 2.5, 3.5], sensitivity=3.0, epsilon=0.5)[0].plan
    three = laplace.release_many([1.5, 2.5, 3.5], sensitivity=3.0, epsilon=0.5, changed=3)[0].plan
    for plan, r in ((one, 1), (three, 3)):  # the grid depends on Δ/r too (plan_laplace)
        assert plan.index_sensitivity == math.ceil(Fraction(3.0) / Fraction(plan.grid)) + r - 1
    assert three.epsilon_spent <= Fraction(0.5) and three.changed == 3


def test_a_worst_neighbour_over_k_groups_stays_within_the_plan():
    """k groups each moved by b/k just past a grid line: the grid indices move by c ≤ the plan's."""
    k, b = 3, 1.0  # b/k is not a whole number of grid steps
    plan = laplace.release_many([0.0] * k, sensitivity=b, epsilon=1.0, changed=k)[0].plan
    g = plan.grid
    x = np.full(k, 10 * g - g / 8)                  # just below a grid line
    y = x + b / k                                    # each moves by b/k: ℓ1 = b
    moved = np.abs(np.floor(y / g) - np.floor(x / g)).sum()
    assert moved <= plan.index_sensitivity
    assert moved > math.ceil(b / g)                  # what changed = 1 would have allowed
    assert moved == plan.index_sensitivity
