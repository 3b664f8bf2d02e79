"""Distinct count as a histogram of presence: ℓ1-sensitivity of the per-value counts by brute
force on neighbours (one row per participant), the threshold, the interval's coverage."""

import pytest
import numpy as np
from conftest import breadth
from hypothesis import given, settings, strategies as st

from provsql_dp.mechanisms.global_sensitivity.presence import release_presence, threshold

DOMAIN = ["a", "b", "c", "d", "e"]


def counts(rows):
    return np.array([sum(1 for r in rows if r == v) for v in DOMAIN])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(DOMAIN + ["zz", None]), max_size=30),
       st.sampled_from(DOMAIN + ["zz", None]), st.data())
@pytest.mark.slow  # 3-10 s (random or brute-force cases): CI's second step
def test_a_participant_moves_the_counts_by_at_most_one_in_l1(rows, new, data):
    c = counts(rows)
    neighbours = [rows + [new]]
    if rows:
        i = data.draw(st.integers(0, len(rows) - 1))
        neighbours.append(rows[:i] + rows[i + 1:])
    for other in neighbours:
        assert np.abs(counts(other) - c).sum() <= 1


def test_threshold_grows_with_the_domain_and_shrinks_with_epsilon():
    assert threshold(1, 1.0) == 1 and threshold(3, 1.0) == 2
    assert threshold(10_000, 1.0) == 10 and threshold(10_000, 0.1) == 93


def test_interval_covers_and_answer_is_close():
    rng = np.random.default_rng(0)
    hits, errs = 0, []
    for _ in range(300):
        true = rng.integers(0, 4, size=20) * rng.integers(0, 2, size=20)  # many absent values
        present = int((true > 0).sum())
        r = release_presence(true, 1.0, rng=rng)
        lo, hi = r.interval(0.9)
        hits += lo <= present <= hi
        errs.append(r.value - present)
    assert hits >= 0.9 * 300 - 10
    assert abs(np.mean(errs)) < 6


@breadth(40, 200,
         st.lists(st.tuples(st.integers(0, 5), st.sampled_from(DOMAIN + [None])), max_size=40),
         st.integers(0, 6), st.lists(st.sampled_from(DOMAIN), max_size=8))
def test_an_owner_of_several_rows_moves_the_counts_by_at_most_the_domain(rows, who, new):
    """Participants owning several rows (BY (owner)): per value, the number of distinct owners;
    removing every row of one owner, or adding an owner with any rows, moves the counts by at
    most |D| in ℓ1 — the sensitivity the route uses."""
    def owners(rs):
        return np.array([len({o for o, v in rs if v == d}) for d in DOMAIN])
    c = owners(rows)
    removed = [(o, v) for o, v in rows if o != who]
    added = rows + [(99, v) for v in new]
    for other in (removed, added):
        assert np.abs(owners(other) - c).sum() <= len(DOMAIN)
        assert np.abs(owners(other) - c).max() <= 1
