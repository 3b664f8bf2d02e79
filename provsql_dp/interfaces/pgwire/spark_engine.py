"""``provsql-dp serve --engine spark``: the server owns one SparkSession and analysts reach the
Spark data only through it.

The DuckDB file stays the catalog of record — declarations, budgets, the ledger and the audit
log, exact under concurrency as on DuckDB — and the protected rows live in Spark, as Parquet
snapshots the curator attached (``ATTACH SPARK TABLE``, through the wire or the explorer's SQL
as a curator; :mod:`provsql_dp.interfaces.dbapi.engines`). At start the server builds its
session (``local[N]`` by default, N the machine's cores; ``--spark-master`` names a cluster,
``--spark-conf KEY=VALUE`` sets any Spark property) and reopens every table recorded in
``_provsql_dp.engine_tables``, saying which it could not read. Each connection of the server (a
wire session, an explorer request) reads them in a Spark session of its own
(``spark.newSession()``: the same SparkContext and executors, its own views and settings), so
concurrent releases run as concurrent Spark jobs, shared fairly (``spark.scheduler.mode=FAIR``)
— no lock; ``benchmarks/spark_server.py`` measures it.

Analysts never get a SparkSession, a path or a file function: their statements are checked by
the roles (:mod:`provsql_dp.privacy.roles`: the catalog schema that records the snapshot paths,
table functions and plain reads of an attached table are refused), the DuckDB instance runs with
its guard rails (no ``read_parquet``, no ``ATTACH``), and only the capture queries provsql_dp
writes reach Spark, naming attached tables only (:mod:`provsql_dp.provenance.backends.spark`).

>>> import argparse
>>> p = argparse.ArgumentParser(); add_arguments(p)
>>> a = p.parse_args(["--engine", "spark", "--spark-conf", "spark.driver.memory=2g"])
>>> a.engine, a.spark_master is None, spark_conf(a)["spark.driver.memory"]
('spark', True, '2g')
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

__all__ = ["add_arguments", "missing", "spark_conf", "start_session", "reopen_attached"]

#: the properties of the server's session unless --spark-conf says otherwise
DEFAULT_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.scheduler.mode": "FAIR",  # concurrent releases share the executors
    "spark.sql.shuffle.partitions": "8",
}


def add_arguments(serve) -> None:
    """``--engine``, ``--spark-master`` and ``--spark-conf`` on the ``serve`` sub-command."""
    serve.add_argument("--engine", choices=("duckdb", "spark"), default="duckdb",
                       help="where the protected rows are read: the database file itself (duckdb, "
                            "default) or Spark tables the curator attaches (ATTACH SPARK TABLE; "
                            "needs the spark extra); the file keeps budgets and the ledger")
    serve.add_argument("--spark-master", metavar="URL", default=None,
                       help="the Spark master of --engine spark (default local[N], N the cores)")
    serve.add_argument("--spark-conf", metavar="KEY=VALUE", action="append", default=[],
                       help="a Spark property of the server's session (repeatable), e.g. "
                            "spark.driver.memory=4g")


def spark_conf(args) -> dict:
    """The session's properties: :data:`DEFAULT_CONF` under the operator's ``--spark-conf``."""
    conf = dict(DEFAULT_CONF)
    for item in args.spark_conf:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--spark-conf takes KEY=VALUE, got {item!r}")
        conf[key.strip()] = value.strip()
    return conf


def missing() -> str | None:
    """Why ``--engine spark`` cannot start here (naming what to install), or None."""
    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as e:
        return (f"--engine spark needs the spark extra ({e.name} is not installed): "
                "pip install 'provsql_dp[spark]'")
    java_home = os.environ.get("JAVA_HOME")
    if not shutil.which("java") and not (java_home and Path(java_home, "bin", "java").exists()):
        return ("--engine spark needs a Java runtime (Java 17 or later): java is not on PATH "
                "and JAVA_HOME is unset")
    return None


def start_session(master: str | None, conf: dict):
    """The server's SparkSession (the caller stops it when the server ends)."""
    from pyspark.sql import SparkSession

    master = master or f"local[{os.cpu_count() or 1}]"
    builder = SparkSession.builder.master(master).appName("provsql_dp serve")
    for key, value in conf.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def reopen_attached(engine) -> tuple[list[str], dict[str, str]]:
    """Open every attached table once, on a curator connection of ``engine`` (the snapshots'
    paths are read, nothing is copied): the tables opened and, for each that could not be read,
    why. Later connections open them the same way."""
    con = engine.open("curator", "_serve")
    try:
        backend = con._engine
        gone = dict(getattr(backend, "_gone", {}))
        opened = [t for t in backend.tables if t not in gone]
        return opened, gone
    finally:
        con.close()


def report(engine, master: str) -> None:
    """Print what the server reads from Spark (stdout) and what it cannot (stderr)."""
    opened, gone = reopen_attached(engine)
    names = ", ".join(opened) if opened else "none yet: attach them as curator with ATTACH SPARK TABLE"
    print(f"provsql_dp on Spark ({master}): attached tables {names}", flush=True)
    for name, why in gone.items():
        print(f"warning: attached table {name} cannot be read: {why}", file=sys.stderr)
