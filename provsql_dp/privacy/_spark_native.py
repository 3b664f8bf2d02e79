"""The unbounded SUM's bucket pass on Spark as one native JVM aggregate (``java/provsqldp``).

Spark SQL cannot run the bucket pass of :mod:`provsql_dp.privacy.engine_buckets` near the speed
of a plain ``SUM``: its ``ln`` is ``StrictMath.log`` and its hash aggregate pays per aggregate
function per row (``benchmarks/spark_bucket_pass_measured.md``). ``BucketPass.java`` is a Spark
``Aggregator`` over the weights of a table protected row by row that computes the same rows
``(p, k, m, e, n, inv, tot, lo, hi)`` operation for operation as the SQL does (``FdLog.java`` is
fdlibm's logarithm, equal bit for bit to ``StrictMath.log``; ``exp`` is ``StrictMath.exp``, as
Spark's), in a small table per partition (with a memo of the last 16,384 distinct totals); only
the bucket rows reach the driver. It reads the weights query's internal rows (``runRows``), or —
for a weight that is a column of the snapshot, no ``WHERE`` — the Parquet scan's columnar
batches, clamped in Java as :func:`~provsql_dp.provenance.clamp.clamp_sql` clamps
(``runColumn``; Spark's plan is checked, its rows read otherwise). At 10^8 rows on
``local[2]``: 1.3× the plain ``SUM``, the SQL pass 5.2×
(``benchmarks/spark_bucket_pass_measured.md``).

**Build** (:func:`build`, ``provsql-dp build-native``): ``javac`` compiles the
sources against ``pyspark/jars/*`` into a jar cached by (pyspark version, source hash) under
the native builds' directory (``$PROVSQL_DP_NATIVE_DIR``, default ``~/.cache/provsql_dp/native``:
:func:`provsql_dp.privacy.native.cache_dir`, beside DuckDB's ``pdp_buckets``); the build first checks the logarithm
against ``StrictMath.log``. Nothing builds at query time.

**Load** (:func:`pass_for`): the jar goes to the executors with ``SparkContext.addJar`` (once per
context) and the driver loads the class in a class loader of its own; no function name is
registered in any session. Where there is no jar, no Java compiler was ever run, or the session
has no JVM of ours (Spark Connect), the SQL pass runs exactly as before: which pass runs depends
on the installation only, never on the data (``Cursor.privacy.bucket_pass`` says which ran).

>>> spec = spec_for({"theta": 1.0, "beta": 0.5, "mu": 0.0, "eps2": 0.5}, signed=True)
>>> spec.split(",")[:3], len(spec.split(","))
(['1.0', '0.0', '0.0'], 23)
"""

from __future__ import annotations

import hashlib
import math
import os
import shutil
import subprocess
import tempfile
import threading
import warnings
import zipfile
from pathlib import Path

import numpy as np

from ..mechanisms.recursive._framework import _CMP_TOL
from ..mechanisms.recursive.buckets import _WINDOW, cap_indices
from ..mechanisms.recursive.release import _MAX_EXPONENT
from .native._build import cache_dir, checksum_path, verify
from .native._trust import cache_dirs, written

__all__ = ["build", "jar_path", "pass_for", "spec_for", "NativePass", "COLUMNS"]

SOURCES = Path(__file__).with_name("java")
#: the columns of a bucket row, as BucketPass.finish writes them (then 1.0 for a NULL k, m)
COLUMNS = ("p", "k", "m", "e", "n", "inv", "tot", "lo", "hi")
_CLASS = "provsqldp.BucketPass"
#: BucketPass's entry point: ``runRows`` reads Spark's internal rows of the weights query (one
#: table per partition, merged on the driver) — or, for a bare column of the snapshot,
#: ``runColumn`` its Parquet scan's columnar batches; ``run`` applies it as an ``Aggregator``
#: (udaf). The same rows from each (tests/system/test_spark_native_buckets.py)
_ENTRY = "runRows"
_loaded: dict[int, object] = {}
_lock = threading.Lock()


def _pyspark():
    import pyspark

    return pyspark.__version__, Path(pyspark.__file__).parent / "jars"


def jar_path() -> Path:
    """Where the jar for this pyspark and these sources is cached (built or not)."""
    version, _ = _pyspark()
    digest = hashlib.sha256()
    for src in sorted(SOURCES.rglob("*.java")):
        digest.update(src.relative_to(SOURCES).as_posix().encode() + b"\0" + src.read_bytes())
    return cache_dir() / f"bucket-pass-{version}-{digest.hexdigest()[:16]}.jar"


def build() -> Path:
    """Compile the sources into the cached jar (:func:`jar_path`) unless it is there; return it.
    Raises RuntimeError naming what is missing (a JDK's ``javac``, pyspark's jars)."""
    jar = jar_path()
    if jar.exists() and verify(jar) is None:
        return jar
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is None or java is None:
        raise RuntimeError("building the native bucket pass needs a JDK (javac and java on PATH; "
                           "JDK 17 or later)")
    _, jars = _pyspark()
    if not jars.is_dir():
        raise RuntimeError(f"pyspark ships no jars at {jars}: reinstall pyspark")
    with tempfile.TemporaryDirectory(prefix="provsql_dp_javac_") as tmp:
        classes = Path(tmp, "classes")
        sources = [str(s) for s in sorted(SOURCES.rglob("*.java"))]
        run = subprocess.run([javac, "-nowarn", "-encoding", "UTF-8", "--release", "17",
                              "-d", str(classes), "-cp", str(jars / "*"), *sources],
                             capture_output=True, text=True)
        if run.returncode:
            raise RuntimeError(f"javac failed on the native bucket pass:\n{run.stderr}")
        check = subprocess.run([java, "-cp", str(classes), "provsqldp.FdLog"],
                               capture_output=True, text=True)
        if check.returncode:
            raise RuntimeError(f"the native logarithm differs from StrictMath.log:\n{check.stderr}")
        cache_dirs(jar, cache_dir())
        part = Path(tmp, jar.name)
        with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as z:
            for f in sorted(classes.rglob("*.class")):
                z.write(f, f.relative_to(classes).as_posix())
        shutil.move(str(part), str(jar) + ".part")
        # its checksum first (native._build.verify), then the jar: each atomic
        digest = hashlib.sha256(Path(str(jar) + ".part").read_bytes()).hexdigest()
        checksum_path(Path(str(jar) + ".part")).write_text(digest + "\n")
        written(Path(str(jar) + ".part"), checksum_path(Path(str(jar) + ".part")))
        os.replace(checksum_path(Path(str(jar) + ".part")), checksum_path(jar))
        os.replace(str(jar) + ".part", jar)  # atomic: a reader sees the whole jar or none
    return jar


def _method(spark):
    """BucketPass's entry points by name (py4j ``java.lang.reflect.Method``) in ``spark``'s
    JVM, or None where the jar is absent or cannot be loaded. Once per SparkContext."""
    if os.environ.get("PROVSQL_DP_NATIVE", "1") == "0":
        return None
    sc = getattr(spark, "_sc", None) or getattr(spark, "sparkContext", None)
    jsc = getattr(sc, "_jsc", None)
    if jsc is None:  # Spark Connect: no JVM of ours
        return None
    with _lock:
        key = (sc.applicationId, sc.startTime)  # a new context needs the jar again
        if key in _loaded:
            return _loaded[key]
        method = None
        try:
            jar = jar_path()
        except ImportError:
            jar = None
        damage = None if jar is None or not jar.exists() else verify(jar)
        if damage is not None:  # not the jar its build wrote: never on the executors' path
            warnings.warn(f"provsql_dp: the native bucket pass {jar} is not loaded ({damage}); "
                          "the SQL pass runs. Rebuild it (provsql-dp build-native --force) or "
                          "fix what is said", RuntimeWarning, stacklevel=2)
        elif jar is not None and jar.exists():
            try:
                method = _load(sc, jar)
            except Exception as e:  # noqa: BLE001 - the installation's: the SQL pass runs
                warnings.warn(f"provsql_dp: the native bucket pass could not be loaded ({e}); "
                              "the SQL pass runs", RuntimeWarning, stacklevel=2)
        _loaded[key] = method
        return method


def _load(sc, jar: Path):
    jvm, gateway = sc._jvm, sc._gateway
    sc._jsc.addJar(str(jar))  # the executors fetch it with their next task
    urls = gateway.new_array(jvm.java.net.URL, 1)
    urls[0] = jvm.java.io.File(str(jar)).toURI().toURL()
    parent = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    cls = jvm.java.net.URLClassLoader(urls, parent).loadClass(_CLASS)
    methods = {m.getName(): m for m in cls.getMethods()}
    missing = {"run", "runRows", "runColumn"} - set(methods)
    if missing:
        raise RuntimeError(f"{_CLASS} has no {sorted(missing)[0]} method")
    return methods


def spec_for(params: dict, signed: bool, mode: int = 0, part: int = 0,
             key: tuple = (0.0, 0.0, 0.0)) -> str:
    """BucketPass's specification: the release's constants as :func:`~provsql_dp.mechanisms.
    recursive.buckets.bucket_sql`, ``near_sql`` and ``near_key_sql`` write them into the SQL
    (each a Python float written by ``repr``, which Java parses back exactly)."""
    theta, beta, mu = float(params["theta"]), float(params["beta"]), float(params["mu"])
    eps2 = float(params["eps2"])
    values = [1.0 if signed else 0.0, float(mode), float(part), *map(float, key),
              math.log(2.0 / theta), 1.0 / beta, math.log(theta) + mu, beta,
              2.0 * (1 + 1e-6) * _CMP_TOL, _CMP_TOL, 1 + _CMP_TOL, theta,
              math.exp(_MAX_EXPONENT), math.ldexp(eps2, 63), _WINDOW,
              *map(float, cap_indices(theta, beta, mu, eps2))]
    return ",".join(map(repr, values))


class NativePass:
    """The native pass over the weights ``SELECT w …`` (DuckDB SQL) on a Spark backend."""

    def __init__(self, backend, methods: dict, weights_sql: str, params: dict, signed: bool,
                 column: tuple | None = None):
        self.backend, self.methods = backend, methods
        self.weights_sql, self.params, self.signed = weights_sql, params, signed
        #: ``(SELECT col FROM t, lower, upper)`` when the weight is that column clamped
        self.column = column

    def _run(self, spec: str) -> np.ndarray:
        from pyspark.errors.exceptions.captured import unwrap_spark_exception

        be = self.backend
        with be._in_zone():
            df = be.spark.sql(be.to_spark(self.weights_sql))
            entry = _ENTRY
            if entry == "runRows" and self.column is not None:
                entry = "runColumn"
                col = be.spark.sql(be.to_spark(self.column[0]))._jdf.queryExecution()
                values = [col, df._jdf.queryExecution(), spec, *map(float, self.column[1:])]
            elif entry == "runRows":
                values = [df._jdf.queryExecution(), spec]
            else:
                values = [df._jdf, "w", spec]
            args = be.spark._sc._gateway.new_array(be.spark._sc._jvm.java.lang.Object,
                                                   len(values))
            for j, v in enumerate(values):
                args[j] = v
            with be._step(), unwrap_spark_exception():  # Spark's errors as the SQL pass's
                raw = bytes(self.methods[entry].invoke(None, args))
        be.bytes_received += len(raw)
        return np.frombuffer(raw, dtype="<f8")

    def buckets(self) -> dict:
        """The SQL pass's columns ``g, p, k, m, e, n, inv, tot, lo, hi`` (k, m masked where the
        total is not positive and finite)."""
        rows = self._run(spec_for(self.params, self.signed)).reshape(-1, len(COLUMNS) + 1)
        rest = rows[:, -1] != 0
        out = {"g": np.zeros(len(rows), dtype=np.int64)}
        for j, name in enumerate(COLUMNS):
            col = rows[:, j].copy()
            out[name] = np.ma.MaskedArray(col, mask=rest) if name in ("k", "m") else col
        return out

    def exact(self, part: int, kind: str, key: list) -> dict:
        """The totals of one bucket (``kind`` ``"k"`` or ``"m"``: ``[value]``; ``"near"``:
        ``[k, m, e]``), as the SQL pass's exact read returns them."""
        mode = {"k": 1, "m": 2, "near": 3}[kind]
        key = [float(x) for x in key] + [0.0] * (3 - len(key))
        return {"c": self._run(spec_for(self.params, self.signed, mode, part, tuple(key)))}


def pass_for(engine, weights_sql: str | None, params: dict, signed: bool,
             column: tuple | None = None) -> NativePass | None:
    """The native pass for an external engine (a Spark backend whose JVM has the jar), or None:
    the SQL pass then runs. ``column``: ``(SELECT col FROM t, lower, upper)`` when the weight
    is a bare column clamped to those bounds (read from the scan's columnar batches)."""
    spark = getattr(engine, "spark", None)
    if weights_sql is None or spark is None or not hasattr(engine, "to_spark"):
        return None
    methods = _method(spark)
    return None if methods is None else NativePass(engine, methods, weights_sql, params, signed,
                                                   column)

