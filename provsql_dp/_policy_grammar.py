"""Policy statements of our SQL dialect (``CREATE POLICY``, ``DROP POLICY``, ``SHOW POLICIES``).

``_dialect.ProvDP.Parser`` calls :func:`parse_policy_statement` for any top-level statement that
is not one of the core privacy statements; it returns the parsed expression, or None when the
statement is not a policy statement (it then parses as DuckDB). ``POLICY_STATEMENTS`` lists the
expression classes (the connection dispatches them to ``_policy_exec``) and ``KEYWORD_PAIRS``
the leading keyword pairs that mark a statement as ours.

No policy statement is defined yet: the Blowfish engine (``provsql_dp.blowfish``) is reachable
from Python only, and histograms over protected tables go to the recursive mechanism.

>>> POLICY_STATEMENTS, KEYWORD_PAIRS
((), set())
"""

from __future__ import annotations

__all__ = ["parse_policy_statement", "POLICY_STATEMENTS", "KEYWORD_PAIRS"]

POLICY_STATEMENTS: tuple = ()
KEYWORD_PAIRS: set[tuple[str, str]] = set()


def parse_policy_statement(parser):
    """Parse a policy statement at the parser's position, or return None (consuming nothing)."""
    return None
