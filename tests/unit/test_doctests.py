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
    """Whitespace counts: an example's spacing is what it documents (NORMALIZE_WHITESPACE let
    shell.formatting's table show a right-aligned header the code never drew)."""
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} doctest example(s) failed in {name}"
