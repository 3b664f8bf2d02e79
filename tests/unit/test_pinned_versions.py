"""The dependency versions we trust: constraints.txt pins duckdb and sqlglot (the total-evaluation
rewrite and the analyst compiler rely on their exact behaviour), the Quick start and .ci/run
install with it, and the suite runs on exactly those versions."""

from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, ver = line.split("==", 1)
            pins[name.strip().lower()] = ver.strip()
    return pins


def test_duckdb_and_sqlglot_are_pinned_and_installed():
    pins = _pins()
    for name in ("duckdb", "sqlglot", "highspy", "numpy"):
        assert name in pins, f"constraints.txt must pin {name}"
    assert version("duckdb") == pins["duckdb"], "run the suite on the pinned duckdb (pip install -c constraints.txt)"
    assert version("sqlglot") == pins["sqlglot"], "run the suite on the pinned sqlglot (pip install -c constraints.txt)"


def test_quick_start_and_ci_install_with_the_constraints():
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("```", 2)[1]
    installs = [ln for ln in quick.splitlines() if "pip install" in ln]
    assert len(installs) == 2 and all("-c constraints.txt" in ln for ln in installs)
    ci = (ROOT / ".ci" / "run").read_text()
    assert "-c constraints.txt" in ci
