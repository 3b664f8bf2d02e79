"""``provsql-dp serve --engine spark`` refuses to start, saying what to install, when Spark
cannot run here; its options are checked before anything starts (the end-to-end runs on Spark:
tests/system/test_pgwire_spark.py)."""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("starlette")

from provsql_dp.interfaces.cli import main  # noqa: E402
from provsql_dp.interfaces.pgwire import spark_engine  # noqa: E402


def _serve(capsys, *args) -> str:
    with pytest.raises(SystemExit) as e:
        main(["serve", *args])
    assert e.value.code == 2
    return capsys.readouterr().err


def test_without_pyspark_serve_names_the_extra(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "pyspark", None)  # import pyspark raises ImportError
    err = _serve(capsys, str(tmp_path / "c.duckdb"), "--engine", "spark", "--pg-port", "-1")
    assert "--engine spark needs the spark extra (pyspark is not installed): " \
           "pip install 'provsql_dp[spark]'" in err
    assert not (tmp_path / "c.duckdb").exists()  # refused before anything was opened


def test_without_java_serve_says_so(monkeypatch, capsys, tmp_path):
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    monkeypatch.setattr(spark_engine.shutil, "which", lambda name: None)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    err = _serve(capsys, str(tmp_path / "c.duckdb"), "--engine", "spark")
    assert "needs a Java runtime (Java 17 or later)" in err


def test_spark_options_are_checked_first(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(spark_engine, "missing", lambda: None)
    monkeypatch.setattr(spark_engine, "start_session", lambda *a: pytest.fail("started Spark"))
    db = str(tmp_path / "c.duckdb")
    assert "--spark-conf takes KEY=VALUE, got 'spark.driver.memory'" in _serve(
        capsys, db, "--engine", "spark", "--spark-conf", "spark.driver.memory")
    assert "on --engine spark attach Spark tables" in _serve(capsys, db, "--engine", "spark",
                                                              "--example")
    assert not (tmp_path / "c.duckdb").exists()  # refused before the example filled the file
