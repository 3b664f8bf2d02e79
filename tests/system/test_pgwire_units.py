"""The budget's unit over the wire: on a ρ (zCDP) budget the release's notice says ρ, SHOW LAST
RELEASE's unit column says rho, SHOW PRIVACY BUDGET names ρ, and the curator's SHOW AUDIT LOG
shows the ρ charged with its unit; an analyst cannot read the log."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow  # a real client end to end: .ci/run's second step

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[test]')")

from pgwire_support import dsn, make_database, running_server  # noqa: E402


def test_a_rho_budget_is_named_rho_over_the_wire(tmp_path):
    path = str(tmp_path / "units.duckdb")
    make_database(path)
    with running_server(path) as server:
        with psycopg.connect(dsn(server, "cu"), autocommit=True) as cu:
            cu.execute("SET PRIVACY BUDGET RHO 1 FOR USER 'ann'")
        notices = []
        with psycopg.connect(dsn(server, "ann"), autocommit=True) as c:
            c.add_notice_handler(lambda d: notices.append(d.message_primary))
            c.execute("SELECT COUNT(*) FROM emp WITH EPSILON 0.5").fetchall()
            assert "ρ charged 0.125" in notices[-1] and "ε charged" not in notices[-1]
            cur = c.execute("SHOW LAST RELEASE")
            cols = [d.name for d in cur.description]
            row = dict(zip(cols, cur.fetchone()))
            assert (row["epsilon"], row["unit"]) == (0.125, "rho")
            assert c.execute("SHOW PRIVACY BUDGET").fetchone()[2] == "ρ = 0.125"
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="curator only"):
                c.execute("SHOW AUDIT LOG")
        with psycopg.connect(dsn(server, "bob"), autocommit=True) as c:  # a pure-ε budget
            c.add_notice_handler(lambda d: notices.append(d.message_primary))
            c.execute("SELECT COUNT(*) FROM emp WITH EPSILON 0.5").fetchall()
            assert "ε charged 0.5" in notices[-1]
            assert c.execute("SHOW LAST RELEASE").fetchone()[-1] == "epsilon"
        with psycopg.connect(dsn(server, "cu"), autocommit=True) as cu:
            cur = cu.execute("SHOW AUDIT LOG LIMIT 3")
            cols = [d.name for d in cur.description]
            rows = [dict(zip(cols, r)) for r in cur.fetchall()]
            assert [(r["user_name"], r["outcome"], r["epsilon"], r["unit"]) for r in rows] == [
                ("ann", "released", "1/8", "rho"), ("ann", "refused", "0", None),
                ("bob", "released", "1/2", "epsilon")]
