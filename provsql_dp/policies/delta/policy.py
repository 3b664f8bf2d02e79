"""δ-neighbourhood policies on one or two numeric columns (Fang & Chang §3–4).

Two tables are δ-neighbours when one is obtained from the other by moving one record by at most
δ (in the chosen metric), or — only when ``sources`` are given — by adding or removing one record
within δ of a source. Without sources the table size is public (the paper's bounded setting);
with ``sources="boundary"`` records enter and leave through the boundary of the box.

Points live in a box (``bbox``; by default ``[0, 1]^d``), δ is in the same units as the points.

Discretised, this is a Blowfish policy (He et al.): split the box into half-open cells; two cells
are secrets of each other exactly when some point of one is within δ of some point of the other,
and a cell is adjacent to ⊥ when some point of it lies within δ of a source. In 1-D, with ``k``
cells of width ``w``, cells ``i`` and ``j`` are neighbours iff ``(|i−j|−1)·w < δ``, i.e.
``|i−j| ≤ θ = ⌈δ/w⌉`` — the Blowfish threshold policy ``Gᶿₖ`` (:meth:`Policy.threshold_of`);
:meth:`Policy.blowfish` returns it (a :class:`provsql_dp.policies.blowfish.Policy`, explicit edges in 2-D),
so every Blowfish strategy and sensitivity computation applies unchanged. Cell geometry is
computed in exact rational arithmetic (floats are read by their shortest decimal repr), so a
neighbour relation is never lost to rounding.

Examples
--------
>>> from provsql_dp.policies.delta import Policy
>>> p = Policy(0.25)                      # 1-D, points in [0, 1], bounded (no sources)
>>> p.threshold_of(4)                     # 4 cells of width 1/4: only adjacent cells
1
>>> p.threshold_of(40)                    # cells of width 1/40: up to 10 cells apart
10
>>> p.blowfish(4)
Policy(line, shape=(4,), bounded)
>>> q = Policy(0.1, dims=2, metric="l1", sources="boundary")
>>> bp = q.blowfish((10, 10))
>>> bp.bounded, len(bp.sources)     # ⊥ touches the two outer rings (cell 1 starts at δ)
(False, 64)
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ...errors import DeclarationError
from ..blowfish import Policy as BlowfishPolicy

__all__ = ["Policy", "METRICS", "exact"]

METRICS = ("euclidean", "l1")


def exact(x) -> Fraction:
    """An exact rational from an int, Fraction, decimal string or float (its shortest repr).

    >>> exact(0.1), exact("1e-3"), exact(2)
    (Fraction(1, 10), Fraction(1, 1000), Fraction(2, 1))
    """
    if isinstance(x, Fraction):
        return x
    if isinstance(x, (bool, np.bool_)):
        raise DeclarationError("expected a number, got a boolean")
    if isinstance(x, (int, np.integer)):
        return Fraction(int(x))
    if isinstance(x, (float, np.floating)):
        if not math.isfinite(float(x)):
            raise DeclarationError(f"expected a finite number, got {x!r}")
        return Fraction(repr(float(x)))
    if isinstance(x, str):
        try:
            return Fraction(x.strip())
        except ValueError:
            raise DeclarationError(f"{x!r} is not a number") from None
    raise DeclarationError(f"expected a number, got {type(x).__name__}")


def _ceil(f: Fraction) -> int:
    return -((-f.numerator) // f.denominator)


class Policy:
    """A δ-neighbourhood on points in a box.

    Parameters
    ----------
    delta : float, str or Fraction
        The threshold δ > 0, in the units of the points.
    dims : {1, 2}
        Number of numeric columns.
    bbox : sequence, optional
        ``(lo, hi)`` in 1-D, ``((x_lo, x_hi), (y_lo, y_hi))`` in 2-D; default the unit box. It
        must be fixed without looking at the data (it is public).
    metric : {"euclidean", "l1"}
        Distance between points (identical in 1-D).
    sources : None, "boundary" or array_like
        Where records may appear or disappear. ``None``: nowhere, the table size is public.
        ``"boundary"``: the boundary of the box. Otherwise an array of source points (shape
        ``(s,)`` in 1-D, ``(s, 2)`` in 2-D).

    Attributes
    ----------
    delta : Fraction
    bounded : bool
        ``True`` when there are no sources.
    """

    def __init__(self, delta, dims=1, bbox=None, metric="euclidean", sources=None):
        self.delta = exact(delta)
        if self.delta <= 0:
            raise DeclarationError(f"delta must be positive, got {delta!r}")
        if dims not in (1, 2):
            raise DeclarationError(f"dims must be 1 or 2 (one or two numeric columns), got {dims!r}")
        self.dims = int(dims)
        metric = str(metric).lower()
        if metric in ("l2", "euclid"):
            metric = "euclidean"
        if metric in ("manhattan", "taxicab"):
            metric = "l1"
        if metric not in METRICS:
            raise DeclarationError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
        self.metric = metric
        if bbox is None:
            bbox = [(0, 1)] * self.dims
        elif self.dims == 1 and len(bbox) == 2 and not hasattr(bbox[0], "__len__"):
            bbox = [tuple(bbox)]
        if len(bbox) != self.dims:
            raise DeclarationError(f"bbox needs one (lo, hi) pair per column ({self.dims})")
        box = []
        for pair in bbox:
            if len(pair) != 2:
                raise DeclarationError("each bbox entry is a (lo, hi) pair")
            lo, hi = exact(pair[0]), exact(pair[1])
            if not hi > lo:
                raise DeclarationError(f"bbox needs lo < hi, got ({pair[0]!r}, {pair[1]!r})")
            box.append((lo, hi))
        self.bbox = tuple(box)
        if sources is None:
            self.sources = None
        elif isinstance(sources, str):
            if sources.lower() != "boundary":
                raise DeclarationError("sources must be None, 'boundary' or an array of points")
            self.sources = "boundary"
        else:
            s = np.asarray(sources, dtype=float)
            s = s.reshape(-1, self.dims) if self.dims == 2 else s.reshape(-1)
            if s.size == 0:
                raise DeclarationError("sources is empty: give at least one source point, or None")
            self.sources = s

    # ------------------------------------------------------------------ basics
    @property
    def bounded(self) -> bool:
        """No sources: neighbouring tables have the same size, which is public."""
        return self.sources is None

    @property
    def lo(self) -> np.ndarray:
        return np.array([float(a) for a, _ in self.bbox])

    @property
    def hi(self) -> np.ndarray:
        return np.array([float(b) for _, b in self.bbox])

    @property
    def extent(self) -> np.ndarray:
        return self.hi - self.lo

    def __repr__(self):
        src = ("none (size public)" if self.sources is None else
               "boundary" if isinstance(self.sources, str) else f"{len(self.sources)} points")
        box = " × ".join(f"[{float(a):g}, {float(b):g}]" for a, b in self.bbox)
        return (f"delta.Policy(δ={float(self.delta):g}, {self.metric}, box {box}, "
                f"sources: {src})")

    def to_dict(self) -> dict:
        """JSON-able description (exact numbers as strings); inverse of :meth:`from_dict`.

        >>> Policy.from_dict(Policy(0.01, 2, metric="l1").to_dict()).metric
        'l1'
        """
        src = self.sources
        if src is not None and not isinstance(src, str):
            src = np.asarray(src).tolist()
        return {"delta": str(self.delta), "dims": self.dims,
                "bbox": [[str(a), str(b)] for a, b in self.bbox], "metric": self.metric,
                "sources": src}

    @classmethod
    def from_dict(cls, d: dict) -> "Policy":
        return cls(d["delta"], d.get("dims", 1), d.get("bbox"), d.get("metric", "euclidean"),
                   d.get("sources"))

    def distance(self, a, b) -> np.ndarray:
        """Distance between points (arrays of shape ``(n,)`` in 1-D, ``(n, 2)`` in 2-D)."""
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        if self.dims == 1:
            return np.abs(a - b)
        d = np.abs(a - b)
        return d.sum(axis=-1) if self.metric == "l1" else np.sqrt((d * d).sum(axis=-1))

    def check_points(self, points) -> np.ndarray:
        """Validate points: shape ``(n,)`` (1-D) or ``(n, 2)`` (2-D), finite, inside the box."""
        p = np.asarray(points, dtype=float)
        if self.dims == 1:
            p = p.reshape(-1)
        elif p.ndim != 2 or p.shape[1] != 2:
            raise ValueError("2-D points must be an array of shape (n, 2)")
        if not np.all(np.isfinite(p)):
            raise ValueError("points must be finite numbers")
        lo, hi = self.lo, self.hi
        if p.size and (np.any(p < lo) or np.any(p > hi)):
            raise ValueError("points lie outside the policy's bounding box; clip them or widen "
                             "bbox (choose the box without looking at the data)")
        return p

    # ------------------------------------------------------------------ discretisation
    def _widths(self, shape):
        return [(b - a) / int(k) for (a, b), k in zip(self.bbox, shape)]

    def threshold_of(self, k: int) -> int:
        """1-D: the Blowfish threshold θ of ``k`` equal cells — cells ``|i−j| ≤ θ`` apart are
        δ-neighbours (``θ = ⌈δ/w⌉``, ``w`` the cell width)."""
        if self.dims != 1:
            raise ValueError("threshold_of is for 1-D policies; use cell_edges for 2-D")
        (w,) = self._widths((k,))
        return max(1, _ceil(self.delta / w))

    def _gap_ok(self, gaps) -> bool:
        """Is a pair of cells with these exact coordinate gaps within δ (strictly: half-open
        cells never attain their infimum distance)?"""
        if self.metric == "l1" or self.dims == 1:
            return sum(gaps) < self.delta
        return sum(g * g for g in gaps) < self.delta * self.delta

    def cell_offsets(self, shape) -> list:
        """2-D: the offsets ``(di, dj)`` (``di ≥ 0``, one per unordered pair) of neighbouring
        cells on a grid of ``shape`` cells."""
        wx, wy = self._widths(shape)
        rx = _ceil(self.delta / wx) + 1
        ry = _ceil(self.delta / wy) + 1
        out = []
        for di in range(0, min(rx, shape[0] - 1) + 1):
            for dj in range(-min(ry, shape[1] - 1), min(ry, shape[1] - 1) + 1):
                if di == 0 and dj <= 0:
                    continue
                gaps = (max(0, di - 1) * wx, max(0, abs(dj) - 1) * wy)
                if self._gap_ok(gaps):
                    out.append((di, dj))
        return out

    def cell_edges(self, shape) -> tuple[np.ndarray, np.ndarray]:
        """2-D: neighbouring cell pairs ``(u, v)`` (row-major cell numbers, ``u < v``)."""
        k1, k2 = int(shape[0]), int(shape[1])
        us, vs = [], []
        for di, dj in self.cell_offsets((k1, k2)):
            n1, n2 = k1 - di, k2 - abs(dj)
            if n1 <= 0 or n2 <= 0:
                continue
            i = np.arange(n1)[:, None]
            j = np.arange(n2)[None, :] + (0 if dj >= 0 else -dj)
            a = (i * k2 + j).ravel()
            b = ((i + di) * k2 + j + dj).ravel()
            us.append(np.minimum(a, b))
            vs.append(np.maximum(a, b))
        if not us:
            z = np.zeros(0, dtype=np.int64)
            return z, z.copy()
        return np.concatenate(us).astype(np.int64), np.concatenate(vs).astype(np.int64)

    def source_cells(self, shape) -> np.ndarray | None:
        """Cells adjacent to ⊥: those with a point within δ of a source (``None`` if bounded).

        The test is conservative (closed cells, distance ≤ δ): an extra ⊥-edge only makes the
        policy stronger.
        """
        if self.sources is None:
            return None
        shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
        widths = self._widths(shape)
        edges = [np.array([float(a + i * w) for i in range(k + 1)])
                 for (a, _), k, w in zip(self.bbox, shape, widths)]
        lo = [e[:-1] for e in edges]
        hi = [e[1:] for e in edges]
        d = float(self.delta)
        if isinstance(self.sources, str):  # the boundary of the box
            if self.dims == 1:
                (l,), (h,) = lo, hi
                near = (l - float(self.bbox[0][0]) <= d) | (float(self.bbox[0][1]) - h <= d)
                return np.flatnonzero(near).astype(np.int64)
            nx = (lo[0] - float(self.bbox[0][0]) <= d) | (float(self.bbox[0][1]) - hi[0] <= d)
            ny = (lo[1] - float(self.bbox[1][0]) <= d) | (float(self.bbox[1][1]) - hi[1] <= d)
            mask = nx[:, None] | ny[None, :]
            return np.flatnonzero(mask.ravel()).astype(np.int64)
        src = self.sources
        if self.dims == 1:
            (l,), (h,) = lo, hi
            gap = np.maximum(0.0, np.maximum(l[None, :] - src[:, None], src[:, None] - h[None, :]))
            return np.flatnonzero((gap <= d).any(axis=0)).astype(np.int64)
        gx = np.maximum(0.0, np.maximum(lo[0][None, :] - src[:, :1], src[:, :1] - hi[0][None, :]))
        gy = np.maximum(0.0, np.maximum(lo[1][None, :] - src[:, 1:], src[:, 1:] - hi[1][None, :]))
        if self.metric == "l1":
            dist = gx[:, :, None] + gy[:, None, :]
        else:
            dist = np.sqrt(gx[:, :, None] ** 2 + gy[:, None, :] ** 2)
        return np.flatnonzero((dist <= d).any(axis=0).ravel()).astype(np.int64)

    def blowfish(self, shape) -> BlowfishPolicy:
        """The Blowfish policy of this δ-neighbourhood on a grid of equal half-open cells.

        1-D (``shape = k``): the threshold policy ``Gᶿₖ`` with ``θ = ⌈δ/w⌉``; 2-D
        (``shape = (k1, k2)``, row-major cells): an explicit graph of the neighbouring cells.
        Sources become ⊥-edges (an unbounded policy); without sources the policy is bounded.
        """
        src = None
        if self.dims == 1:
            k = int(shape[0]) if np.ndim(shape) else int(shape)
            src = self.source_cells(k)
            if src is not None and src.size == 0:
                raise DeclarationError("no cell lies within delta of a source")
            return BlowfishPolicy.threshold(k, self.threshold_of(k), bounded=self.bounded,
                                            sources=src)
        k1, k2 = int(shape[0]), int(shape[1])
        src = self.source_cells((k1, k2))
        if src is not None and src.size == 0:
            raise DeclarationError("no cell lies within delta of a source")
        u, v = self.cell_edges((k1, k2))
        return BlowfishPolicy.graph(k1 * k2, np.stack([u, v], axis=1), bounded=self.bounded,
                                    sources=src)

    def cells(self, points, shape) -> np.ndarray:
        """Cell number of every point on a grid of ``shape`` equal half-open cells (the last
        cell of each axis is closed)."""
        p = self.check_points(points)
        shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
        if self.dims == 1:
            k = shape[0]
            return np.minimum(((p - self.lo[0]) / self.extent[0] * k).astype(np.int64), k - 1)
        idx = []
        for a in range(2):
            k = shape[a]
            idx.append(np.minimum(((p[:, a] - self.lo[a]) / self.extent[a] * k).astype(np.int64),
                                  k - 1))
        return idx[0] * shape[1] + idx[1]

    def histogram(self, points, shape) -> np.ndarray:
        """Counts of the points on a grid of ``shape`` cells (flattened row-major in 2-D)."""
        shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
        return np.bincount(self.cells(points, shape), minlength=int(np.prod(shape))).astype(float)
