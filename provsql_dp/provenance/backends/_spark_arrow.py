"""Spark results streamed to numpy one Arrow record batch at a time.

``DataFrame.toArrow()`` (pyspark ≥ 4) collects every record batch of a result into a list,
builds one table from them, casts it, and only then can the caller convert its columns — the
whole result is held as Arrow while its numpy copy is made. Classic pyspark's own collect
(``Dataset.collectAsArrowToPython``) sends the batches over a local socket as an Arrow IPC
stream *in the order the partitions finish*, followed by the permutation that puts them in
partition order; :class:`pyspark.sql.pandas.serializers.ArrowCollectSerializer` reads them all
before yielding the first. :func:`collect_batches` reads the same stream itself, converting each
batch (``convert``: an Arrow record batch to whatever the caller keeps, e.g. numpy columns) as
soon as it arrives and dropping it, then applies the permutation to the converted pieces: the
result is in the order ``toArrow()`` gives, and at no time is more than one Arrow batch alive
beside the converted pieces.

``limit``: once more than ``limit`` rows arrived, reading stops and :class:`TooManyRows` is
raised (the rest of the stream is discarded, nothing more is converted), so a capture can keep
its row limit without a ``LIMIT`` in the query (which Spark runs as a global limit).

Spark Connect sessions (no JVM object) fall back to ``toArrow()`` and convert its batches.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["collect_batches", "TooManyRows"]


class TooManyRows(Exception):
    """More rows than the caller's ``limit`` arrived."""


def collect_batches(df, convert: Callable, limit: int | None = None) -> tuple[list, object]:
    """``[convert(batch) for batch in df's Arrow record batches]`` in partition order, and the
    result's Arrow schema; see the module docstring."""
    jdf, sc = getattr(df, "_jdf", None), getattr(df, "_sc", None)
    if jdf is None or sc is None:  # Spark Connect
        table = df.toArrow()
        return _bounded([convert(b) for b in table.to_batches()], table, limit), table.schema
    import pyarrow as pa
    from pyspark.errors.exceptions.captured import unwrap_spark_exception
    from pyspark.serializers import UTF8Deserializer, read_int
    from pyspark.traceback_utils import SCCallSiteSync
    from pyspark.util import _create_local_socket

    with SCCallSiteSync(sc):
        port, secret, server = jdf.collectAsArrowToPython()
    pieces, schema, rows, stopped = [], None, 0, False
    sockfile, sock = _create_local_socket((port, secret))
    try:
        reader = pa.ipc.open_stream(sockfile)
        schema = reader.schema
        for batch in reader:
            rows += batch.num_rows
            if limit is not None and rows > limit:
                stopped = True
                break
            pieces.append(convert(batch))
            del batch
        if not stopped:
            n = read_int(sockfile)
            if n == -1:
                raise RuntimeError(UTF8Deserializer().loads(sockfile))
            pieces = [pieces[read_int(sockfile)] for _ in range(n)]
    finally:
        sockfile.close()
        sock.close()
        try:
            with unwrap_spark_exception():
                server.getResult()  # raise what failed in the JVM
        except Exception:  # noqa: BLE001 - after a stop, the JVM's broken pipe is expected
            if not stopped:
                raise
    if stopped:
        raise TooManyRows(limit)
    return pieces, schema


def _bounded(pieces: list, table, limit: int | None) -> list:
    if limit is not None and table.num_rows > limit:
        raise TooManyRows(limit)
    return pieces
