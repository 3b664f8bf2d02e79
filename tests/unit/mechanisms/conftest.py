"""The mechanism tests' shared helpers (``pulp_cbc``, ``recursive_testkit``) live in this folder;
the tests of every family folder below import them by name, so this folder is put on the path."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
