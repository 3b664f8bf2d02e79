"""Every module's docstring examples run (numpydoc examples are part of the contract)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import provsql_dp

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(provsql_dp.__path__, prefix="provsql_dp.")
)


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} doctest example(s) failed in {name}"
