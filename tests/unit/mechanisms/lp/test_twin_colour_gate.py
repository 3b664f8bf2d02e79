"""The colour gate of the twin quotient (mechanisms/lp/_twin_hash.colour_forms, used by
recursive/_symmetry.twin_classes): its count never exceeds the tuples the exact twin quotient
leaves (brute-force twin classes on planted symmetry), so a skip it decides is one the quotient
could not have paid for; on structures with many twins it does not skip."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from hypothesis import given

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "recursive"))
from test_twin_classes_batch import SETTINGS, brute_classes, k_relations  # noqa: E402

from provsql_dp.mechanisms.lp._twin_hash import colour_forms, colours  # noqa: E402
from provsql_dp.mechanisms.recursive import _lp, _symmetry  # noqa: E402
from provsql_dp.mechanisms.recursive._structure import quotient  # noqa: E402


@SETTINGS
@given(k_relations())
def test_colour_forms_never_exceed_the_twin_quotients_tuples(kr):
    st = _lp.Structure(kr)
    mat = _symmetry._fixed_rows(st)
    if st.n == 0 or mat is None:
        return
    forms = colour_forms(mat, colours(mat, st.q, st.n))
    cls = brute_classes(kr, st)
    _, cls = np.unique(cls, return_inverse=True)
    assert forms <= quotient(st, cls.ravel()).n_tuples
    # and the gate of twin_classes agrees: a skip only where the quotient saves < min_gain
    for gain in (0.05, 0.3):
        if forms > (1 - gain) * st.n_tuples:
            assert quotient(st, cls.ravel()).n_tuples > (1 - gain) * st.n_tuples


def test_many_twins_pass_the_gate_and_merge():
    """A star of 50 identical leaves on one hub: 50 tuples, one form."""
    from recursive_testkit import make_kr

    kr = make_kr([[[0, leaf]] for leaf in range(1, 51)])
    st = _lp.Structure(kr)
    mat = _symmetry._fixed_rows(st)
    assert colour_forms(mat, colours(mat, st.q, st.n)) == 1
    cls = _symmetry.twin_classes(st, min_gain=0.05)
    assert int(cls.max()) + 1 == 2


def test_no_twins_are_skipped_before_the_candidates(monkeypatch):
    """Distinct degrees everywhere: the gate skips, fixed_candidates is never called."""
    from recursive_testkit import make_kr

    ann = [[[a, b]] for a in range(8) for b in range(a + 1, 8) if (a * 7 + b) % 3]
    st = _lp.Structure(make_kr(ann, weights=[1.0 + i for i in range(len(ann))]))

    def boom(*a, **k):
        raise AssertionError("candidates built")

    monkeypatch.setattr(_symmetry, "fixed_candidates", boom)
    cls = _symmetry.twin_classes(st, min_gain=0.05)
    assert np.array_equal(cls, np.arange(st.n))
