"""Blowfish privacy for histogram and range workloads over one table (Haney et al., Liu et al., He et al.).

>>> import numpy as np
>>> from provsql_dp import blowfish as bf
>>> pol = bf.Policy.line(8)
>>> x = np.array([4, 0, 0, 3, 1, 0, 2, 5])
>>> ans = bf.answer(bf.Ranges(8, [0, 2], [7, 5]), x, pol, 0.5, rng=np.random.default_rng(1))
>>> ans.strategy
'laplace'
>>> float(ans.values[0])            # the all-ones query: the public total, exactly
15.0
"""

from ._engine import (
    Answer,
    answer,
    answer_with_accuracy,
    compare_strategies,
    epsilon_for_accuracy,
    expected_error,
)
from ._transform import incidence, policy_sensitivity, right_inverse
from .clustering import KMeansResult, kmeans
from .dynamic import Projection, project
from .policy import Policy
from .strategies import STRATEGIES
from .tradeoff import tradeoff
from .workload import (
    Histogram,
    Marginal,
    Matrix,
    Prefix,
    Ranges,
    Rects,
    Workload,
    as_workload,
    random_ranges,
    random_rects,
)

__all__ = ["Policy", "Workload", "Matrix", "Histogram", "Prefix", "Ranges", "Rects", "Marginal",
           "as_workload", "random_ranges", "random_rects", "STRATEGIES", "Answer", "answer",
           "answer_with_accuracy", "compare_strategies", "epsilon_for_accuracy", "expected_error",
           "incidence", "policy_sensitivity", "right_inverse", "Projection", "project", "tradeoff",
           "kmeans", "KMeansResult"]
