"""GROUP BY a calendar function of a TIMESTAMP the WHERE bounds: every proved group is released
(empty ones too, as noise), the same on neighbours; ``x // w`` on a DOUBLE is refused with the
reason and FLOOR(x / w) as the fix, charging nothing."""

import numpy as np
import pytest

import provsql_dp
from provsql_dp.errors import UnsupportedQueryError


def _con(extra_row=None):
    con = provsql_dp.connect()
    con.execute("CREATE TABLE p(id INT PRIMARY KEY, x DOUBLE, ts TIMESTAMP)")
    con.execute("INSERT INTO p SELECT range, range * 1.5, TIMESTAMP '2020-01-01' + range * "
                "INTERVAL 37 MINUTE FROM range(300)")
    if extra_row is not None:
        con.execute(f"INSERT INTO p VALUES (1000, 1, TIMESTAMP '{extra_row}')")
    con.execute("PROTECT TABLE p; SET PRIVACY BUDGET 50")
    con._rng = np.random.default_rng(0)
    return con


MONTHS = ("SELECT date_trunc('month', ts) AS m, COUNT(*) FROM p WHERE ts >= TIMESTAMP "
          "'2020-01-01' AND ts < TIMESTAMP '2020-04-01' GROUP BY 1 WITH EPSILON 1")
HOURS = ("SELECT EXTRACT(hour FROM ts) AS h, COUNT(*) FROM p WHERE ts BETWEEN TIMESTAMP "
         "'2020-01-01' AND TIMESTAMP '2020-01-05' AND hour(ts) >= 20 GROUP BY 1 WITH EPSILON 1")


@pytest.mark.parametrize("extra", [None, "2020-03-31 23:59:59.999999", "2019-12-31 23:59:59",
                                   "2020-01-02 21:00:00"])
def test_the_groups_are_the_proved_ones_on_every_neighbour(extra):
    con = _con(extra)
    months = [r[0] for r in con.execute(MONTHS).fetchall()]
    assert [m.month for m in sorted(months)] == [1, 2, 3, 4]  # ts < April 1st is widened to ≤
    hours = sorted(r[0] for r in con.execute(HOURS).fetchall())
    assert hours == [20, 21, 22, 23]


def test_a_double_integer_division_is_refused_with_the_fix():
    con = _con()
    before = con.ledger.remaining(con.user)
    with pytest.raises(UnsupportedQueryError, match=r"5\.5 // 2 is 2\.75.*FLOOR\(x / w\)"):
        con.execute("SELECT x // 10 AS g, COUNT(*) FROM p WHERE x BETWEEN 0 AND 100 GROUP BY 1 "
                    "WITH EPSILON 1")
    assert con.ledger.remaining(con.user) == before
