"""Hashes of incidence patterns that *propose* twin participants (see
:mod:`provsql_dp.mechanisms.recursive._symmetry`).

Private: computes functions of the private data; reached only through
:mod:`provsql_dp.mechanisms.recursive._symmetry` (and :mod:`._quotient`).

Nothing here decides a twin class: hashes only propose candidate pairs, and every pair is then
verified exactly (``_symmetry._Verifier``) before a merge. What matters here is that the
candidates are a **superset** of the true twin pairs (up to connectivity: true twins end up
connected by candidate pairs) — then skipping the quotient when even the candidate classes would
merge few rows is safe, and the verified classes are the exact twin classes.

:func:`fixed_candidates` serves the common case of one monomial of a fixed size ``k`` per tuple
(counts and subgraph counts): every quantity is a per-tuple array of ``k`` columns, so no pair
enumeration over shared tuples is needed beyond the pairs of a tuple whose members already agree
on an automorphism-invariant colour (two rounds of colour refinement).

Examples
--------
>>> import numpy as np
>>> v = _mix(np.arange(3, dtype=np.uint64))
>>> bool(np.all(sum_by(np.array([0, 0, 1]), v, 2) == np.array([v[:2].sum(), v[2]], dtype=np.uint64)))
True
"""

from __future__ import annotations

import numpy as np

__all__ = ["colours", "colour_forms", "fixed_candidates", "sum_by"]

_LIMB = 22
_LIMB_MASK = np.uint64((1 << _LIMB) - 1)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser on uint64 arrays (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def _distinct(x: np.ndarray) -> np.ndarray:
    """Sorted distinct values (sort-based: numpy's hash-based ``unique`` is many times slower
    on millions of distinct integers)."""
    s = np.sort(x)
    return s[np.concatenate([[True], s[1:] != s[:-1]])] if len(s) else s


def _segment_sum(values: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """Wrapping uint64 sums of ``values[ptr[k]:ptr[k+1]]`` (empty segments give 0)."""
    out = np.zeros(len(ptr) - 1, dtype=np.uint64)
    nonempty = ptr[1:] > ptr[:-1]
    if len(values) and nonempty.any():
        with np.errstate(over="ignore"):
            out[nonempty] = np.add.reduceat(values, ptr[:-1][nonempty])
    return out


def sum_by(index: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Wrapping uint64 sums of ``values`` grouped by ``index`` (in ``0..n-1``), without sorting.

    Exact: the values are split into 22-bit limbs summed by ``np.bincount`` in float64 (a sum of
    fewer than 2^31 limbs stays below 2^53), then recombined modulo 2^64.
    """
    if len(values) >= 2**31:
        o = np.argsort(index, kind="stable")
        return _segment_sum(values[o], np.concatenate([[0], np.cumsum(np.bincount(index, minlength=n))]))
    out = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for shift in (0, _LIMB, 2 * _LIMB):
            limb = ((values >> np.uint64(shift)) & _LIMB_MASK).astype(np.float64)
            s = np.bincount(index, weights=limb, minlength=n).astype(np.uint64)
            out += s << np.uint64(shift)
    return out


def _refine(mat: np.ndarray, colour: np.ndarray, wbits: np.ndarray, n: int) -> np.ndarray:
    """One round of colour refinement: a participant's new colour hashes its old colour and the
    multiset, over its tuples, of (weight, multiset of the other members' colours). Invariant
    under every automorphism, so twins always get equal colours."""
    k = mat.shape[1]
    c = _mix(colour[mat] ^ np.uint64(0x51ED27))
    with np.errstate(over="ignore"):
        tot = c.sum(axis=1, dtype=np.uint64)
        ent = _mix((tot[:, None] - c) ^ wbits[:, None])
    out = sum_by(mat.ravel(), ent.ravel(), n)
    with np.errstate(over="ignore"):
        return _mix(out + _mix(colour + np.uint64(k)))


def colours(mat: np.ndarray, q: np.ndarray, n: int, rounds: int = 1) -> np.ndarray:
    """Automorphism-invariant colours of the participants of a fixed-arity structure: the
    degree refined ``rounds`` times (:func:`_refine`). Twins always have equal colours."""
    wbits = _mix(np.ascontiguousarray(q, dtype=np.float64).view(np.uint64))
    colour = _mix(np.bincount(mat.ravel(), minlength=n).astype(np.uint64))
    for _ in range(rounds):
        colour = _refine(mat, colour, wbits, n)
    return colour


def colour_forms(mat: np.ndarray, colour: np.ndarray) -> int:
    """A lower bound on the number of tuples left by **any** quotient whose classes never join
    participants of different colours — the twin classes among them (twins have equal colours,
    :func:`colours`): the number of distinct hashed colour multisets of the tuples.

    Two tuples merged by the twin quotient have equal multisets of twin classes, hence of
    colours, hence of hashes; a hash collision only merges more forms. So the count is at most
    the number of the twin quotient's tuples: when it exceeds ``(1 − gain)·n_tuples``, the
    quotient cannot save a fraction ``gain`` of the rows, whatever the candidates and their
    verification would find (the skip of ``_symmetry._few_rows_saved``, decided before the
    candidates are built: TPC-H Q7/Q21 at SF 1, 6 M tuples, no twins worth a quotient).

    >>> mat = np.array([[0, 1], [0, 2], [1, 2]])
    >>> colour_forms(mat, np.array([5, 7, 7], dtype=np.uint64))  # {5,7} twice, {7,7} once
    2
    """
    if not len(mat):
        return 0
    with np.errstate(over="ignore"):
        code = _mix(colour ^ np.uint64(0xC01085))[mat].sum(axis=1, dtype=np.uint64)
    return int(len(_distinct(code)))


def fixed_candidates(mat: np.ndarray, q: np.ndarray, n: int, seed: int,
                     colour: np.ndarray | None = None):
    """Candidate twin pairs ``(cp, cq)`` of a fixed-arity conjunctive structure.

    ``mat`` holds one row of ``k`` distinct participants per tuple (sorted), ``q`` the weights.

    * *non-adjacent* twins (no common tuple) have equal multisets of (tuple without them,
      weight): equal ``h_open``; the participants are sorted by it and neighbours with equal
      values proposed;
    * *adjacent* twins ``p, q`` share a tuple; their colours after two refinement rounds are
      equal (invariance), so only pairs of members of one tuple with equal colours are examined,
      and of those only pairs with ``D(p, q) = D(q, p)`` are proposed, where ``D(p, q)`` is
      ``h_open(p)`` less the hashes of the tuples holding both (the swap fixes those; the others
      must correspond), which holds for every adjacent twin pair.
    """
    n_t, k = mat.shape
    wbits = _mix(np.ascontiguousarray(q, dtype=np.float64).view(np.uint64))
    r = _mix(np.arange(n, dtype=np.uint64) + np.uint64(seed))
    marker = _mix(np.array([n + seed + 7919], dtype=np.uint64))[0]
    rv = r[mat]
    with np.errstate(over="ignore"):
        s_t = rv.sum(axis=1, dtype=np.uint64)
        h_pair = _mix(_mix(s_t[:, None] - rv + marker) ^ wbits[:, None])  # (t, column)
    flat = mat.ravel()
    h_open = sum_by(flat, h_pair.ravel(), n)
    srt = np.argsort(h_open, kind="stable")
    same = h_open[srt[1:]] == h_open[srt[:-1]]
    cand_p, cand_q = [srt[:-1][same]], [srt[1:][same]]
    if k >= 2 and n_t:
        if colour is None:
            colour = colours(mat, q, n)
        col = colour[mat]
        pairs_p, pairs_q, hp_p, hp_q = [], [], [], []
        for a in range(k):
            for b in range(a + 1, k):
                sel = np.flatnonzero(col[:, a] == col[:, b])
                if len(sel):
                    pairs_p.append(mat[sel, a])
                    pairs_q.append(mat[sel, b])
                    hp_p.append(h_pair[sel, a])
                    hp_q.append(h_pair[sel, b])
        if pairs_p:
            pp = np.concatenate(pairs_p)
            qq = np.concatenate(pairs_q)
            lo, hi = np.minimum(pp, qq), np.maximum(pp, qq)
            swap = pp > qq
            hpa = np.concatenate(hp_p)
            hpb = np.concatenate(hp_q)
            h_lo, h_hi = np.where(swap, hpb, hpa), np.where(swap, hpa, hpb)
            key = lo * n + hi
            o = np.argsort(key, kind="stable")
            key = key[o]
            start = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
            with np.errstate(over="ignore"):
                s_lo = np.add.reduceat(h_lo[o], start)
                s_hi = np.add.reduceat(h_hi[o], start)
                uk = key[start]
                up, uq = uk // n, uk % n
                ok = (h_open[up] - s_lo) == (h_open[uq] - s_hi)
            cand_p.append(up[ok])
            cand_q.append(uq[ok])
    cp = np.concatenate(cand_p).astype(np.int64)
    cq = np.concatenate(cand_q).astype(np.int64)
    return cp, cq, r
