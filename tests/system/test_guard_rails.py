"""DuckDB's own guard rails on every connection that serves an analyst (issue 26, item 2).

Tested on the DuckDB connection underneath (``con._duck``): what a statement that slipped past
provsql_dp's own checks would meet. The curator's in-process connection keeps full power; the
explorer opens every connection with the rails, its curators' included.
"""

from __future__ import annotations

import warnings

import duckdb
import pytest

import provsql_dp
from provsql_dp.errors import InterfaceError, OperationalError
from provsql_dp.interfaces import cli, example_data
from provsql_dp.interfaces.dbapi.engines import GUARD_RAILS
from provsql_dp.interfaces.web.engine import Engine


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / "g.duckdb")
    cur = provsql_dp.connect(path)
    example_data.load(cur)
    cur.execute("PROTECT TABLE employees; SET PRIVACY BUDGET 3 FOR USER 'ann'")
    cur.commit()
    cur.close()
    secret = tmp_path / "secret.csv"
    secret.write_text("name\nAlice\n")
    return path, str(secret)


def setting(duck, name):
    return duck.execute(f"SELECT current_setting('{name}')").fetchone()[0]


def test_an_analyst_connection_cannot_reach_files_extensions_or_settings(db):
    path, secret = db
    an = provsql_dp.connect(path, role="analyst", user="ann", memory_limit="1GB",
                            temp_directory_limit="2GB")
    assert an.guard_rails
    duck = an._duck  # the wall below provsql_dp's checks
    for sql in [f"SELECT * FROM read_csv('{secret}')", f"COPY employees TO '{secret}'",
                f"ATTACH '{secret}.duckdb' AS x", "INSTALL httpfs", "LOAD httpfs"]:
        with pytest.raises(duckdb.Error, match="disabled by configuration|Permission"):
            duck.execute(sql)
    for sql in ["SET enable_external_access = true", "RESET enable_external_access",
                "SET lock_configuration = false", "SET memory_limit = '100GB'",
                "PRAGMA memory_limit = '100GB'", "SET autoload_known_extensions = true",
                "SET python_enable_replacements = true"]:
        with pytest.raises(duckdb.Error, match="configuration has been locked"):
            duck.execute(sql)
    assert setting(duck, "enable_external_access") is False
    assert setting(duck, "autoload_known_extensions") is False
    assert setting(duck, "autoinstall_known_extensions") is False
    assert setting(duck, "lock_configuration") is True
    assert setting(duck, "memory_limit") == "953.6 MiB"  # 1GB in DuckDB's units
    assert setting(duck, "max_temp_directory_size") == "1.8 GiB"
    # provsql_dp's own work runs under the rails: a release (ledger write, capture, catalog)
    cur = an.execute("SELECT COUNT(*) FROM employees WITH EPSILON 0.5")
    assert len(cur.fetchall()) == 1 and cur.privacy.remaining == 2.5
    assert an.execute("SELECT COUNT(*) FROM departments").fetchone()[0] == 5
    # ICU is built in (TIMESTAMPTZ arithmetic and time zones need nothing loaded)
    assert duck.execute("SELECT date_trunc('day', TIMESTAMPTZ '2020-01-02 03:04:05+02')"
                        ).fetchone()[0] is not None
    an.close()


def test_the_curators_in_process_connection_keeps_full_power(db):
    path, secret = db
    cur = provsql_dp.connect(path)
    assert not cur.guard_rails
    assert cur.execute(f"SELECT name FROM read_csv('{secret}')").fetchall() == [("Alice",)]
    cur.execute("SET threads = 1")
    cur.close()


def test_a_clash_with_an_unguarded_instance_is_stated(db):
    path, _ = db
    cur = provsql_dp.connect(path)
    with pytest.raises(OperationalError, match="guard rails.*one configuration"):
        provsql_dp.connect(path, role="analyst", user="ann", guard_rails=True)
    with pytest.warns(UserWarning, match="without DuckDB's guard rails"):
        an = provsql_dp.connect(path, role="analyst", user="ann")  # the documented default
    assert not an.guard_rails
    an.close()
    cur.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        an = provsql_dp.connect(path, role="analyst", user="ann")  # alone in the process again
    assert an.guard_rails
    an.close()


def test_config_that_lowers_a_rail_is_refused():
    with pytest.raises(InterfaceError, match="enable_external_access"):
        provsql_dp.connect(role="analyst", user="ann", config={"enable_external_access": True})
    with pytest.raises(InterfaceError, match="memory_limit"):
        provsql_dp.connect(role="analyst", user="ann", memory_limit="lots")
    assert set(GUARD_RAILS) >= {"enable_external_access", "autoload_known_extensions",
                                "autoinstall_known_extensions", "allow_community_extensions",
                                "lock_configuration"}


def test_the_explorer_runs_every_connection_with_the_rails(db):
    path, secret = db
    eng = Engine(path, memory_limit="2GB", max_statement_bytes=1000)
    try:
        curator = eng.connection("curator", "cu")
        assert curator.guard_rails and curator.max_statement_bytes == 1000
        with pytest.raises(provsql_dp.Error, match="disabled by configuration"):
            eng.run("curator", "cu", f"SELECT * FROM read_csv('{secret}')")
        assert eng.run("analyst", "ann", "SELECT COUNT(*) FROM employees WITH EPSILON 0.5").rows
        assert setting(curator._duck, "memory_limit") == "1.8 GiB"
    finally:
        eng.close()


def test_cli_flags(monkeypatch):
    seen = {}

    def shell_main(database, **kw):
        seen.update(kw)
        return 0

    monkeypatch.setattr("provsql_dp.interfaces.shell.command.main", shell_main)
    monkeypatch.setattr("provsql_dp.interfaces.shell.main", shell_main, raising=False)
    assert cli.main(["shell", "-c", "SELECT 1", "--memory-limit", "2GB", "--temp-directory-limit",
                     "none", "--max-statement-bytes", "16KiB", "--max-expression-depth", "none"]) == 0
    assert (seen["memory_limit"], seen["temp_directory_limit"], seen["max_statement_bytes"],
            seen["max_expression_depth"]) == ("2GB", None, 16384, None)
    assert cli.main(["shell", "-c", "SELECT 1"]) == 0
    assert (seen["memory_limit"], seen["max_statement_bytes"], seen["max_expression_depth"]) == (
        "50%", 65536, 64)
    for bad in (["--max-statement-bytes", "0"], ["--memory-limit", "lots"]):
        with pytest.raises(SystemExit):
            cli.main(["shell", "-c", "SELECT 1", *bad])
