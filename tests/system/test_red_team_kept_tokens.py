"""Red team h85attack-6: one analyst's statement text, seen through another's timing.

The tokens of a statement's text were kept in a process-wide cache (``functools.lru_cache`` of
the last 256 texts), so a text any session of the wire server had run — analyst A's, the
curator's — was not tokenized again when analyst B sent the very same text: 0.08 ms instead of
about 6 ms for a text of 4 KiB, before anything else of the statement ran. B's one probe
(refused or not) told whether A had run that text lately. The tokens are now kept per
connection (``statements.KeptTokens``; the wire session passes its connection's).
"""

from __future__ import annotations

import pytest

import provsql_dp
from provsql_dp.sql import dialect as d

TEXT = ("SELECT COUNT(*) FROM people WHERE "
        + " OR ".join(f"age = {i}" for i in range(150)) + " WITH EPSILON 0.5")


@pytest.fixture()
def two_analysts(tmp_path, monkeypatch):
    path = str(tmp_path / "db.duckdb")
    con = provsql_dp.connect(path)
    con.execute("CREATE TABLE people(id INT PRIMARY KEY, age INT)")
    con.execute("INSERT INTO people SELECT i, i % 90 FROM range(100) t(i)")
    con.execute("PROTECT TABLE people")
    for user in ("ann", "bob"):
        con.execute(f"SET PRIVACY BUDGET 10 FOR USER '{user}'")
    con.commit()
    con.close()
    seen = []
    real = d.ProvDP.tokenize
    monkeypatch.setattr(d.ProvDP, "tokenize",
                        lambda self, sql: seen.append(sql) or real(self, sql))
    ann = provsql_dp.connect(path, role="analyst", user="ann")
    bob = provsql_dp.connect(path, role="analyst", user="bob")
    return ann, bob, seen


def test_another_analyst_s_text_is_tokenized_afresh(two_analysts):
    ann, bob, seen = two_analysts
    ann.execute(TEXT).fetchall()
    assert TEXT in seen  # ann's first run tokenized it
    seen.clear()
    ann.execute(TEXT).fetchall()
    assert TEXT not in seen  # kept for ann's connection: not tokenized again
    bob.execute(TEXT).fetchall()
    assert TEXT in seen, "bob's first run of ann's text found ann's tokens (a timing channel)"
