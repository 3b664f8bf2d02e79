"""``benchmarks/r2t_tpch.py``: the authors' metric and figures as recorded, and a smoke run of one
query (tiny TPC-H from ``tpchgen-cli``, skipped where the ``bench`` extra is not installed)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # .ci/run's second step: pytest tests -m 'slow or spark'

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "r2t_tpch.py"


def _module():
    spec = importlib.util.spec_from_file_location("r2t_tpch", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_trimmed_mean_is_the_authors_metric():
    m = _module()
    # drop the 2 largest and 2 smallest of 10, average the 6 left
    assert m.trimmed_mean([100, 0, 1, 2, 3, 4, 5, 6, -50, 7]) == pytest.approx(3.5)
    assert m.trimmed_mean([1.0, 2.0, 3.0]) == pytest.approx(2.0)


def test_the_ten_queries_and_the_published_figures():
    m = _module()
    ten = ["Q3", "Q5", "Q7", "Q8", "Q10", "Q11", "Q12", "Q18", "Q20", "Q21"]
    assert list(m.QUERIES) == ten and set(m.PUBLISHED[1.0]) == set(ten)
    assert m.authors_error("Q3", 0.125) == pytest.approx((7555.178392997991 / 362146.0, True))
    est, published = m.authors_error("Q10", 0.125)
    assert not published and est == pytest.approx(2615.490131188417 / 1500000.0 * 8)


@pytest.mark.skipif(not (shutil.which("tpchgen-cli")
                         or Path(sys.executable).with_name("tpchgen-cli").exists()),
                    reason="tpchgen-cli (the bench extra) is not installed")
def test_smoke_run_of_one_query(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, str(SCRIPT), "--sf", "0.002", "--queries", "Q10",
                          "--mechanisms", "r2t", "--releases", "2", "--data", str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    (row,) = [line for line in out.stdout.splitlines() if line.startswith("Q10")]
    assert "failed" not in row
    assert row.split()[2] == "3,000.0"  # Q10 counts the orders: 1.5 M × 0.002
