"""provsql_dp: differentially private SQL over DuckDB by provenance tracking."""

__version__ = "0.1.0"
