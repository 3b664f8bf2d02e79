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
    "pg_auth_members": "oid BIGINT, roleid BIGINT, member BIGINT, grantor BIGINT, admin_option BOOLEAN",
}

#: PostgreSQL's names of types, as format_type gives them (DuckDB's gives the short ones)
_TYPE_NAMES = {"int2": "smallint", "int4": "integer", "int8": "bigint", "float4": "real",
               "float8": "double precision", "varchar": "character varying", "bool": "boolean",
               "timestamp": "timestamp without time zone", "timestamptz": "timestamp with time zone",
               "time": "time without time zone", "timetz": "time with time zone"}


#: what current_setting() tells catalog queries (PostgreSQL's values where drivers read them)
_SETTINGS = {"default_table_access_method": "heap", "server_version": "15.0",
             "server_version_num": "150000", "standard_conforming_strings": "on",
             "max_identifier_length": "63", "search_path": "main", "server_encoding": "UTF8",
             "client_encoding": "UTF8", "datestyle": "ISO, MDY", "timezone": "UTC"}


def _json_build_object() -> str:
    """PostgreSQL's json_build_object(k1, v1, …) as DuckDB's json_object, up to 8 pairs."""
    arities = []
    for n in range(2, 17, 2):
        args = ", ".join(f"a{i}" for i in range(n))
        body = ", ".join(f"a{i}::VARCHAR" if i % 2 == 0 else f"a{i}" for i in range(n))
        arities.append(f"({args}) AS json_object({body})")
    return f"CREATE MACRO {SCHEMA}.json_build_object" + ", ".join(arities)


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
    # sizes: the replica has no rows, and the real sizes would tell how much protected data there is
    *(f"CREATE MACRO {SCHEMA}.{f}(x) AS 0::BIGINT" for f in ("pg_table_size", "pg_relation_size",
                                                             "pg_total_relation_size", "pg_indexes_size",
                                                             "pg_database_size")),
    *(f"CREATE MACRO {SCHEMA}.{f}(x) AS NULL::VARCHAR" for f in ("pg_get_function_result",
                                                                "pg_get_function_arguments",
                                                                "pg_get_function_identity_arguments")),
    f"CREATE VIEW {SCHEMA}.pg_database AS SELECT oid, 'provsql_dp' AS datname, 10::BIGINT AS datdba, 6 AS encoding, "
    "'c' AS datlocprovider, true AS datallowconn, datistemplate, 'C' AS datcollate, 'C' AS datctype, "
    "NULL::VARCHAR AS daticulocale, NULL::VARCHAR[] AS datacl, -1 AS datconnlimit FROM pg_catalog.pg_database "
    "WHERE datname = current_database()",
    f"CREATE VIEW {SCHEMA}.pg_proc AS SELECT * FROM pg_catalog.pg_proc WHERE pronamespace NOT IN {_HIDE}",
    f"CREATE MACRO {SCHEMA}.array_upper(a, d) AS len(a)",
    f"CREATE MACRO {SCHEMA}.pg_get_serial_sequence(t, c) AS NULL::VARCHAR",
    f"CREATE MACRO {SCHEMA}.current_setting(x) AS CASE lower(x) " + " ".join(
        f"WHEN '{k}' THEN '{v}'" for k, v in _SETTINGS.items()) + " ELSE NULL::VARCHAR END",
    # pg_attribute.atttypid as PostgreSQL's type OIDs (DuckDB's own ids collide with them: its
    # INTEGER is 13, its DOUBLE 23 — int4 in pg_type), and format_type reading those OIDs
    f"CREATE VIEW {SCHEMA}.pg_attribute AS SELECT * REPLACE ((SELECT min(t.oid) FROM pg_catalog.pg_type t "
    "WHERE t.typname = regexp_replace(pg_catalog.format_type(a.atttypid, a.atttypmod), '\\(.*', '')) "
    "AS atttypid) FROM pg_catalog.pg_attribute a",
    # text (25, the OID this server gives VARCHAR columns) is no row of DuckDB's pg_type
    f"CREATE MACRO {SCHEMA}._typname(t) AS CASE WHEN t = 25 THEN 'text' ELSE "
    "(SELECT min(typname) FROM pg_catalog.pg_type WHERE oid = t) END",
    f"CREATE MACRO {SCHEMA}.format_type(t, m) AS CASE WHEN t = 1700 AND m > 0 THEN "
    "'numeric(' || (m // 1000) || ',' || (m % 1000) || ')' ELSE CASE _typname(t) " + " ".join(
        f"WHEN '{short}' THEN '{long}'" for short, long in _TYPE_NAMES.items()) + " ELSE _typname(t) END END",
    _json_build_object(),
    # object-identifier types: names or numbers alike read as text (no object is looked up by them)
    *(f"CREATE TYPE {SCHEMA}.{t} AS VARCHAR" for t in ("regclass", "regtype", "regproc", "regnamespace",
                                                       "regrole", "regoper", "regconfig")),
    f"CREATE VIEW {SCHEMA}.pg_index AS SELECT *, false AS indnullsnotdistinct FROM pg_catalog.pg_index "
    "UNION ALL BY NAME SELECT oid AS indexrelid, conrelid AS indrelid, len(conkey) AS indnatts, "
    "len(conkey) AS indnkeyatts, true AS indisunique, contype = 'p' AS indisprimary, false AS "
    "indisexclusion, true AS indimmediate, false AS indisclustered, true AS indisvalid, false AS "
    "indcheckxmin, true AS indisready, true AS indislive, false AS indisreplident, "
    "list_transform(conkey, lambda k: (k + 1)::INTEGER) AS indkey, NULL::BIGINT[] AS "
    "indcollation, NULL::BIGINT[] AS indclass, NULL::INTEGER[] AS indoption, NULL AS indexprs, "
    "NULL AS indpred, false AS indnullsnotdistinct FROM pg_catalog.pg_constraint "
    "WHERE contype IN ('p', 'u')",
    f"CREATE MACRO {SCHEMA}.to_regtype(x) AS (SELECT min(oid) FROM pg_catalog.pg_type WHERE typname = x)",
    f"CREATE MACRO {SCHEMA}.to_regclass(x) AS (SELECT min(oid) FROM pg_catalog.pg_class WHERE relname = x)",
    f"CREATE MACRO {SCHEMA}.pg_get_expr(x, y) AS NULL::VARCHAR, (x, y, z) AS NULL::VARCHAR",
    f"CREATE MACRO {SCHEMA}.pg_is_in_recovery() AS false",
    f"CREATE MACRO {SCHEMA}.version() AS 'PostgreSQL 15.0 (provsql_dp wire server)'",
    f"CREATE VIEW {SCHEMA}.pg_class AS SELECT * REPLACE (NULL::VARCHAR[] AS reloptions), "
    "false AS relforcerowsecurity FROM pg_catalog.pg_class "
    f"WHERE relnamespace NOT IN {_HIDE}",
    f"CREATE VIEW {SCHEMA}.pg_collation AS SELECT oid, collname, 0::BIGINT AS collnamespace, "
    "10::BIGINT AS collowner, 'c' AS collprovider, true AS collisdeterministic, -1 AS collencoding, "
    "'C' AS collcollate, 'C' AS collctype FROM pg_catalog.pg_collation",
    f"CREATE VIEW {SCHEMA}.pg_namespace AS SELECT * FROM pg_catalog.pg_namespace WHERE nspname <> '{SCHEMA}'",
    # PostgreSQL numbers a constraint's columns (conkey) as pg_attribute's attnum, from 1 (DuckDB
    # from 0), and backs a primary key or UNIQUE constraint by an index of pg_index (conindid;
    # DuckDB lists none): drivers' key reflection (SQLAlchemy's get_pk_constraint) joins them
    f"CREATE VIEW {SCHEMA}.pg_constraint AS SELECT * REPLACE (list_transform(conkey, lambda k: "
    "k + 1) AS conkey, CASE WHEN contype IN ('p', 'u') THEN oid ELSE 0 END AS conindid) "
    "FROM pg_catalog.pg_constraint",
    f"CREATE VIEW {SCHEMA}.pg_tables AS SELECT * FROM pg_catalog.pg_tables WHERE schemaname <> '{SCHEMA}'",
    f"CREATE VIEW {SCHEMA}.pg_views AS SELECT * FROM pg_catalog.pg_views WHERE schemaname <> '{SCHEMA}'",
    f"CREATE VIEW {SCHEMA}.pg_roles AS SELECT 10::BIGINT AS oid, 'provsql_dp' AS rolname, false AS rolsuper, "
    "true AS rolinherit, false AS rolcreaterole, false AS rolcreatedb, true AS rolcanlogin, "
    "false AS rolreplication, -1 AS rolconnlimit, NULL::TIMESTAMP AS rolvaliduntil, false AS rolbypassrls",
    f"CREATE VIEW {SCHEMA}.pg_user AS SELECT 'provsql_dp' AS usename, 10::BIGINT AS usesysid, "
    "false AS usecreatedb, false AS usesuper",
    *(f"CREATE TABLE {SCHEMA}.{name} ({cols})" for name, cols in _EMPTY.items()),
]
