"""Each user's history of answers, stored in the database (``_provsql_dp.web_history``).

An entry holds what the user already saw: the statement, the ε charged, the accuracy asked for
and the released answer (columns, rows, noise bounds) as JSON — never anything the engine did
not release. A user lists and reads only their own entries.

>>> import duckdb
>>> duck = duckdb.connect()
>>> i = add(duck, "ann", "SELECT 1", "1", {"columns": ["x"], "rows": [[1.5]]})
>>> [e["sql"] for e in entries(duck, "ann")], get(duck, "bob", i)
(['SELECT 1'], None)
"""

from __future__ import annotations

import json

__all__ = ["add", "entries", "get", "TABLE"]

TABLE = "_provsql_dp.web_history"


def _ensure(duck) -> None:
    duck.execute("CREATE SCHEMA IF NOT EXISTS _provsql_dp")
    duck.execute("CREATE SEQUENCE IF NOT EXISTS _provsql_dp.web_history_id")
    duck.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (id BIGINT DEFAULT nextval('_provsql_dp.web_history_id') "
                 "PRIMARY KEY, user_name VARCHAR NOT NULL, created TIMESTAMP DEFAULT current_timestamp, "
                 "title VARCHAR, sql VARCHAR NOT NULL, epsilon VARCHAR, answer JSON)")


def add(duck, user: str, sql: str, epsilon: str | None, answer: dict, title: str | None = None) -> int:
    """Store one answer; returns its id."""
    _ensure(duck)
    return duck.execute(f"INSERT INTO {TABLE} (user_name, title, sql, epsilon, answer) VALUES (?, ?, ?, ?, ?) "
                        "RETURNING id", [user, title or sql[:80], sql, epsilon, json.dumps(answer)]).fetchone()[0]


def entries(duck, user: str, limit: int = 200) -> list[dict]:
    """The user's entries, newest first (without the answers)."""
    _ensure(duck)
    rows = duck.execute(f"SELECT id, strftime(created, '%Y-%m-%d %H:%M:%S'), title, sql, epsilon FROM {TABLE} "
                        "WHERE user_name = ? ORDER BY id DESC LIMIT ?", [user, limit]).fetchall()
    return [dict(zip(("id", "at", "title", "sql", "epsilon"), r)) for r in rows]


def get(duck, user: str, entry_id: int) -> dict | None:
    """One of the user's entries with its answer, or None (someone else's entries are not found)."""
    _ensure(duck)
    row = duck.execute(f"SELECT id, title, sql, epsilon, answer FROM {TABLE} WHERE id = ? AND user_name = ?",
                       [int(entry_id), user]).fetchone()
    if row is None:
        return None
    return {"id": row[0], "title": row[1], "sql": row[2], "epsilon": row[3], "answer": json.loads(row[4])}
