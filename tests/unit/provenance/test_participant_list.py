"""Participant lists without a Python object per participant, and 64-bit participant ids."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

import provsql_dp
from provsql_dp.provenance._monomials import _grouped
from provsql_dp.provenance.krelation import KRelation
from provsql_dp.provenance.participant_list import ParticipantList
from provsql_dp.provenance.participants import engine_ids

BIG = 2**32  # participants before the second domain: its ids are all above 2^31


def _never():
    raise AssertionError("the first domain's keys were read")


def test_ids_above_2_31_index_the_right_domain_without_reading_the_others():
    pl = ParticipantList([("huge", BIG, _never), ("small", 3, [np.array([10, 20, 30])])])
    assert len(pl) == BIG + 3 and pl.sizes() == {"huge": BIG, "small": 3}
    assert pl[BIG] == ("small", 10) and pl[BIG + 2] == ("small", 30) and pl[-2] == ("small", 20)
    with pytest.raises(IndexError):
        pl[BIG + 3]


def test_engine_ids_and_grouping_keep_64_bit_ids():
    ids = engine_ids(np.array([0, 2, -1, 1], dtype=np.int32), offset=BIG, name="small")
    assert ids.dtype == np.int64 and ids.tolist() == [BIG, BIG + 2, -1, BIG + 1]
    P = np.array([[BIG + 2, BIG], [BIG, BIG + 2], [BIG + 1, -1]], dtype=np.int64)
    pl = ParticipantList([("huge", BIG, _never), ("small", 3, [np.array([10, 20, 30])])])
    kr = _grouped(("c",), (np.array([1, 1, 2]),), np.ones(3), P, np.array([0, 0, 1]), pl, "")
    assert kr.participant_list is pl and kr.mono_part.dtype == np.int64
    assert sorted(map(sorted, kr.annotation(0))) == [[("small", 10), ("small", 30)]]
    assert kr.restrict(np.array([False, True])).mono_part.tolist() == [BIG + 1]


def test_lazy_keys_are_checked_against_their_size():
    pl = ParticipantList([("p", 3, lambda: [np.array([1, 2])])])
    with pytest.raises(RuntimeError, match="changed since the capture"):
        pl[0]


def test_equality_with_tuples_and_composite_keys():
    pl = ParticipantList([("e", 2, [np.array([1, 1]), np.array(["a", "b"])])])
    assert pl == (("e", (1, "a")), ("e", (1, "b")))
    assert pl != (("e", (1, "a")),) and list(pl[:1]) == [("e", (1, "a"))]
    kr = KRelation.from_annotations([("x",)], [[{("e", (1, "a"))}]])
    assert kr.participant_list == pl[:1]


def test_duckdb_capture_keeps_no_python_object_per_participant():
    """300,000 participants: the K-relation's participant list holds numpy keys (8 bytes each),
    not 300,000 ``(domain, key)`` tuples (≥ 92 bytes each)."""
    n = 300_000
    con = provsql_dp.connect(":memory:")
    con.execute(f"CREATE TABLE people AS SELECT range * 3 + 5000000000 AS id, "
                f"(range % 90)::INT AS age FROM range({n})")
    con.execute("PROTECT TABLE people BY (id)")
    sql = "SELECT id FROM people WHERE age < 60"
    con.provenance(sql, columns=())
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kr = con.provenance(sql, columns=())
    gc.collect()
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert isinstance(kr.participant_list, ParticipantList) and kr.n_participants == n
    assert kept < 48 * n, kept / n
    assert kr.participant_list[n - 1][1] == 5000000000 + 3 * (n - 1)
