"""Shared test configuration: where the real data sets live.

The graphs and histograms of ``../shared/data`` (beside the repository) are large and not shipped;
tests that need them are skipped when they are absent. ``PROVSQL_DP_SHARED_DATA`` points
elsewhere. The ProvSQL conformance cases are small and vendored under ``tests/data``.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TEST_DATA = REPO / "tests" / "data"


def shared_data() -> Path:
    """The shared data directory (may not exist)."""
    env = os.environ.get("PROVSQL_DP_SHARED_DATA")
    if env:
        return Path(env)
    for candidate in (REPO.parent / "shared" / "data", Path("/work/shared/data")):
        if candidate.is_dir():
            return candidate
    return REPO.parent / "shared" / "data"
