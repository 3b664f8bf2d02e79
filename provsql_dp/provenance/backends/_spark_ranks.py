"""Participant dictionaries ranked inside Spark: the distinct keys of a domain get their dense
rank in sorted order — the ids the driver would give them (:mod:`..participants`) — without the
keys, or one Python object per participant, ever reaching the driver.

A global ``dense_rank() OVER (ORDER BY key)`` would run in a single partition, and
``zipWithIndex`` leaves the DataFrame API. Instead (:func:`rank_keys`):

1. the distinct keys are range-partitioned on the key and sorted within their partitions
   (``repartitionByRange`` + ``sortWithinPartitions``: partition ``p`` holds a contiguous run
   of the sorted keys, in order);
2. ``monotonically_increasing_id()`` numbers the rows of every partition in that order (its top
   bits are the partition, its low 33 bits the row's position inside it); the result is
   materialised once (``localCheckpoint``: the range boundaries come from a sample, so a
   recomputation could move them — a lost block fails the query instead of renumbering);
3. one small aggregate brings back a row count per partition (a few hundred numbers at most);
   their prefix sums are the partitions' offsets, and a key's id is its partition's offset plus
   its position — the rank of the key among all keys. The same aggregate counts NULL keys.

The view ``(__k0, …, __id)`` is what the capture query joins its participant slots to
(:func:`provsql_dp.provenance.capture.capture_sql`'s ``key_views``); ``__id`` is an INT when the
domain has fewer than 2^31 participants (half the bytes crossing back per slot), a BIGINT
beyond. Only integer and text keys are ranked here: they sort the same in Spark as in numpy and
DuckDB (numbers by value, text by code point); other key types (floats, dates, decimals) return
``None`` and the driver builds their dictionary as before.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RankedKeys", "rank_keys", "INT_IDS"]

#: a domain of at most this many participants has ids below 2^31: they cross back as INT
INT_IDS = 2**31
_LOW = (1 << 33) - 1  # monotonically_increasing_id(): the row's position inside its partition

_RANKABLE = ("ByteType", "ShortType", "IntegerType", "LongType", "StringType")


@dataclass(frozen=True)
class RankedKeys:
    """A domain's dictionary ranked in Spark: the temporary view ``(__k0, …, __id)``, the number
    of distinct keys, and whether a key was NULL (then ``view`` is not registered)."""

    view: str | None
    size: int
    nulls: bool


def rank_keys(spark, keys_sql: str, width: int, view: str) -> RankedKeys | None:
    """Rank the distinct keys ``__k0 … __k{width-1}`` that ``keys_sql`` (Spark SQL) returns and
    register them with their ids as the temporary view ``view``; ``None`` when a key column is
    neither an integer nor text (see the module docstring)."""
    from pyspark.sql import functions as F

    df = spark.sql(keys_sql)
    cols = [f"__k{j}" for j in range(width)]
    if any(type(df.schema[c].dataType).__name__ not in _RANKABLE for c in cols):
        return None
    null = " OR ".join(f"{c} IS NULL" for c in cols)
    ranked = (df.repartitionByRange(*cols).sortWithinPartitions(*cols)
              .select(*cols, F.monotonically_increasing_id().alias("__m"))
              .localCheckpoint(eager=True))
    stats = (ranked.groupBy(F.shiftright("__m", 33).alias("p"))
             .agg(F.count(F.lit(1)).alias("n"), F.max(F.expr(f"CAST({null} AS INT)")).alias("z"))
             .collect())  # one row per non-empty partition
    counts = {int(r["p"]): int(r["n"]) for r in stats}
    if any(r["z"] for r in stats):
        return RankedKeys(None, sum(counts.values()), True)
    size, offsets = 0, []
    for p in range(max(counts, default=-1) + 1):
        offsets.append(size)
        size += counts.get(p, 0)
    id_type = "INT" if size <= INT_IDS else "BIGINT"
    table = ", ".join(f"CAST({o} AS BIGINT)" for o in offsets) or "CAST(0 AS BIGINT)"
    ids = (f"CAST(element_at(array({table}), CAST(shiftright(__m, 33) AS INT) + 1) + (__m & {_LOW}) "
           f"AS {id_type}) AS __id")
    ranked.selectExpr(*cols, ids).createOrReplaceTempView(view)
    return RankedKeys(view, size, False)
