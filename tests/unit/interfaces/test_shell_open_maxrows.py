"""The shell's ``.maxrows`` (duckdb's default of 40 rows in the display modes) and ``.open``."""

from __future__ import annotations

import io

from provsql_dp.interfaces.shell import main
from provsql_dp.interfaces.shell.session import MAXROWS


def shell(command: str, mode: str = "table", database: str = ":memory:"):
    out, err = io.StringIO(), io.StringIO()
    code = main(database, command=command, mode=mode, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_a_large_public_result_is_clipped_in_the_display_modes_only():
    big = "SELECT range AS x FROM range(100000) ORDER BY x;"
    code, out, err = shell(big)
    assert code == 0, err
    lines = out.splitlines()
    assert MAXROWS == 40 and len(lines) < 50
    assert "|     0 |" in out and "| 99999 |" in out and "| 50000 |" not in out
    assert lines[-1] == "100,000 rows (40 shown: .maxrows 0 shows every row)"
    small = "SELECT range AS x FROM range(1000) ORDER BY x;"
    for mode in ("box", "markdown"):
        assert "1,000 rows (40 shown" in shell(small, mode)[1]
    code, out, _ = shell(small, "csv")  # programs get every row
    assert len(out.splitlines()) == 1_001
    code, out, _ = shell(".maxrows 3\n" + big)
    assert "100,000 rows (3 shown" in out and "|     1 |" in out and "|     2 |" not in out
    assert "| 99999 |" in out and "99998" not in out  # the first two and the last one
    code, out, _ = shell(".maxrows 0\nSELECT range AS x FROM range(100);")
    assert "rows (" not in out and len(out.splitlines()) == 104
    code, out, _ = shell("SELECT range AS x FROM range(40);")
    assert "rows (" not in out  # exactly maxrows: all of them


def test_maxrows_usage_show_and_help():
    code, _, err = shell(".maxrows lots")
    assert code == 1 and "usage: .maxrows N" in err
    code, out, _ = shell(".maxrows 7\n.maxrows\n.show")
    assert "maxrows: 7" in out and "maxrows: 7" in out.split("maxrows: 7", 1)[1]
    code, out, _ = shell(".help open")
    assert ".open [FILE]" in out
    code, out, _ = shell(".help maxrows")
    assert ".maxrows [N]" in out and "default 40" in out


def test_open_another_database_and_back_to_memory(tmp_path):
    first, second = str(tmp_path / "a.duckdb"), str(tmp_path / "b.duckdb")
    code, out, err = shell(f"CREATE TABLE in_a(x INT);\n.open {second}\nCREATE TABLE in_b(x INT);\n.tables\n"
                           ".open\n.tables", database=first)
    assert code == 0, err
    assert f"opened {second} as curator" in out and "opened an in-memory database as curator" in out
    tail = out.split(f"opened {second}", 1)[1]
    assert "in_b" in tail and "in_a" not in tail and tail.rstrip().endswith("(no tables)")
    code, out, err = shell(f".open {tmp_path}/no/such/dir/x.duckdb\nSELECT 1 AS still;")
    assert code == 1 and "Error:" in err and "still" in out  # the old connection stays open
