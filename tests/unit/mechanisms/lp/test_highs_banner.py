"""HiGHS prints nothing on standard output: highspy ≥ 1.16 prints a banner when a process makes its
first ``Highs``, before it can be silenced; ``provsql_dp.mechanisms.lp._highs`` makes that first one
with standard output pointed at /dev/null, so the shell's and the demo's output stay clean."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_solving_an_lp_prints_nothing_on_stdout():
    code = (
        "import numpy as np, highspy\n"
        "from provsql_dp.mechanisms.lp._highs import solve_lp\n"
        "print('before', flush=True)\n"
        "obj, x, _ = solve_lp(n_col=1, cost=np.array([1.0]), col_lower=np.array([2.0]),\n"
        "                     col_upper=np.array([5.0]), row_lower=np.zeros(0),\n"
        "                     row_upper=np.zeros(0), a_start=np.zeros(1, dtype=np.int32),\n"
        "                     a_index=np.zeros(0, dtype=np.int32), a_value=np.zeros(0))\n"
        "highspy.Highs()\n"
        "print('after', round(float(obj), 6))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "before\nafter 2.0\n"
