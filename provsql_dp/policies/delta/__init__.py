"""δ-neighbourhood differential privacy for spatial and dynamic data (Fang & Chang).

Spatial (one or two numeric columns): :class:`Policy` (δ, box, metric, sources — a Blowfish
policy once discretised), the cumulative strategy C_{n,δ} and sorted points in 1-D, the median
(global δ-sensitivity by default; smooth sensitivity on request), the series of shifted
equi-width histograms in 2-D, :func:`range_count`. Dynamic data: :class:`Publisher` (Theorem 2
enforced in the database), offline and online budget allocation. Every release draws exact
discrete Laplace noise on a public grid (:mod:`provsql_dp.mechanisms.noise.safe_noise`), except the
opt-in smooth-sensitivity median (``median(..., noise="smooth_laplace", dp_delta=δ′)``, exact and (ε, δ′)-DP, or the continuous ``noise="cauchy"`` for experiments; see its module).

>>> import numpy as np
>>> from provsql_dp import delta
>>> delta.Policy(0.05).blowfish(100)
Policy(threshold, shape=(100,), theta=5, bounded)
>>> e = delta.allocate_offline([1, 1, 0, 1], delta=2, epsilon=1.0)
>>> [round(float(v), 3) for v in e]
[0.5, 0.5, 0.0, 1.0]
"""

from .allocation import (
    allocate_offline,
    allocate_online,
    bernoulli_future,
    equal_split,
    kkt_residual,
    simulate_online,
    total_error,
    window_sums,
)
from .histograms import (
    HistogramSeries,
    default_bin_width,
    equiwidth_histogram,
    shifted_histograms,
)
from .policy import Policy, exact
from .publisher import Publisher, Release
from .ranges import RangeAnswer, range_count
from .smooth_median import MedianRelease, median, smooth_sensitivity
from .spatial1d import CumulativeRelease, SortedRelease, cumulative, sorted_points

__all__ = ["Policy", "exact", "CumulativeRelease", "SortedRelease", "cumulative", "sorted_points",
           "MedianRelease", "median", "smooth_sensitivity", "HistogramSeries",
           "default_bin_width", "equiwidth_histogram", "shifted_histograms", "allocate_offline",
           "allocate_online", "bernoulli_future", "equal_split", "kkt_residual",
           "simulate_online", "total_error", "window_sums", "Publisher", "Release",
           "RangeAnswer", "range_count"]
