"""The single-owner closed forms from a bucketed summary of the per-participant totals: the
engine keeps the totals, Python sees a few hundred rows.

:func:`provsql_dp.mechanisms.recursive.single_owner.release` needs, from the totals ``c_p``, only

* for the Δ search (Proposition 3): ``max c``, ``#{c > 0}`` and, for every threshold
  ``W_j = τ_j/2`` (and its slack-widened twin ``gb_j``), ``#{c > W_j}`` and ``Σ_{c > W_j} 1/c``;
* for X (Proposition 4): ``Σ_p min(c_p, Δ̂)`` with ``Δ̂ = θ·e^{μ + βĵ}`` on a public lattice.

So the engine groups the positive totals by two integer estimates computed from ``ln c``:
``k = ⌈ln(2c/θ)/β⌉ − 1`` (≈ the number of thresholds ``W_j``, ``j ≥ 1``, below ``c``) and
``m = ⌈(ln(c/θ) − μ)/β⌉`` (≈ the lattice index of the smallest ``Δ̂`` at or above ``c``), and
returns per bucket the count, ``Σ 1/c``, ``Σ c``, ``min c`` and ``max c`` (:class:`Buckets`).
Python then checks each bucket against the exact thresholds (computed exactly as
:func:`~.single_owner.delta` computes them): a bucket whose ``[min, max]`` lies between two
consecutive thresholds contributes to the right suffix sums whatever its estimate. A total that
could straddle one — within rounding of a threshold ``W_j``, inside its greedy twin's slack, on
the Δ̂ lattice or near a cap of Δ̂ (:func:`near_sql`) — goes, in the same pass, to a *near*
bucket (``Buckets.single``): keyed by the cell that the boundaries around it (the engine's own
``W``, ``gb``, lattice points and caps: :func:`near_key_sql`) leave it in, and by its exact
value only within a few ulps of one of them, where the engine's ``exp`` and numpy's may
disagree. A near bucket is classified by itself, exactly, from its ``[min, max]``. So the
engine makes the same passes whatever the data: a further pass read only when some total was
near a boundary (the analyst can put one there: ``CASE WHEN <secret> THEN W_j …``) made the
running time answer a question (red-team finding h49attack-3,
``benchmarks/bucket_pass_timing.py``); and the number of near buckets is bounded by the
boundaries, not by the number of totals the analyst pushes onto them (grouping them by exact
value grew the engine's hash table with that number: h55hard).
``Buckets.exact`` (a further pass) remains only as a safety net that no total reaches
(``tests/unit/privacy/test_engine_buckets_near.py``). The answer is the one of the per-participant
path — the same ``j``, the same draws from the generator in the same order — up to the order in
which floating-point sums are added (``Σ 1/c`` in the J test, which has a relative slack, and
``Σ c`` in X, which is then snapped to a grid of step ``≈ 2^-20·Δ̂/ε₂``); whole-number totals
(counts) give exactly the same X.

Private: the buckets are a function of the data; the caller charges before calling
:func:`release_buckets`, and only its :class:`~.release.Release` is published.

>>> import numpy as np
>>> from provsql_dp.mechanisms.recursive import single_owner
>>> c = np.array([0.0, 1.0, 3.0, 2.0, 7.5, 7.5, 40.0])
>>> b = Buckets.from_totals(c, theta=1.0, beta=0.5, mu=0.0)
>>> delta_buckets(b, 1.0, 0.5) == single_owner.delta(c, 1.0, 0.5)
True
>>> clamped_buckets(b, 2.5) == single_owner.clamped_sum(c, 2.5)
True
>>> a = release_buckets([b], 1.0, "node", np.random.default_rng(3))
>>> a.value == single_owner.release(c, 1.0, "node", np.random.default_rng(3)).value
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ..._numbers import positive
from ..noise.sources import scalar_draws
from ._framework import _CMP_TOL, resolve_params, threshold
from .release import _MAX_EXPONENT, Release, release_delta_hat, release_x
from .single_owner import first_feasible, search_range

__all__ = ["Buckets", "delta_buckets", "clamped_buckets", "release_buckets", "bucket_sql",
           "near_sql", "near_key_sql", "cap_indices", "params_for"]

#: a near total within this relative distance of one of the engine's boundaries is keyed by its
#: exact value (the engine's ``exp`` and numpy's differ by a few ulps; 2^-46 is 64 ulps): at most
#: a few hundred doubles per boundary, whatever the data
_WINDOW = 2.0 ** -46


def bucket_sql(c: str, theta: float, beta: float, mu: float) -> tuple[str, str, str]:
    """SQL of ``ln c`` for a positive finite total ``c`` (NULL otherwise: zero, negative, NaN or
    infinite — the rows the checks read), and of the two bucket estimates ``(k, m)`` over a
    column ``l`` holding it. The estimates are whole numbers kept as DOUBLE (``|l/β|`` is far
    below 2^53, so exactly the integers; no cast per row: measured 7 % of the bucket pass)."""
    ln = f"CASE WHEN {c} > 0 AND {c} < 'inf'::DOUBLE THEN ln({c}) END"
    inv_beta = f"{1.0 / beta!r}::DOUBLE"
    k = f"ceil((l + {math.log(2.0 / theta)!r}::DOUBLE) * {inv_beta}) - 1"
    m = f"ceil((l - {math.log(theta) + mu!r}::DOUBLE) * {inv_beta})"
    return ln, k, m


def near_sql(theta: float, beta: float, mu: float, eps2: float) -> tuple[str, str]:
    """``(columns, predicate)``: the columns ``fk, fm`` to compute over ``l = ln c`` (once per
    row), and the SQL predicate over them and the positive finite total ``c``, true for every
    total that could
    straddle a bucket boundary: within a relative 1e-9 of a threshold ``W_j`` or of a point of
    the Δ̂ lattice ``θe^{μ+βi}``, inside the greedy test's slack above a ``W_j`` (``c ≤ gb_j``),
    in the lattice bucket of a cap of Δ̂ (``e^700``, ``2^63·ε₂``), or below 1e-8. The engine
    keys such totals by their cell among the boundaries around them (:func:`near_key_sql`,
    :mod:`provsql_dp.privacy.engine_buckets`), so a near bucket lies on one side of every
    boundary and is classified exactly in Python, and no total that the analyst can place on a
    public threshold triggers a further pass (the number of passes is a function of the
    statement only).

    Why it covers the slack: ``gb_j = W_j(1 + tol) + tol/2`` and ``c/W_k = e^{βδ}`` with
    ``δ = fk − k ∈ (0, 1]`` (``fk = ln(2c/θ)/β``, ``k = ⌈fk⌉ − 1``), so ``c ≤ gb_k`` gives
    ``c(1 − e^{−βδ}) ≤ tol·c + tol/2``; as ``1 − e^{−x} ≥ x/2`` on ``[0, 1]``, that needs
    ``βδ ≤ 2·tol·(1 + 1/(2c))`` (or ``βδ > 1`` with ``c < 1e-9``). The relative margins are
    ≥ 1e-9, far above the rounding of ``ln`` and of the thresholds (≈ 1e-15).

    >>> import duckdb, math
    >>> con = duckdb.connect()
    >>> w = math.exp(3 * 0.1) / 2          # W_3 for θ = 1, β = 0.1
    >>> cols, pred = near_sql(1.0, 0.1, 0.5, 0.5)
    >>> def near(c):
    ...     return con.execute(f"SELECT {pred} FROM (SELECT c, {cols} FROM (SELECT "
    ...                        f"{c!r}::DOUBLE AS c, ln({c!r}::DOUBLE) AS l))").fetchone()[0]
    >>> [near(c) for c in (w, w * (1 + 1e-12), w * 1.01, 7.25, math.exp(0.5 + 0.1 * 7))]
    [True, True, False, False, True]
    """
    ib = f"{1.0 / beta!r}::DOUBLE"
    fk = f"((l + {math.log(2.0 / theta)!r}::DOUBLE) * {ib})"
    fm = f"((l - {math.log(theta) + mu!r}::DOUBLE) * {ib})"
    caps = cap_indices(theta, beta, mu, eps2)
    b = f"{float(beta)!r}::DOUBLE"
    dk, dm = f"{b} * (fk - ceil(fk) + 1)", f"{b} * (fm - ceil(fm) + 1)"  # β·δ, δ ∈ (0, 1]
    coef = 2.0 * (1 + 1e-6) * _CMP_TOL  # βδ ≤ coef·(1 + 0.5/c), times c > 0: no division
    pred = (f"{dk} * c <= {coef!r} * (c + 0.5) OR {dk} > {b} - 1e-9 "
            f"OR {dm} < 1e-9 OR {dm} > {b} - 1e-9 OR c < 1e-8 "
            f"OR ceil(fm) IN ({', '.join(map(str, caps))})")
    return f"{fk} AS fk, {fm} AS fm", pred


def cap_indices(theta: float, beta: float, mu: float, eps2: float) -> list[int]:
    """The lattice indices ``ceil(fm)`` whose totals are near a cap of Δ̂ (``e^700``,
    ``2^63·ε₂``): :func:`near_sql`'s last test (the native pass reads them too)."""
    return sorted({math.ceil((math.log(cap) - (math.log(theta) + mu)) / beta) + d
                   for cap in (math.exp(_MAX_EXPONENT), math.ldexp(eps2, 63)) for d in (-1, 0, 1)})


def near_key_sql(theta: float, beta: float, mu: float, eps2: float, k: str = "k",
                 m: str = "m") -> str:
    """SQL of the key ``e`` of a near total ``c`` (:func:`near_sql`) with bucket estimates ``k,
    m`` (SQL, :func:`bucket_sql`): ``c`` itself when it lies within a relative 2^-46 of one of
    the boundaries ``B(k, m, kg)``, else the negative cell code ``−1 − (16·kg + s)``, where
    ``kg`` is the estimate of ``#{t ≥ 1 : gb_t < c}`` (``gb_t = (τ_t(1 + tol) + tol)/2``,
    crowded together where ``τ_t`` is below ``tol``) and ``s`` the number of boundaries of ``B``
    below ``c`` (at most 10). One key column, NULL for the other totals: the bucket pass costs
    what it cost with the exact values (a further key column cost 50 %).

    ``B`` is the thresholds ``W_k, W_{k+1}``, the greedy ``gb_{k−1}, gb_k, gb_kg, gb_{kg+1}``,
    the lattice points ``θe^{μ+β(m−1)}, θe^{μ+βm}`` and Δ̂'s caps, computed by the engine with
    the operations numpy and :func:`~.release.release_delta_hat` use (the same products, sums and
    divisions; only ``exp`` may differ, by an ulp or two). ``s`` numbers the cell among the
    sorted ``B`` that holds ``c``, so the totals of one key ``(k, m, e < 0)`` are on one side of
    each Python boundary that an estimate off by at most one can put in their range; the totals
    in the window are keyed by their exact value (at most a few hundred doubles per boundary).
    The keys are thus bounded by the boundaries, not by the number of totals an analyst pushes
    onto them. Python never trusts the cell: it checks each near bucket's ``[min, max]``
    against its own thresholds (a straddling bucket is read exactly: the safety net, which no
    estimate off by at most one reaches).

    >>> import duckdb, math
    >>> def key(c, k, m):
    ...     e = near_key_sql(1.0, 0.1, 0.5, 0.5, f"{k}::DOUBLE", f"{m}::DOUBLE")
    ...     return duckdb.sql(f"SELECT {e} FROM (SELECT {c!r}::DOUBLE AS c)").fetchall()[0][0]
    >>> w3 = math.exp(3 * 0.1) / 2   # W_3, as numpy computes it here
    >>> key(w3, 3, 2) == w3   # within the window: its exact value
    True
    >>> key(w3 * (1 + 1e-12), 3, 2), key(w3 * (1 - 1e-12), 3, 2)  # kg = 2; s = 3, then 2
    (-36.0, -35.0)
    """
    b, th = f"{float(beta)!r}::DOUBLE", f"{float(theta)!r}::DOUBLE"
    one_tol, tol = f"{1 + _CMP_TOL!r}::DOUBLE", f"{_CMP_TOL!r}::DOUBLE"
    # τ_t < (2c − tol)/(1 + tol) ⟺ gb_t < c; below tol/2 no gb_t is (kg very negative)
    kg = (f"(ceil(ln(greatest((2.0::DOUBLE * c - {tol}) / {one_tol}, 1e-300::DOUBLE) / {th}) "
          f"* {1.0 / beta!r}::DOUBLE) - 1)")

    def tau(x):  # numpy's τ_j = exp(j·β)·θ (single_owner.search_range)
        return f"(exp(({x}) * {b}) * {th})"

    lattice = f"{math.log(theta) + mu!r}::DOUBLE"  # release_delta_hat's (ln θ + μ) + β·ĵ
    bounds = [f"{tau(x)} / 2.0::DOUBLE" for x in (k, f"{k} + 1")]
    bounds += [f"({tau(x)} * {one_tol} + {tol}) / 2.0::DOUBLE"
               for x in (f"{k} - 1", k, kg, f"{kg} + 1")]
    bounds += [f"exp({lattice} + {b} * ({x}))" for x in (f"{m} - 1", m)]
    caps = [f"{math.exp(_MAX_EXPONENT)!r}::DOUBLE", f"{math.ldexp(eps2, 63)!r}::DOUBLE"]
    cell = " + ".join(f"CASE WHEN c > {x} THEN 1 ELSE 0 END" for x in bounds + caps)
    window = " OR ".join(f"abs(c - {x}) <= {_WINDOW!r}::DOUBLE * c" for x in bounds)
    # 16·kg + s is a whole number far below 2^53 (|kg| < 10^12): exact as a DOUBLE
    return f"CASE WHEN {window} THEN c ELSE -1 - ({kg} * 16 + ({cell})) END"


@dataclass
class Buckets:
    """One part's positive totals, summarised per bucket ``(k, m)`` (see the module docstring).
    ``lo, hi``: a bucket's extremes, or for a far bucket (not ``single``) bounds of them that
    lie strictly between its thresholds and lattice points — the native pass's block code
    reports those (``privacy/native/pdp_fine.h``); every reading here (``clean``, ``below``,
    ``above``) is then the exact extremes', and ``max(hi)`` stays the largest total.
    ``rest``: ``(count, min, max)`` of the nonzero totals outside the buckets (there must be
    none: they are negative, NaN or infinite).
    ``exact(kind, value)``: the totals whose estimate ``kind`` (``"k"`` or ``"m"``) is ``value``,
    or (``kind == "near"``) those of the near bucket at index ``value``, read exactly (a further
    pass). Private."""

    k: np.ndarray
    m: np.ndarray
    n: np.ndarray
    inv: np.ndarray
    total: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    rest: tuple[float, float, float] = (0.0, 0.0, 0.0)
    exact: Callable[[str, int], np.ndarray] | None = None
    #: the near buckets (:func:`near_sql`'s totals, keyed by their cell among the boundaries or
    #: by their exact value: :func:`near_key_sql`), each classified by itself from its
    #: ``[min, max]`` (``exact(kind, …)`` never returns their totals); None: none
    single: np.ndarray | None = None

    @classmethod
    def from_totals(cls, c, theta: float, beta: float, mu: float) -> Buckets:
        """The buckets of an array of totals, computed in numpy (tests and examples)."""
        c = np.asarray(c, dtype=np.float64)
        pos = c[(c > 0) & np.isfinite(c)]
        with np.errstate(divide="ignore", over="ignore"):
            k = np.ceil((np.log(pos) + math.log(2.0 / theta)) * (1.0 / beta)).astype(np.int64) - 1
            m = np.ceil((np.log(pos) - (math.log(theta) + mu)) * (1.0 / beta)).astype(np.int64)
            inv = 1.0 / pos
        keys, inverse = np.unique(np.stack([k, m], axis=1), axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        size = len(keys)

        def agg(values, how):
            out = np.full(size, np.inf if how == "min" else -np.inf)
            (np.minimum if how == "min" else np.maximum).at(out, inverse, values)
            return out

        other = c[~((c > 0) & np.isfinite(c)) & (c != 0)]
        rest = (float(len(other)), float(other.min()) if len(other) else 0.0,
                float(other.max()) if len(other) else 0.0)
        by = {"k": k, "m": m}
        return cls(keys[:, 0], keys[:, 1], np.bincount(inverse, minlength=size).astype(float),
                   np.bincount(inverse, inv, size), np.bincount(inverse, pos, size),
                   agg(pos, "min"), agg(pos, "max"), rest,
                   lambda kind, v: pos[by[kind] == v])

    def check(self) -> None:
        """The validation of :func:`~.single_owner.release` (ValueError as it raises)."""
        count, lo, hi = self.rest
        if count:  # NaN, ±inf or negative
            if math.isnan(lo) or math.isnan(hi) or math.isinf(lo) or math.isinf(hi):
                raise ValueError("per-participant totals must be finite")
            raise ValueError("the recursive mechanism needs nonnegative totals; for a signed SUM "
                             "release the positive and negative parts separately (release_signed)")
        if len(self.hi) and not math.isfinite(2.0 * float(self.hi.max())):
            raise ValueError("per-participant totals are too large (2·max overflows)")

    def _by(self, kind: str, keep=None):
        """Buckets (those ``keep`` selects, default all) merged on one estimate:
        (values, n, inv, total, lo, hi), sorted."""
        keep = np.ones(len(self.k), dtype=bool) if keep is None else keep
        key = (self.k if kind == "k" else self.m)[keep]
        vals, inverse = np.unique(key, return_inverse=True)
        inverse = inverse.reshape(-1)
        size = len(vals)
        lo = np.full(size, np.inf)
        hi = np.full(size, -np.inf)
        np.minimum.at(lo, inverse, self.lo[keep])
        np.maximum.at(hi, inverse, self.hi[keep])
        return (vals, np.bincount(inverse, self.n[keep], size),
                np.bincount(inverse, self.inv[keep], size),
                np.bincount(inverse, self.total[keep], size), lo, hi)

    def near(self) -> np.ndarray:
        """The near buckets (``single``): each classified by itself, never merged on an
        estimate."""
        if self.single is None:
            return np.zeros(len(self.k), dtype=bool)
        return np.asarray(self.single, dtype=bool)


def delta_buckets(b: Buckets, theta: float = 1.0, beta: float = 0.1) -> tuple[int, float]:
    """:func:`~.single_owner.delta` of the totals summarised by ``b``: the same ``(j, Δ)``."""
    theta = positive("theta", theta)
    beta = positive("beta", beta)
    hi, cand = search_range(2.0 * float(b.hi.max()) if len(b.hi) else 0.0, int(b.n.sum()),
                            theta, beta)  # exactly as single_owner.delta
    if cand is None:
        return hi, threshold(hi, theta, beta)
    js, w, gb = cand
    L = len(js)
    one = b.near()
    vals, n, inv, _, lo, top = b._by("k", ~one)
    idx = np.clip(vals, 0, L)
    pad_w = np.concatenate([[-np.inf], w, [np.inf]])  # pad[i] = w[i−1]
    pad_g = np.concatenate([[-np.inf], gb, [np.inf]])
    clean = (pad_w[idx] < lo) & (top <= pad_w[idx + 1]) & (pad_g[idx] < lo)
    idx_g = idx.copy()
    i_lo, g_lo = np.searchsorted(w, b.lo, side="left"), np.searchsorted(gb, b.lo, side="left")
    fits = one & (i_lo == np.searchsorted(w, b.hi, side="left")) & (
        g_lo == np.searchsorted(gb, b.hi, side="left"))  # a near bucket on one side of each
    parts = [(idx[clean], idx_g[clean], n[clean], inv[clean]),
             (i_lo[fits], g_lo[fits], b.n[fits], b.inv[fits])]
    reads = [("k", int(v)) for v in vals[~clean]] + [("near", int(i))
                                                      for i in np.flatnonzero(one & ~fits)]
    for kind, v in reads:  # totals within rounding of a threshold: read them exactly
        c = np.asarray(b.exact(kind, v), dtype=np.float64)
        i = np.searchsorted(w, c, side="left")  # #{t : w[t] < c}
        ig = np.searchsorted(gb, c, side="left")
        parts.append((i, ig, np.ones(len(c)), 1.0 / c))
    cat = [np.concatenate(x) for x in zip(*parts)]
    n_above = _suffix(cat[0], cat[2], L)
    r_above = _suffix(cat[0], cat[3], L)
    n_above_g = _suffix(cat[1], cat[2], L)
    return first_feasible(hi, js, w, n_above, r_above, n_above_g, theta, beta)


def _suffix(idx: np.ndarray, weights: np.ndarray, L: int) -> np.ndarray:
    hist = np.bincount(idx.astype(np.int64), weights=weights, minlength=L + 1)
    return np.cumsum(hist[::-1])[::-1][1:L + 1]


def clamped_buckets(b: Buckets, delta_hat: float, public: float = 0.0) -> float:
    """:func:`~.single_owner.clamped_sum`: ``public + Σ_p min(c_p, Δ̂)`` from the buckets."""
    d = float(delta_hat)
    if not d >= 0:
        raise ValueError(f"delta_hat must be nonnegative, got {delta_hat!r}")
    one = b.near()  # each below or above Δ̂, unless Δ̂ is none of the released values
    vals, n, _, total, lo, top = b._by("m", ~one)
    below, above = top <= d, lo > d
    out = float(total[below].sum()) + d * float(n[above].sum())
    out += float(b.total[one & (b.hi <= d)].sum()) + d * float(b.n[one & (b.lo > d)].sum())
    reads = [("m", int(v)) for v in vals[~(below | above)]]
    reads += [("near", int(i)) for i in np.flatnonzero(one & (b.lo <= d) & (b.hi > d))]
    for kind, v in reads:  # Δ̂ within a bucket's range: read its totals exactly
        out += float(np.minimum(np.asarray(b.exact(kind, v), dtype=np.float64), d).sum())
    return public + out


def release_buckets(parts: list[Buckets], epsilon: float, privacy: str | None, rng=None,
                    **kwargs) -> Release:
    """:func:`~.single_owner.release` (one part) or ``release_signed`` (two: positive, then
    negative, ε/2 each) from buckets: the same parameters and draws in the same order."""
    for key in ("eps1", "eps2"):
        if len(parts) > 1 and kwargs.get(key) is not None:
            raise ValueError("a signed release splits epsilon itself; no eps1/eps2")
    params = params_for(epsilon, len(parts), privacy, **kwargs)
    for b in parts:  # every part validated before any draw, as release_signed does
        b.check()
    gen = scalar_draws(rng)  # OS entropy: each draw from its scale's pool of pre-drawn values
    rels = []
    for b in parts:
        j, _ = delta_buckets(b, params["theta"], params["beta"])
        delta_hat = release_delta_hat(j, params, gen)
        x = clamped_buckets(b, delta_hat)
        rels.append(Release(value=float(release_x(x, delta_hat, params["eps2"], gen)),
                            epsilon=float(params["eps1"] + params["eps2"]),
                            delta_hat=float(delta_hat), params=params, mechanism="recursive"))
    if len(rels) == 1:
        return rels[0]
    pos, neg = rels
    params = dict(pos.params)
    params["split"] = "half the budget to each of the positive and negative parts"
    return Release(value=pos.value - neg.value, epsilon=pos.epsilon + neg.epsilon,
                   delta_hat=max(pos.delta_hat, neg.delta_hat), params=MappingProxyType(params),
                   mechanism="recursive-signed", parts=(pos, neg))


def params_for(epsilon: float, n_parts: int, privacy: str | None, **kwargs) -> dict:
    """The parameters each part is released with (θ, β, μ decide the buckets)."""
    given = {k: kwargs[k] for k in ("theta", "beta", "mu", "eps1", "eps2")
             if kwargs.get(k) is not None}
    given.setdefault("theta", 1.0)  # single_owner.release's default
    unknown = set(kwargs) - {"theta", "beta", "mu", "eps1", "eps2"}
    if unknown:
        raise TypeError(f"unexpected keyword arguments {sorted(unknown)}")
    return resolve_params(float(epsilon) / n_parts, privacy, **given)
