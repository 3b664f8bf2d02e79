"""The native pass's answer never needs one allocation as large as all its bucket rows: it came
back as one BLOB (72 bytes a bucket) that DuckDB allocated as one block under
``memory_limit`` (rounded up to a power of two), so a pass with many buckets failed where the
SQL pass, which streams and spills, succeeded — whether it failed depended on the number of
distinct totals, which the data decides (red-team finding h64native-2: 5·10^6 rows of distinct
totals at β = 1e-6 under memory_limit = 500MB failed natively, released through the SQL pass).
It now comes back as a list of BLOBs of at most 64 KiB each.

Needs the built extension (``provsql-dp build-native``)."""

from __future__ import annotations

import numpy as np
import pytest

from provsql_dp.privacy import native

from provsql_dp.provenance.clamp import clamp_sql
from test_pdp_buckets import PATH, _passes

pytestmark = pytest.mark.skipif(PATH is None, reason="pdp_buckets not built (provsql-dp build-native)")


def test_many_buckets_fit_a_memory_limit_the_sql_pass_fits():
    duck, loaded = native.open_duckdb(":memory:", config={"memory_limit": "60MB", "threads": 1})
    assert loaded
    # 600 000 distinct totals, ~510 000 buckets at β = 1e-6: 37 MB of bucket rows (one BLOB:
    # a 64 MB block, above the limit)
    duck.execute("CREATE TABLE r AS SELECT exp((hash(range) % 34000000000)::DOUBLE / 1e9) AS x "
                 "FROM range(600000)")
    params = {"theta": 1.0, "beta": 1e-6, "mu": 0.5, "eps2": 0.5}
    nat = native.direct_sql("SELECT * FROM r", "x", -1e12, 1e12, False, params)
    w = clamp_sql("x", -1e12, 1e12)
    totals = f"SELECT 0 AS p, w AS c FROM (SELECT ({w})::DOUBLE AS w FROM r) AS t WHERE w <> 0"
    sql_rows, nat_rows = _passes(duck, totals, 1, params, True, nat)  # the SQL pass fits too
    assert len(nat_rows["n"]) > 450000 and nat_rows["n"].sum() == 600000
    a, b = _sorted(sql_rows), _sorted(nat_rows)
    for c in ("p", "k", "m", "e", "n", "lo", "hi"):
        assert np.array_equal(a[c], b[c]), c
    for c in ("inv", "tot"):
        np.testing.assert_allclose(a[c], b[c], rtol=1e-12)


def _sorted(cols):
    """The bucket rows (every total positive here: no NULL keys) in the order of their keys."""
    cols = {c: np.asarray(np.ma.getdata(v), dtype=float) for c, v in cols.items()}
    order = np.lexsort((cols["e"], cols["m"], cols["k"], cols["p"]))
    return {c: v[order] for c, v in cols.items()}
