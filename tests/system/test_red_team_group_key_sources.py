"""Red team h57attack: group keys read from a public table at query time (``SET GROUP KEYS ON t
(c) FROM pub (d)``) when ``pub`` has since been replaced by a view over a protected table.

The declaration refuses a view, and each read refuses a source that has since been protected,
but a read did not look again for a view: after ``DROP TABLE pubt; CREATE VIEW pubt AS SELECT
dept AS d FROM people`` the released groups were the distinct departments of the protected
rows — a department appears among the groups exactly when some person is in it (one person
alone in 'ops' is seen in the list of groups, whatever the noise). Now refused at the read,
before anything is charged.
"""

from __future__ import annotations

import numpy as np
import pytest

import provsql_dp

SETUP = [
    "CREATE TABLE people(id INT PRIMARY KEY, dept VARCHAR)",
    "INSERT INTO people VALUES (1, 'eng'), (2, 'eng'), (3, 'ops')",
    "CREATE TABLE pubt(d VARCHAR)",
    "INSERT INTO pubt VALUES ('eng'), ('hr')",
    "PROTECT TABLE people",
    "SET GROUP KEYS ON people (dept) FROM pubt (d)",
    "SET PRIVACY BUDGET 10",
]
SQL = "SELECT dept, COUNT(*) FROM people GROUP BY dept WITH EPSILON 1"


def _con(later=()):
    con = provsql_dp.connect()
    for s in SETUP:
        con.execute(s)
    for s in later:
        if s.startswith(("DROP", "CREATE VIEW")):  # refused through provsql_dp (declared_drops,
            # and a view under the dropped source's name): its own client can still, and the
            # read refuses the view in its place
            con._duck.execute(s)
        else:
            con.execute(s)
    con._catalog.changed()
    con._rng = np.random.default_rng(3)
    return con


def test_keys_from_a_public_table_are_its_values():
    assert sorted(r[0] for r in _con().execute(SQL).fetchall()) == ["eng", "hr"]


@pytest.mark.parametrize("later", [
    ["DROP TABLE pubt", "CREATE VIEW pubt AS SELECT dept AS d FROM people"],
    ["PROTECT TABLE pubt"],
], ids=["replaced-by-a-view", "protected-since"])
def test_a_source_that_may_read_protected_rows_is_refused_before_the_charge(later):
    con = _con(later)
    with pytest.raises(provsql_dp.ProgrammingError, match="public"):
        con.execute(SQL)
    assert con.execute("SHOW PRIVACY BUDGET").fetchall()[0][2] == "0"
