"""Running the same database on both engines: copy a provsql_dp connection (DuckDB) to one whose
data lives in Spark, and compare K-relations canonically.

:func:`on_spark` copies the whole DuckDB database — data and the catalog of record — to a file,
opens it with ``engine=spark`` and attaches every user table (its key and CHECK constraints
too) from an Arrow copy of its rows, ``rowid`` included, so that rowid-identified participants are the same on both engines.
"""

from __future__ import annotations

import itertools
from collections import Counter

import provsql_dp

_NUMBERS = itertools.count()


def _dataframe(spark, table):
    try:
        return spark.createDataFrame(table)  # pyspark >= 4 takes a pyarrow.Table
    except (TypeError, ValueError):
        return spark.createDataFrame(table.to_pandas())


def on_spark(con, spark, path, **kwargs):
    """A Spark-engine connection over a copy of ``con``'s database (declarations included)."""
    duck = con._duck
    con.commit()
    tables = [r[0] for r in duck.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND NOT temporary "
        "ORDER BY 1").fetchall()]
    frames = {t: _dataframe(spark, duck.sql(f'SELECT *, rowid FROM "{t}"').to_arrow_table())
              for t in tables}
    db = duck.execute("SELECT current_database()").fetchone()[0]
    duck.execute(f"ATTACH '{path}' AS copy_target")
    duck.execute(f"COPY FROM DATABASE \"{db}\" TO copy_target")
    duck.execute("DETACH copy_target")
    curator = provsql_dp.connect(str(path), engine=spark)
    for t, df in frames.items():
        view = f"src_{next(_NUMBERS)}_{t}"
        df.createOrReplaceTempView(view)
        key = duck.execute(
            "SELECT constraint_column_names FROM duckdb_constraints() WHERE schema_name = 'main' "
            "AND table_name = ? AND constraint_type = 'PRIMARY KEY'", [t]).fetchall()
        checks = [r[0] for r in duck.execute(
            "SELECT expression FROM duckdb_constraints() WHERE schema_name = 'main' "
            "AND table_name = ? AND constraint_type = 'CHECK'", [t]).fetchall()]
        # snapshotted once beside the copy; a later connection (an analyst's) reads it again
        curator.attach(t, view, primary_key=key[0][0] if key else (), checks=checks)
    curator.commit()
    if not kwargs:
        return curator
    curator.close()
    return provsql_dp.connect(str(path), engine=spark, **kwargs)


def canonical(kr) -> Counter:
    """A K-relation as a multiset of (row, annotation, weight): independent of tuple order."""
    return Counter(
        (tuple(_norm(v) for v in row), frozenset(frozenset(m) for m in kr.annotation(i)),
         round(float(w), 9))
        for i, (row, w) in enumerate(zip(kr.rows, kr.weights)))


def _norm(v):
    if isinstance(v, float) and v == int(v):
        return int(v)
    return v
