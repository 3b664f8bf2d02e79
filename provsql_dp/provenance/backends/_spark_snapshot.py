"""Snapshots of Spark tables: written once to Parquet when a curator attaches a table, checked
once, read again by every later connection (issue 30, "attach once").

A snapshot is a Parquet directory holding the table's rows and a stable ``rowid`` column (the
source's own ``rowid`` when it has one, else ``monotonically_increasing_id()`` assigned while the
rows are written). The catalog of record keeps its path and version
(:mod:`provsql_dp.interfaces.dbapi.engines`); a later ``connect(..., engine=spark)`` reads the
Parquet files — no copy, no key check, no recomputation of the row ids — and, unlike a
``localCheckpoint``, a snapshot survives the loss of an executor and is shared by every
connection and every process that can read its path (on a cluster: HDFS, S3, a shared disk).

The declared ``primary_key`` (no NULL, no duplicate) and ``CHECK`` expressions (no row for
which one is false; NULL passes, as in SQL) are checked on the written snapshot: one Spark
aggregate for the NULLs and CHECKs, one duplicate search (a dense integral key in Spark's
bitmaps, without shuffling every key; any other by ``GROUP BY`` key); a snapshot that fails is
removed and the attach refused.

**Delta tables** (``source="delta:/path"``, optionally ``version=``): Spark's own Delta reader
is a Maven package (``delta-spark``'s wheel holds only its Python API and fetches the jars at
start-up), so a Delta table is read without it: the ``deltalake`` package (delta-rs, a PyPI
wheel) resolves the table's log at the requested version (default: the latest) to its Parquet
files, which Spark reads (:func:`delta_frame`). Tables whose readers need more than the files —
deletion vectors, column mapping (reader protocol above 1 or reader features) — are refused.
The version read is recorded with the snapshot.

>>> snapshot_path("/data/ledger.duckdb", "Edge", 3)
'/data/ledger.duckdb.spark/edge/v3'
>>> snapshot_path(None, "edge", 1) is None
True
"""

from __future__ import annotations

import os
import shutil

import sqlglot

from ...errors import InterfaceError, NotSupportedError, OperationalError

__all__ = ["snapshot_path", "write_snapshot", "read_snapshot", "check_rows", "remove_local",
           "DELTA", "delta_frame"]

#: the prefix of a ``source`` naming a Delta table by its path: ``"delta:/data/events"``
DELTA = "delta:"


def snapshot_path(database: str | None, name: str, version: int) -> str | None:
    """Where the snapshot ``version`` of table ``name`` goes by default: beside the catalog's
    DuckDB file (None for an in-memory catalog: the connection then uses a scratch directory
    of its own, removed when it closes)."""
    if not database or database == ":memory:":
        return None
    return f"{database}.spark/{name.lower()}/v{int(version)}"


def write_snapshot(df, path: str) -> None:
    """Write ``df`` (a DataFrame with its ``rowid``) as the Parquet snapshot at ``path``."""
    if _local(path) and os.path.exists(_local(path)):
        raise InterfaceError(
            f"a snapshot already exists at {path}; attach under another path (snapshot=…) or "
            "remove it first")
    df.write.parquet(path)


def read_snapshot(spark, name: str, path: str, columns: list[str]):
    """The DataFrame of a recorded snapshot, its columns checked against the catalog's mirror."""
    try:
        df = spark.read.parquet(path)
    except Exception as e:  # pyspark's AnalysisException: the path is gone or unreadable
        raise OperationalError(
            f"the Spark snapshot of table {name} at {path} cannot be read ({type(e).__name__}); "
            f"a curator attaches the table again: con.attach({name!r}, source)") from None
    have = set(df.columns)
    lost = [c for c in [*columns, "rowid"] if c not in have]
    if lost:
        raise OperationalError(
            f"the Spark snapshot of table {name} at {path} has no column {lost[0]!r}; a curator "
            f"attaches the table again: con.attach({name!r}, source)")
    return df


def check_rows(df, name: str, primary_key=(), checks=()) -> None:
    """Refuse a snapshot whose rows break its declared key or CHECK expressions: one aggregate
    for the NULL keys and the CHECKs (and the key's range), then one duplicate search
    (:func:`_duplicates`)."""
    from pyspark.sql import functions as F

    aggs = []
    if primary_key:
        key = [F.col(c) for c in primary_key]
        null = key[0].isNull()
        for c in key[1:]:
            null = null | c.isNull()
        aggs.append(F.sum(F.when(null, 1).otherwise(0)).alias("null"))
        aggs += [F.count(F.lit(1)).alias("n"), F.min(key[0]).alias("lo"),
                 F.max(key[0]).alias("hi")]
    for j, text in enumerate(checks):
        aggs.append(F.sum(F.when(~F.expr(spark_check(text)), 1).otherwise(0)).alias(f"c{j}"))
    if not aggs:
        return
    bad = df.agg(*aggs).first()
    if primary_key and (bad["null"] or _duplicates(df, primary_key, bad)):
        raise InterfaceError(
            f"the primary key ({', '.join(primary_key)}) of {name} does not identify its rows in "
            "Spark (a duplicate or a NULL); attach it without primary_key")
    for j, text in enumerate(checks):
        if bad[f"c{j}"]:
            raise InterfaceError(
                f"CHECK ({text}) is false for some rows of {name} in Spark; attach it without "
                "that check, or correct the rows")


#: Spark's integral types, whose keys can be counted in bitmaps
_INTEGRAL = ("ByteType", "ShortType", "IntegerType", "LongType")
#: one bitmap of ``bitmap_construct_agg`` holds this many consecutive values (Spark's constant)
_BITMAP_VALUES = 32768


def _duplicates(df, primary_key, stats) -> bool:
    """Whether two rows of ``df`` share a (non-NULL) key; ``stats``: the row count ``n`` and
    the first key column's ``lo``, ``hi``.

    Exact both ways. A key of one integral column whose range is within a small multiple of
    the row count (the usual surrogate key) is counted in Spark's bitmaps: one bitmap per
    32,768 consecutive values, OR-ed partially per partition before the shuffle — a few KB
    per partition cross it, not every key — and the key is unique iff the bitmaps hold ``n``
    distinct values (4–5× faster at 10^7 rows: ``benchmarks/spark_bucket_pass_measured.md``).
    Any other key: ``GROUP BY key HAVING count(*) > 1 LIMIT 1`` (every key shuffled once)."""
    from pyspark.sql import functions as F

    n, lo, hi = stats["n"], stats["lo"], stats["hi"]
    field = df.schema[primary_key[0]].dataType.__class__.__name__
    if (len(primary_key) == 1 and field in _INTEGRAL and lo is not None
            and int(hi) - int(lo) <= 64 * int(n) + 16 * _BITMAP_VALUES):
        pos = F.col(primary_key[0]).cast("long") - F.lit(int(lo)) + F.lit(1)  # 1 … range
        distinct = (df.groupBy(F.bitmap_bucket_number(pos).alias("b"))
                    .agg(F.bitmap_construct_agg(F.bitmap_bit_position(pos)).alias("bm"))
                    .agg(F.sum(F.bitmap_count("bm"))).first()[0])
        return int(distinct or 0) != int(n)
    key = [F.col(c) for c in primary_key]
    return bool(df.where(F.col(primary_key[0]).isNotNull()).groupBy(*key).count()
                .where("count > 1").limit(1).collect())


def spark_check(text: str) -> str:
    """A CHECK expression (DuckDB's dialect, as the mirror declares it) in Spark's dialect;
    refused unless it is a plain expression over the row's columns.

    >>> spark_check("src < dst")
    'src < dst'
    """
    try:
        tree = sqlglot.parse_one(text, read="duckdb")
    except sqlglot.errors.ParseError as e:
        raise InterfaceError(f"CHECK ({text}) is not an expression: {e}") from None
    if isinstance(tree, (sqlglot.exp.Query, sqlglot.exp.Command)) or tree.find(sqlglot.exp.Query):
        raise InterfaceError(f"CHECK ({text}) must be an expression over the row's columns")
    return tree.sql(dialect="spark")


def remove_local(path: str) -> None:
    """Remove a snapshot directory on the local file system (a snapshot elsewhere is left)."""
    local = _local(path)
    if local and os.path.isdir(local):
        shutil.rmtree(local, ignore_errors=True)


def _local(path: str) -> str | None:
    if "://" not in path:
        return path
    return path[len("file://"):] if path.startswith("file://") else None


def delta_frame(spark, name: str, source: str, version: int | None):
    """``(DataFrame, version)``: the rows of the Delta table at ``source`` (``"delta:/path"``)
    as of ``version`` (default: the latest), read by Spark from the Parquet files that the
    table's log lists at that version (see the module docstring)."""
    path = source[len(DELTA):]
    try:
        from deltalake import DeltaTable
    except ImportError:
        raise InterfaceError(
            f"attaching {name} from a Delta table needs the deltalake package (pip install "
            "deltalake; Spark's own Delta reader is a Maven package this does not use)") from None
    try:
        table = DeltaTable(path, version=version)
    except Exception as e:  # noqa: BLE001 - deltalake's TableNotFoundError, bad version, …
        raise InterfaceError(f"cannot read the Delta table at {path}"
                             + ("" if version is None else f" at version {version}")
                             + f": {e}") from None
    proto = table.protocol()
    if proto.min_reader_version > 1 or proto.reader_features:
        raise NotSupportedError(
            f"the Delta table at {path} needs reader features ({proto.reader_features or 'reader version ' + str(proto.min_reader_version)}) "
            "that a read of its Parquet files would ignore; attach a copy without them")
    files = table.file_uris()
    schema = _spark_schema(table)
    if not files:
        return spark.createDataFrame([], schema), table.version()
    reader = spark.read.option("basePath", path)
    if schema is not None:
        reader = reader.schema(schema)
    return reader.parquet(*files), table.version()


def _spark_schema(table):
    """The table's schema in Spark's DDL (partition columns included), or None."""
    try:
        import pyarrow as pa
        from pyspark.sql.pandas.types import from_arrow_schema

        return from_arrow_schema(pa.schema(table.schema().to_arrow()))
    except Exception:  # noqa: BLE001 - an older deltalake or pyspark: let Spark infer it
        return None
