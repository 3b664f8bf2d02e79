"""Participant ids and tuple ids computed by the engine (the distributed-engine formulation of
the capture, :func:`capture_sql`'s ``key_views`` and ``partitioned``) give exactly the K-relation
of the driver-side formulation — checked on DuckDB itself, through a backend that offers what the
Spark backend offers (a dictionary view per domain, partitioned ranks), on random databases."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest
from hypothesis import Phase, given, settings, strategies as st

import provsql_dp
from provsql_dp.provenance.backends import DuckDBBackend
from provsql_dp.provenance.capture import capture, capture_sql
from provsql_dp.provenance.participants import MISSING, engine_ids


class EngineIdsOnDuckDB(DuckDBBackend):
    """DuckDB, asked to do what Spark does: look keys up in dictionary tables, rank per hash."""

    partitioned_ranks = True

    def __init__(self, con):
        super().__init__(con)
        self.views, self.queries, self.n = set(), [], 0

    def key_view(self, components):
        import pyarrow as pa

        self.n += 1
        name = f"__keys{self.n}"
        table = pa.table({**{f"__k{j}": pa.array(c) for j, c in enumerate(components)},
                          "__id": pa.array(np.arange(len(components[0]), dtype=np.int32))})
        self.con.register(name, table)
        self.views.add(name)
        return name

    def drop_key_views(self):
        for v in self.views:
            self.con.unregister(v)
        self.views.clear()

    def fetchnumpy(self, sql):
        self.queries.append(sql)
        return super().fetchnumpy(sql)


QUERIES = [
    "SELECT DISTINCT e1.src, e2.dst FROM edge e1 JOIN edge e2 ON e1.dst = e2.src",
    "SELECT DISTINCT x FROM (SELECT src AS x FROM edge UNION ALL SELECT owner FROM item) t",
    "SELECT DISTINCT v.place FROM visit v JOIN edge e ON e.src = v.person",
    "SELECT i.name, v.place FROM item i JOIN visit v ON v.person = i.owner",
    "SELECT name FROM item UNION SELECT place FROM visit",
    "SELECT SUM(e.w) FROM edge e JOIN item i ON i.owner = e.dst",
    "SELECT COUNT(*) FROM (SELECT DISTINCT dst FROM edge) t",
]


def _db(edges, items, visits):
    con = provsql_dp.connect(":memory:")
    con.execute("CREATE TABLE edge(src INT, dst INT, w INT)")
    con.execute("CREATE TABLE item(name VARCHAR, owner INT)")
    con.execute("CREATE TABLE visit(person INT, place VARCHAR, PRIMARY KEY (person, place))")
    for row in edges:
        con.execute("INSERT INTO edge VALUES (?, ?, ?)", list(row))
    for row in items:
        con.execute("INSERT INTO item VALUES (?, ?)", list(row))
    for row in sorted(set(visits)):
        con.execute("INSERT INTO visit VALUES (?, ?)", list(row))
    con.execute("PROTECT TABLE edge BY (src, dst) AS node")
    con.execute("PROTECT TABLE item BY (owner) AS node")
    con.execute("PROTECT TABLE visit")
    con.commit()
    return con


_node = st.integers(-3, 6)
_name = st.sampled_from(["a", "b", "cc", "d'q"])


@settings(max_examples=25, deadline=None, phases=[Phase.explicit, Phase.generate])
@given(edges=st.lists(st.tuples(_node, _node, st.one_of(st.none(), st.integers(0, 5))), max_size=8),
       items=st.lists(st.tuples(_name, _node), max_size=5),
       visits=st.lists(st.tuples(_node, _name), max_size=5),
       qi=st.integers(0, len(QUERIES) - 1))
@pytest.mark.slow  # 3-10 s (random or brute-force cases): CI's second step
def test_engine_ids_give_the_same_k_relation(edges, items, visits, qi):
    con = _db(edges, items, visits)
    plan = con.plan(QUERIES[qi])
    plain = capture(con._duck, plan)
    be = EngineIdsOnDuckDB(con._duck)
    ours = capture(be, plan)
    top = be.queries[-1]
    from_columns = any(kind == "column" for kind, _ in capture_sql(plan)[3])
    assert ("AS __i" in top) == from_columns  # slots read from their columns come back as ids
    assert not be.views  # the dictionaries are dropped after the capture
    if capture_sql(plan)[2]:  # grouped: tuple ids from hash partitions, not one global rank
        assert "PARTITION BY hash(" in top and "__t" not in top
    # the same tuples (the engine's join may return them in another order), the same numbering
    key = lambda kr: sorted(  # noqa: E731
        (tuple(map(repr, r)), sorted(map(sorted, kr.annotation(i))), float(w))
        for i, (r, w) in enumerate(zip(kr.rows, kr.weights)))
    assert key(ours) == key(plain)
    assert ours.participant_list == plain.participant_list
    assert sorted(ours.mono_part.tolist()) == sorted(plain.mono_part.tolist())


def test_a_key_missing_from_its_dictionary_is_an_error_not_an_absent_participant():
    with pytest.raises(provsql_dp.InternalError, match="missing from its dictionary"):
        engine_ids(np.array([0, MISSING, -1], dtype=np.int32), 0, "node")
    be = EngineIdsOnDuckDB(duckdb.connect())
    be.con.execute("CREATE TABLE t(k INT)")
    be.con.execute("INSERT INTO t VALUES (1), (5), (NULL)")
    view = be.key_view([np.array([1])])
    ids = be.fetchnumpy(f"SELECT COALESCE(d.__id, CASE WHEN t.k IS NULL THEN -1 ELSE {MISSING} END)"
                        f" AS i FROM t LEFT JOIN {view} AS d ON t.k = d.__k0 ORDER BY t.k")[0]["i"]
    assert ids.tolist() == [0, MISSING, -1]
