"""pdp_buckets.c's table code under valgrind's memcheck: no invalid read or write, no leak, on
adversarial totals (NaN, ±inf, ±0, subnormals, 1e300, negatives) and tables grown many times,
then combined (slow: a compile and a valgrind run)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from provsql_dp.privacy.native import _build

HARNESS = Path(__file__).with_name("memcheck_harness.c")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None or shutil.which("cc") is None,
                    reason="valgrind or cc not installed")
def test_the_table_code_is_clean_under_memcheck(tmp_path):
    kept = _build.cache_dir() / f"duckdb-{duckdb.__version__}.tar.gz"  # an earlier build's
    inc = _build.headers(tmp_path / "include", kept if kept.is_file() else None)
    exe = tmp_path / "harness"
    subprocess.run(["cc", "-O2", "-g", "-ffp-contract=off", "-std=c11", "-I", str(inc), "-I",
                    str(_build.SOURCE.parent), "-o", str(exe), str(HARNESS), "-lm"], check=True)
    # natively first: the AVX-512 variant's block code (valgrind has no AVX-512, and its CPUID
    # hides it, so under valgrind the harness checks the three others)
    native = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
    assert native.returncode == 0, native.stdout[-3000:]
    flags = set(Path("/proc/cpuinfo").read_text().split()) if Path("/proc/cpuinfo").is_file() else set()
    if {"avx512f", "avx512dq", "avx512vl"} <= flags:
        assert native.stdout.count("4 variants") == 2, native.stdout
    run = subprocess.run(["valgrind", "--error-exitcode=3", "--leak-check=full", str(exe)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "ERROR SUMMARY: 0 errors" in run.stderr
    assert run.stdout.count("buckets") == 3
    assert run.stdout.count("block code = per-row code") == 2  # the direct path's specs
