"""Shared helpers of the SQL tests over graphs: the size-independent constructions (k-stars:
test_kstar_sql.py, k-triangles: test_ktriangle_sql.py) — planning a query, an edge table loaded
from a networkx graph, a small declared table — and the example data's friendship triangles
(test_private_sql.py, test_r2t_sql.py, test_capture_limit.py)."""

from __future__ import annotations

import numpy as np
import sqlglot

import provsql_dp
from provsql_dp.interfaces import example_data
from provsql_dp.graph import load_edges
from provsql_dp.sql.planner import plan_query

UNION = "(SELECT src, dst FROM edge UNION ALL SELECT dst, src FROM edge)"
ORIENTED = "CREATE TABLE edge(src INT, dst INT, PRIMARY KEY (src, dst), CHECK (src < dst))"
ROWS = "PROTECT TABLE edge"
NODES = "PROTECT TABLE edge BY (src, dst) AS node"

#: the triangles of the example data's ``friendship`` table
TRIANGLES = (
    "SELECT COUNT(*) FROM friendship a JOIN friendship b ON a.dst = b.src "
    "JOIN friendship c ON a.src = c.src AND b.dst = c.dst"
)


def example_db(budget, seed):
    """The example data with ``friendship`` protected by member and ``employees`` by row, a
    budget, and a fixed noise seed (tests only)."""
    c = provsql_dp.connect()
    example_data.load(c)
    c.execute("PROTECT TABLE friendship BY (src, dst) AS member")
    c.execute("PROTECT TABLE employees")
    c.execute(f"SET PRIVACY BUDGET {budget}")
    c._rng = np.random.default_rng(seed)
    return c


def example_file(tmp_path) -> str:
    """A database file holding the example data with ``friendship`` protected by member (for
    tests that reopen it, e.g. through the shell)."""
    path = str(tmp_path / "ex.duckdb")
    c = provsql_dp.connect(path)
    example_data.load(c)
    c.execute("PROTECT TABLE friendship BY (src, dst) AS member")
    c.commit()
    c.close()
    return path


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
