"""Running the curator statements of :mod:`provsql_dp.sql.curator_grammar`: ``SHOW AUDIT LOG``
and ``ATTACH SPARK TABLE`` (both refused to an analyst before they get here, by
:mod:`provsql_dp.privacy.roles`; checked again here).

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE t(x INT); INSERT INTO t VALUES (1); PROTECT TABLE t")
>>> _ = con.execute("SET PRIVACY BUDGET RHO 1")
>>> _ = con.execute("SELECT COUNT(*) FROM t WITH EPSILON 0.5")
>>> [r[5:9] for r in con.execute("SHOW AUDIT LOG LIMIT 1").fetchall()]
[('released', 'laplace', '1/8', 'rho')]
>>> con.execute("ATTACH SPARK TABLE e FROM 'events'")
Traceback (most recent call last):
...
provsql_dp.errors.NotSupportedError: ATTACH SPARK TABLE needs the Spark engine, and this connection reads its own DuckDB database: start the server with provsql-dp serve DATABASE --engine spark, or connect with provsql_dp.connect(DATABASE, engine=spark_session)
"""

from __future__ import annotations

from ...errors import NotSupportedError, PrivacyError
from ...privacy import audit
from ...provenance.backends import DuckDBBackend
from ...sql.curator_grammar import AttachSparkTable, ShowAuditLog
from .engines import attach_table

__all__ = ["execute_curator_statement", "AUDIT_ROWS"]

#: the rows ``SHOW AUDIT LOG`` shows without ``LIMIT`` (the shell's ``.audit`` shows as many)
AUDIT_ROWS = 20


def execute_curator_statement(con, tree) -> str | tuple[list, list[tuple]]:
    """Run ``SHOW AUDIT LOG`` or ``ATTACH SPARK TABLE`` on ``con`` (a curator's)."""
    if con.role != "curator":
        what = "SHOW AUDIT LOG" if isinstance(tree, ShowAuditLog) else "ATTACH SPARK TABLE"
        raise PrivacyError(f"only a curator may run {what}")
    if isinstance(tree, ShowAuditLog):
        limit = tree.args.get("limit")
        rows = audit.last_rows(con._duck, int(limit.this) if limit is not None else AUDIT_ROWS)
        return list(audit.LOG_COLUMNS), rows
    assert isinstance(tree, AttachSparkTable)
    if isinstance(con._engine, DuckDBBackend):
        raise NotSupportedError(
            "ATTACH SPARK TABLE needs the Spark engine, and this connection reads its own DuckDB "
            "database: start the server with provsql-dp serve DATABASE --engine spark, or connect "
            "with provsql_dp.connect(DATABASE, engine=spark_session)")
    name = tree.name
    version = tree.args.get("version")
    snapshot = tree.args.get("snapshot")
    attach_table(con, name, tree.text("source") or None,
                 [c.name for c in tree.args.get("key") or ()],
                 [c.sql(dialect="duckdb") for c in tree.args.get("checks") or ()],
                 snapshot.this if snapshot is not None else None,
                 int(version.this) if version is not None else None)
    row = con._duck.execute("SELECT version FROM _provsql_dp.engine_tables WHERE table_name = ?",
                            [name]).fetchall()
    return f"attached {name} from Spark (snapshot version {row[0][0] if row else '?'})"
