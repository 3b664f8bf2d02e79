"""``_equal_values.family``, the one rule of which declared types hold the same values (h60tz):
the catalog's shared-domain check (tables sharing a participant domain need keys of one type
family) uses it too, instead of a copy of its own."""

from __future__ import annotations

import pytest

import provsql_dp
from provsql_dp.errors import DeclarationError
from provsql_dp.sql import catalog
from provsql_dp.sql._equal_values import family


def test_integer_types_are_one_family_and_string_spellings_another():
    assert {family(t) for t in ("TINYINT", "INT", "integer", "BIGINT", "UHUGEINT")} == {"integer"}
    assert {family(t) for t in ("VARCHAR", "varchar(10)", "TEXT", "STRING")} == {"VARCHAR"}
    assert family("DOUBLE") == "DOUBLE" != family("BIGINT")
    assert family(None) is None and family("") is None


def test_the_catalog_has_no_copy_of_the_rule():
    assert not hasattr(catalog, "_type_family")


@pytest.mark.parametrize("how, refusal", [("AS a", "already used by table 'a' with keys of another"),
                                          ("REFERENCES a", "have different types")])
@pytest.mark.parametrize("theirs, ok", [("BIGINT", True), ("VARCHAR", False), ("DOUBLE", False)])
def test_a_shared_domain_or_reference_needs_keys_of_one_family(how, refusal, theirs, ok):
    con = provsql_dp.connect()
    con.execute("CREATE TABLE a(id INTEGER PRIMARY KEY); PROTECT TABLE a")
    con.execute(f"CREATE TABLE b(pid {theirs})")
    if ok:
        con.execute(f"PROTECT TABLE b BY (pid) {how}")
    else:
        with pytest.raises(DeclarationError, match=refusal):
            con.execute(f"PROTECT TABLE b BY (pid) {how}")
