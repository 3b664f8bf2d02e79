"""The single-owner Δ search, shared by the closed forms and the DuckDB buckets
(``single_owner.search_range`` / ``first_feasible``): its answers and the releases drawn from
them are pinned to the values the two copies gave before they became one (bit for bit)."""

from __future__ import annotations

import numpy as np
import pytest

from provsql_dp.mechanisms.recursive import buckets as bk
from provsql_dp.mechanisms.recursive import single_owner as so

SPREAD = np.linspace(0.5, 300, 57)


@pytest.mark.parametrize("c, theta, beta, want", [
    ([0.0, 1.0, 3.0, 2.0], 1.0, 0.5, (2, 2.718281828459045)),
    ([5.0, 5.0, 3.0, 40.0], 1.0, 0.2, (4, 2.225540928492468)),
    ([0.2, 0.4], 1.0, 0.5, (0, 1.0)),
    (SPREAD, 2.0, 0.1, (36, 73.19646888735598)),
    ([1e6, 3.0, 3.0, 7.5], 1.0, 1.0, (2, 7.38905609893065)),
])
def test_delta_is_pinned_on_both_paths(c, theta, beta, want):
    c = np.asarray(c, dtype=np.float64)
    assert so.delta(c, theta, beta) == want
    assert bk.delta_buckets(bk.Buckets.from_totals(c, theta, beta, 1.0), theta, beta) == want


@pytest.mark.parametrize("seed, want", [
    (0, (5028.8861083984375, 109.94717245212352)),
    (1, (8578.26025390625, 298.8674009670603)),
    (2, (8256.55419921875, 244.69193226422038)),
])
def test_releases_are_pinned_on_both_paths(seed, want):
    r = so.release(SPREAD, 1.0, "edge", np.random.default_rng(seed))
    rb = bk.release_buckets([bk.Buckets.from_totals(SPREAD, 1.0, 0.2, 0.5)], 1.0, "edge",
                            np.random.default_rng(seed))
    assert (r.value, r.delta_hat) == want == (rb.value, rb.delta_hat)
