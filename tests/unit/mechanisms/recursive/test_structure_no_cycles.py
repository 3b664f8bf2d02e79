"""A recursive-mechanism structure, its load view and its twin-class quotient are freed as soon
as the last reference goes — by reference counting, without the cyclic garbage collector
(issue 29: a structure that held itself as its own load view or quotient kept a 6 M-row join's
arrays alive across releases until ``gc.collect()`` happened to run; a server's RSS grew by the
structure's size per statement).

Each case disables the collector, builds the structures the LPs use (and runs a release), drops
them, and checks through weak references that every one is gone; and that the identities the
mechanism relies on are kept (``load_view()`` is the structure itself when every participant of
a tuple is in all its monomials, ``reduced`` returns the structure itself when no twins merge,
repeated calls return the same object).
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from recursive_testkit import make_kr

from provsql_dp.mechanisms.recursive import efficient as rm
from provsql_dp.mechanisms.recursive._structure import Structure, reduced

# conjunctive annotations: the structure is its own load view
CONJUNCTIVE = [[[0, 1]], [[1, 2]], [[0, 2, 3]], [[3]], [[0]], [[0, 1]]]
# disjunctions: the load view is another structure
DISJUNCTIVE = [[[0, 1], [2]], [[1, 2]], [[0], [3]], [[3, 1]], [[0]], [[0, 1]]]
# participants 1..12 interchangeable (each with the hub 0 in one tuple): a twin-class quotient
TWINS = [[[0, i]] for i in range(1, 13)] + [[[0]]]
TWINS_DISJUNCTIVE = [[[0, i], [13]] for i in range(1, 13)] + [[[0]]]


@pytest.fixture
def no_collector():
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _refs(st: Structure) -> list[weakref.ref]:
    view = st.load_view()
    red = reduced(st)
    return [weakref.ref(o) for o in {id(o): o for o in (st, view, red, red.load_view())}.values()]


@pytest.mark.parametrize("annotations, view_is_self, quotient", [
    (CONJUNCTIVE, True, False), (DISJUNCTIVE, False, False), (TWINS, True, True),
    (TWINS_DISJUNCTIVE, False, True)], ids=["conjunctive", "disjunctive", "twins",
                                             "twins-disjunctive"])
def test_structures_freed_without_the_cyclic_collector(no_collector, annotations, view_is_self,
                                                       quotient):
    kr = make_kr(annotations)
    st = Structure(kr)
    assert (st.load_view() is st) == view_is_self
    assert st.load_view() is st.load_view()
    red = reduced(st)
    assert (red is not st) == quotient
    assert reduced(st) is red and red.load_view() is red.load_view()
    if quotient:
        assert (red.load_view() is red) == view_is_self
    refs = _refs(st)
    del st, red
    assert all(r() is None for r in refs)


@pytest.mark.parametrize("annotations", [CONJUNCTIVE, DISJUNCTIVE, TWINS, TWINS_DISJUNCTIVE])
def test_release_leaves_nothing_for_the_collector(no_collector, annotations):
    kr = make_kr(annotations)
    rm.release(kr, epsilon=1.0, rng=np.random.default_rng(0))  # builds and caches the structure
    refs = _refs(rm._structure(kr))
    rm._STRUCTURES.clear()  # what the K-relation's death does (a weak-keyed cache)
    assert all(r() is None for r in refs)


def test_same_release_with_and_without_symmetry():
    """The marker changes no value: the quotient and the plain LPs release the same X̂."""
    kr = make_kr(TWINS_DISJUNCTIVE)
    a = rm.release(kr, epsilon=1.0, rng=np.random.default_rng(3)).value
    rm._STRUCTURES.clear()
    b = rm.release(kr, epsilon=1.0, rng=np.random.default_rng(3), symmetry=False).value
    assert a == pytest.approx(b, rel=1e-9, abs=1e-9)
