"""PEP 249 over DuckDB: ``connection`` (connect, Connection), ``cursor`` (Cursor: dispatch and
fetching), ``statements`` (splitting, statement kinds), ``privacy_statements`` (PROTECT, budgets,
…), ``analyst_views`` (an analyst's
ledger and catalog) and ``types``. DuckDB's exceptions are mapped onto PEP 249's by
:mod:`provsql_dp._duckdb_errors`."""
