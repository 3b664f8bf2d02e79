"""The bucket pass of an unbounded ``SUM`` as a native DuckDB aggregate, ``pdp_buckets``.

:mod:`provsql_dp.privacy.engine_buckets` summarises the per-participant totals in one SQL pass
(a logarithm, a hash ``GROUP BY p, k, m, e`` and five aggregates per row: ~30× a plain ``SUM``
at 10^7 rows, ``benchmarks/engine_speed_measured.md``). ``pdp_buckets.c`` (with its parts
``pdp_*.h``) computes the same rows — the same keys bit for bit, the same counts, sums up to
the order of addition, the same minima and maxima but a far bucket's from the block code: bounds
of its totals that classify as its exact extremes do, each part's largest exact — in one
aggregate function of a DuckDB extension
written against DuckDB's stable C API: on the direct path most totals by a table of fine cells
keyed by their bits and one accumulator per bucket, without a logarithm or a hash (~3.5 ns a
row in all, ``benchmarks/native_bucket_pass_timing_measured.md``). It is built on the user's machine from PyPI's sdist of the installed duckdb
(``provsql-dp build-native``, :mod:`._build`) and loaded by :func:`open_duckdb` when a provsql_dp
connection opens its database; when it is not built (or the connection was opened by the
caller), every release runs the SQL pass as before. Which pass runs depends on the installation
and on public parameters only (β, :data:`~provsql_dp.privacy.engine_buckets._NATIVE_FASTER_BETA`),
never on the data, and both make one pass over the rows.

**The boundary.** ``allow_unsigned_extensions`` is on only while :func:`open_duckdb` loads this
one file by its absolute path; it is set back off right after (with the guard rails'
``enable_external_access = false`` and ``lock_configuration`` applied after the load, in their
order), so no other unsigned file can be loaded through the connection afterwards. Analyst text
never reaches DuckDB raw (the closed boundary: statements are parsed and compiled; ``LOAD`` and
``INSTALL`` are refused, :mod:`provsql_dp.privacy.roles`), and a curator's raw statements run with
``allow_unsigned_extensions`` off, as before.

>>> spec = spec_name(2, 0.0, 0.0, {"theta": 1.0, "beta": 0.5, "mu": 0.0, "eps2": 0.5})
>>> len(spec), spec[:16]   # 64 bytes in hexadecimal: mode 2.0, ...
(128, '0000000000000040')
>>> rows = np.array([[0, 3, 1, 0, 2, 1.5, 3, 1, 2], [1, np.nan, np.nan, 0, 1, 0, 5, 5, 5]])
>>> cols = decode({"g": np.array([4]), "b": [rows.tobytes()]})
>>> cols["g"].tolist(), cols["k"].mask.tolist(), cols["n"].tolist()
([4, 4], [False, True], [2.0, 1.0])
"""

from __future__ import annotations

import struct

import numpy as np

from ._build import build, built_path
from ._load import has_native, open_duckdb

__all__ = ["build", "built_path", "open_duckdb", "has_native", "spec_name", "decode",
           "direct_sql", "grouped_sql"]

#: the columns of one bucket row, as the aggregate packs them
ROW = ("p", "k", "m", "e", "n", "inv", "tot", "lo", "hi")


def spec_name(mode: int, lo: float, hi: float, params) -> str:
    """The spec as the aggregate reads it: the name of its struct argument's first field, the
    128 hexadecimal digits of 8 little-endian doubles (mode, the clamp's bounds, θ, β, μ, ε₂, 0)
    — public numbers only. In the argument's type, not a constant argument: DuckDB's C API
    copies a constant argument into every row of every chunk (~0.6 ns a row)."""
    raw = struct.pack("<8d", float(mode), float(lo), float(hi), float(params["theta"]),
                      float(params["beta"]), float(params["mu"]), float(params["eps2"]), 0.0)
    return raw.hex()


def direct_sql(child_sql: str, weight_sql: str, lo: float, hi: float, signed: bool,
               params) -> str:
    """The native form of :func:`~provsql_dp.privacy.engine_buckets.direct_totals_sql`'s pass:
    each row of ``child_sql`` its owner's total, ``weight_sql`` the raw weight (clamped to
    ``[lo, hi]`` inside the aggregate by :func:`~provsql_dp.provenance.clamp.clamp_sql`'s rule)."""
    spec = spec_name(1 if signed else 0, lo, hi, params)
    return (f'SELECT 0 AS g, pdp_buckets(struct_pack("{spec}" := ({weight_sql})::DOUBLE)) AS b '
            f"FROM ({child_sql}) AS t")


def grouped_sql(totals_sql: str, n_parts: int, params) -> str:
    """The native pass over owner totals ``g, c0[, c1]`` (zeros and NULLs skipped per part)."""
    spec = spec_name(2, 0.0, 0.0, params)
    cols = ", ".join(f'"{spec if j == 0 else "c1"}" := c{j}::DOUBLE' for j in range(n_parts))
    return f"SELECT g, pdp_buckets(struct_pack({cols})) AS b FROM ({totals_sql}) AS tt GROUP BY g"


def _joined(b) -> bytes:
    """One group's rows: the aggregate's list of BLOBs (at most 64 KiB each, never one
    allocation as large as all the rows: red-team finding h64native-2) joined; a BLOB as is."""
    if b is None:
        return b""
    if isinstance(b, (bytes, bytearray, memoryview)):
        return bytes(b)
    return b"".join(bytes(x) for x in b)


def decode(data: dict) -> dict:
    """The columns the SQL bucket pass returns (``g, p, k, m, e, n, inv, tot, lo, hi``; ``k``
    and ``m`` masked where SQL's are NULL) from the aggregate's rows ``(g, b)`` — no loop over
    bucket rows in Python."""
    blobs = [_joined(b) for b in data["b"]]
    arrays = [np.frombuffer(b, dtype="<f8").reshape(-1, len(ROW)) for b in blobs]
    sizes = [len(a) for a in arrays]
    g = np.repeat(np.asarray(data["g"], dtype=np.int64)[:len(arrays)], sizes)
    rows = (arrays[0] if len(arrays) == 1 else np.concatenate(arrays) if arrays
            else np.zeros((0, len(ROW))))
    cols = np.array(rows.T, dtype=np.float64, order="C")  # one copy, each column contiguous
    out = {"g": g}
    for i, name in enumerate(ROW):
        col = cols[i]
        out[name] = np.ma.masked_array(col, mask=np.isnan(col)) if name in ("k", "m") else col
    out["p"] = out["p"].astype(np.int64)
    return out
