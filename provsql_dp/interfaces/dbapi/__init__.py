"""PEP 249 over DuckDB: ``connection`` (Connection, Cursor, connect) and ``types``."""
