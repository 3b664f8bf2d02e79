"""Red team leftovers fixed by h93leftovers (beside ``test_declared_drops.py`` and
``test_orphan_declarations.py``).

* ``SET PRIVACY EPSILON 1e300`` echoed the 301 digits of 10^300: ``format_eps`` writes a long
  exact decimal in scientific notation (``1e300``), and a value it cannot show exactly in a
  readable length after ``≈`` — in the echo, ``SHOW PRIVACY BUDGET`` and the budget's errors.
* A NaN declared group key never matched (its group always released as about 0, its rows
  dropped): NaN = NaN is false where the declared keys are compared with the rows'. Declaring
  one is refused (in ``VALUES`` or in a source table), and a NaN added to a source table since
  is refused at the read, before the charge.
"""

from __future__ import annotations

import pytest

import provsql_dp


def _database(path):
    con = provsql_dp.connect(str(path))
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, grp DOUBLE, pay DOUBLE)")
    con.execute("INSERT INTO people SELECT i, CASE WHEN i < 12 THEN 'nan'::DOUBLE ELSE i % 3 END, "
                "i FROM range(30) t(i)")
    con.execute("PROTECT TABLE people")
    con.commit()
    return con


def test_a_huge_epsilon_and_budget_are_printed_readably(tmp_path):
    con = _database(tmp_path / "db.duckdb")
    assert con.execute("SET PRIVACY EPSILON 1e300").fetchall() == [
        ("default epsilon set to 1e300",)]
    assert con.execute("SET PRIVACY BUDGET 1e300 FOR USER 'ann'").fetchall() == [
        ("privacy budget of 'ann' set to 1e300",)]
    con.execute("SET PRIVACY BUDGET 1.5e-25 FOR USER 'bob'")
    con.commit()
    assert con.execute("SHOW PRIVACY BUDGET FOR USER 'bob'").fetchall() == [
        ("bob", "1.5e-25", "0", "1.5e-25")]
    ann = provsql_dp.connect(str(tmp_path / "db.duckdb"), role="analyst", user="ann")
    ann.execute("SELECT COUNT(*) FROM people WITH EPSILON 1")
    assert ann.execute("SHOW PRIVACY BUDGET").fetchall() == [("ann", "1e300", "1", "≈1e300")]
    bob = provsql_dp.connect(str(tmp_path / "db.duckdb"), role="analyst", user="bob")
    with pytest.raises(provsql_dp.errors.BudgetExceededError) as err:
        bob.execute("SELECT COUNT(*) FROM people WITH EPSILON 1e-6")
    assert "0.000001" in str(err.value) and "1.5e-25" in str(err.value)
    assert "00000000" not in str(err.value)
    assert bob.execute("SHOW PRIVACY BUDGET").fetchall() == [("bob", "1.5e-25", "0", "1.5e-25")]


def _declared(con):
    return (con.execute("SHOW GROUP KEYS").fetchall(),
            con.execute("SELECT * FROM _provsql_dp.ledger ORDER BY id").fetchall(),
            con.execute("SELECT * FROM _provsql_dp.budget ORDER BY ALL").fetchall())


@pytest.mark.parametrize("stmt, named", [
    ("SET GROUP KEYS ON people (grp) VALUES (0, 'nan', 1)", "the key 'nan' is NaN"),
    ("SET GROUP KEYS ON people (grp) VALUES ('-NaN')", "the key '-NaN' is NaN"),
    ("SET GROUP KEYS ON people (grp) FROM src (v)", "a value of src.v is NaN"),
])
def test_a_nan_group_key_is_refused(tmp_path, stmt, named):
    con = _database(tmp_path / "db.duckdb")
    con.execute("CREATE TABLE src(v DOUBLE); INSERT INTO src VALUES (0), ('nan')")
    con.execute("SET GROUP KEYS ON people (pay) VALUES (1)")
    con.execute("SET PRIVACY BUDGET 10")
    con.execute("SELECT COUNT(*) FROM people WITH EPSILON 1")
    before = _declared(con)
    with pytest.raises(provsql_dp.errors.DeclarationError,
                       match=named + r", which cannot be a group key of people.grp: NaN = NaN "
                                     r"is false .*Leave NaN out"):
        con.execute(stmt)
    assert _declared(con) == before


def test_a_nan_added_to_a_key_source_since_is_refused_before_the_charge(tmp_path):
    con = _database(tmp_path / "db.duckdb")
    con.execute("CREATE TABLE src(v DOUBLE); INSERT INTO src VALUES (0), (1), (2)")
    con.execute("SET GROUP KEYS ON people (grp) FROM src (v)")
    con.execute("SET PRIVACY BUDGET 10")
    sql = "SELECT grp, COUNT(*) FROM people GROUP BY grp WITH EPSILON 1"
    assert sorted(r[0] for r in con.execute(sql).fetchall()) == [0, 1, 2]  # NaN rows dropped
    con.execute("INSERT INTO src VALUES ('nan')")
    before = _declared(con)
    with pytest.raises(provsql_dp.ProgrammingError, match="a value of src.v is NaN.*nothing was "
                                                          "charged"):
        con.execute(sql)
    assert _declared(con) == before
    con.execute("DELETE FROM src WHERE isnan(v)")  # the way out the error names
    assert len(con.execute(sql).fetchall()) == 3


def test_a_nan_string_is_an_ordinary_key_of_a_text_column(tmp_path):
    con = _database(tmp_path / "db.duckdb")
    con.execute("ALTER TABLE people ADD COLUMN tag VARCHAR DEFAULT 'nan'")
    con.execute("SET GROUP KEYS ON people (tag) VALUES ('nan', 'x')")
    con.execute("SET PRIVACY BUDGET 10")
    rows = dict(con.execute("SELECT tag, COUNT(*) FROM people GROUP BY tag WITH EPSILON 5 "
                            "OPTIONS (raw = true)").fetchall())
    assert rows["nan"] > 15  # 30 rows, noise of scale 1/5: it matches
