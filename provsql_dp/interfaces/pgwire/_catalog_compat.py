"""The PostgreSQL catalog objects that clients read and DuckDB lacks, in the schema replica.

DuckDB's ``pg_catalog`` covers most of what psql, SQLAlchemy and JDBC read; the rest is here, in
the replica's schema ``pgcompat`` (first on its search path, hidden from its own listings): a few
columns of ``pg_class``, the catalogs DuckDB does not have (as empty tables of PostgreSQL's
columns: no inheritance, no policies, no triggers…), and a few functions. Catalog queries are
read with their ``pg_catalog.`` qualifiers dropped (:func:`._catalog.compatible`), so these come
first and DuckDB's own objects after them.

>>> len(STATEMENTS) > 10
True
"""

from __future__ import annotations

__all__ = ["STATEMENTS", "SCHEMA"]

SCHEMA = "pgcompat"
_HIDE = f"(SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = '{SCHEMA}')"
_EMPTY = {
    "pg_inherits": "inhrelid BIGINT, inhparent BIGINT, inhseqno INTEGER, inhdetachpending BOOLEAN",
    "pg_policy": "oid BIGINT, polname VARCHAR, polrelid BIGINT, polcmd VARCHAR, polpermissive BOOLEAN, "
                 "polroles BIGINT[], polqual VARCHAR, polwithcheck VARCHAR",
    "pg_trigger": "oid BIGINT, tgrelid BIGINT, tgparentid BIGINT, tgname VARCHAR, tgfoid BIGINT, "
                  "tgtype INTEGER, tgenabled VARCHAR, tgisinternal BOOLEAN, tgconstraint BIGINT",
    "pg_rewrite": "oid BIGINT, rulename VARCHAR, ev_class BIGINT, ev_type VARCHAR, ev_enabled VARCHAR",
    "pg_statistic_ext": "oid BIGINT, stxrelid BIGINT, stxname VARCHAR, stxnamespace BIGINT, "
                        "stxowner BIGINT, stxstattarget INTEGER, stxkeys INTEGER[], stxkind VARCHAR[]",
    "pg_publication": "oid BIGINT, pubname VARCHAR, puballtables BOOLEAN, pubviaroot BOOLEAN",
    "pg_publication_rel": "oid BIGINT, prpubid BIGINT, prrelid BIGINT, prqual VARCHAR, prattrs INTEGER[]",
    "pg_publication_namespace": "oid BIGINT, pnpubid BIGINT, pnnspid BIGINT",
    "pg_partitioned_table": "partrelid BIGINT, partstrat VARCHAR, partnatts INTEGER",
    "pg_foreign_table": "ftrelid BIGINT, ftserver BIGINT, ftoptions VARCHAR[]",
    "pg_matviews": "schemaname VARCHAR, matviewname VARCHAR, matviewowner VARCHAR, definition VARCHAR",
    "pg_extension": "oid BIGINT, extname VARCHAR, extowner BIGINT, extnamespace BIGINT, extversion VARCHAR",
    "pg_event_trigger": "oid BIGINT, evtname VARCHAR",
    "pg_opclass": "oid BIGINT, opcname VARCHAR, opcnamespace BIGINT, opcdefault BOOLEAN",
}

STATEMENTS = [
    f"CREATE SCHEMA {SCHEMA}",
    f"CREATE MACRO {SCHEMA}.pg_get_userbyid(x) AS 'provsql_dp'",
    f"CREATE MACRO {SCHEMA}.pg_encoding_to_char(x) AS 'UTF8'",
    f"CREATE MACRO {SCHEMA}.pg_get_indexdef(x) AS NULL::VARCHAR, (x, y, z) AS NULL::VARCHAR",
    f"CREATE MACRO {SCHEMA}.pg_get_statisticsobjdef_columns(x) AS NULL::VARCHAR",
    f"CREATE MACRO {SCHEMA}.pg_relation_is_publishable(x) AS false",
    f"CREATE MACRO {SCHEMA}.pg_get_partkeydef(x) AS NULL::VARCHAR",
    f"CREATE MACRO {SCHEMA}.pg_get_triggerdef(x) AS NULL::VARCHAR, (x, y) AS NULL::VARCHAR",
    f"CREATE MACRO {SCHEMA}.pg_backend_pid() AS 0",
    f"CREATE MACRO {SCHEMA}.array_upper(a, d) AS len(a)",
    f"CREATE MACRO {SCHEMA}.pg_get_expr(x, y) AS NULL::VARCHAR, (x, y, z) AS NULL::VARCHAR",
    f"CREATE MACRO {SCHEMA}.pg_is_in_recovery() AS false",
    f"CREATE MACRO {SCHEMA}.version() AS 'PostgreSQL 15.0 (provsql_dp wire server)'",
    f"CREATE VIEW {SCHEMA}.pg_class AS SELECT *, false AS relforcerowsecurity FROM pg_catalog.pg_class "
    f"WHERE relnamespace NOT IN {_HIDE}",
    f"CREATE VIEW {SCHEMA}.pg_namespace AS SELECT * FROM pg_catalog.pg_namespace WHERE nspname <> '{SCHEMA}'",
    f"CREATE VIEW {SCHEMA}.pg_tables AS SELECT * FROM pg_catalog.pg_tables WHERE schemaname <> '{SCHEMA}'",
    f"CREATE VIEW {SCHEMA}.pg_views AS SELECT * FROM pg_catalog.pg_views WHERE schemaname <> '{SCHEMA}'",
    f"CREATE VIEW {SCHEMA}.pg_roles AS SELECT 10::BIGINT AS oid, 'provsql_dp' AS rolname, false AS rolsuper, "
    "true AS rolinherit, false AS rolcreaterole, false AS rolcreatedb, true AS rolcanlogin, "
    "false AS rolreplication, -1 AS rolconnlimit, NULL::TIMESTAMP AS rolvaliduntil, false AS rolbypassrls",
    f"CREATE VIEW {SCHEMA}.pg_user AS SELECT 'provsql_dp' AS usename, 10::BIGINT AS usesysid, "
    "false AS usecreatedb, false AS usesuper",
    *(f"CREATE TABLE {SCHEMA}.{name} ({cols})" for name, cols in _EMPTY.items()),
]
