"""The participants of a K-relation as a sequence of ``(domain, key)`` pairs built on demand.

A capture numbers its participants densely, domain after domain, each domain's keys in sorted
order (:mod:`~provsql_dp.provenance.participants`). The mechanisms only ever need *how many*
there are — their arrays are indexed by participant id — so :class:`ParticipantList` keeps one
entry per domain (its name, its size and its keys as numpy arrays, or a function that fetches
them when first asked for) and builds a ``(domain, key)`` pair only when one is indexed or
iterated. Before, the capture built a tuple of Python pairs, ≈ 96 bytes per participant
(≈ 10 GB at 10^8 participants); now a domain ranked by the engine costs nothing on the driver
until someone asks for its keys, and one whose keys the driver fetched costs its numpy arrays.

>>> import numpy as np
>>> pl = ParticipantList([("node", 3, [np.array([3, 7, 9])]),
...                       ("edge", 2, [np.array([1, 1]), np.array([2, 5])])])
>>> len(pl), pl[0], pl[-1], pl[3]
(5, ('node', 3), ('edge', (1, 5)), ('edge', (1, 2)))
>>> list(pl) == [('node', 3), ('node', 7), ('node', 9), ('edge', (1, 2)), ('edge', (1, 5))]
True
>>> pl == tuple(pl), pl[1:3]
(True, (('node', 7), ('node', 9)))
>>> lazy = ParticipantList([("p", 2, lambda: [np.array(["a", "b"])])])  # fetched when read
>>> lazy.sizes(), lazy[1]
({'p': 2}, ('p', 'b'))
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence

import numpy as np

__all__ = ["ParticipantList"]

#: keys are turned into Python objects this many at a time when a list is iterated
_CHUNK = 65536


class ParticipantList(Sequence):
    """``(domain, key)`` pairs, domain after domain; ``parts`` are ``(domain, size, keys)`` with
    ``keys`` one numpy array per key column (sorted; a composite key's pairs are tuples) or a
    function returning them, called once, when a key is first read."""

    __slots__ = ("_names", "_sizes", "_keys", "_starts")

    def __init__(self, parts: Sequence[tuple[str, int, list | Callable[[], list]]]):
        self._names = [str(p[0]) for p in parts]
        self._sizes = [int(p[1]) for p in parts]
        self._keys = [p[2] for p in parts]
        self._starts = np.concatenate([[0], np.cumsum(self._sizes, dtype=np.int64)]).tolist()

    def __len__(self) -> int:
        return self._starts[-1]

    def sizes(self) -> dict[str, int]:
        """The number of participants of every domain."""
        return dict(zip(self._names, self._sizes))

    def _components(self, d: int) -> list:
        keys = self._keys[d]
        if callable(keys):
            keys = [np.asarray(c) for c in keys()]
            if any(len(c) != self._sizes[d] for c in keys):
                raise RuntimeError(
                    f"the keys of domain {self._names[d]!r} changed since the capture numbered "
                    "them; capture again")
            self._keys[d] = keys
        return keys

    def _item(self, d: int, j: int):
        comps = self._components(d)
        key = tuple(c[j:j + 1].tolist()[0] for c in comps)
        return (self._names[d], key if len(comps) > 1 else key[0])

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        i = int(i)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(f"participant {i} out of range for {len(self)} participants")
        d = bisect.bisect_right(self._starts, i) - 1
        return self._item(d, i - self._starts[d])

    def __iter__(self) -> Iterator[tuple]:
        for d, name in enumerate(self._names):
            if not self._sizes[d]:
                continue
            comps = self._components(d)
            for lo in range(0, self._sizes[d], _CHUNK):
                cols = [c[lo:lo + _CHUNK].tolist() for c in comps]
                keys = zip(*cols) if len(cols) > 1 else cols[0]
                for key in keys:
                    yield (name, key)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        sizes = ", ".join(f"{n}: {s:,}" for n, s in zip(self._names, self._sizes))
        return f"ParticipantList({sizes})"
