"""Accuracy-first releases from Python over a connection (Liu et al. §3).

:func:`answer_with_accuracy` runs ``EXPLAIN PRIVACY <sql> WITH ACCURACY α CONFIDENCE c`` (no
data read, nothing spent) to get the smallest ε meeting the accuracy, then releases
``<sql> WITH EPSILON ε`` on the cursor — charged to the ledger like any private query, with the
usual metadata on ``cursor.privacy``.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER); PROTECT TABLE t; "
...                 "SET PRIVACY BUDGET 10")
>>> _ = con.execute("CREATE POLICY p ON t (a) AS LINE DOMAIN [0, 8) WIDTH 1 BOUNDED")
>>> cur = answer_with_accuracy(con.cursor(), "COUNT CUMULATIVE a FROM t", alpha=20)
>>> len(cur.fetchall()), str(cur.privacy.epsilon)
(8, '0.246')
"""

from __future__ import annotations

from ...errors import ProgrammingError

__all__ = ["answer_with_accuracy", "epsilon_for"]


def epsilon_for(cursor, sql: str, alpha, confidence=0.95) -> str:
    """The ε (an exact decimal string) that meets ``alpha`` at ``confidence`` for ``sql``."""
    cursor.execute(f"EXPLAIN PRIVACY {sql} WITH ACCURACY {alpha} CONFIDENCE {confidence}")
    row = cursor.fetchone()
    names = [c[0] for c in cursor.description]
    rec = dict(zip(names, row))
    if rec["mechanism"] != "blowfish":
        raise ProgrammingError(f"no accuracy-first release for this query: {rec['note']}")
    return rec["epsilon"]


def answer_with_accuracy(cursor, sql: str, alpha, confidence=0.95):
    """Release ``sql`` at the smallest ε meeting ``alpha`` at ``confidence``; returns the cursor."""
    eps = epsilon_for(cursor, sql, alpha, confidence)
    return cursor.execute(f"{sql} WITH EPSILON {eps}")
