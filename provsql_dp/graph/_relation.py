"""The sensitive K-relation of a pattern count, and the size guard in front of it.

Every occurrence of the pattern is one tuple of weight 1, annotated with one monomial: its nodes
(node privacy) or its edges (edge privacy) — Chen & Zhou Fig. 2(a). Two ways to get it:

* :func:`captured_relation` goes through the product's front door: the edge table is declared
  ``PROTECT TABLE … BY (src, dst) AS node`` or ``PROTECT TABLE …`` and the compiled pattern query
  is captured by :meth:`Connection.provenance`;
* :func:`direct_relation` builds the same relation straight from the occurrence rows with numpy
  (participants ``("node", id)`` or ``("edge", (src, dst))``). The tests check the two agree.

**Merging (node privacy).** Occurrences on the same node set (e.g. the 6 diamonds of a K4, or
the 3 two-stars of a triangle) carry the same annotation. :func:`merge_equal_annotations` keeps
one tuple per distinct annotation with the summed weight. This is exact, not an approximation:
H_i = min Σ_t q(t)·φ_{R(t)}(f) and G_i = 2·min max_p Σ_{t∋p} q(t)·φ_{R(t)}(f)·S_{R(t),p}
(Chen & Zhou eq. 16, 19) depend on the tuples only through Σ q(t) per distinct annotation, so
Δ, X and the released value have exactly the same distribution, and the privacy proof is
untouched. Under edge privacy two occurrences with the same edge set are the same subgraph, so
there is nothing to merge.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import UnsupportedQueryError
from ..provenance.krelation import KRelation
from ._compile import CompiledPattern

__all__ = [
    "DEFAULT_MAX_ENTRIES",
    "direct_relation",
    "merge_equal_annotations",
    "check_size",
]

#: Default cap on the total annotation length L (participant entries over all monomials) of a
#: subgraph-count K-relation. The recursive mechanism solves LPs with O(L) nonzeros.
DEFAULT_MAX_ENTRIES = 2_000_000


def check_size(n_occurrences: int, pattern_size: int, max_entries: int | None, name: str) -> int:
    """Refuse (before anything is materialised) when L = occurrences × monomial size is too big.

    Returns L. ``max_entries=None`` disables the guard.

    Examples
    --------
    >>> check_size(10, 3, 100, "triangle")
    30
    >>> check_size(10**6, 3, 100, "triangle")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    provsql_dp.errors.UnsupportedQueryError: the K-relation of this triangle count would hold ...
    """
    entries = int(n_occurrences) * int(pattern_size)
    if max_entries is not None and entries > max_entries:
        raise UnsupportedQueryError(
            f"the K-relation of this {name} count would hold {entries:,} participant entries "
            f"(one tuple of {pattern_size} per occurrence), above max_entries={max_entries:,}; "
            "the recursive mechanism's LPs grow with it (Chen & Zhou §5.3, Thm 6). Count a smaller "
            "pattern, restrict it with node_filter/edge_filter, or raise max_entries if the "
            "memory and time are acceptable. Nothing was spent."
        )
    return entries


def _relation_from_parts(columns, values, part_matrix, plist) -> KRelation:
    """One tuple per row of ``part_matrix`` (participant indices, one monomial per tuple)."""
    n, width = part_matrix.shape
    return KRelation(
        columns=tuple(columns),
        values=tuple(values),
        weights=np.ones(n, dtype=np.float64),
        tuple_ptr=np.arange(n + 1, dtype=np.int64),
        mono_ptr=np.arange(0, n * width + 1, width, dtype=np.int64),
        mono_part=np.sort(part_matrix, axis=1).reshape(-1).astype(np.int64),
        participant_list=tuple(plist),
    )


def direct_relation(duck, compiled: CompiledPattern, privacy: str, table: str,
                    columns=None) -> KRelation:
    """The K-relation of ``compiled`` built directly from its occurrence rows (see module doc).

    Participants are every node (node privacy) or every edge (edge privacy) of ``table``, as the
    capture path has them; the order of ``participant_list`` is sorted by key. ``columns``: the
    node columns kept as :attr:`KRelation.values` (None: every one), as for ``capture``.
    """
    from ._compile import _table

    res = duck.execute(compiled.sql).fetchnumpy()
    cols = [np.asarray(res[c], dtype=np.int64) for c in compiled.columns]
    n = len(cols[0]) if cols else 0
    edges = duck.execute(f"SELECT src, dst FROM {_table(table)} ORDER BY src, dst").fetchnumpy()
    src = np.asarray(edges["src"], dtype=np.int64)
    dst = np.asarray(edges["dst"], dtype=np.int64)
    if privacy == "node":
        keys = np.unique(np.concatenate([src, dst]))
        plist = [("node", int(x)) for x in keys.tolist()]
        mat = np.stack([np.searchsorted(keys, c) for c in cols], axis=1) if n else np.empty(
            (0, len(cols)), dtype=np.int64
        )
    elif privacy == "edge":
        # the edge table is sorted by (src, dst); index pairs by a combined sort key
        order_key = np.lexsort((dst, src))
        src, dst = src[order_key], dst[order_key]
        plist = [("edge", (int(a), int(b))) for a, b in zip(src.tolist(), dst.tolist())]
        idx = []
        for a, b in compiled.edge_order:
            lo = np.minimum(cols[a], cols[b])
            hi = np.maximum(cols[a], cols[b])
            idx.append(_pair_index(src, dst, lo, hi))
        mat = np.stack(idx, axis=1) if n else np.empty((0, len(idx)), dtype=np.int64)
    else:
        raise ValueError(f"privacy must be 'node' or 'edge', got {privacy!r}")
    kept = [i for i, name in enumerate(compiled.columns) if columns is None or name in columns]
    values = []
    for i in kept:
        arr = np.empty(n, dtype=object)
        arr[:] = cols[i].tolist()
        values.append(arr)
    return _relation_from_parts([compiled.columns[i] for i in kept], values, mat, plist)


def _pair_index(src: np.ndarray, dst: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Row index of each pair (lo, hi) in the lexicographically sorted (src, dst)."""
    ids = np.unique(np.concatenate([src, dst]))
    span = np.int64(len(ids))
    key = np.searchsorted(ids, src) * span + np.searchsorted(ids, dst)
    want = np.searchsorted(ids, lo) * span + np.searchsorted(ids, hi)
    pos = np.searchsorted(key, want)
    if len(want):
        ok = (pos < len(key)) & (key[np.minimum(pos, max(len(key) - 1, 0))] == want)
        if not ok.all():
            raise AssertionError("an occurrence uses an edge that is not in the edge table")
    return pos


def merge_equal_annotations(kr: KRelation) -> KRelation:
    """Merge tuples whose annotations are one monomial over the same participants, summing
    weights (exact for the recursive mechanism; see the module docstring).

    Relations whose tuples are not all single monomials of one size are returned unchanged.

    Examples
    --------
    >>> kr = KRelation.from_annotations(
    ...     rows=[(1,), (2,), (3,)],
    ...     annotations=[[{("node", 1), ("node", 2)}], [{("node", 2), ("node", 1)}], [{("node", 3), ("node", 1)}]],
    ... )
    >>> m = merge_equal_annotations(kr)
    >>> len(m), sorted(m.weights.tolist())
    (2, [1.0, 2.0])
    """
    n = kr.n_tuples
    if n == 0 or kr.n_monomials != n:
        return kr
    sizes = kr.monomial_sizes
    width = int(sizes[0])
    if width == 0 or (sizes != width).any():
        return kr
    mat = np.sort(kr.mono_part.reshape(n, width), axis=1)
    uniq, first, inverse = np.unique(mat, axis=0, return_index=True, return_inverse=True)
    if len(uniq) == n:
        return kr
    inverse = inverse.reshape(-1)
    weights = np.bincount(inverse, weights=kr.weights, minlength=len(uniq))
    m = len(uniq)
    return KRelation(
        columns=kr.columns,
        values=tuple(v[first] for v in kr.values),
        weights=weights.astype(np.float64),
        tuple_ptr=np.arange(m + 1, dtype=np.int64),
        mono_ptr=np.arange(0, m * width + 1, width, dtype=np.int64),
        mono_part=uniq.reshape(-1).astype(np.int64),
        participant_list=kr.participant_list,
        sql=kr.sql,
    )


def binomial_sum(degrees: np.ndarray, k: int) -> int:
    """Σ_v C(d_v, k): the number of k-stars, exactly (Python integers).

    Examples
    --------
    >>> binomial_sum(np.array([3, 2, 1]), 2)
    4
    """
    return sum(math.comb(int(d), k) for d in degrees.tolist())
