"""Private SQL over tables that live in Apache Spark, with the ledger in a local DuckDB file.

Run: ``pip install '.[spark]'`` (needs Java 17+), then ``python examples/spark_engine.py``.
The same statements as on the embedded engine: PROTECT TABLE, SET GROUP KEYS, budgets,
WITH EPSILON; the capture runs in Spark, only compact results cross back.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from pyspark.sql import SparkSession

import provsql_dp

spark = (SparkSession.builder.master("local[2]").appName("provsql_dp-example")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "2").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")

# the data: two Spark tables (here made from ranges; in practice, tables of the Spark catalog)
spark.range(10_000).selectExpr("id", "CAST(id % 90 AS INT) AS age",
                               "CONCAT('c', id % 5) AS city").createOrReplaceTempView("people")
spark.range(50_000).selectExpr("id AS vid", "pmod(xxhash64(id), 10000) AS pid",
                               "CAST(pmod(id, 40) AS INT) AS amount").createOrReplaceTempView("visits")

ledger = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "ledger.duckdb"

# the curator: key the Spark tables to the catalog of record, declare, set a budget
con = provsql_dp.connect(str(ledger), engine=spark)
con.attach("people", primary_key=["id"])  # the key is checked on the Spark rows
con.attach("visits")
con.execute("PROTECT TABLE people BY (id) AS person")
con.execute("PROTECT TABLE visits BY (pid) AS person")
con.execute("SET GROUP KEYS ON people (city) VALUES ('c0', 'c1', 'c2', 'c3', 'c4')")
con.execute("SET PRIVACY BUDGET 3 FOR USER ann")
con.commit()
con.close()

# the analyst: a new connection finds the tables by name and spends their own budget
ann = provsql_dp.connect(str(ledger), engine=spark, role="analyst", user="ann")
for sql in ("SELECT COUNT(*) FROM people WHERE age > 40 WITH EPSILON 1",
            "SELECT city, COUNT(*) FROM people GROUP BY city WITH EPSILON 1",
            "SELECT SUM(v.amount) FROM visits v JOIN people p ON p.id = v.pid WITH EPSILON 1"):
    cur = ann.execute(sql)
    print(f"{sql}\n  -> {cur.fetchall()}  [{cur.privacy.mechanism}, "
          f"remaining ε = {cur.privacy.remaining:g}]")
ann.close()
spark.stop()
