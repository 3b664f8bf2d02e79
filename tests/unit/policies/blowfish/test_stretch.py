"""The stretch ℓ a tree claims is the exact one (over-claiming wastes budget, under-claiming
breaks privacy): regression for the source path tree of Gᶿₖ with θ ≥ k."""

import numpy as np
import pytest

from provsql_dp.policies import blowfish as bf
from provsql_dp.policies.blowfish._transform import (
    candidate_trees,
    line_tree,
    source_path_tree,
    stretch,
)


def test_hypothesis_counterexample():
    pol = bf.Policy.threshold(2, 2, bounded=False, sources=[0])
    t = source_path_tree(pol)
    assert t.ell == stretch(pol, t) == 1


@pytest.mark.parametrize("k", range(2, 8))
def test_source_path_tree_stretch_is_exact_for_every_small_policy(k):
    for theta in range(1, k + 3):
        for src in ([0], [k - 1], [k // 2], [0, k - 1], list(range(k))):
            pol = bf.Policy.threshold(k, theta, bounded=False, sources=src)
            for t in candidate_trees(pol):
                assert t.ell == stretch(pol, t), (k, theta, src, t.name)


@pytest.mark.parametrize("k", range(3, 9))
def test_bounded_path_stretch_is_exact(k):
    for theta in range(2, k + 2):
        pol = bf.Policy.threshold(k, theta)
        t = line_tree(pol)
        assert t.ell == stretch(pol, t)
