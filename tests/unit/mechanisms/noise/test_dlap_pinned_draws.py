"""The exact sampler's draws under a fixed generator are pinned: a faster implementation must
make the same calls to the generator, in the same order, with the same sizes, and read them the
same way — so that a seeded test anywhere (the recursive mechanism's bucket path against its
per-participant path, say) still sees the same noise. The values were drawn by the sampler as
it stood before its rewrite (main at 6e43eae); the integer after them pins the generator's
position (nothing more and nothing less was consumed)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from provsql_dp.mechanisms.noise import _dlap

PINNED = [  # (t, s, n), six calls' draws, the generator's next integer on [0, 2**62)
    ((4, 1, 1), [2, 3, -4, 14, 1, 1], 1476937967199863398),
    ((5_000_000, 1, 1), [3805494, -20409851, -21819910, 2901062, -1155406, 8691548],
     2187633200404153867),
    ((2**52 + 1, 2**20, 1), [7920213300, -6892906135, 14349556719, -992486597, -4053011494,
                             851604113], 2674668389573098880),
    ((3, 2, 7), [1, -1, 0, -1, -1, 0, 0, 0, 1, 4, -2, -1], 3458859890243822675),
    ((1, 1, 5), [0, 0, 0, 0, 1, 0, -2, -1, 1, -2, 0, 1], 1112137832704816360),
]


@pytest.mark.parametrize("scale,first,after", PINNED, ids=lambda v: str(v)[:24])
def test_draws_under_a_seed_are_the_pinned_ones(scale, first, after):
    t, s, n = scale
    rng = np.random.Generator(np.random.Philox(key=2026))
    draws = [int(x) for _ in range(6) for x in _dlap._draw(t, s, n, rng)]
    assert draws[:12] == first
    assert int(rng.integers(0, 2**62)) == after


def test_large_draws_and_the_coins_are_the_pinned_ones():
    rng = np.random.Generator(np.random.Philox(key=7))
    got = np.concatenate([
        _dlap._draw(5_000_000, 1, 5000, rng), _dlap._draw(9, 4, 3000, rng),
        _dlap._geometric_exp_one(2000, rng),
        _dlap._bernoulli_exp_ratio(np.arange(3000) % 1001, 1000, rng).astype(np.int64)])
    digest = hashlib.sha256(got.astype("<i8").tobytes()).hexdigest()
    assert digest == "2fcc03ebfa23a5e10d06974cf80cec961a6a50b5a86643fa1a53c000db3b4d71"
    assert int(rng.integers(0, 2**62)) == 1637337109125593336


def test_geometric_with_no_success_is_all_zeros():
    class _AllFail:  # every Bernoulli(exp(-1)) fails: u ≥ 20!/2 gives L = 2
        def integers(self, low, high, size=None, dtype=np.int64):
            return np.full(size, high - 1, dtype=np.int64)

    v = _dlap._geometric_exp_one(5, _AllFail())
    assert v.dtype == np.int64 and v.tolist() == [0] * 5
