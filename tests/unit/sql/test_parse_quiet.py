"""Our parse drops sqlglot's "Falling back to parsing as a 'Command'" warning (the shell showed it
above DuckDB's own error for a misspelt statement); sqlglot used elsewhere keeps it."""

import logging

import sqlglot

from provsql_dp.sql import dialect as d


def test_our_parse_is_quiet_and_sqlglot_elsewhere_is_not(caplog):
    with caplog.at_level(logging.WARNING, logger="sqlglot"):
        tree = d.parse_one("CREATE STREM s WINDOW 3 STEPS WITH EPSILON 1")
        assert type(tree).__name__ == "Command"  # handed to DuckDB, which names the typo
        assert not [r for r in caplog.records if "Falling back" in r.getMessage()]
        sqlglot.parse_one("CREATE STREM t")
        assert [r for r in caplog.records if "Falling back" in r.getMessage()]
