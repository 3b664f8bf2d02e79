"""Blowfish policy graphs (He et al. §3, Haney et al. §3, Liu et al. Def. 3.2).

A policy graph ``G = (V, E)`` over a discrete domain of ``k`` values says which pairs of values an
adversary must not tell apart: a record may change from ``u`` to ``v`` when ``(u, v)`` is an edge.
Values are numbered ``0 … k-1`` (a 2-D domain of shape ``(k1, k2)`` is flattened row-major: cell
``(i, j)`` is value ``i*k2 + j``).

Bounded and unbounded
---------------------
* **bounded** (``bounded=True``, the papers' setting, the default): no ⊥ vertex. Neighbouring
  tables have the same size, so the row count ``n`` is **public** and is released exactly; for a
  disconnected graph (``partition``) every component's total is public as well.
* **unbounded** (``bounded=False``): a special vertex ⊥ (numbered ``k``) stands for "absent"; an
  edge ``(u, ⊥)`` protects the presence of a record with value ``u``. By default ⊥ is adjacent to
  every value, which matches ``PROTECT``'s presence/absence semantics. With ``sources`` ⊥ is
  adjacent only to those values (the δ-neighbourhood view of Fang & Chang): a record may appear or
  disappear only at a source, and presence of a record with value ``v`` is protected only at
  ``ε · dist_G(v, ⊥)`` — **values far from every source have their presence protected less**.
* ``Policy.full(k, bounded=False)`` is unbounded differential privacy exactly as Haney et al. §3
  defines it: ⊥ adjacent to every value and no value–value edge (changing a value is a removal
  plus an addition, protected at 2ε). With ``sources`` the values are also pairwise connected,
  so that every value stays protected.

Serialisation
-------------
:meth:`Policy.to_dict` returns a JSON-able dict for the catalog; :meth:`Policy.from_dict`
rebuilds the policy.

Examples
--------
>>> from provsql_dp.policies.blowfish import Policy
>>> p = Policy.threshold(10, 3)
>>> p.k, p.kind, p.theta, p.bounded
(10, 'threshold', 3, True)
>>> u, v = p.edges()
>>> len(u)          # pairs at distance 1, 2 or 3
24
>>> Policy.from_dict(p.to_dict()) == p
True
>>> Policy.line(4, bounded=False, sources=[0]).bottom_neighbours().tolist()
[0]
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from ...errors import DeclarationError

__all__ = ["Policy", "KINDS"]

KINDS = ("full", "line", "threshold", "grid", "partition", "product", "graph")

#: above this many edges :meth:`Policy.edges` refuses (use the structured paths instead)
MAX_EDGES = 50_000_000


def _check_size(name: str, k) -> int:
    try:
        k_int = int(k)
    except (TypeError, ValueError):
        raise DeclarationError(f"{name} must be a positive integer domain size, got {k!r}") from None
    if k_int != k or k_int < 1:
        raise DeclarationError(f"{name} must be a positive integer domain size, got {k!r}")
    return k_int


@dataclass(frozen=True, eq=False)
class Policy:
    """A Blowfish policy graph over a finite domain.

    Build one with the class methods :meth:`full`, :meth:`line`, :meth:`threshold`, :meth:`grid`,
    :meth:`partition`, :meth:`compose` (attribute composition) or :meth:`graph` (explicit edges).

    Attributes
    ----------
    kind : str
        One of ``KINDS``.
    shape : tuple of int
        Domain shape; ``k = prod(shape)`` values.
    bounded : bool
        ``True``: no ⊥, the table size is public. ``False``: ⊥ present.
    theta : int or None
        Distance threshold (``threshold``, ``grid``).
    sources : numpy.ndarray or None
        Values adjacent to ⊥ (unbounded only); ``None`` means every value.
    """

    kind: str
    shape: tuple
    bounded: bool = True
    theta: int | None = None
    sources: np.ndarray | None = None
    labels: np.ndarray | None = None
    factors: tuple = ()
    edge_list: tuple | None = None  # (u, v) arrays for kind "graph"
    ordered: bool = False  # kind "graph": vertices are ordered intervals of a 1-D domain
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def _make(cls, kind, shape, bounded, sources, **kw) -> "Policy":
        if not isinstance(bounded, (bool, np.bool_)):
            raise DeclarationError(f"bounded must be True or False, got {bounded!r}")
        k = int(np.prod(shape))
        src = None
        if sources is not None:
            if bounded:
                raise DeclarationError(
                    "sources only make sense for an unbounded policy (records appear and "
                    "disappear at the sources); pass bounded=False or drop sources")
            src = np.unique(np.asarray(sources, dtype=np.int64).ravel())
            if src.size == 0:
                raise DeclarationError("sources is empty: give at least one value where records "
                                       "may appear, or sources=None for every value")
            if src[0] < 0 or src[-1] >= k:
                raise DeclarationError(f"sources must be values in 0..{k - 1} (flattened for 2-D)")
            src.setflags(write=False)
        return cls(kind=kind, shape=tuple(int(s) for s in shape), bounded=bool(bounded),
                   sources=src, **kw)

    @classmethod
    def full(cls, k, *, bounded=True, sources=None) -> "Policy":
        """Complete graph: plain differential privacy (bounded or unbounded, Haney et al. §3)."""
        k = _check_size("k", k)
        return cls._make("full", (k,), bounded, sources)

    @classmethod
    def line(cls, k, *, bounded=True, sources=None) -> "Policy":
        """Line graph G¹ₖ: only adjacent values of an ordered domain are secrets."""
        k = _check_size("k", k)
        return cls._make("line", (k,), bounded, sources, theta=1)

    @classmethod
    def threshold(cls, k, theta, *, bounded=True, sources=None) -> "Policy":
        """Distance threshold Gᶿₖ: values at distance ≤ θ are secrets (θ=1 is the line)."""
        k = _check_size("k", k)
        theta = _check_size("theta", theta)
        if theta == 1:
            return cls.line(k, bounded=bounded, sources=sources)
        return cls._make("threshold", (k,), bounded, sources, theta=theta)

    @classmethod
    def grid(cls, k1, k2, theta=1, *, bounded=True, sources=None) -> "Policy":
        """Grid Gᶿ on a ``k1 × k2`` domain: cells at L1 distance ≤ θ are secrets."""
        k1, k2 = _check_size("k1", k1), _check_size("k2", k2)
        theta = _check_size("theta", theta)
        return cls._make("grid", (k1, k2), bounded, sources, theta=theta)

    @classmethod
    def partition(cls, labels, *, bounded=True, sources=None) -> "Policy":
        """Partitioned secrets: values with the same label are secrets of each other.

        ``labels[v]`` is the cell of value ``v``. Under a bounded policy each cell's total is
        public (it cannot change between neighbours).
        """
        lab = np.asarray(labels).ravel()
        if lab.size == 0:
            raise DeclarationError("partition needs one label per domain value; got none")
        _, inv = np.unique(lab, return_inverse=True)
        inv = inv.astype(np.int64)
        inv.setflags(write=False)
        return cls._make("partition", (lab.size,), bounded, sources, labels=inv)

    @classmethod
    def compose(cls, *policies, bounded=True, sources=None) -> "Policy":
        """Attribute composition (Liu et al. Def. 3.2): the Cartesian product of attribute graphs.

        Two tuples are secrets when they differ in one attribute by an edge of that attribute's
        graph. Composing two line graphs gives the grid G¹. The factors' own ``bounded`` flags
        are ignored (⊥ is a property of the whole tuple).
        """
        if len(policies) == 1 and isinstance(policies[0], (list, tuple)):
            policies = tuple(policies[0])
        if not policies or not all(isinstance(p, Policy) for p in policies):
            raise DeclarationError("compose() takes one or more Policy objects, one per attribute")
        for p in policies:
            if len(p.shape) != 1:
                raise DeclarationError("compose() takes one-attribute policies (full, line, "
                                       "threshold, partition, graph), one per attribute")
        if len(policies) == 1:
            p = policies[0]
            return cls.from_dict({**p.to_dict(), "bounded": bounded,
                                  "sources": None if sources is None else list(map(int, sources))})
        facs = tuple(cls.from_dict({**p.to_dict(), "bounded": True, "sources": None})
                     for p in policies)
        return cls._make("product", tuple(p.k for p in facs), bounded, sources, factors=facs)

    @classmethod
    def graph(cls, k, edges, *, bounded=True, sources=None, ordered=False) -> "Policy":
        """An explicit policy graph on ``k`` values; ``edges`` is an iterable of ``(u, v)`` pairs.

        Use ``k`` as the vertex ⊥ in an edge ``(u, k)`` only through ``sources``.
        """
        k = _check_size("k", k)
        e = np.asarray(list(edges) if not isinstance(edges, np.ndarray) else edges, dtype=np.int64)
        if e.size == 0:
            e = np.zeros((0, 2), dtype=np.int64)
        if e.ndim != 2 or e.shape[1] != 2:
            raise DeclarationError("edges must be a list of (u, v) pairs of values")
        if e.size and (e.min() < 0 or e.max() >= k):
            raise DeclarationError(f"edge endpoints must be values in 0..{k - 1}")
        e = e[e[:, 0] != e[:, 1]]
        e = np.unique(np.sort(e, axis=1), axis=0)
        u, v = e[:, 0].copy(), e[:, 1].copy()
        u.setflags(write=False)
        v.setflags(write=False)
        return cls._make("graph", (k,), bounded, sources, edge_list=(u, v), ordered=bool(ordered))

    # ------------------------------------------------------------------ basic properties
    @property
    def k(self) -> int:
        """Number of domain values (⊥ excluded)."""
        return int(np.prod(self.shape))

    @property
    def has_bottom(self) -> bool:
        """Whether the graph has the vertex ⊥ (unbounded policies)."""
        return not self.bounded

    @property
    def n_vertices(self) -> int:
        """``k`` plus one for ⊥ when unbounded."""
        return self.k + (0 if self.bounded else 1)

    @property
    def bottom(self) -> int | None:
        """Index of ⊥ (``k``) or ``None``."""
        return None if self.bounded else self.k

    def bottom_neighbours(self) -> np.ndarray:
        """Values adjacent to ⊥ (empty for bounded policies)."""
        if self.bounded:
            return np.zeros(0, dtype=np.int64)
        if self.sources is not None:
            return np.asarray(self.sources)
        return np.arange(self.k, dtype=np.int64)

    def n_value_edges(self) -> int:
        """Number of value–value edges, without enumerating them."""
        k, t = self.k, self.theta
        if self.kind == "full":
            return 0 if (not self.bounded and self.sources is None) else k * (k - 1) // 2
        if self.kind == "line":
            return k - 1
        if self.kind == "threshold":
            t = min(t, k - 1)
            return t * k - t * (t + 1) // 2
        if self.kind == "grid":
            return int(self._grid_edges(count_only=True))
        if self.kind == "partition":
            c = np.bincount(self.labels)
            return int((c * (c - 1) // 2).sum())
        if self.kind == "product":
            tot = 0
            for i, f in enumerate(self.factors):
                tot += f.n_value_edges() * (self.k // f.k)
            return tot
        return len(self.edge_list[0])

    # ------------------------------------------------------------------ edges
    def value_edges(self) -> tuple[np.ndarray, np.ndarray]:
        """All value–value edges as two int arrays ``(u, v)`` with ``u < v``."""
        m = self.n_value_edges()
        if m > MAX_EDGES:
            raise ValueError(f"this policy has {m} edges; enumerating them is not supported "
                             f"(limit {MAX_EDGES}); the structured strategies do not need them")
        k, t = self.k, self.theta
        if self.kind == "full":
            if not self.bounded and self.sources is None:
                z = np.zeros(0, dtype=np.int64)
                return z, z.copy()
            u, v = np.triu_indices(k, 1)
            return u.astype(np.int64), v.astype(np.int64)
        if self.kind in ("line", "threshold"):
            us, vs = [], []
            for d in range(1, min(t, k - 1) + 1):
                a = np.arange(k - d, dtype=np.int64)
                us.append(a)
                vs.append(a + d)
            if not us:
                z = np.zeros(0, dtype=np.int64)
                return z, z.copy()
            return np.concatenate(us), np.concatenate(vs)
        if self.kind == "grid":
            return self._grid_edges()
        if self.kind == "partition":
            order = np.argsort(self.labels, kind="stable")
            lab = self.labels[order]
            us, vs = [], []
            starts = np.flatnonzero(np.r_[True, lab[1:] != lab[:-1]])
            ends = np.r_[starts[1:], lab.size]
            for s, e in zip(starts, ends):
                if e - s > 1:
                    iu, iv = np.triu_indices(e - s, 1)
                    a, b = order[s + iu], order[s + iv]
                    us.append(np.minimum(a, b))
                    vs.append(np.maximum(a, b))
            if not us:
                z = np.zeros(0, dtype=np.int64)
                return z, z.copy()
            return np.concatenate(us), np.concatenate(vs)
        if self.kind == "product":
            us, vs = [], []
            strides = _strides(self.shape)
            for i, f in enumerate(self.factors):
                fu, fv = f.value_edges()
                others = [np.arange(s) for j, s in enumerate(self.shape) if j != i]
                if others:
                    grids = np.meshgrid(*others, indexing="ij")
                    base = np.zeros(grids[0].size, dtype=np.int64)
                    idx = 0
                    for j in range(len(self.shape)):
                        if j == i:
                            continue
                        base += grids[idx].ravel() * strides[j]
                        idx += 1
                else:
                    base = np.zeros(1, dtype=np.int64)
                us.append((base[:, None] + fu[None, :] * strides[i]).ravel())
                vs.append((base[:, None] + fv[None, :] * strides[i]).ravel())
            return np.concatenate(us), np.concatenate(vs)
        u, v = self.edge_list
        return np.asarray(u), np.asarray(v)

    def _grid_edges(self, count_only=False):
        k1, k2 = self.shape
        us, vs, cnt = [], [], 0
        for di, dj in _grid_offsets(self.theta):
            n1, n2 = k1 - di, k2 - abs(dj)
            if n1 <= 0 or n2 <= 0:
                continue
            cnt += n1 * n2
            if count_only:
                continue
            i = np.arange(n1)[:, None]
            j = np.arange(n2)[None, :] + (0 if dj >= 0 else -dj)
            a = (i * k2 + j).ravel()
            b = ((i + di) * k2 + j + dj).ravel()
            us.append(np.minimum(a, b))
            vs.append(np.maximum(a, b))
        if count_only:
            return cnt
        if not us:
            z = np.zeros(0, dtype=np.int64)
            return z, z.copy()
        return np.concatenate(us).astype(np.int64), np.concatenate(vs).astype(np.int64)

    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        """All edges ``(u, v)``; a ⊥-edge has ``v == k``."""
        u, v = self.value_edges()
        b = self.bottom_neighbours()
        if b.size:
            u = np.concatenate([u, b])
            v = np.concatenate([v, np.full(b.size, self.k, dtype=np.int64)])
        return u, v

    # ------------------------------------------------------------------ (de)serialisation
    def to_dict(self) -> dict:
        """A JSON-able description (for the catalog); inverse of :meth:`from_dict`.

        >>> Policy.grid(4, 5, 2).to_dict()
        {'kind': 'grid', 'shape': [4, 5], 'bounded': True, 'theta': 2, 'sources': None}
        """
        d = {"kind": self.kind, "shape": list(self.shape), "bounded": self.bounded,
             "theta": self.theta,
             "sources": None if self.sources is None else [int(s) for s in self.sources]}
        if self.kind == "partition":
            d["labels"] = [int(x) for x in self.labels]
        if self.kind == "product":
            d["factors"] = [f.to_dict() for f in self.factors]
        if self.kind == "graph":
            d["edges"] = [[int(a), int(b)] for a, b in zip(*self.edge_list)]
            d["ordered"] = self.ordered
        return d

    def to_json(self) -> str:
        """:meth:`to_dict` as a JSON string."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, d: dict) -> "Policy":
        """Rebuild a policy from :meth:`to_dict` output (raises DeclarationError if malformed)."""
        if isinstance(d, str):
            d = json.loads(d)
        if not isinstance(d, dict) or "kind" not in d:
            raise DeclarationError("a policy description is a dict with at least 'kind' and 'shape'")
        kind = d["kind"]
        shape = d.get("shape")
        kw = {"bounded": d.get("bounded", True), "sources": d.get("sources")}
        if kind == "full":
            return cls.full(shape[0], **kw)
        if kind == "line":
            return cls.line(shape[0], **kw)
        if kind == "threshold":
            return cls.threshold(shape[0], d["theta"], **kw)
        if kind == "grid":
            return cls.grid(shape[0], shape[1], d.get("theta", 1), **kw)
        if kind == "partition":
            return cls.partition(d["labels"], **kw)
        if kind == "product":
            return cls.compose(*[cls.from_dict(f) for f in d["factors"]], **kw)
        if kind == "graph":
            return cls.graph(shape[0], d.get("edges", []), ordered=d.get("ordered", False), **kw)
        raise DeclarationError(f"unknown policy kind {kind!r}; expected one of {', '.join(KINDS)}")

    @classmethod
    def from_json(cls, s: str) -> "Policy":
        """Inverse of :meth:`to_json`."""
        return cls.from_dict(json.loads(s))

    def __eq__(self, other):
        if not isinstance(other, Policy):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __hash__(self):
        return hash(self.to_json())

    def __repr__(self):
        extra = ""
        if self.theta is not None and self.kind in ("threshold", "grid"):
            extra += f", theta={self.theta}"
        if self.kind == "product":
            extra += ", factors=" + "×".join(f.kind for f in self.factors)
        if self.sources is not None:
            extra += f", sources={len(self.sources)} values"
        return (f"Policy({self.kind}, shape={self.shape}{extra}, "
                f"{'bounded' if self.bounded else 'unbounded'})")

    def with_bounded(self, bounded: bool, sources=None) -> "Policy":
        """The same graph with another ⊥ setting."""
        return Policy.from_dict({**self.to_dict(), "bounded": bounded,
                                 "sources": None if sources is None else [int(s) for s in np.ravel(sources)]})

    def describe(self) -> str:
        """One line in words, for error messages and listings."""
        base = {
            "full": "every pair of values (differential privacy)",
            "line": "adjacent values of an ordered domain",
            "threshold": f"values at distance at most {self.theta}",
            "grid": f"cells at L1 distance at most {self.theta}",
            "partition": "values in the same partition cell",
            "product": "tuples differing in one attribute by a secret of that attribute",
            "graph": "the given pairs of values",
        }[self.kind]
        if self.bounded:
            tail = "; the table size is public"
        elif self.sources is None:
            tail = "; presence of every record is protected"
        else:
            tail = (f"; records appear only at {len(self.sources)} source value(s), presence "
                    "far from a source is protected less")
        return f"{self.kind} policy on {'×'.join(map(str, self.shape))} values: {base}{tail}"


def _strides(shape):
    s = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        s[i] = s[i + 1] * shape[i + 1]
    return s


def _grid_offsets(theta):
    """Offsets (di, dj) with di ≥ 0, 0 < |di|+|dj| ≤ θ, one per unordered pair."""
    out = []
    for di in range(0, theta + 1):
        for dj in range(-(theta - di), theta - di + 1):
            if di == 0 and dj <= 0:
                continue
            out.append((di, dj))
    return out
