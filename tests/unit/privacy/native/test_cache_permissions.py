"""Red team h73attack, finding 3: the native cache is loaded only when nobody else can write it.

``pdp_buckets`` (DuckDB) and the Spark pass's jar are machine code run inside the process that
holds the protected data and the ledger, loaded by path from a cache under the user's home (or
``$PROVSQL_DP_NATIVE_DIR``). The recorded sha256 guards against damage only: another account
that can write the cache writes the checksum too. Before, a group- or world-writable cache (a
shared ``PROVSQL_DP_NATIVE_DIR``, a careless ``chmod -R 777``) or one owned by someone else was
loaded all the same; now the file, its checksum and every directory of the cache down to it
must be the process's user's (or root's) and writable by them only, and no file a symbolic
link — as ssh requires of its keys. Otherwise a warning and the SQL pass.
"""

from __future__ import annotations

import os
import shutil
import stat
import warnings

import numpy as np
import pytest

import provsql_dp
from provsql_dp.privacy import native
from provsql_dp.privacy.native import _build

PATH = native.built_path()
pytestmark = pytest.mark.skipif(PATH is None, reason="pdp_buckets not built (provsql-dp build-native)")


def _cache(tmp_path, monkeypatch):
    """A private copy of the built cache under ``tmp_path``: (cache dir, extension path)."""
    cache = tmp_path / "native"
    path = cache / _build._key() / _build._NAME
    path.parent.mkdir(parents=True)
    shutil.copyfile(PATH, path)
    shutil.copyfile(_build.checksum_path(PATH), _build.checksum_path(path))
    for p in (tmp_path, cache, path.parent):
        os.chmod(p, 0o755)
    for p in (path, _build.checksum_path(path)):
        os.chmod(p, 0o644)
    monkeypatch.setenv("PROVSQL_DP_NATIVE_DIR", str(cache))
    return cache, path


def _opened():
    """(native loaded, the warnings said, a release's value) of a fresh connection."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        con = provsql_dp.connect()
    con.execute("CREATE TABLE t(id INT PRIMARY KEY, x DOUBLE); "
                "INSERT INTO t SELECT range, range FROM range(50); PROTECT TABLE t; "
                "SET PRIVACY BUDGET 10")
    con._rng = np.random.default_rng(0)
    value = con.execute("SELECT SUM(x) FROM t WITH EPSILON 1").fetchone()[0]
    con.close()
    return con._native, " ".join(str(w.message) for w in seen), value


def test_a_private_cache_is_loaded(tmp_path, monkeypatch):
    _cache(tmp_path, monkeypatch)
    loaded, said, value = _opened()
    assert loaded is True and said == "" and np.isfinite(value)


@pytest.mark.parametrize("which", ["file", "checksum", "key directory", "cache directory"])
@pytest.mark.parametrize("mode", [0o020, 0o002])
def test_a_cache_others_can_write_is_not_loaded(tmp_path, monkeypatch, which, mode):
    cache, path = _cache(tmp_path, monkeypatch)
    target = {"file": path, "checksum": _build.checksum_path(path),
              "key directory": path.parent, "cache directory": cache}[which]
    os.chmod(target, os.stat(target).st_mode | mode)
    loaded, said, value = _opened()
    assert loaded is False and np.isfinite(value)  # the SQL pass answers
    assert f"{target} is writable by other users" in said and "chmod go-w" in said
    assert _build.verify(path) is not None


def test_a_symbolic_link_is_not_loaded(tmp_path, monkeypatch):
    cache, path = _cache(tmp_path, monkeypatch)
    real = tmp_path / "elsewhere.duckdb_extension"
    os.replace(path, real)
    os.symlink(real, path)
    loaded, said, _ = _opened()
    assert loaded is False and "is a symbolic link" in said


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="giving a file to another user needs root")
def test_a_file_owned_by_another_user_is_not_loaded(tmp_path, monkeypatch):
    cache, path = _cache(tmp_path, monkeypatch)
    os.chown(path, 65534, 65534)  # nobody
    loaded, said, _ = _opened()
    assert loaded is False and "is owned by user id 65534" in said


def test_the_spark_jar_is_checked_the_same_way(tmp_path, monkeypatch):
    """The jar shares :func:`_build.verify` (``privacy._spark_native``)."""
    cache, _ = _cache(tmp_path, monkeypatch)
    jar = cache / "bucket-pass-x.jar"
    jar.write_bytes(b"PK")
    _build.checksum_path(jar).write_text(__import__("hashlib").sha256(b"PK").hexdigest() + "\n")
    os.chmod(jar, 0o644)
    os.chmod(_build.checksum_path(jar), 0o644)
    assert _build.verify(jar) is None
    os.chmod(jar, 0o666)
    assert "writable by other users" in _build.verify(jar)


def test_cache_dirs_and_files_are_private_whatever_the_umask(tmp_path):
    """A build under umask 002 (every user their own group) must still be loadable: the
    directories and files it creates are written by this user only (_trust.cache_dirs,
    written), else build-native would refuse its own output."""
    from provsql_dp.privacy.native._trust import cache_dirs, untrusted, written

    top = tmp_path / "cache" / "native"
    lib = top / "duckdb-x" / "lib.so"
    old = os.umask(0o002)
    try:
        cache_dirs(lib, top)
        lib.write_bytes(b"x")
        written(lib)
    finally:
        os.umask(old)
    assert untrusted(lib, top) is None
    for d in (top, lib.parent):
        assert stat.S_IMODE(os.stat(d).st_mode) & 0o022 == 0
    assert stat.S_IMODE(os.stat(lib).st_mode) == 0o644
