"""The wire server driven by the clients analysts use: Debian's psql (scripts, \\d), SQLAlchemy's
reflection and pandas.read_sql — each as curator and as analyst, refusals and budgets included."""

from __future__ import annotations

import os
import subprocess

import pytest

from pgwire_support import PASSWORDS, PSQL, make_database, psql, running_server, spent

pytestmark = pytest.mark.slow  # real clients end to end: .ci/run's second step



@pytest.fixture(scope="module")
def server(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("pgwire_clients") / "clients.duckdb")
    make_database(path)
    with running_server(path) as srv:
        yield srv



@pytest.mark.skipif(PSQL is None, reason="psql is not installed (Debian: apt-get install postgresql-client)")
def test_psql_analyst_script_describe_refusals_and_budget(server):
    out = psql(server, "ann", "SELECT COUNT(*) AS n FROM emp WITH EPSILON 0.5;\n"
                              "SHOW LAST RELEASE;\n"
                              "\\dt\n"
                              "\\d emp\n"
                              "SELECT * FROM emp;\n"
                              "SELECT COUNT(*) FROM emp WITH EPSILON 50;\n"
                              "SELECT name FROM depts WHERE floor = 1;\n", "-A", "-F", "|")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "n|n_low|n_high"
    assert lines[3].startswith("mechanism|epsilon|remaining|row_number|column_name|low|high")
    assert lines[4].startswith("laplace|0.5|2.5|1|n|")
    assert "main|emp|table|provsql_dp" in out.stdout and "main|depts|table|provsql_dp" in out.stdout
    assert "_provsql_dp" not in out.stdout and "web_accounts" not in out.stdout
    assert 'Table "main.emp"' in out.stdout and "salary|double precision" in out.stdout
    assert "d0" in lines[-2]
    assert "ERROR:  table 'emp' is protected" in out.stderr
    assert "ERROR:  privacy budget exceeded for user 'ann'" in out.stderr and "nothing was spent" in out.stderr
    assert "NOTICE:  private release: mechanism laplace, ε charged 0.5" in out.stderr
    assert spent(server.engine, "ann") == "1/2"


@pytest.mark.skipif(PSQL is None, reason="psql is not installed (Debian: apt-get install postgresql-client)")
def test_psql_meta_commands_show_names_and_types_only(server):
    out = psql(server, "ann", "\\l\n\\dn\n\\du\n\\df\n\\dt+\n\\d+ emp\n", "-A", "-F", "|")
    assert out.returncode == 0 and "ERROR" not in out.stderr, out.stderr
    assert "provsql_dp|provsql_dp|UTF8" in out.stdout and "main|provsql_dp" in out.stdout
    # sizes would tell how much protected data there is: the replica has none
    assert "main|emp|table|provsql_dp|permanent|art|0 bytes|" in out.stdout
    assert "salary|double precision|" in out.stdout


@pytest.mark.skipif(PSQL is None, reason="psql is not installed (Debian: apt-get install postgresql-client)")
def test_psql_stops_on_error_with_its_exit_status_and_sqlstate(server):
    out = psql(server, "bob", "SELECT * FROM emp;\nSELECT 1;\n", "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose")
    assert out.returncode == 3 and "ERROR:  42501: table 'emp' is protected" in out.stderr
    wrong = subprocess.run([PSQL, "-X", "-h", "127.0.0.1", "-p", str(server.port), "-U", "bob", "-d", "demo",
                            "-c", "SELECT 1"], capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, PGPASSWORD="not-the-password"))
    assert wrong.returncode == 2 and 'password authentication failed for user "bob"' in wrong.stderr


@pytest.mark.skipif(PSQL is None, reason="psql is not installed (Debian: apt-get install postgresql-client)")
def test_psql_curator_declares_and_reads(server):
    out = psql(server, "cu", "CREATE TABLE visits(who INT, n INT);\n"
                             "INSERT INTO visits VALUES (1, 3), (2, 5);\n"
                             "PROTECT TABLE visits BY (who) AS person;\n"
                             "SELECT SUM(n) AS total FROM visits;\n"
                             "SET PRIVACY BUDGET 1 FOR USER 'ann';\n"
                             "\\d\n", "-A", "-F", "|", "-v", "ON_ERROR_STOP=1")
    assert out.returncode == 0, out.stderr
    assert "INSERT 0 2" in out.stdout and "total\n8\n" in out.stdout and "main|visits|table" in out.stdout


try:
    import pandas as pd
    import psycopg  # noqa: F401 - SQLAlchemy's postgresql+psycopg driver
    import sqlalchemy as sa
except ImportError as e:  # the psql tests above still run
    sa = pd = None
    MISSING = f"{e.name} is not installed (pip install '.[test]')"
needs_sqlalchemy = pytest.mark.skipif(sa is None, reason=MISSING if sa is None else "")


def engine_for(server, user):
    return sa.create_engine(f"postgresql+psycopg://{user}:{PASSWORDS[user]}@127.0.0.1:{server.port}/demo",
                            poolclass=sa.pool.NullPool)


@needs_sqlalchemy
def test_sqlalchemy_reflection_and_pandas_read_sql_as_analyst(server):
    eng = engine_for(server, "bob")
    insp = sa.inspect(eng)
    assert {"emp", "depts", "pub"} <= set(insp.get_table_names())
    cols = insp.get_columns("emp")
    assert [(c["name"], type(c["type"]).__name__) for c in cols] == [
        ("id", "INTEGER"), ("dept", "VARCHAR"), ("salary", "DOUBLE_PRECISION")]
    depts = sa.Table("depts", sa.MetaData(), autoload_with=eng)
    with eng.connect() as c:
        assert c.execute(sa.select(depts.c.name).where(depts.c.floor == 2).order_by(depts.c.name)).all() == \
            [("d1",), ("d2",)]
        df = pd.read_sql(sa.text("SELECT dept, COUNT(*) AS n FROM emp WHERE salary >= :lo GROUP BY dept "
                                 "WITH EPSILON 0.5"), c, params={"lo": 0})
        assert list(df.columns) == ["dept", "n", "n_low", "n_high"] and list(df.dept) == ["d0", "d1", "d2"]
        assert ((df.n_low <= df.n) & (df.n <= df.n_high)).all()
        last = pd.read_sql("SHOW LAST RELEASE", c)
        assert list(last.column_name) == ["n"] * 3 and (last.epsilon == 0.5).all()
        with pytest.raises(pd.errors.DatabaseError) as e:
            pd.read_sql("SELECT dept FROM emp", c)
        assert "protected" in str(e.value)
    assert spent(server.engine, "bob") == "1/2"
    eng.dispose()


@needs_sqlalchemy
def test_sqlalchemy_as_curator_writes_and_reads_raw_rows(server):
    eng = engine_for(server, "cu")
    with eng.begin() as c:
        c.execute(sa.text("CREATE TABLE IF NOT EXISTS notes2(id INT, body VARCHAR)"))
        c.execute(sa.text("INSERT INTO notes2 VALUES (:i, :b)"), [{"i": 1, "b": "one"}, {"i": 2, "b": "two"}])
    with eng.connect() as c:
        assert pd.read_sql("SELECT * FROM notes2 ORDER BY id", c).body.tolist() == ["one", "two"]
        assert pd.read_sql("SELECT COUNT(*) AS n FROM emp", c).n.tolist() == [200]  # the curator's true count
    assert "notes2" in sa.inspect(eng).get_table_names()
    eng.dispose()
