"""Building and loading ``pdp_buckets``: the SQL pass when it is not built, and (slow) a build
from the sdist of the installed duckdb, checked against PyPI's sha256, that DuckDB loads."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

import provsql_dp
from provsql_dp.privacy import native
from provsql_dp.privacy.native import _build


def _release(con):
    con.execute("CREATE TABLE t(id INT PRIMARY KEY, x DOUBLE)")
    con.execute("INSERT INTO t SELECT range, (range * 37 % 101) - 20 FROM range(2000)")
    con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 10")
    con._rng = np.random.default_rng(5)
    return con.execute("SELECT SUM(x) FROM t WITH EPSILON 1").fetchone()[0]


def test_not_built_the_sql_pass_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("PROVSQL_DP_NATIVE_DIR", str(tmp_path / "empty"))
    assert native.built_path() is None
    con = provsql_dp.connect()
    assert con._native is False
    assert con._duck.execute("SELECT current_setting('allow_unsigned_extensions')").fetchone()[0] is False
    assert np.isfinite(_release(con))


def test_a_damaged_build_warns_and_runs_the_sql_pass(tmp_path, monkeypatch):
    monkeypatch.setenv("PROVSQL_DP_NATIVE_DIR", str(tmp_path))
    path = tmp_path / _build._key() / "pdp_buckets.duckdb_extension"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not an extension" * 64)
    with pytest.warns(RuntimeWarning, match="did not load|damaged"):
        con = provsql_dp.connect()
    assert con._native is False
    assert np.isfinite(_release(con))


@pytest.mark.slow
def test_build_from_the_sdist_loads_and_releases_what_the_sql_pass_does(tmp_path, monkeypatch):
    kept = _build.cache_dir() / f"duckdb-{duckdb.__version__}.tar.gz"
    monkeypatch.setenv("PROVSQL_DP_NATIVE_DIR", str(tmp_path))
    path = _build.build(sdist=kept if kept.is_file() else None)
    assert path == native.built_path() and path.read_bytes()[-288:-256].rstrip(b"\0") == b"4"
    con = provsql_dp.connect()
    assert con._native is True
    nat = _release(con)
    con = provsql_dp.connect()
    con._native = False
    assert _release(con) == nat


def test_the_cache_key_covers_every_part_of_the_source(tmp_path, monkeypatch):
    for part in _build.sources():
        (tmp_path / part.name).write_bytes(part.read_bytes())
    monkeypatch.setattr(_build, "SOURCE", tmp_path / _build.SOURCE.name)
    assert [p.name for p in _build.sources()] == [p.name for p in sorted(tmp_path.glob("pdp_*"))]
    assert {p.suffix for p in _build.sources()} == {".c", ".h"}
    keys = {_build._key()}
    for part in _build.sources():
        part.write_bytes(part.read_bytes() + b"\n")
        keys.add(_build._key())
    assert len(keys) == 1 + len(_build.sources())
