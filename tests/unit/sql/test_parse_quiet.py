"""Our parse drops sqlglot's "Falling back to parsing as a 'Command'" warning (the shell showed it
above DuckDB's own error for a misspelt statement); sqlglot used elsewhere keeps it."""

import logging

import sqlglot

from provsql_dp.sql import dialect as d


class _Keep(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def test_our_parse_is_quiet_and_sqlglot_elsewhere_is_not():
    # a handler of our own on sqlglot's logger: independent of how other tests left logging
    logger, keep = logging.getLogger("sqlglot"), _Keep()
    level, disabled, off = logger.level, logging.root.manager.disable, logger.disabled
    logger.addHandler(keep)
    logger.setLevel(logging.WARNING)
    logging.disable(logging.NOTSET)
    logger.disabled = False  # a dictConfig elsewhere (import-linter's) may have disabled it
    try:
        tree = d.parse_one("CREATE STREM s WINDOW 3 STEPS WITH EPSILON 1")
        assert type(tree).__name__ == "Command"  # handed to DuckDB, which names the typo
        assert not [r for r in keep.records if "Falling back" in r.getMessage()]
        sqlglot.parse_one("CREATE STREM t")
        assert [r for r in keep.records if "Falling back" in r.getMessage()]
    finally:
        logger.removeHandler(keep)
        logger.setLevel(level)
        logging.disable(disabled)
        logger.disabled = off
