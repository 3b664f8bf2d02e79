"""A damaged file in the native cache never takes the process down: an extension truncated
inside its code but with DuckDB's footer intact (the footer check passes) made ``dlopen`` map
past the end of the file, and the process died of SIGBUS before any warning (red-team finding
h64native-1). The build now records the file's sha256 beside it, and a connection loads the file
only when it matches: otherwise a warning and the SQL pass.

These tests need the built extension (``provsql-dp build-native``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from provsql_dp.privacy import native
from provsql_dp.privacy.native import _build

PATH = native.built_path()
pytestmark = pytest.mark.skipif(PATH is None, reason="pdp_buckets not built (provsql-dp build-native)")

_OPEN = ("import warnings, provsql_dp\n"
         "with warnings.catch_warnings(record=True) as w:\n"
         "    warnings.simplefilter('always')\n"
         "    con = provsql_dp.connect()\n"
         "print(con._native, any('did not load' in str(x.message) or 'damaged' in str(x.message)"
         " for x in w))\n")


def _open_with(cache, blob, sidecar=True):
    path = cache / _build._key() / _build._NAME
    path.parent.mkdir(parents=True)
    path.write_bytes(blob)
    good = _build.checksum_path(PATH) if hasattr(_build, "checksum_path") else None
    if sidecar and good is not None and good.is_file():
        _build.checksum_path(path).write_bytes(good.read_bytes())
    done = subprocess.run([sys.executable, "-c", _OPEN], capture_output=True, text=True,
                          env=dict(os.environ, PROVSQL_DP_NATIVE_DIR=str(cache)), timeout=120)
    return done.returncode, done.stdout.split()


def test_a_build_truncated_inside_its_code_warns_and_runs_the_sql_pass(tmp_path):
    data = PATH.read_bytes()
    code, out = _open_with(tmp_path, data[:4096] + data[-534:])  # the footer kept
    assert code == 0, f"the process died (signal {-code})"
    assert out == ["False", "True"]


def test_a_file_without_its_recorded_checksum_is_not_loaded(tmp_path):
    code, out = _open_with(tmp_path, PATH.read_bytes(), sidecar=False)
    assert code == 0 and out == ["False", "True"]
    assert native.built_path() is not None  # still the one the environment points at


def test_the_build_records_the_checksum_it_loads_by():
    assert _build.verify(PATH) is None
