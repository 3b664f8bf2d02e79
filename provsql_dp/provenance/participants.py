"""Participant dictionaries and participant ids: dense integer ids for the owners named by the
capture query's slots.

Every domain's participants are its distinct keys, sorted (:class:`Domain`); a participant's id
is its position there, offset by the domains before it. The ids are assigned in one of two
places:

* **on the driver** (:func:`map_slot`): the capture query returns the raw keys and numpy finds
  them in the sorted dictionary — a lookup table for compact integer keys, a checked binary
  search otherwise. This is the embedded DuckDB path, and the path of every slot whose key is
  also an output value (the value crosses back anyway).
* **in the engine** (:func:`engine_ids`): the sorted dictionary is handed back to the engine as a
  small table ``(key…, id)`` and the capture query joins every slot it returns to it, so that
  only ids cross back — or the engine ranks the distinct keys itself and the driver never holds
  them (:mod:`provsql_dp.provenance.backends._spark_ranks`). Ids are int64 on the driver; they
  cross back as INT when the domain has fewer than 2^31 participants, as BIGINT beyond. The per-row work runs where the rows are (Spark's executors: a
  broadcast hash join while the dictionary is under ``spark.sql.autoBroadcastJoinThreshold``, a
  shuffled join beyond); the driver keeps only what it holds anyway, the dictionary.

>>> import numpy as np
>>> d = Domain("node", [np.array([3, 7, 9])])
>>> map_slot([np.ma.MaskedArray([9, 3, 0], mask=[False, False, True])], d, offset=10).tolist()
[12, 10, -1]
>>> engine_ids(np.array([2, -1, 0], dtype=np.int32), offset=10, name="node").tolist()
[12, -1, 10]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..errors import InternalError, NotSupportedError

__all__ = ["Domain", "map_slot", "engine_ids", "engine_keyable", "MISSING"]

#: the id the capture query gives a key that is not in its dictionary (NULL keys get -1)
MISSING = -2


@dataclass
class Domain:
    """The participants of one domain: their sorted distinct keys (one array for a single-column
    key; one per column, in lexicographic order, for a composite key)."""

    name: str
    components: list
    _ranks: list | None = None
    _pairs: sp.csr_array | None = None

    def __len__(self) -> int:
        return len(self.components[0])

    def part(self) -> tuple:
        """This domain as a part of a :class:`~provsql_dp.provenance.participant_list.ParticipantList`."""
        return (self.name, len(self), self.components)

    def component_ranks(self) -> list:
        """Per key column: (its sorted distinct values, each dictionary entry's rank there)."""
        if self._ranks is None:
            self._ranks = []
            for comp in self.components:
                distinct = np.unique(comp)
                self._ranks.append((distinct, _lookup(comp, distinct, self.name)))
        return self._ranks

    def pair_matrix(self) -> sp.csr_array:
        """For a two-column key: matrix[rank0, rank1] = dictionary position + 1."""
        if self._pairs is None:
            (d0, r0), (d1, r1) = self.component_ranks()
            self._pairs = sp.csr_array(
                (np.arange(1, len(self) + 1, dtype=np.int64), (r0, r1)), shape=(len(d0), len(d1))
            )
            self._pairs.sort_indices()
        return self._pairs



def map_slot(columns: list, domain: Domain, offset: int) -> np.ndarray:
    """Dense participant indices for one slot (-1 where NULL: a union branch without it).

    ``columns`` holds the key's value columns: one, or one per column of a composite key."""
    null = np.zeros(len(columns[0]), dtype=bool)
    for c in columns:
        if isinstance(c, np.ma.MaskedArray):
            null |= np.ma.getmaskarray(c)
    vals = [np.asarray(np.ma.getdata(c)) for c in columns]
    if null.any():
        vals = [v[~null] for v in vals]
    if len(vals) == 1:
        idx = _lookup(vals[0], domain.components[0], domain.name)
    else:
        idx = _lookup_composite(vals, domain)
    if not null.any():
        return idx + offset
    out = np.full(len(null), -1, dtype=np.int64)
    out[~null] = idx + offset
    return out


def _lookup(vals: np.ndarray, keys: np.ndarray, name: str) -> np.ndarray:
    """Positions of ``vals`` in the sorted ``keys``. Integer keys with a compact range go through
    a lookup table (one gather per row); others through a checked binary search."""
    if len(keys) and len(vals) and keys.dtype.kind in "iu" and vals.dtype.kind in "iu":
        lo, hi = int(keys[0]), int(keys[-1])
        vmin, vmax = int(vals.min()), int(vals.max())
        if hi - lo <= 8 * len(keys) + (1 << 20) and lo <= vmin and vmax <= hi:
            lut = np.full(hi - lo + 1, -1, dtype=np.int64)
            lut[keys - lo] = np.arange(len(keys))
            idx = lut[vals - lo] if lo else lut[vals]
            if idx.min() >= 0:
                return idx
    idx = np.searchsorted(keys, vals)  # NaN sorts last and is found there (DuckDB: NaN = NaN)
    nan = keys.dtype.kind == "f" and vals.dtype.kind == "f"
    if len(vals) and (len(keys) == 0 or not np.array_equal(keys[np.minimum(idx, len(keys) - 1)],
                                                           vals, equal_nan=nan)):
        raise InternalError(
            f"a participant key of domain {name!r} is missing from its dictionary "
            "(was the table modified during the query?)"
        )
    return idx.astype(np.int64)


def _lookup_composite(vals: list, domain: Domain) -> np.ndarray:
    """Positions of composite keys in the domain's dictionary. Each column is replaced by its
    rank among that column's distinct values; a two-column key is then found in a sparse
    (rank × rank) matrix of dictionary positions (a short search within one row), longer keys
    by their mixed-radix codes."""
    ranks = domain.component_ranks()
    rv = [_lookup(v, distinct, domain.name) for v, (distinct, _) in zip(vals, ranks)]
    if len(vals[0]) == 0:
        return np.zeros(0, dtype=np.int64)
    if len(ranks) == 2:
        pos = np.asarray(domain.pair_matrix()[rv[0], rv[1]]).reshape(-1).astype(np.int64) - 1
        if len(pos) and pos.min() < 0:
            raise InternalError(
                f"a participant key of domain {domain.name!r} is missing from its dictionary "
                "(was the table modified during the query?)"
            )
        return pos
    code_keys = np.zeros(len(domain), dtype=np.int64)
    code_vals = np.zeros(len(vals[0]), dtype=np.int64)
    capacity = 1.0
    for (distinct, rk), r in zip(ranks, rv):
        capacity *= len(distinct)
        if capacity >= 2.0**62:
            raise NotSupportedError(
                f"the composite key of domain {domain.name!r} has too many distinct values "
                "to encode; protect the table by a single key column"
            )
        code_keys = code_keys * len(distinct) + rk
        code_vals = code_vals * len(distinct) + r
    order = np.argsort(code_keys, kind="stable")
    return order[_lookup(code_vals, code_keys[order], domain.name)]


def engine_keyable(domain: Domain) -> bool:
    """Whether the engine can look up this domain's keys exactly: integer or text keys (floats,
    dates and decimals would have to round-trip through numpy and compare after a cast)."""
    return all(c.dtype.kind in "iuUO" and (c.dtype.kind != "O" or all(
        isinstance(v, str) for v in c[:64].tolist())) for c in domain.components)


def engine_ids(ids, offset: int, name: str) -> np.ndarray:
    """Participant ids computed by the engine (a dictionary position, -1 for a NULL slot,
    :data:`MISSING` for a key absent from the dictionary) as int64 ids offset by ``offset``."""
    ids = np.asarray(np.ma.filled(ids, -1) if isinstance(ids, np.ma.MaskedArray) else ids)
    ids = ids.astype(np.int64)
    if len(ids) and ids.min() == MISSING:
        raise InternalError(
            f"a participant key of domain {name!r} is missing from its dictionary "
            "(was the table modified during the query?)"
        )
    return np.where(ids < 0, -1, ids + offset)
