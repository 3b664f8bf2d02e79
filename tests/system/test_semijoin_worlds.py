"""Semi-joins (``IN (subquery)``, ``EXISTS``) and constants (``VALUES``, ``SELECT`` without
``FROM``) against the possible-worlds oracle.

For random small databases (those of ``test_possible_worlds``) and every world W (a set of
participants), ``kr.present(W)`` must equal — as a multiset — the query's rows in plain DuckDB
on the database without the rows of the absent participants; a COUNT over the semi-join must
equal the present tuples' weight. Neighbouring worlds (one participant more) then change the
count exactly as the annotations say, which is what the recursive mechanism's sensitivity bound
reads: the brute-force check of every neighbour pair below. A semi-join keeps each left row once
(a join would count one row per match).
"""

from __future__ import annotations

from collections import Counter

import pytest

from test_possible_worlds import make_db, random_worlds, world_rows

SEMIJOINS = [
    "SELECT p.city FROM person p WHERE p.id IN (SELECT src FROM edge)",
    "SELECT p.city FROM person p WHERE EXISTS (SELECT 1 FROM item i WHERE i.owner = p.id "
    "AND i.price > {a})",
    # nested IN (TPC-H Q20's shape)
    "SELECT i.name FROM item i WHERE i.owner IN (SELECT e.src FROM edge e WHERE e.dst IN "
    "(SELECT id FROM person WHERE age > {a}))",
    "SELECT e.src, e.dst FROM edge e WHERE e.w > 1 AND EXISTS (SELECT * FROM person p "
    "WHERE p.id = e.dst) AND e.src IN (SELECT owner FROM item)",
    "SELECT p.id FROM person p WHERE p.city IN (SELECT label FROM pub)",
    "SELECT p.id FROM person p WHERE (p.id, p.age) IN (SELECT l.a, l.w FROM link l)",
    "SELECT DISTINCT p.city FROM person p WHERE p.id IN (SELECT DISTINCT owner FROM item)",
    "SELECT v.place FROM visit v WHERE EXISTS (SELECT 1 FROM link l JOIN person p ON p.id = l.b "
    "WHERE l.a = v.person AND p.age >= {a})",
    # GROUP BY … HAVING below the top (TPC-H Q18's shape): keys that determine the owners,
    # or public rows
    "SELECT p.city FROM person p WHERE p.id IN (SELECT src FROM edge GROUP BY src, dst "
    "HAVING SUM(w) > {a})",
    "SELECT t.src FROM (SELECT src, dst FROM edge GROUP BY src, dst HAVING COUNT(*) > 1 "
    "OR MAX(w) > {a}) t",
    "SELECT p.id FROM person p WHERE p.age IN (SELECT k FROM pub GROUP BY k HAVING COUNT(*) > 1)",
    "SELECT v.place FROM visit v WHERE v.person IN (SELECT l.a FROM link l GROUP BY l.a, l.b "
    "HAVING AVG(l.w) >= {a})",
    # constants as public relations
    "SELECT x FROM (VALUES (1), (2), (3)) AS v(x) WHERE x IN (SELECT id FROM person)",
    "SELECT 'k' AS one UNION ALL SELECT city FROM person WHERE age > {a}",
    "SELECT p.city, v.y FROM person p JOIN (VALUES (1, 'a'), (2, 'b')) AS v(x, y) ON p.id = v.x",
]


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("qi", range(len(SEMIJOINS)))
def test_semijoin_present_equals_world_query(seed, qi):
    con, rng = make_db(seed * 100 + qi)
    sql = SEMIJOINS[qi].format(a=rng.randint(0, 6))
    kr = con.provenance(sql)
    for world in random_worlds(rng, kr.participants, k=3):
        assert Counter(kr.present(world)) == Counter(world_rows(con, sql, world)), (sql, world)


@pytest.mark.parametrize("seed", range(2))
def test_count_over_a_semijoin_on_neighbouring_worlds(seed):
    """Every neighbour pair (W, W ∪ {p}): the true COUNT changes by exactly the weight of the
    tuples whose annotation holds in one world and not in the other — brute force over the
    possible worlds, no annotation trusted without the database's own answer."""
    con, rng = make_db(7000 + seed)
    sql = ("SELECT COUNT(*) FROM person p WHERE EXISTS (SELECT 1 FROM item i WHERE "
           "i.owner = p.id) AND p.id IN (SELECT src FROM edge)")
    kr = con.provenance(sql)
    parts = sorted(kr.participants, key=repr)
    for world in random_worlds(rng, kr.participants, k=3):
        base = world_rows(con, sql, world)[0][0]
        assert float(kr.weights[kr.present_mask(world)].sum()) == base
        for p in parts[:4]:
            other = world ^ {p}
            truth = world_rows(con, sql, other)[0][0]
            assert float(kr.weights[kr.present_mask(other)].sum()) == truth
            # monotone: adding a participant never removes a row
            if p in other:
                assert truth >= base
            else:
                assert truth <= base


def test_a_semijoin_does_not_multiply_rows():
    con, _ = make_db(11)
    duck = con._duck
    duck.execute("INSERT INTO item VALUES ('dup', 1, 1), ('dup', 1, 2), ('dup', 1, 3)")
    duck.execute("INSERT INTO person VALUES (1, 'a', 1) ON CONFLICT DO NOTHING")
    semi = "SELECT COUNT(*) FROM person p WHERE p.id IN (SELECT owner FROM item)"
    join = "SELECT COUNT(*) FROM person p JOIN item i ON i.owner = p.id"
    kr = con.provenance(semi)
    everyone = set(kr.participants)
    assert kr.weights[kr.present_mask(everyone)].sum() == duck.execute(semi).fetchone()[0]
    assert duck.execute(semi).fetchone()[0] < duck.execute(join).fetchone()[0]
    # one tuple per person; its annotation: the person AND (one of their items)
    ann = [kr.annotation(i) for i in range(len(kr))]
    assert all(len(m) == 2 for a in ann for m in a)


def test_group_having_over_several_owners_is_refused():
    from provsql_dp.errors import UnsupportedQueryError

    con, _ = make_db(1)
    with pytest.raises(UnsupportedQueryError, match="several participants' rows"):
        con.provenance("SELECT COUNT(*) FROM person WHERE id IN "
                       "(SELECT owner FROM item GROUP BY owner HAVING SUM(price) > 3)")
