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


def test_readme_quick_start_shows_the_demo_output_with_its_intervals():
    from provsql_dp.interfaces import demo
    from provsql_dp.privacy.intervals import shown

    text = README.read_text()
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    lines = demo.run(seed=2, out=None)
    header = next(line for line in lines if line.startswith("query"))
    assert header in quick  # the README shows the demo's current columns
    rows = [line for line in quick.splitlines() if line.startswith(("friendship", "employees",
                                                                    "total", "headcount"))]
    assert rows and any("≥ " in r for r in rows) and any("[" in r for r in rows)
    for line in rows:  # as the demo prints them: the interval column of privacy.intervals.shown
        cell = line[len(header) - 43: len(header) - 14].strip()
        assert cell.startswith(("≥ ", "[")), line
    assert shown((17.0, None)) == "≥ 17"
