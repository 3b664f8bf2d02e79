"""The grouped sums of squares behind every strategy's variance coefficients: the linear-time
run path (row-major input) and the sort path (any order) against a dictionary reference."""

from collections import defaultdict

import numpy as np
import scipy.sparse as sp
from conftest import breadth
from hypothesis import given, settings
from hypothesis import strategies as st

from provsql_dp.policies.blowfish._ops import Hierarchical, Identity, Privelet, _grouped_sq


def _reference(rows, keys, vals, q):
    groups = defaultdict(float)
    for r, k, v in zip(rows.tolist(), keys.tolist(), vals.tolist()):
        groups[(r, k)] += v
    out = np.zeros(q)
    for (r, _), s in groups.items():
        out[r] += s * s
    return out


entries = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 9),
                             st.floats(-4, 4, allow_nan=False)), max_size=40)


@breadth(40, 200, entries, st.booleans())
def test_grouped_sq_matches_reference_in_any_order(es, ordered):
    if ordered:
        es = sorted(es, key=lambda e: (e[0], e[1]))
    rows = np.array([e[0] for e in es], dtype=np.int64)
    keys = np.array([e[1] for e in es], dtype=np.int64)
    vals = np.array([e[2] for e in es], dtype=float)
    np.testing.assert_allclose(_grouped_sq(rows, keys, vals, 6), _reference(rows, keys, vals, 6),
                               rtol=1e-12, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(1, 20), st.integers(0, 2**32 - 1))
def test_query_coeffs_are_the_pseudo_inverse_norms_whatever_the_storage(q, m, seed):
    rng = np.random.default_rng(seed)
    dense = rng.normal(size=(q, m)) * (rng.random((q, m)) < 0.4)
    r, c = np.nonzero(dense)
    # the same matrix as shuffled COO entries, each split in two duplicates
    perm = rng.permutation(2 * r.size)
    rr, cc = np.r_[r, r][perm], np.r_[c, c][perm]
    vv = np.r_[dense[r, c] / 2, dense[r, c] / 2][perm]
    coo = sp.coo_matrix((vv, (rr, cc)), shape=(q, m))
    for op in (Identity(m), Privelet(m), Hierarchical(m, 2), Hierarchical(m, 4)):
        A = np.asarray(op.matrix(), dtype=float)  # the strategy over the padded domain
        padded = np.hstack([dense, np.zeros((q, A.shape[1] - m))])
        reference = ((padded @ np.linalg.pinv(A)) ** 2).sum(axis=1)  # ‖w A⁺‖² per query
        np.testing.assert_allclose(op.query_coeffs(coo), reference, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(op.query_coeffs(sp.csr_matrix(dense)), reference,
                                   rtol=1e-8, atol=1e-10)
