"""Sensitive K-relations: output tuples annotated with positive Boolean formulas in DNF.

A :class:`KRelation` is what provenance capture produces and what the mechanisms consume. Every
output tuple ``t`` carries a weight ``q(t)`` (1.0 for a count, the summed expression for a sum) and
an annotation: a set of *monomials*, each a set of *participants*. A participant is a
``(domain, key)`` pair. The tuple is present in a world (a set of contributing participants) when at
least one of its monomials has all of its participants in that world (Chen & Zhou §2.4).

The annotations are stored as arrays, never as per-tuple Python objects:

* ``tuple_ptr`` (int64, length ``n + 1``): the monomials of tuple ``t`` are
  ``tuple_ptr[t]:tuple_ptr[t + 1]``;
* ``mono_ptr`` (int64, length ``n_monomials + 1``): the participants of monomial ``m`` are
  ``mono_part[mono_ptr[m]:mono_ptr[m + 1]]``;
* ``mono_part`` (int64): dense participant indices into ``participant_list``.

Monomials are canonical: participants are distinct and sorted inside a monomial, no monomial of a
tuple equals or contains another (absorption). An empty monomial means ``True`` (a tuple built only
from public rows); a tuple with no monomial never appears.

Example
-------
>>> kr = KRelation.from_annotations(
...     rows=[("a",), ("b",)],
...     annotations=[[{("person", 1), ("person", 2)}], [{("person", 2)}, {("person", 3)}]],
...     weights=[1.0, 2.0],
... )
>>> sorted(sorted(m) for m in kr.annotation(1))
[[('person', 2)], [('person', 3)]]
>>> kr.present({("person", 2)})
[('b',)]
>>> kr.present({("person", 1), ("person", 2)})
[('a',), ('b',)]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

Participant = tuple[str, Any]
Annotation = frozenset[frozenset[Participant]]

__all__ = ["KRelation", "Participant", "Annotation"]


@dataclass(frozen=True, eq=False)
class KRelation:
    """A bag of output tuples, each with a weight and a DNF annotation over participants.

    Attributes
    ----------
    columns : tuple of str
        Names of the output columns of :attr:`rows`.
    weights : numpy.ndarray
        ``q(t)`` for every tuple, float64.
    tuple_ptr, mono_ptr, mono_part : numpy.ndarray
        The annotations in compressed sparse form (see the module docstring).
    participant_list : sequence of (domain, key)
        Every participant of the protected tables involved, indexed densely; ``mono_part`` holds
        indices into it (int64). Participants that occur in no annotation are included. A
        capture gives a :class:`~provsql_dp.provenance.participant_list.ParticipantList`, which
        builds a pair only when one is read; :attr:`n_participants` is its length.
    """

    columns: tuple[str, ...]
    values: tuple[np.ndarray, ...]  # one array per column, each of length n
    weights: np.ndarray
    tuple_ptr: np.ndarray
    mono_ptr: np.ndarray
    mono_part: np.ndarray
    participant_list: Sequence[Participant]
    sql: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        n = len(self.weights)
        if len(self.tuple_ptr) != n + 1:
            raise ValueError("tuple_ptr must have one entry more than there are tuples")
        if len(self.mono_ptr) != self.tuple_ptr[-1] + 1:
            raise ValueError("mono_ptr must have one entry more than there are monomials")
        if len(self.mono_part) != self.mono_ptr[-1]:
            raise ValueError("mono_part must hold exactly mono_ptr[-1] participant indices")
        if any(len(v) != n for v in self.values):
            raise ValueError("every column of values must have one entry per tuple")

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_annotations(
        cls,
        rows: Sequence[tuple],
        annotations: Sequence[Iterable[Iterable[Participant]]],
        weights: Sequence[float] | None = None,
        participants: Iterable[Participant] | None = None,
        columns: Sequence[str] | None = None,
    ) -> KRelation:
        """Build a K-relation from Python objects (for tests, examples and small inputs).

        Annotations are canonicalised: duplicate participants, duplicate monomials and absorbed
        monomials are dropped. ``participants`` defaults to those that occur in the annotations;
        pass more to model participants that contribute to no tuple.
        """
        n = len(rows)
        if len(annotations) != n:
            raise ValueError("one annotation per row is required")
        w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
        if len(w) != n:
            raise ValueError("one weight per row is required")
        canon = [_canonical(a) for a in annotations]
        universe = set(participants or ())
        for ann in canon:
            for mono in ann:
                universe.update(mono)
        plist = tuple(sorted(universe, key=_participant_sort_key))
        index = {p: i for i, p in enumerate(plist)}
        tuple_ptr = [0]
        mono_ptr = [0]
        mono_part: list[int] = []
        keep_rows = []
        keep_w = []
        for r, ann, wt in zip(rows, canon, w):
            if not ann:
                continue  # False: the tuple is in no world
            for mono in sorted(ann, key=lambda m: sorted(index[p] for p in m)):
                mono_part.extend(sorted(index[p] for p in mono))
                mono_ptr.append(len(mono_part))
            tuple_ptr.append(len(mono_ptr) - 1)
            keep_rows.append(tuple(r))
            keep_w.append(wt)
        width = len(columns) if columns is not None else (len(keep_rows[0]) if keep_rows else 0)
        cols = tuple(columns) if columns is not None else tuple(f"c{i}" for i in range(width))
        values = tuple(
            _object_array([row[j] for row in keep_rows]) for j in range(len(cols))
        )
        return cls(
            columns=cols,
            values=values,
            weights=np.asarray(keep_w, dtype=np.float64),
            tuple_ptr=np.asarray(tuple_ptr, dtype=np.int64),
            mono_ptr=np.asarray(mono_ptr, dtype=np.int64),
            mono_part=np.asarray(mono_part, dtype=np.int64),
            participant_list=plist,
        )

    # ------------------------------------------------------------------ the public API
    def __len__(self) -> int:
        return len(self.weights)

    @property
    def n_tuples(self) -> int:
        return len(self.weights)

    @property
    def n_monomials(self) -> int:
        return len(self.mono_ptr) - 1

    @property
    def n_participants(self) -> int:
        return len(self.participant_list)

    @cached_property
    def rows(self) -> list[tuple]:
        """The output tuples (before the final aggregate), one per K-relation tuple."""
        if not self.values:
            return [()] * self.n_tuples
        return list(zip(*(v.tolist() for v in self.values)))

    @cached_property
    def participants(self) -> frozenset[Participant]:
        """All participants of the protected tables involved (also those in no annotation)."""
        return frozenset(self.participant_list)

    @cached_property
    def participant_index(self) -> dict[Participant, int]:
        return {p: i for i, p in enumerate(self.participant_list)}

    def annotation(self, i: int) -> Annotation:
        """The DNF annotation of tuple ``i``: a frozenset of monomials (frozensets of participants)."""
        if not 0 <= i < self.n_tuples:
            raise IndexError(f"tuple index {i} out of range for {self.n_tuples} tuples")
        plist = self.participant_list
        monos = []
        for m in range(self.tuple_ptr[i], self.tuple_ptr[i + 1]):
            part = self.mono_part[self.mono_ptr[m] : self.mono_ptr[m + 1]]
            monos.append(frozenset(plist[p] for p in part.tolist()))
        return frozenset(monos)

    def present_mask(self, world: Iterable[Participant]) -> np.ndarray:
        """Boolean mask of the tuples whose annotation holds in ``world``."""
        alive = np.zeros(self.n_participants, dtype=bool)
        index = self.participant_index
        for p in world:
            j = index.get(p)
            if j is not None:
                alive[j] = True
        return self.mask_for(alive)

    def mask_for(self, alive: np.ndarray) -> np.ndarray:
        """Like :meth:`present_mask`, for a boolean array over participant indices."""
        mono_of_entry = self.monomial_of_entry
        missing = np.bincount(
            mono_of_entry, weights=~alive[self.mono_part], minlength=self.n_monomials
        )
        mono_ok = missing == 0
        ok_count = np.bincount(
            self.tuple_of_monomial, weights=mono_ok, minlength=self.n_tuples
        )
        return ok_count > 0

    def present(self, world: Iterable[Participant]) -> list[tuple]:
        """The rows (with multiplicity) whose annotation holds when only ``world`` contributes."""
        mask = self.present_mask(world)
        rows = self.rows
        return [rows[i] for i in np.flatnonzero(mask)]

    def true_answer(self) -> float:
        """The exact linear aggregate Σ q(t) over all tuples (private: curator only)."""
        return float(self.weights.sum())

    # ------------------------------------------------------------------ array helpers
    @cached_property
    def monomial_of_entry(self) -> np.ndarray:
        """For every entry of ``mono_part``, the index of its monomial."""
        return np.repeat(np.arange(self.n_monomials), np.diff(self.mono_ptr))

    @cached_property
    def tuple_of_monomial(self) -> np.ndarray:
        """For every monomial, the index of its tuple."""
        return np.repeat(np.arange(self.n_tuples), np.diff(self.tuple_ptr))

    @cached_property
    def monomial_sizes(self) -> np.ndarray:
        return np.diff(self.mono_ptr)

    def restrict(self, mask: np.ndarray) -> KRelation:
        """The sub-relation of the tuples selected by a boolean mask (annotations unchanged)."""
        mask = np.asarray(mask, dtype=bool)
        keep_t = np.flatnonzero(mask)
        mono_counts = np.diff(self.tuple_ptr)[keep_t]
        keep_m = np.flatnonzero(mask[self.tuple_of_monomial])
        part_counts = np.diff(self.mono_ptr)[keep_m]
        keep_e = mask[self.tuple_of_monomial][self.monomial_of_entry]
        return KRelation(
            columns=self.columns,
            values=tuple(v[keep_t] for v in self.values),
            weights=self.weights[keep_t],
            tuple_ptr=np.concatenate([[0], np.cumsum(mono_counts)]).astype(np.int64),
            mono_ptr=np.concatenate([[0], np.cumsum(part_counts)]).astype(np.int64),
            mono_part=self.mono_part[keep_e],
            participant_list=self.participant_list,
            sql=self.sql,
        )

    def with_weights(self, weights: np.ndarray) -> KRelation:
        """The same relation and annotations with other weights ``q(t)``."""
        return KRelation(
            columns=self.columns,
            values=self.values,
            weights=np.asarray(weights, dtype=np.float64),
            tuple_ptr=self.tuple_ptr,
            mono_ptr=self.mono_ptr,
            mono_part=self.mono_part,
            participant_list=self.participant_list,
            sql=self.sql,
        )

    def __repr__(self) -> str:
        return (
            f"KRelation({self.n_tuples} tuples, {self.n_monomials} monomials, "
            f"{self.n_participants} participants, columns={self.columns!r})"
        )


def _canonical(annotation: Iterable[Iterable[Participant]]) -> set[frozenset[Participant]]:
    """DNF as sets: dedupe participants and monomials, drop absorbed (superset) monomials."""
    monos = {frozenset(m) for m in annotation}
    return {m for m in monos if not any(o < m for o in monos)}


def _participant_sort_key(p: Participant) -> tuple:
    domain, key = p
    return (str(domain), type(key).__name__, key if not isinstance(key, tuple) else tuple(map(str, key)))


def _object_array(items: list) -> np.ndarray:
    arr = np.empty(len(items), dtype=object)
    arr[:] = items
    return arr
