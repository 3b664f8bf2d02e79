"""Blowfish policies declared with ``CREATE POLICY``, persisted in ``_provsql_dp.policies``.

One row per policy: its name (unique, case-insensitive), the table and columns it covers, and a
JSON description (:class:`provsql_dp.policies.blowfish.sql.TablePolicy`) of the graph, the domains and
the ⊥ setting. The table lives in the database file, so policies survive a reconnect.

>>> import duckdb
>>> cat = PolicyCatalog(duckdb.connect())
>>> cat.add("p", "main", "t", ["a"], '{"graph": {"kind": "LINE"}}', "CREATE POLICY …")
>>> [(r.name, r.table, r.columns) for r in cat.list()]
[('p', 't', ('a',))]
>>> cat.drop("P").name
'p'
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from ...sql.catalog import SCHEMA

__all__ = ["PolicyCatalog", "PolicyRow"]

_DDL = [
    f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}",
    f"""CREATE TABLE IF NOT EXISTS {SCHEMA}.policies (
        name VARCHAR PRIMARY KEY,
        schema_name VARCHAR NOT NULL,
        table_name VARCHAR NOT NULL,
        columns VARCHAR[] NOT NULL,
        spec VARCHAR NOT NULL,
        statement VARCHAR,
        created TIMESTAMP DEFAULT current_timestamp)""",
]


@dataclass(frozen=True)
class PolicyRow:
    name: str
    schema: str
    table: str
    columns: tuple[str, ...]
    spec: str
    statement: str | None


class PolicyCatalog:
    """Reads and writes ``_provsql_dp.policies`` (created on first write)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, *, read_only: bool = False, catalog=None):
        self.con = con
        self.read_only = read_only
        #: the connection's :class:`~provsql_dp.sql.catalog.Catalog`, if any: the list of policies
        #: is then kept with its other declarations, and a change is announced through it
        self.catalog = catalog

    def _ensure(self) -> None:
        for stmt in _DDL:
            self.con.execute(stmt)

    def _exists(self) -> bool:
        row = self.con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND table_name = 'policies'",
            [SCHEMA]).fetchone()
        return bool(row and row[0])

    def list(self, schema: str | None = None, table: str | None = None) -> list[PolicyRow]:
        if self.catalog is not None:
            out = list(self.catalog.cached(("policies",), self._read))
        else:
            out = list(self._read())
        if table is not None:
            out = [r for r in out if r.table.lower() == table.lower()
                   and (schema is None or r.schema.lower() == schema.lower())]
        return out

    def _read(self) -> tuple[PolicyRow, ...]:
        if not self._exists():
            return ()
        rows = self.con.execute(
            f"SELECT name, schema_name, table_name, columns, spec, statement FROM {SCHEMA}.policies "
            "ORDER BY schema_name, table_name, name").fetchall()
        return tuple(PolicyRow(n, s, t, tuple(c), sp, st) for n, s, t, c, sp, st in rows)

    def _changed(self) -> None:
        if self.catalog is not None:
            self.catalog.changed()

    def get(self, name: str) -> PolicyRow | None:
        for r in self.list():
            if r.name.lower() == name.lower():
                return r
        return None

    def add(self, name, schema, table, columns, spec: str, statement: str | None) -> None:
        self._ensure()
        self.con.execute(
            f"INSERT INTO {SCHEMA}.policies (name, schema_name, table_name, columns, spec, statement) "
            "VALUES (?, ?, ?, ?, ?, ?)", [name, schema, table, list(columns), spec, statement])
        self._changed()

    def drop(self, name: str) -> PolicyRow | None:
        row = self.get(name)
        if row is not None:
            self.con.execute(f"DELETE FROM {SCHEMA}.policies WHERE name = ?", [row.name])
            self._changed()
        return row
