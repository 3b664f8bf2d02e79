"""Run the doctests of provsql_dp.graph (pytest's testpaths only cover tests/)."""

import doctest
import importlib

import pytest

MODULES = [
    "provsql_dp.graph",
    "provsql_dp.graph.patterns",
    "provsql_dp.graph._symmetry",
    "provsql_dp.graph._compile",
    "provsql_dp.graph._relation",
    "provsql_dp.graph.load",
    "provsql_dp.graph.baselines",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no doctest examples"
    assert result.failed == 0
