"""Benchmarks cannot rot: every script under ``benchmarks/`` runs with ``--smoke`` and exits 0.

A smoke run takes the measured run's code paths at a tiny size, on the bundled example data or
generated data (``/work/shared/data`` is not on the CI machine), and writes its files to a
temporary directory (``benchmarks/_smoke.py``), never over the ``*_measured.md`` tables. Each case
runs in its own subprocess with a timeout. Peer libraries of the ``bench`` extra (smartnoise-sql,
OpenDP) and Spark are optional: the scripts run our side and say which peer is not installed.
``subgraph.py --fig4`` is smoke-run, with its table checked, by test_benchmark_subgraph_fig4.py.
"""

from __future__ import annotations

import ast
import doctest
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # .ci/run's second step: pytest tests -m 'slow or spark'

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "benchmarks"
TIMEOUT = 180  # seconds per case; each takes a few seconds on a loaded 2-core machine

CASES = [
    ("analyst_compile.py",),
    ("analyst_sql.py",),
    ("centred_avg.py",),
    ("engine_speed_ab.py",),
    ("engine_speed_ab.py", "--native"),  # the SQL bucket pass against pdp_buckets (if built)
    ("fixed_cost_parts.py",),
    ("sum_sql_variants.py",),
    ("backends.py",),
    ("bucket_pass_timing.py",),
    ("native_block_rows.py",),  # prints that it skipped without a C compiler
    ("native_bucket_pass_timing.py",),  # says so when pdp_buckets is not built
    ("native_small_beta.py",),  # likewise
    ("bucket_near_keys.py",),
    ("blowfish.py",),
    ("coverage.py",),
    ("delta.py",),
    ("error_estimate.py",),
    ("graph_count_columns.py",),
    ("group_l1.py",),
    ("interrupt.py",),
    ("kmeans.py",),
    ("ktriangle_lp.py",),
    ("ktriangle_lp.py", "--privacy", "node"),
    ("noise.py",),
    ("papers.py",),
    ("peers_tumult.py",),  # ours on Spark; Tumult skipped with a line (its own venv, optional)
    ("provenance.py",),
    ("r2t.py",),
    ("r2t_tpch.py",),
    ("recursive.py",),
    ("recursive_tpch_lean.py",),
    ("recursive_repeat_memory.py",),
    ("recursive_spread.py",),
    ("recursive_spread.py", "--compare"),
    ("semijoin_post.py",),
    ("server.py",),
    ("side_channel_timing.py",),
    ("single_table.py",),
    ("spark_bucket_pass.py",),  # prints that it skipped without pyspark or Java
    ("spark_scale.py",),  # likewise
    ("sql_leftovers.py",),
    ("spark_server.py",),  # likewise
    ("spark_lake.py",),  # likewise (and without pyiceberg)
    ("sum_release_draws.py",),
    ("subgraph.py",),
    ("subgraph.py", "--kstars"),
    ("subgraph.py", "--rhms"),
    ("subgraph.py", "--karwa-kt"),
    ("tpch.py",),
    ("wire_threads.py",),
]
#: modules of benchmarks/ that are not scripts: run through subgraph.py's mode flags above
#: (``--kstars``, ``--rhms``, ``--karwa-kt``; ``--fig4`` by test_benchmark_subgraph_fig4.py)
#: and every module whose name starts with "_" (the sections of analyst_sql.py and tpch.py)
LIBRARIES = {"subgraph_kstars.py", "subgraph_fig4.py", "_smoke.py"}


def _measured_tables() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in BENCH.glob("*_measured.md")}


@pytest.mark.parametrize("case", CASES, ids=lambda c: " ".join(c))
def test_benchmark_smoke_run_exits_zero(case, tmp_path):
    before = _measured_tables()
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp_path),
           "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, str(BENCH / case[0]), "--smoke", *case[1:]],
                          cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)
    assert proc.returncode == 0, (f"{' '.join(case)} --smoke exited {proc.returncode}\n"
                                  f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    assert proc.stdout.strip(), "a smoke run prints its tables"
    assert _measured_tables() == before, "a smoke run must not write the measured tables"
    assert not (tmp_path / "benchmarks").exists(), "files go to the smoke run's temporary dir"


def _is_script(path: Path) -> bool:
    tree = ast.parse(path.read_text())
    return any(isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)
               for node in tree.body)


def test_every_benchmark_script_has_a_smoke_case():
    # _*.py are libraries and sections (a section's own __main__ is a convenience: its code runs
    # in the smoke case of the script that imports it, e.g. analyst_sql.py)
    scripts = {p.name for p in BENCH.glob("*.py") if _is_script(p) and not p.name.startswith("_")}
    covered = {c[0] for c in CASES}
    assert scripts == covered, (f"scripts without a smoke case: {sorted(scripts - covered)}; "
                                f"cases without a script: {sorted(covered - scripts)}")
    libraries = LIBRARIES | {p.name for p in BENCH.glob("_*.py")}
    assert {p.name for p in BENCH.glob("*.py")} == scripts | libraries
    for name in scripts:
        assert "--smoke" in (BENCH / name).read_text(), f"{name} has no --smoke flag"


def test_smoke_helpers_doctest(monkeypatch, tmp_path):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.chdir(REPO)
    monkeypatch.syspath_prepend(str(BENCH))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    import _smoke

    _smoke.out_dir.cache_clear()
    _smoke.graphs_dir.cache_clear()
    failed, attempted = doctest.testmod(_smoke, optionflags=doctest.ELLIPSIS)[:2]
    assert attempted and not failed
