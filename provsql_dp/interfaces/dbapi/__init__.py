"""PEP 249 over DuckDB: ``connection`` (connect, Connection), ``cursor`` (Cursor: dispatch and
fetching), ``statements`` (splitting, statement kinds), ``privacy_statements`` (PROTECT, budgets,
…), ``duckdb_errors`` (DuckDB's exceptions onto PEP 249's), ``analyst_views`` (an analyst's
ledger and catalog) and ``types``."""
