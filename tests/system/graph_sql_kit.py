"""Shared helpers of the SQL-route tests of the size-independent constructions (k-stars:
test_kstar_sql.py, k-triangles: test_ktriangle_sql.py): planning a query, an edge table loaded
from a networkx graph, and a small declared table."""

from __future__ import annotations

import sqlglot

import provsql_dp
from provsql_dp.graph import load_edges
from provsql_dp.sql.planner import plan_query

UNION = "(SELECT src, dst FROM edge UNION ALL SELECT dst, src FROM edge)"
ORIENTED = "CREATE TABLE edge(src INT, dst INT, PRIMARY KEY (src, dst), CHECK (src < dst))"
ROWS = "PROTECT TABLE edge"
NODES = "PROTECT TABLE edge BY (src, dst) AS node"


def plan(con, sql):
    """The plan of ``sql`` (DuckDB dialect) against ``con``'s catalog."""
    return plan_query(sqlglot.parse_one(sql, read="duckdb"), con._catalog)


def graph_db(g, privacy, budget=100):
    """A connection whose table ``edge`` holds ``g`` (``load_edges``: src < dst, key, CHECK),
    protected by row (``"edge"``) or by node (``"node"``), with a budget."""
    con = provsql_dp.connect()
    load_edges(con, g)
    con.execute("PROTECT TABLE edge" + (" BY (src, dst) AS node" if privacy == "node" else ""))
    con.execute(f"SET PRIVACY BUDGET {budget}")
    return con


def declared_db(ddl, protect, rows="(1, 2), (1, 3), (1, 4), (2, 3), (3, 4)"):
    """A connection with ``edge`` created by ``ddl``, holding ``rows``, protected by ``protect``."""
    con = provsql_dp.connect()
    con.execute(ddl)
    con.execute(f"INSERT INTO edge VALUES {rows}")
    con.execute(protect)
    return con
