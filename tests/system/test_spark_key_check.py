"""The primary-key check of a Spark attach (:func:`provsql_dp.provenance.backends._spark_snapshot.
check_rows`): exact on both of its paths — Spark's bitmaps for a dense integral key, a
``GROUP BY key HAVING count(*) > 1`` for any other key — against a brute-force count in Python."""

from __future__ import annotations

import numpy as np
import pytest

from provsql_dp.errors import InterfaceError
from provsql_dp.provenance.backends import _spark_snapshot as snap

pytestmark = pytest.mark.spark


def _frame(spark, keys, extra=None):
    import pyarrow as pa

    cols = {"id": pa.array(keys, type=pa.int64())}
    if extra is not None:
        cols["k2"] = pa.array(extra, type=pa.string())
    table = pa.table(cols)
    try:
        return spark.createDataFrame(table)
    except (TypeError, ValueError):
        return spark.createDataFrame(table.to_pandas())


def _refused(df, key):
    try:
        snap.check_rows(df, "t", tuple(key))
    except InterfaceError as e:
        assert "does not identify its rows" in str(e)
        return True
    return False


def test_random_keys_match_a_brute_force_count(spark, monkeypatch):
    """Random keys — dense and sparse, negative, with and without a duplicate — are refused
    exactly when Python's set finds a duplicate, on the path the key's range selects; the
    bitmap path is taken for the dense ones (spied)."""
    used = []
    rng = np.random.default_rng(5)
    cases = []
    for spread in (1, 3, 10**12):  # dense, dense with gaps, sparse (the GROUP BY path)
        base = rng.integers(-50_000, 50_000)
        keys = (base + spread * rng.permutation(2_000)).tolist()
        cases.append(keys)
        cases.append(keys + [keys[int(rng.integers(len(keys)))]])  # one duplicate
    cases.append([-(2**63), 2**63 - 1, 0])  # the extremes: the range overflows 64 bits
    cases.append([-(2**63), 2**63 - 1, 2**63 - 1])
    import pyspark.sql.functions as F

    spy = F.bitmap_construct_agg

    def counted(*a, **k):
        used.append(1)
        return spy(*a, **k)

    monkeypatch.setattr(F, "bitmap_construct_agg", counted)
    for keys in cases:
        assert _refused(_frame(spark, keys), ["id"]) == (len(set(keys)) < len(keys)), keys[:3]
    assert len(used) == 4  # the four dense cases


def test_null_key_and_composite_keys(spark):
    """A NULL key is refused; a key of two columns (one a string) is checked by GROUP BY."""
    assert _refused(_frame(spark, [1, None, 2]), ["id"])
    assert not _refused(_frame(spark, [1, 1, 2], ["a", "b", "a"]), ["id", "k2"])
    assert _refused(_frame(spark, [1, 1, 2], ["a", "a", "b"]), ["id", "k2"])
    assert not _refused(_frame(spark, [], None), ["id"])  # no rows
