"""The Apache Spark backend: capture queries run in a Spark session, compact results cross back
through Arrow.

A capture query is written once, in DuckDB's dialect, by :mod:`provsql_dp.provenance.capture`. Here
it is parsed once into a sqlglot expression, rewritten for Spark and emitted with
``.sql(dialect="spark")`` (:meth:`SparkBackend.to_spark`):

* **tables** — a table name is replaced by the temporary view of its *snapshot*: when a curator
  attaches a table (:meth:`SparkBackend.attach`) its rows are written once to Parquet with a
  stable ``rowid`` column — the row identity that DuckDB's ``rowid`` gives a table protected
  without owner columns — and checked once (primary key, CHECK expressions); the catalog of
  record keeps the snapshot's path and version, and a later connection reads it again
  (:meth:`SparkBackend.open_snapshot`, :mod:`._spark_snapshot`). A column named ``rowid``
  already in the source is used as that identity; otherwise ``monotonically_increasing_id()``
  assigns one. A query sees the table as of its attachment: attach again after changing it.
* **types** — DuckDB's wide integers, which the total-evaluation rewrite uses so that exact
  arithmetic cannot overflow (HUGEINT, UHUGEINT, UBIGINT, …), become ``DECIMAL(38, 0)`` and its
  narrower cousins: Spark computes in them without overflow and ``TRY_CAST`` brings results back.
  A Spark ``TIMESTAMP`` column (an instant, read in the session's zone) is mirrored as DuckDB's
  ``TIMESTAMPTZ``, a ``TIMESTAMP_NTZ`` one as ``TIMESTAMP``; our queries run in DuckDB's
  session ``TimeZone`` (:meth:`SparkBackend._in_zone`), the zone group keys are proved in.
* **functions** — sqlglot maps the functions it knows; ``isfinite`` becomes an explicit NaN/∞
  test. A function left as written (one sqlglot does not know) is accepted only when Spark has it
  with the same total meaning (:data:`SPARK_FUNCTIONS`); anything else is refused.
* **ANSI mode** — Spark's ANSI mode raises on overflow, bad casts and division by zero, which
  would let a row's value decide whether a query fails. Every capture query therefore runs with
  ``spark.sql.ansi.enabled=false``, in a session of our own (:func:`private_session`: the
  caller's session, its settings and its views are never touched): the rewrite
  already made every expression total (``TRY_CAST``, ``NULLIF`` divisors, wide arithmetic), and
  non-ANSI semantics turn anything left into NULL instead of an error.

* **participant and tuple ids** — the capture asks the engine to assign them
  (:func:`provsql_dp.provenance.capture.capture_sql`'s ``key_views`` and ``partitioned``): a
  slot that is not an output value is joined to its domain's sorted dictionary
  (:meth:`SparkBackend.key_view`) and comes back as an INT id, and a ``DISTINCT`` numbers its
  tuples with a ``dense_rank`` inside hash partitions of their discriminators instead of one
  global window (which Spark would run in a single partition).

* **participant dictionaries** — integer and text keys are ranked in Spark
  (:meth:`SparkBackend.rank_keys`, :mod:`._spark_ranks`): the driver receives a count per
  partition, never the keys; other key types are fetched sorted and handed back as a small view.

Only compact columnar results come back: Arrow record batches, each turned into numpy arrays
(masked where NULL) as it arrives (:mod:`._spark_arrow`), no Python object per row.

>>> be = SparkBackend.__new__(SparkBackend)
>>> be._views = {"edge": "__provsql_dp_edge"}
>>> print(be.to_spark('SELECT TRY_CAST(TRY_CAST(src AS HUGEINT) + 1 AS BIGINT), rowid '
...                   'FROM main.edge AS e'))
SELECT TRY_CAST(TRY_CAST(src AS DECIMAL(38, 0)) + 1 AS BIGINT), rowid FROM __provsql_dp_edge AS e
"""

from __future__ import annotations

import contextlib
import itertools
import os

import numpy as np
import sqlglot
from sqlglot import exp

from ...errors import InterfaceError, NotSupportedError, OperationalError, UnsupportedQueryError
from . import _snapshot_leases as leases
from . import _iceberg, _spark_arrow, _spark_jobs, _spark_ranks
from . import _spark_snapshot as snapshot

__all__ = ["SparkBackend", "SPARK_FUNCTIONS", "VIEW_PREFIX", "private_session"]

#: the prefix of the temporary views holding attached snapshots (then the backend's number, so
#: that several connections can share one Spark session)
VIEW_PREFIX = "__provsql_dp_"
_NUMBERS = itertools.count()

#: functions that sqlglot writes as they are and that Spark has with the same, total meaning
#: (NULL in, NULL out; no error on any value once the arguments are total)
SPARK_FUNCTIONS = frozenset({
    "abs", "coalesce", "nullif", "greatest", "least", "lower", "upper", "length", "trim", "ltrim",
    "rtrim", "concat", "replace", "reverse", "sign", "floor", "ceil", "ceiling", "round", "sqrt",
    "ln", "log10", "log2", "exp", "pow", "power", "sin", "cos", "tan", "atan", "atan2", "isnan",
    "year", "month", "day", "hour", "minute", "second", "quarter", "dayofweek", "dayofyear",
    "left", "right", "substring", "substr", "starts_with", "startswith", "ends_with", "endswith",
    "contains", "lpad", "rpad", "repeat", "md5", "hash", "ascii", "chr", "instr", "locate",
    "regexp_like", "rlike", "regexp_extract", "regexp_replace", "dense_rank", "struct", "named_struct",
    "if", "nvl", "ifnull", "try_cast", "try_add", "try_subtract", "try_multiply", "try_divide",
    "date_add", "date_sub", "datediff", "date_trunc", "trunc", "bit_length", "octet_length",
    "double", "monotonically_increasing_id",
})

#: DuckDB types the rewrite may name, as Spark types that hold every value without overflow
_TYPES = {
    exp.DataType.Type.INT128: "DECIMAL(38, 0)",
    exp.DataType.Type.UINT128: "DECIMAL(38, 0)",
    exp.DataType.Type.UBIGINT: "DECIMAL(20, 0)",
    exp.DataType.Type.UINT: "BIGINT",
    exp.DataType.Type.USMALLINT: "INT",
    exp.DataType.Type.UTINYINT: "SMALLINT",
}

#: Spark column types, as the DuckDB types the catalog of record mirrors them with
_DUCK_TYPES = {
    "ByteType": "TINYINT", "ShortType": "SMALLINT", "IntegerType": "INTEGER", "LongType": "BIGINT",
    "FloatType": "FLOAT", "DoubleType": "DOUBLE", "StringType": "VARCHAR", "BooleanType": "BOOLEAN",
    "DateType": "DATE", "TimestampType": "TIMESTAMPTZ", "TimestampNTZType": "TIMESTAMP",
}

#: the settings of the session our queries run in (:func:`private_session`)
SESSION_CONF = {
    "spark.sql.ansi.enabled": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}


class SparkBackend:
    """Run capture queries in a Spark session (``pyspark.sql.SparkSession``)."""

    dialect = "spark"
    #: a grouped capture numbers its tuples within hash partitions (a global window would run in
    #: one partition), see :func:`provsql_dp.provenance.capture.capture_sql`
    partitioned_ranks = True

    def __init__(self, spark):
        #: the caller's session: read (its tables and views, to attach them), never changed
        self.user_spark = spark
        #: the session every query of ours runs in (:func:`private_session`)
        self.spark = private_session(spark)
        self._views: dict[str, str] = {}
        self._key_views: set[str] = set()
        self._gone: dict[str, str] = {}
        #: the lease this connection holds on each snapshot it reads (:mod:`._snapshot_leases`)
        self._leases: dict[str, str | None] = {}
        self._scratch: str | None = None
        #: the source's own version read by the last attach (a Delta table's), else None
        self.source_version: int | None = None
        self._prefix = f"{VIEW_PREFIX}{next(_NUMBERS)}_"
        #: bytes of Arrow results that crossed back to the driver's Python process so far
        self.bytes_received = 0
        #: the time zone the statement is read in (DuckDB's session ``TimeZone``: the catalog of
        #: record's), asked before each query (:meth:`_in_zone`); None: Spark's own
        self.time_zone = None

    # ------------------------------------------------------------------ attaching tables
    def attach(self, name: str, source=None, primary_key=(), checks=(),
               path: str | None = None, version: int | None = None) -> list[tuple[str, str]]:
        """Snapshot a Spark table (``source``: a DataFrame, or the name of a table or view in
        the caller's session; default ``name``) under ``name`` as Parquet at ``path`` (default:
        a scratch directory of this backend, removed by :meth:`close`); return its columns and
        their DuckDB types (without ``rowid``), for the catalog of record.

        ``primary_key`` names columns that identify a row and ``checks`` CHECK expressions
        (Spark has no constraints): both are checked once, on the snapshot, before it is used
        (:mod:`._spark_snapshot`). ``source="delta:/path"`` reads a Delta table at ``version``
        (default: its latest), which :attr:`source_version` then holds; ``"iceberg:/…"`` an
        Iceberg table at snapshot ``version`` (default: its current one, :mod:`._iceberg`)."""
        from pyspark.sql import DataFrame, functions as F

        self.source_version = None
        if isinstance(source, str) and source.startswith(snapshot.DELTA):
            df, self.source_version = snapshot.delta_frame(self.user_spark, name, source, version)
        elif _iceberg.is_iceberg(source):  # its snapshot id is the version (_iceberg)
            df, self.source_version = _iceberg.iceberg_frame(self.user_spark, name, source, version)
        elif version is not None:
            raise InterfaceError("version= applies to a Delta source (source='delta:/path') or "
                                 "an Iceberg one (source='iceberg:/…/metadata/….metadata.json')")
        else:
            df = source if isinstance(source, DataFrame) else self.user_spark.table(source or name)
        if "rowid" not in df.columns:
            df = df.withColumn("rowid", F.monotonically_increasing_id())
        columns = [(f.name, _duck_type(name, f)) for f in df.schema.fields if f.name != "rowid"]
        missing = [c for c in primary_key if c not in df.columns]
        if missing:
            raise InterfaceError(f"table {name} has no column {missing[0]!r} for its primary key")
        if path is None:
            if self._scratch is None:
                import tempfile

                self._scratch = tempfile.mkdtemp(prefix="provsql_dp_spark_")
            path = os.path.join(self._scratch, f"{name.lower()}_{next(_NUMBERS)}")
        with self._step(f"the attach of {name}"):  # a cancel stops its jobs (_spark_jobs)
            snapshot.write_snapshot(df, path)  # (refused before it writes if path exists)
            try:
                snap = snapshot.read_snapshot(self.spark, name, path, [c for c, _ in columns])
                snapshot.check_rows(snap, name, tuple(primary_key), tuple(checks))
            except Exception:
                snapshot.remove_local(path)
                raise
        self._register(name, snap, path)
        return columns

    def open_snapshot(self, name: str, path: str, columns: list[str]) -> None:
        """Use the recorded snapshot of ``name`` at ``path`` (checked when it was attached): a
        snapshot that cannot be read makes the queries naming ``name`` fail with the reason."""
        try:
            self._register(name, snapshot.read_snapshot(self.spark, name, path, columns), path)
        except OperationalError as e:
            self._gone[name.lower()] = str(e)

    def _register(self, name: str, df, path: str) -> None:
        view = self._prefix + name.lower()
        df.createOrReplaceTempView(view)
        leases.release(self._leases.get(name.lower()))  # the version read before, if any
        self._leases[name.lower()] = leases.take(path)
        self._views[name.lower()] = view
        self._gone.pop(name.lower(), None)

    def close(self) -> None:
        """Drop this backend's views (snapshots and dictionaries) and its scratch snapshots."""
        for view in [*self._views.values(), *self._key_views]:
            self.spark.catalog.dropTempView(view)
        self._views.clear()
        self._key_views.clear()
        for lease in self._leases.values():
            leases.release(lease)
        self._leases.clear()
        if self._scratch is not None:
            import shutil

            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def key_view(self, components: list) -> str:
        """A temporary view ``(__k0, …, __id)`` of a participant dictionary: the sorted keys
        (one numpy array per key column) and their positions as INT ids. The capture query
        joins its participant slots to it, so that Spark — not the driver — maps every row's
        keys to ids and only the ids cross back. One row per participant: Spark broadcasts it
        to the executors while it is under ``spark.sql.autoBroadcastJoinThreshold``."""
        import pyarrow as pa

        table = pa.table({**{f"__k{j}": pa.array(c) for j, c in enumerate(components)},
                          "__id": pa.array(np.arange(len(components[0]), dtype=np.int32 if len(
                              components[0]) <= _spark_ranks.INT_IDS else np.int64))})
        try:
            df = self.spark.createDataFrame(table)  # pyspark >= 4 takes a pyarrow.Table
        except (TypeError, ValueError):
            df = self.spark.createDataFrame(table.to_pandas())
        view = f"{self._prefix}keys{next(_NUMBERS)}"
        df.createOrReplaceTempView(view)
        self._key_views.add(view)
        return view

    def drop_key_views(self) -> None:
        """Forget the dictionary views of the last capture."""
        for view in self._key_views:
            self.spark.catalog.dropTempView(view)
        self._key_views.clear()

    @property
    def tables(self) -> list[str]:
        """The attached table names (a recorded table whose snapshot cannot be read too: plain
        SQL naming it is still refused, never answered from the empty mirror)."""
        return sorted(set(self._views) | set(getattr(self, "_gone", ())))

    # ------------------------------------------------------------------ SQL
    def to_spark(self, sql: str) -> str:
        """A DuckDB-dialect capture query in Spark's dialect (see the module docstring)."""
        tree = sqlglot.parse_one(sql, read="duckdb")
        return self._rewrite(tree).sql(dialect="spark")

    def check(self, sql: str) -> None:
        """Refuse, before anything is charged or read, a query with no total Spark form."""
        self.to_spark(sql)

    def _rewrite(self, tree: exp.Expression) -> exp.Expression:
        ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}

        def visit(node):
            if (isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier)
                    and not (node.name.lower() in ctes and not node.db)):
                view = self._views.get(node.name.lower())
                if node.name.lower() in getattr(self, "_gone", {}):
                    # refused like an unattached table: before anything is charged or read
                    raise NotSupportedError(self._gone[node.name.lower()])
                if view is None and node.name in getattr(self, "_key_views", ()):
                    view = node.name
                if view is None:
                    raise NotSupportedError(
                        f"table {node.name} is not attached to the Spark engine; attach it first: "
                        f"con.attach({node.name!r})")
                alias = node.args.get("alias")
                out = exp.to_table(view)
                if alias is not None:
                    out.set("alias", alias.copy())
                return out
            if isinstance(node, exp.DataType) and node.this in _TYPES:
                return exp.DataType.build(_TYPES[node.this], dialect="spark")
            if isinstance(node, exp.Anonymous):
                name = node.name.lower()
                if name == "isfinite":
                    x = exp.cast(node.expressions[0].copy(), "DOUBLE")
                    inf = exp.cast(exp.Literal.string("Infinity"), "DOUBLE")
                    return exp.paren(exp.and_(
                        exp.not_(exp.Anonymous(this="isnan", expressions=[x])),
                        exp.NEQ(this=exp.Abs(this=x.copy()), expression=inf)))
                if name not in SPARK_FUNCTIONS:
                    raise UnsupportedQueryError(
                        f"the function {name}() has no total equivalent on the Spark engine; this "
                        "query is not supported there (it is on the embedded DuckDB engine)")
            return node

        return tree.transform(visit, copy=True)

    def rank_keys(self, sql: str, width: int):
        """Rank the distinct keys ``__k0 …`` of a DuckDB-dialect query in Spark and register
        them with their ids as a dictionary view (:mod:`._spark_ranks`, dropped with the
        capture's other views); ``None`` for key types ranked on the driver instead."""
        view = f"{self._prefix}keys{next(_NUMBERS)}"
        with self._in_zone(), self._step():
            ranked = _spark_ranks.rank_keys(self.spark, self.to_spark(sql), width, view)
        if ranked is not None and ranked.view is not None:
            self._key_views.add(view)
        return ranked

    def _collect(self, sql: str, convert, limit: int | None = None):
        def counted(batch):
            self.bytes_received += batch.nbytes
            return convert(batch)

        with self._in_zone():
            df = self.spark.sql(self.to_spark(sql))  # analysed now: its zone is fixed here
            with self._step():
                return _spark_arrow.collect_batches(df, counted, limit)

    @contextlib.contextmanager
    def _in_zone(self):
        """Run a query of ours with ``spark.sql.session.timeZone`` set to the statement's zone
        (:attr:`time_zone`), and put back after it: our own session's setting (never the
        caller's). DuckDB proves a TIMESTAMPTZ group key's values (:mod:`provsql_dp.sql.key_domain`)
        and reads zoneless literals in its session's ``TimeZone``; Spark evaluates the key
        (``date_trunc``, ``EXTRACT``, a cast of a DATE) in its own — were they to differ, rows
        would fall outside every proved group."""
        zone = self.time_zone() if self.time_zone is not None else None
        if zone is None:
            yield
            return
        conf = self.spark.conf
        before = conf.get("spark.sql.session.timeZone")
        try:
            conf.set("spark.sql.session.timeZone", zone)
        except Exception:  # noqa: BLE001 - a zone name DuckDB knows and Java does not
            raise NotSupportedError(
                f"the Spark engine cannot read the session time zone {zone!r}; SET TimeZone to "
                "a region name such as 'Europe/Paris' or 'UTC'") from None
        try:
            yield
        finally:
            conf.set("spark.sql.session.timeZone", before)

    def _step(self, where: str = "the reading of the protected rows"):
        """The jobs of one read, stopped by the statement's cancel or deadline and no one
        else's (:mod:`._spark_jobs`; a Spark Connect session, without a SparkContext, is not)."""
        sc = getattr(self.spark, "_sc", None)
        return _spark_jobs.spark_step(sc, where) if sc is not None else contextlib.nullcontext()

    def fetchall(self, sql: str) -> list[tuple]:
        """The rows of a small result (a few per group)."""
        import pyarrow as pa

        batches, schema = self._collect(sql, lambda b: b)
        table = pa.Table.from_batches(batches, schema=schema)
        cols = [_pylist(c) for c in table.columns]
        return list(zip(*cols)) if cols else []

    def fetchnumpy(self, sql: str, max_rows: int | None = None) -> tuple[dict, list[str]]:
        """The columns of a result as numpy arrays (masked where NULL) and their DuckDB types,
        converted one Arrow record batch at a time as Spark sends them (:mod:`._spark_arrow`).
        ``max_rows``: raise :class:`~provsql_dp.errors.CaptureTooLarge` as soon as more rows
        than that arrived, without a LIMIT in the query."""
        import pyarrow as pa

        from ...errors import CaptureTooLarge

        try:
            pieces, schema = self._collect(
                sql, lambda b: [_numpy(c) for c in b.columns], max_rows)
        except _spark_arrow.TooManyRows:
            raise CaptureTooLarge(max_rows) from None
        out, types = {}, []
        for j, field in enumerate(schema):
            parts = [p[j][0] for p in pieces]
            arr, t = _numpy(pa.array([], type=field.type)) if not parts else (None, pieces[0][j][1])
            if len(parts) == 1:
                arr = parts[0]
            elif parts:
                masked = any(isinstance(a, np.ma.MaskedArray) for a in parts)
                arr = (np.ma.concatenate if masked else np.concatenate)(parts)
            out[field.name] = arr
            types.append(t)
        return out, types


def private_session(spark):
    """A session of our own beside the caller's ``spark`` (``spark.newSession()``: the same
    SparkContext, executors and cache; its own SQL settings and temporary views), with the
    caller's explicitly set SQL settings copied once and :data:`SESSION_CONF` on top. Nothing
    we set or register — ANSI mode off, snapshot and dictionary views — is ever visible in the
    caller's session, even while a query of ours runs beside one of theirs."""
    try:
        own = spark.newSession()
    except Exception:  # noqa: BLE001 - a session kind without newSession (Spark Connect < 3.5)
        raise NotSupportedError(
            "the Spark engine needs SparkSession.newSession() (its queries run in a session of "
            "their own, so that their settings never reach yours)") from None
    for row in spark.sql("SET").collect():
        key, value = row[0], row[1]
        if key.startswith("spark.sql.") and key not in SESSION_CONF and value is not None:
            try:
                own.conf.set(key, value)
            except Exception:  # noqa: BLE001 - a static setting: the context's value stands
                pass
    for key, value in SESSION_CONF.items():
        own.conf.set(key, value)
    return own


def _duck_type(table: str, field) -> str:
    t = type(field.dataType).__name__
    if t == "DecimalType":
        return f"DECIMAL({field.dataType.precision}, {field.dataType.scale})"
    if t not in _DUCK_TYPES:
        raise InterfaceError(
            f"column {table}.{field.name} has Spark type {field.dataType.simpleString()}, which "
            "provsql_dp cannot mirror; select it away or cast it to a number, string or date")
    return _DUCK_TYPES[t]


def _pylist(col) -> list:
    import pyarrow as pa

    if pa.types.is_decimal(col.type):
        col = col.cast(pa.float64())
    return col.to_pylist()


def _numpy(col) -> tuple[np.ndarray, str]:
    """An Arrow column as a numpy array, masked where NULL, and its DuckDB type name. Decimals
    become DOUBLE, as DuckDB's own ``fetchnumpy`` gives them."""
    import pyarrow as pa

    t = col.type
    if pa.types.is_decimal(t):
        col, t = col.cast(pa.float64()), pa.float64()
    col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    nulls = col.null_count
    if pa.types.is_date32(t) or pa.types.is_date64(t):
        data = col.cast(pa.date32()).to_numpy(zero_copy_only=False).astype("datetime64[D]")
        name = "DATE"
    elif pa.types.is_timestamp(t):
        data = col.to_numpy(zero_copy_only=False).astype("datetime64[us]")
        name = "TIMESTAMP"
    elif pa.types.is_string(t) or pa.types.is_large_string(t):
        data, name = col.to_numpy(zero_copy_only=False), "VARCHAR"
    elif pa.types.is_boolean(t):
        data, name = col.fill_null(False).to_numpy(zero_copy_only=False), "BOOLEAN"
    elif pa.types.is_integer(t) or pa.types.is_floating(t):
        data = col.fill_null(0).to_numpy(zero_copy_only=False) if nulls else col.to_numpy()
        name = _ARROW_NAMES.get(str(t), "DOUBLE")
    elif pa.types.is_null(t):
        data, name = np.zeros(len(col), dtype=np.int32), "INTEGER"
    else:
        data, name = col.to_numpy(zero_copy_only=False), str(t).upper()
    if nulls or pa.types.is_null(t):
        mask = col.is_null().to_numpy(zero_copy_only=False)
        return np.ma.MaskedArray(data, mask=mask), name
    return data, name


_ARROW_NAMES = {"int8": "TINYINT", "int16": "SMALLINT", "int32": "INTEGER", "int64": "BIGINT",
                "float": "FLOAT", "double": "DOUBLE", "uint8": "UTINYINT", "uint16": "USMALLINT",
                "uint32": "UINTEGER", "uint64": "UBIGINT"}
