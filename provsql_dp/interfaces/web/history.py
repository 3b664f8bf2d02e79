"""Each user's history of answers, stored in the database (``_provsql_dp.web_history``).

An entry holds what the user already saw: the statement, the ε charged, the accuracy asked for
and the released answer (columns, rows, noise bounds) as JSON — never anything the engine did
not release. A user lists and reads only their own entries.

An entry's number is its rank among its user's entries (1, 2, 3, ...), not the table's row id:
the row ids come from one sequence shared by every user, so showing them would let a user count
the statements others ran between two of theirs. Entries are never deleted, so a number stays
put; :func:`add` holds the user's lock from its insert to its count, so two answers of one user
stored at once by two threads of the server still get the numbers of their row ids' order (a
lock per user: one user's answers never wait for another's).

>>> import duckdb
>>> duck = duckdb.connect()
>>> add(duck, "ann", "SELECT 1", "1", {"columns": ["x"], "rows": [[1.5]]})
1
>>> add(duck, "bob", "SELECT 2", "1", {"rows": [[2]]}), add(duck, "ann", "SELECT 3", "1", {"rows": [[3]]})
(1, 2)
>>> [(e["id"], e["sql"]) for e in entries(duck, "ann")], get(duck, "bob", 2)
([(2, 'SELECT 3'), (1, 'SELECT 1')], None)
"""

from __future__ import annotations

import json
import threading

__all__ = ["add", "entries", "get", "TABLE"]

TABLE = "_provsql_dp.web_history"
_ADDING: dict[str, threading.Lock] = {}  # per user: an insert and its count, together
_LOCKS = threading.Lock()  # guards _ADDING


def _ensure(duck) -> None:
    duck.execute("CREATE SCHEMA IF NOT EXISTS _provsql_dp")
    duck.execute("CREATE SEQUENCE IF NOT EXISTS _provsql_dp.web_history_id")
    duck.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (id BIGINT DEFAULT nextval('_provsql_dp.web_history_id') "
                 "PRIMARY KEY, user_name VARCHAR NOT NULL, created TIMESTAMP DEFAULT current_timestamp, "
                 "title VARCHAR, sql VARCHAR NOT NULL, epsilon VARCHAR, answer JSON)")


def add(duck, user: str, sql: str, epsilon: str | None, answer: dict, title: str | None = None) -> int:
    """Store one answer; returns its number among the user's entries."""
    _ensure(duck)
    with _LOCKS:
        mine = _ADDING.setdefault(user, threading.Lock())
    with mine:
        row_id = duck.execute(f"INSERT INTO {TABLE} (user_name, title, sql, epsilon, answer) VALUES (?, ?, ?, ?, ?) "
                              "RETURNING id", [user, title or sql[:80], sql, epsilon, json.dumps(answer)]).fetchone()[0]
        return duck.execute(f"SELECT count(*) FROM {TABLE} WHERE user_name = ? AND id <= ?",
                            [user, row_id]).fetchone()[0]


def entries(duck, user: str, limit: int = 200) -> list[dict]:
    """The user's entries, newest first (without the answers)."""
    _ensure(duck)
    rows = duck.execute(f"SELECT row_number() OVER (ORDER BY id), strftime(created, '%Y-%m-%d %H:%M:%S'), title, "
                        f"sql, epsilon FROM {TABLE} WHERE user_name = ? ORDER BY id DESC LIMIT ?",
                        [user, limit]).fetchall()
    return [dict(zip(("id", "at", "title", "sql", "epsilon"), r)) for r in rows]


def get(duck, user: str, entry_id: int) -> dict | None:
    """The user's entry numbered ``entry_id`` with its answer, or None (only the user's own are numbered)."""
    _ensure(duck)
    entry_id = int(entry_id)
    if not 1 <= entry_id < 2 ** 62:  # (a BIGINT offset)
        return None
    row = duck.execute(f"SELECT title, sql, epsilon, answer FROM {TABLE} WHERE user_name = ? ORDER BY id "
                       "LIMIT 1 OFFSET ?", [user, entry_id - 1]).fetchone()
    if row is None:
        return None
    return {"id": entry_id, "title": row[0], "sql": row[1], "epsilon": row[2], "answer": json.loads(row[3])}
