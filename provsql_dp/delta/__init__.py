"""δ-neighbourhood differential privacy for spatial and dynamic data (papers/004).
"""
from .policy import Policy, exact
from .spatial1d import CumulativeRelease, SortedRelease, cumulative, sorted_points
from .smooth_median import MedianRelease, median, smooth_sensitivity
from .histograms import (HistogramSeries, default_bin_width, equiwidth_histogram,
                         shifted_histograms)
from .allocation import (allocate_offline, allocate_online, bernoulli_future, equal_split,
                         kkt_residual, simulate_online, total_error, window_sums)
