"""The README's ``pycon`` examples run as doctests (the DB-API section's pandas example)."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_doctests():
    pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    result = doctest.testfile(str(README), module_relative=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} README example(s) failed"
