"""The wire server's catalog replica shows analysts no setting that names a server path: its
``pg_settings`` (however it is named) and ``current_setting`` showed ``allowed_directories``
(the server's working directory, ``<cwd>/.tmp/``), ``temp_directory`` and ``secret_directory``
(the server user's home)."""

from __future__ import annotations

import os

import duckdb
import pytest

from provsql_dp.interfaces.pgwire._catalog import Replica

QUERIES = [
    "SELECT name, setting FROM pg_catalog.pg_settings",
    'SELECT name, setting FROM "pg_catalog"."pg_settings"',
    "SELECT name, setting FROM pg_settings",
    " UNION ALL ".join(f"SELECT '{n}', system.main.current_setting('{n}')::VARCHAR" for n in (
        "allowed_directories", "secret_directory", "temp_directory", "home_directory",
        "extension_directory")),
]


@pytest.mark.parametrize("query", QUERIES)
def test_the_replica_names_no_server_path(query, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    replica = Replica()
    cur = replica.cursor(duckdb.connect())
    _, rows = replica.run(cur, query)
    assert len(rows) > 50 or len(rows) == 5  # the settings are there, their paths not
    home = os.path.expanduser("~")
    not_paths = {"TimeZone", "duckdb_api"}  # 'Etc/UTC', 'python/3.11'
    shown = [(name, v) for name, v in rows if v and (str(tmp_path) in v or home in v or ".tmp" in v
                                                      or "/" in v and name not in not_paths)]
    assert shown == [], shown
