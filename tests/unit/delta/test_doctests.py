"""Run the doctests of provsql_dp.delta (pytest's testpaths only cover tests/)."""

import doctest
import importlib

import pytest

MODULES = [
    "provsql_dp.delta",
    "provsql_dp.delta.policy",
    "provsql_dp.delta._overlap",
    "provsql_dp.delta.spatial1d",
    "provsql_dp.delta.smooth_median",
    "provsql_dp.delta.histograms",
    "provsql_dp.delta.allocation",
    "provsql_dp.delta.publisher",
    "provsql_dp.delta.ranges",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no doctest examples"
    assert result.failed == 0
