"""Iceberg tables as a source of ``ATTACH SPARK TABLE … FROM 'iceberg:…' [VERSION snapshot_id]``,
read without Spark's Iceberg runtime (issue 30).

What installs from the package registries alone: Spark's Iceberg reader is a Maven jar
(``iceberg-spark-runtime``), not on PyPI, so Spark cannot read an Iceberg table by itself here.
``pyiceberg`` (a PyPI wheel, beside the pinned versions of ``constraints.txt``) reads a
table's metadata from its ``*.metadata.json`` file — no catalog service — and plans the scan of
one snapshot: the list of its data files. Spark then reads those Parquet files, with the
snapshot's schema given explicitly (:func:`iceberg_frame`). The snapshot's id is recorded as
the attached table's source version (``_provsql_dp.engine_tables.source_version``), and
``VERSION n`` attaches the table as of snapshot ``n`` (time travel). As in Iceberg's own
readers, the current snapshot is read with the table's current schema, an older one with the
schema it was written under.

``source``: ``'iceberg:/warehouse/db/t/metadata/00002-….metadata.json'`` (a metadata file; a
URI such as ``file:///…`` or ``s3://…`` works where pyarrow and Spark can both read it), or
``'iceberg:/warehouse/db/t'`` for a table directory whose ``metadata/version-hint.text`` names
its current metadata file.

**Exactness.** A read of the data files by column *name* gives the rows Iceberg defines only
when nothing else is needed; every case where it would not is refused with the reason, never
read approximately:

* delete files (merge-on-read: position or equality deletes, deletion vectors) — the files
  alone would show deleted rows;
* data files that are not Parquet (ORC, Avro);
* schema evolution that a by-name read would get wrong: a data file whose column carrying a
  field's id has another name (a renamed column), or whose column of that name carries another
  id (a dropped and re-added column), or that has no field ids at all (a migrated table read
  through a name mapping); a column missing from a file is read as NULL — Iceberg's meaning for
  a column added later — except when the field has an initial default (format 3) or is an
  identity-partition source (migrated files keep those values in their paths only);
* a column whose type in a file differs from the snapshot's (a promoted ``int → long``,
  ``float → double`` or widened decimal), and types without an exact column here (``time``,
  ``uuid``, ``fixed``, nanosecond timestamps, nested types, geometry).

Privacy: this only decides which rows the attached snapshot holds — the rows Iceberg defines
for that snapshot, as a curator's attach of any other source does. The Parquet snapshot written
from them is checked (key, CHECK) and read as before (:mod:`._spark_snapshot`).

>>> is_iceberg("iceberg:/w/db/t"), is_iceberg("delta:/w/t"), is_iceberg(None)
(True, False, False)
>>> metadata_location("iceberg:/w/db/t/metadata/v3.metadata.json")
'/w/db/t/metadata/v3.metadata.json'
"""

from __future__ import annotations

from ...errors import InterfaceError, NotSupportedError

__all__ = ["ICEBERG", "is_iceberg", "metadata_location", "iceberg_frame", "check_files"]

#: the prefix of a ``source`` naming an Iceberg table by its metadata file or directory
ICEBERG = "iceberg:"

#: Iceberg types read exactly from Parquet as a column provsql_dp mirrors
_TYPES = {"BooleanType", "IntegerType", "LongType", "FloatType", "DoubleType", "DecimalType",
          "DateType", "TimestampType", "TimestamptzType", "StringType"}


def is_iceberg(source) -> bool:
    """Whether ``source`` names an Iceberg table (``'iceberg:…'``)."""
    return isinstance(source, str) and source.startswith(ICEBERG)


def metadata_location(source: str) -> str:
    """The metadata file or table directory that ``source`` names."""
    return source[len(ICEBERG):]


def iceberg_frame(spark, name: str, source: str, version: int | None):
    """``(DataFrame, snapshot_id)``: the rows of the Iceberg table at ``source`` as of snapshot
    ``version`` (default: its current snapshot), read by Spark from the snapshot's Parquet data
    files after :func:`check_files` (see the module docstring). An empty table (no snapshot)
    gives no rows and ``None``."""
    try:
        from pyiceberg.table import StaticTable
    except ImportError:
        raise InterfaceError(
            f"attaching {name} from an Iceberg table needs the pyiceberg package (pip install "
            "'provsql_dp[spark]'; Spark's own Iceberg reader is a Maven jar this does not use)"
        ) from None
    location = metadata_location(source)
    try:
        table = StaticTable.from_metadata(location)
    except Exception as e:  # noqa: BLE001 - a missing file, bad JSON, no version-hint.text
        raise InterfaceError(
            f"cannot read the Iceberg table metadata at {location} ({type(e).__name__}: {e}); "
            "name its metadata file: 'iceberg:/…/metadata/NNNNN-….metadata.json'") from None
    if version is not None:
        snap = table.snapshot_by_id(int(version))
        if snap is None:
            known = ", ".join(str(s.snapshot_id) for s in table.snapshots()[-5:]) or "none"
            raise InterfaceError(
                f"the Iceberg table at {location} has no snapshot {version} (its latest: {known})")
        schema = table.schemas().get(snap.schema_id, table.schema())  # as Spark's VERSION AS OF
    else:
        snap, schema = table.current_snapshot(), table.schema()  # the table's schema now
    spark_schema = _spark_schema(location, schema)
    if snap is None:
        return spark.createDataFrame([], spark_schema), None
    tasks = list(table.scan(snapshot_id=snap.snapshot_id).plan_files())
    check_files(location, schema, tasks, table.specs())
    if not tasks:
        return spark.createDataFrame([], spark_schema), snap.snapshot_id
    return spark.read.schema(spark_schema).parquet(*[t.file.file_path for t in tasks]), \
        snap.snapshot_id


def _spark_schema(location: str, schema):
    """The snapshot's schema as Spark's (through Arrow), its types checked (module docstring)."""
    from pyiceberg.io.pyarrow import schema_to_pyarrow
    from pyspark.sql.pandas.types import from_arrow_schema

    for field in schema.fields:
        kind = type(field.field_type).__name__
        if kind not in _TYPES:
            raise NotSupportedError(
                f"column {field.name} of the Iceberg table at {location} has type "
                f"{field.field_type}, which provsql_dp does not read from Iceberg; attach a "
                "copy that casts it to a number, string, date or microsecond timestamp")
    return from_arrow_schema(_plain(schema_to_pyarrow(schema, include_field_ids=False)))


def _plain(arrow_schema):
    """Arrow's large string becomes string (Spark's reader maps both to StringType)."""
    import pyarrow as pa

    return pa.schema([pa.field(f.name, pa.string() if pa.types.is_large_string(f.type) else f.type,
                               f.nullable) for f in arrow_schema])


def check_files(location: str, schema, tasks, specs) -> None:
    """Refuse a scan that a by-name read of its Parquet files would not give exactly: delete
    files, other formats, renamed or re-added columns, missing field ids, promoted types
    (the module docstring lists them). Reads each data file's Parquet footer only."""
    from pyiceberg.io.pyarrow import schema_to_pyarrow
    from pyiceberg.transforms import IdentityTransform

    expected = {f.name: _plain(pa_schema)[0].type for f, pa_schema in
                ((f, _one(schema_to_pyarrow, f)) for f in schema.fields)}
    for task in tasks:
        data = task.file
        where = f"the Iceberg table at {location}: data file {data.file_path}"
        if task.delete_files:
            raise NotSupportedError(
                f"{where} has {len(task.delete_files)} delete file(s) (merge-on-read deletes), "
                "which a read of its data files would ignore; compact the table (rewrite its "
                "data files) or attach a snapshot from before the deletes")
        fmt = str(getattr(data.file_format, "value", data.file_format)).upper()
        if fmt != "PARQUET":
            raise NotSupportedError(f"{where} is {fmt}, not Parquet; only Parquet is read")
        by_id, by_name = _footer(data.file_path)
        if not by_id and by_name:
            raise NotSupportedError(
                f"{where} has no Parquet field ids (a migrated table read through a name "
                "mapping), which provsql_dp does not follow; rewrite its data files")
        spec = specs.get(data.spec_id)
        identity = {pf.source_id for pf in (spec.fields if spec is not None else ())
                    if isinstance(pf.transform, IdentityTransform)}
        for field in schema.fields:
            have = by_id.get(field.field_id)
            if have is None:
                if field.name in by_name:
                    raise NotSupportedError(
                        f"{where} holds a column {field.name} that is not the table's column "
                        f"{field.name} (another field id: dropped and added again); rewrite "
                        "its data files")
                if field.field_id in identity or field.initial_default is not None:
                    raise NotSupportedError(
                        f"{where} lacks column {field.name}, whose values Iceberg takes from "
                        "the partition or a default; rewrite its data files")
                continue
            file_name, file_type = have
            if file_name != field.name:
                raise NotSupportedError(
                    f"{where} calls column {field.name} {file_name!r} (renamed since it was "
                    "written); rewrite its data files or attach a snapshot from before")
            if _plain_type(file_type) != expected[field.name]:
                raise NotSupportedError(
                    f"{where} stores column {field.name} as {file_type}, not "
                    f"{expected[field.name]} (its type was promoted since); rewrite its data "
                    "files")


def _one(schema_to_pyarrow, field):
    from pyiceberg.schema import Schema

    return schema_to_pyarrow(Schema(field), include_field_ids=False)


def _plain_type(t):
    import pyarrow as pa

    return pa.string() if pa.types.is_large_string(t) else t


def _footer(path: str) -> tuple[dict, dict]:
    """A Parquet file's top-level columns: ``{field_id: (name, arrow type)}`` and
    ``{name: field_id or None}`` (from its footer only)."""
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    fs, inner = pafs.FileSystem.from_uri(path) if "://" in path else (None, path)
    arrow = pq.read_schema(inner, filesystem=fs)
    by_id, by_name = {}, {}
    for f in arrow:
        raw = (f.metadata or {}).get(b"PARQUET:field_id")
        fid = int(raw) if raw is not None else None
        by_name[f.name] = fid
        if fid is not None:
            by_id[fid] = (f.name, f.type)
    return by_id, by_name
