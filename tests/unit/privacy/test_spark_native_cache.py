"""The Spark pass's jar in the native cache is handed to the JVM (``SparkContext.addJar``, on
every executor's class path) only when it is the file its build wrote: a damaged or swapped jar
is refused before ``addJar``, with a message, and the SQL pass runs (red team h64native, the
twin of the DuckDB extension's check). No Spark needed: the context is a stub that records
what reached it."""

from __future__ import annotations

import types

import pytest

from provsql_dp.privacy import _spark_native
from provsql_dp.privacy.native import _build

pytest.importorskip("pyspark")


class _Context:
    applicationId, startTime = "app", 1

    def __init__(self):
        self.added = []
        self._jsc = types.SimpleNamespace(addJar=self.added.append)


def _method_with(tmp_path, monkeypatch, jar_bytes, checksum):
    monkeypatch.setenv("PROVSQL_DP_NATIVE_DIR", str(tmp_path))
    monkeypatch.setattr(_spark_native, "_loaded", {})
    jar = _spark_native.jar_path()
    jar.parent.mkdir(parents=True, exist_ok=True)
    jar.write_bytes(jar_bytes)
    if checksum is not None:
        _build.checksum_path(jar).write_text(checksum)
    sc = _Context()
    monkeypatch.setattr(_spark_native, "_load", lambda sc, jar: sc._jsc.addJar(str(jar)) or {})
    return _spark_native._method(types.SimpleNamespace(_sc=sc)), sc


def test_a_damaged_jar_never_reaches_the_executors(tmp_path, monkeypatch):
    import hashlib
    good = b"PK\x03\x04 a jar"
    with pytest.warns(RuntimeWarning) as seen:  # said as DuckDB's damaged build is
        method, sc = _method_with(tmp_path, monkeypatch, good[:-3],
                                  hashlib.sha256(good).hexdigest())
    assert method is None and sc.added == []
    assert "damaged" in " ".join(str(w.message) for w in seen)


def test_a_jar_without_its_checksum_is_refused(tmp_path, monkeypatch):
    with pytest.warns(RuntimeWarning):
        method, sc = _method_with(tmp_path, monkeypatch, b"PK\x03\x04 a jar", None)
    assert method is None and sc.added == []


def test_the_jar_its_build_recorded_is_loaded(tmp_path, monkeypatch):
    import hashlib
    jar = b"PK\x03\x04 a jar"
    method, sc = _method_with(tmp_path, monkeypatch, jar, hashlib.sha256(jar).hexdigest())
    assert method == {} and len(sc.added) == 1
