"""A TIMESTAMPTZ key that goes through post-processing (an alias, a reordered select list) is
shown in the session's ``TimeZone``, as the same key released without post-processing is: the
post-processing database runs each statement under the session's zone (the same instants; a
key of 2024-03-01 00:00 in Tokyo read 2024-02-29 15:00 UTC there, so its ``.day`` was 29).
"""

from __future__ import annotations

import pytest

import provsql_dp


W = "WHERE ts BETWEEN '2024-03-01' AND '2024-03-05 23:59:59'"


@pytest.mark.parametrize("query", [
    "SELECT date_trunc('day', ts) AS d, COUNT(*) FROM events {W} GROUP BY d WITH EPSILON 50",
    "SELECT COUNT(*) AS n, date_trunc('day', ts) AS d FROM events {W} GROUP BY d WITH EPSILON 50",
    "SELECT date_trunc('day', ts) AS d, COUNT(*) FROM events {W} GROUP BY d ORDER BY d "
    "WITH EPSILON 50",
])
def test_a_post_processed_instant_key_is_shown_in_the_session_zone(query):
    con = provsql_dp.connect()
    con._duck.execute("CREATE TABLE events(id INT PRIMARY KEY, ts TIMESTAMPTZ)")
    con._duck.execute("INSERT INTO events SELECT range, TIMESTAMPTZ '2024-03-01 12:00:00+00' "
                      "+ to_days((range % 5)::INT) FROM range(200)")
    con.execute("PROTECT TABLE events; SET PRIVACY BUDGET 100")
    con.execute("SET TimeZone = 'Asia/Tokyo'")
    plain = con.execute(f"SELECT date_trunc('day', ts), COUNT(*) FROM events {W} GROUP BY 1 "
                        "WITH EPSILON 50").fetchall()
    cur = con.execute(query.replace("{W}", W))
    at = [c[0] for c in cur.description].index("d")
    keys = sorted(r[at] for r in cur.fetchall())
    assert keys == sorted(r[0] for r in plain)  # the same instants
    assert [k.day for k in keys] == [1, 2, 3, 4, 5]  # shown in Tokyo, as the plain release
    assert all(k.utcoffset().total_seconds() == 9 * 3600 for k in keys)
