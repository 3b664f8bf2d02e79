"""The columns a privacy statement answers, known without running it (a wire client's Describe
of a prepared statement: :mod:`provsql_dp.interfaces.pgwire._describe`).

The ``SHOW`` statements, ``EXPLAIN PRIVACY``, ``PUBLISH STREAM`` and ``KMEANS`` answer fixed
columns, read here from the constants their runs build their rows with; the statements that change
a declaration answer one status line (``protected t: …``), which a client that described them
gets as a notice: PostgreSQL describes such statements NoData.

>>> from provsql_dp.sql import dialect as d
>>> [c for c, _ in result_columns(None, d.parse_one("SHOW PRIVACY BUDGET"))]
['user', 'total', 'spent', 'remaining']
>>> result_columns(None, d.parse_one("PROTECT TABLE t")) is None
True
"""

from __future__ import annotations

from ...errors import InternalError
from ...privacy import routing
from ...privacy.audit import LOG_COLUMNS
from ...privacy.policy_statements import POLICY_COLUMNS
from ...privacy.stream_statements import PUBLISH_COLUMNS, PUBLISHED_COLUMNS, STREAMS_COLUMNS
from ...sql import dialect as d
from ...sql import policy_grammar as pg
from ...sql import stream_grammar as sg
from ...sql.curator_grammar import AttachSparkTable, ShowAuditLog
from .privacy_statements import (BOUNDS_COLUMNS, BUDGET_COLUMNS, GROUP_KEYS_COLUMNS,
                                 PROTECTED_COLUMNS)

__all__ = ["result_columns"]

_FIXED = {d.ShowProtected: PROTECTED_COLUMNS, d.ShowPrivacyBudget: BUDGET_COLUMNS,
          d.ShowBounds: BOUNDS_COLUMNS, d.ShowGroupKeys: GROUP_KEYS_COLUMNS,
          pg.ShowPolicies: POLICY_COLUMNS, pg.ExplainPrivacy: routing.DESC,
          sg.Publish: PUBLISH_COLUMNS, ShowAuditLog: LOG_COLUMNS}
#: the statements whose answer is one status line
_STATUS = (d.Protect, d.Unprotect, d.SetPrivacyBudget, d.SetPrivacyEpsilon, d.SetBounds,
           d.DropBounds, d.SetGroupKeys, d.DropGroupKeys, pg.CreatePolicy, pg.DropPolicy,
           sg.CreateStream, AttachSparkTable)


def result_columns(con, tree) -> list[tuple[str, str]] | None:
    """``(name, DuckDB type)`` of each column privacy statement ``tree`` answers (None: a status
    line). Nothing runs and nothing is charged; ``KMEANS`` is checked as its run checks it first
    (its columns are the ones it names)."""
    if isinstance(tree, _STATUS):
        return None
    if isinstance(tree, sg.ShowStreams):
        return list(PUBLISHED_COLUMNS if tree.this is not None else STREAMS_COLUMNS)
    if isinstance(tree, pg.KMeans):
        from ...privacy.kmeans_statement import describe_kmeans

        return describe_kmeans(con, tree)
    for kind, columns in _FIXED.items():
        if isinstance(tree, kind):
            return list(columns)
    raise InternalError(f"no columns known for {type(tree).__name__}")  # pragma: no cover
