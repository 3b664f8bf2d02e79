r"""DAWA (Li, Hay, Miklau, Wang, VLDB 2014) on a vector, and the Blowfish strategies built on it:
``dawa`` (DAWA on the transformed data ``x_T``, Haney et al. §5.4.1 "Transformed + DAWA", with
the consistency step of §5.4.2 on a path) and ``dp_dawa`` (the differential-privacy baseline).

DAWA answers a workload on a vector ``v`` of counts in two stages, at ``ε₁ = ε/4`` and
``ε₂ ≤ ε − ε₁`` (sequential composition, checked in exact rationals by :func:`split_budget`):

1. **Private partition** (ε₁). Cost of a bucket ``I``: ``dev(I) + 1/ε₂`` with
   ``dev(I) = Σ_{j∈I} |v_j − mean_I(v)|`` (the L1 error of replacing the bucket by its mean)
   and ``1/ε₂`` (the noise its count will get). Candidate buckets are the intervals whose
   length is a power of two (DAWA's ``O(n log n)`` variant); every candidate's cost gets
   independent noise and a dynamic program picks the partition of least total noisy cost.
2. **Workload-aware release** (ε₂). The bucket totals are released by the matrix mechanism
   among ``laplace``, ``hierarchical`` (b ∈ {2, 4, 8, 16}) and ``privelet`` of least expected
   error for the workload mapped onto the buckets (each bucket spread uniformly over its
   values) — a choice made from the released partition and the workload only. This stands in
   for DAWA's GreedyH (a per-node weighting of one binary hierarchy); both are data-independent
   strategies on the public bucket structure.

Privacy of stage 1 (exact, with the discrete noise)
---------------------------------------------------
For integer ``v`` and a power-of-two length ``L``, ``L·dev(I) = Σ|L·v_j − Σ_I v|`` is an
integer, so ``dev`` is computed exactly. Moving one coordinate by ±1 moves ``dev(I)`` by less
than 2 for the intervals holding it (the mean moves by ``1/L``: at most ``2(1 − 1/L)``) and not
at all for the others; a public per-length cap (:func:`cost_caps`, 1-Lipschitz) keeps that.
The costs are released through :meth:`~._ops.SafeNoise.release` with the plan of
``plan_laplace(4ℓ, ε₁, changed=1)``: grid ``γ`` (a power of two ≤ ``2**−18``), indices
``m_I = ⌊dev_I/γ⌋``, noise ``K_I ~ DLap(λ)`` with ``λ ≥ 4ℓ/(γε₁)``, and the dynamic program
runs on the exact integers ``S_I = m_I + K_I`` (plus a public constant per bucket). A unit
change moves each ``m_I`` by at most ``D = 2/γ``. Fix an output partition ``B*`` and its
bucket ``I*`` holding the changed coordinate ``i``. The map ``K ↦ K'`` that changes only
``K'_{I*} = K_{I*} − (m'_{I*} − m_{I*}) − D`` is a bijection shifting one coordinate by at most
``2D``, and under it the neighbour's noisy costs are ``S'_{I*} = S_{I*} − D``, ``S'_I ≥ S_I − D``
for the other intervals holding ``i`` and ``S'_I = S_I`` elsewhere. The dynamic program's
output is unchanged by subtracting ``D`` from every interval holding ``i`` (every partition has
exactly one such bucket, so every comparison shifts equally) and by raising costs of buckets
outside the output (the output's path keeps its value, the others only grow; ties keep their
first-index order) — :func:`choose_partition`'s invariant, tested in
``tests/unit/policies/test_dawa.py``. So ``P[B* | v'] ≥ e^{−2D/λ} P[B* | v] ≥ e^{−ε₁/ℓ} P[B* | v]``,
and a Blowfish neighbour (ℓ unit changes of ``x_T``) costs ε₁. This is the non-monotone
"report noisy min" argument, so the noise is twice the scale DAWA's paper uses (``2/ε₁``).

Stage 2 releases the bucket totals (a unit change of ``v`` moves one total by 1) with the
strategy's own plan at sensitivity ``ℓ·Δ_A`` (:meth:`~._ops._Op.release`). Total: ``ε₁ + ε₂ ≤ ε``.

Error: the released partition is public, so the noise variance of every query is stated
(``variances``); the approximation error of spreading a bucket uniformly is data dependent and
is **not** included (``Answer.noise_only``).

>>> import numpy as np
>>> v = np.array([0, 0, 0, 0, 5, 5, 5, 5])
>>> costs = interval_costs(v)
>>> [float(c) for c in costs[4]]               # dev of [0,4), [1,5), …, [4,8)
[0.0, 7.5, 10.0, 7.5, 0.0]
>>> noisy = {L: np.zeros(c.size, dtype=np.int64) for L, c in costs.items()}
>>> noisy[4][[0, 4]] = -1                     # make the two flat halves cheapest
>>> choose_partition(noisy, 8, offset=1).tolist()
[0, 4, 8]
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import scipy.sparse as sp
from numpy.lib.stride_tricks import sliding_window_view
from scipy.optimize import isotonic_regression

from ._ops import Hierarchical, Identity, Privelet, public_part
from ._plan import BRANCHINGS, Plan, dp_factor
from .policy import Policy
from .workload import Ranges, Workload

__all__ = ["RATIO", "MAX_DOMAIN", "split_budget", "interval_costs", "bucket_offset", "cost_caps",
           "choose_partition", "partition", "dawa_release", "dawa_plans", "dp_dawa_plans"]

#: share of ε spent on the partition (DAWA's default ratio); a power of two, so ε₁ = ε/4 exactly
RATIO = 0.25
#: extra public cost per bucket, in stage-1 noise scales (:func:`bucket_offset`). Measured on
#: DPBench (NETTRACE, PATENT, ADULTFRANK; HIST and 1D-RANGE, ε = 1 and 0.1): 0 gave the least
#: error of {0, 0.5, 1, 2, 3} — fewer buckets cost more in bias than their noise saves
PENALTY = 0.0
#: DAWA computes O(n²) deviations: domains above this many noisy slots are refused
MAX_DOMAIN = 16_384
#: stage 2 compares strategies on at most this many queries when the workload is large
_CHOOSE_ROWS, _CHOOSE_NNZ = 2000, 1_000_000
#: work chunk (elements) when computing the deviations of one length
_CHUNK = 1 << 22


def split_budget(epsilon: float, ratio: float = RATIO) -> tuple[float, float]:
    """``(ε₁, ε₂)`` as floats with ``ε₁ + ε₂ ≤ ε`` in exact rational arithmetic.

    >>> e1, e2 = split_budget(0.3)
    >>> Fraction(e1) + Fraction(e2) <= Fraction(0.3), e1 == 0.3 / 4
    (True, True)
    """
    eps = float(epsilon)
    e1 = eps * ratio
    e2 = float(Fraction(eps) - Fraction(e1))
    while Fraction(e1) + Fraction(e2) > Fraction(eps):
        e2 = float(np.nextafter(e2, 0.0))
    return e1, e2


def interval_costs(v) -> dict:
    """``{L: dev of [a, a+L) for a = 0 … n−L}`` for every power of two ``L ≤ n``, exactly.

    ``v`` holds integers (counts or subtree sums of counts); ``L·dev`` is an integer computed in
    int64, and dividing by the power of two ``L`` is exact in float64 (below ``2**53``).
    """
    v = np.asarray(v)
    vi = np.rint(v).astype(np.int64)
    if not np.array_equal(vi, v):
        raise ValueError("DAWA needs integer counts (a histogram of records)")
    n = vi.size
    csum = np.r_[0, np.cumsum(vi)]
    out = {}
    L = 1
    while L <= n:
        if L == 1:
            out[1] = np.zeros(n)
        else:
            win = sliding_window_view(vi, L)
            tot = csum[L:] - csum[:-L]
            dev = np.empty(win.shape[0], dtype=np.int64)
            step = max(1, _CHUNK // L)
            for s in range(0, win.shape[0], step):
                w = win[s:s + step]
                dev[s:s + step] = np.abs(L * w - tot[s:s + step, None]).sum(axis=1)
            if dev.size and int(dev.max()) >= 2 ** 53:
                raise ValueError("counts too large for exact DAWA costs")
            out[L] = dev / float(L)
        L *= 2
    return out


def bucket_offset(e1: float, e2: float, ell: int) -> float:
    """The public cost every bucket adds: ``1/ε₂`` (the noise of its count) plus ``PENALTY``
    noise scales of stage 1 (the dynamic program minimises over sums of noisy costs, which
    favours many buckets; DAWA clamps each noisy cost at ``1/ε₂`` instead, which the privacy
    argument above does not cover)."""
    return 1.0 / e2 + PENALTY * 4 * int(ell) / e1


def cost_caps(n: int, e1: float, e2: float, ell: int = 1) -> dict:
    """Public cap on ``dev`` per length: ``(L − 1)·o + 200·s`` (``o``: :func:`bucket_offset`,
    ``s = 4ℓ/ε₁``: the noise scale). A capped bucket then costs ``200·s`` more than ``L``
    singletons, so it is chosen only if the noise is 200 scales off; capping is 1-Lipschitz, so
    it keeps the sensitivity, and it bounds the integers the dynamic program adds."""
    o = bucket_offset(e1, e2, ell)
    s = 4.0 * int(ell) / e1
    caps = {}
    L = 1
    while L <= n:
        caps[L] = (L - 1) * o + 200.0 * s
        L *= 2
    return caps


def choose_partition(noisy: dict, n: int, offset: int) -> np.ndarray:
    """Bucket boundaries ``[0, b₁, …, n]`` minimising ``Σ (noisy[L][a] + offset)`` over
    partitions of ``[0, n)`` into intervals ``[a, a+L)`` of power-of-two length ``L``.

    Exact integer arithmetic (int64); ties go to the shortest last bucket (first index).
    """
    lengths = sorted(noisy)
    best = np.zeros(n + 1, dtype=np.int64)
    back = np.zeros(n + 1, dtype=np.int64)
    lens = np.array(lengths, dtype=np.int64)
    tables = [np.asarray(noisy[L], dtype=np.int64) + int(offset) for L in lengths]
    for j in range(1, n + 1):
        ok = lens <= j
        cand = np.array([best[j - L] + tables[t][j - L] for t, L in enumerate(lengths) if ok[t]],
                        dtype=np.int64)
        t = int(np.argmin(cand))
        best[j] = cand[t]
        back[j] = lengths[t]
    cuts = [n]
    while cuts[-1] > 0:
        cuts.append(cuts[-1] - int(back[cuts[-1]]))
    return np.array(cuts[::-1], dtype=np.int64)


def partition(v, e1: float, e2: float, ell: int, noise) -> np.ndarray:
    """Stage 1: the private partition of ``v`` (boundaries), ``ε₁``-private for ℓ unit changes."""
    costs = interval_costs(v)
    caps = cost_caps(len(v), e1, e2, ell)
    order = sorted(costs)
    flat = np.concatenate([np.minimum(costs[L], caps[L]) for L in order])
    rel = noise.release(flat, 4 * int(ell), e1, changed=1)
    grid = noise.plans[-1].grid
    idx = np.rint(rel / grid).astype(np.int64)  # exact: |index| < 2**53 on a power-of-two grid
    noisy, at = {}, 0
    for L in order:
        noisy[L] = idx[at:at + costs[L].size]
        at += costs[L].size
    offset = int(np.floor(bucket_offset(e1, e2, ell) / grid))
    return choose_partition(noisy, len(v), offset)


def _spread(cuts, n):
    """``E`` (n × buckets): bucket b's total spread uniformly over its values."""
    size = np.diff(cuts)
    col = np.repeat(np.arange(size.size), size)
    return sp.csr_matrix((1.0 / size[col], (np.arange(n), col)), shape=(n, size.size))


def _stage2_op(WB, nb, s):
    """The strategy of least expected error for the bucket workload ``WB`` (public inputs), and
    the variance coefficients of every query under it. Large workloads are compared on a fixed
    spread of at most ``_CHOOSE_ROWS`` queries (public), then the chosen one is costed in full."""
    ops = [Identity(nb), Privelet(nb)] + [Hierarchical(nb, b) for b in BRANCHINGS if nb > 1]
    sample = WB
    if WB.shape[0] > _CHOOSE_ROWS and WB.nnz > _CHOOSE_NNZ:
        sample = WB[np.linspace(0, WB.shape[0] - 1, _CHOOSE_ROWS).astype(np.int64)]
    scores = [float(np.mean(2.0 * (s * op.sensitivity) ** 2 * op.query_coeffs(sample)))
              for op in ops]
    op = ops[int(np.argmin(scores))]
    return op, 2.0 * (s * op.sensitivity) ** 2 * op.query_coeffs(WB)


def dawa_release(v, WT, epsilon: float, ell: int, noise, consistent_total=None):
    """``(z, variances, detail)``: DAWA's estimate of ``v`` (float vector), the noise variance of
    each row of ``WT @ z`` (given the released partition), and a description.

    ``consistent_total``: when given, ``v`` is non-decreasing in ``[0, total]`` (prefix sums of
    a bounded path), and ``z`` is projected onto that set (isotonic regression + clipping).
    """
    n = len(v)
    if n > MAX_DOMAIN:
        raise ValueError(f"dawa computes O(n²) bucket costs: {n} slots is more than "
                         f"{MAX_DOMAIN}; coarsen the domain or choose another strategy")
    e1, e2 = split_budget(epsilon)
    cuts = partition(v, e1, e2, ell, noise)
    E = _spread(cuts, n)
    WB = sp.csr_matrix(WT @ E)
    op, uv = _stage2_op(WB, E.shape[1], ell)
    totals = np.add.reduceat(np.asarray(v, dtype=float), cuts[:-1]) if n else np.zeros(0)
    y = op.release(totals, ell * op.sensitivity, e2, noise)
    z = E @ y[: E.shape[1]]
    if consistent_total is not None and n:
        z = np.clip(isotonic_regression(z, increasing=True).x, 0.0, consistent_total)
    detail = f"{E.shape[1]} buckets, {op.name}"
    if isinstance(op, Hierarchical):
        detail += f" b={op.b}"
    return z, uv / e2 ** 2, detail


def dawa_plans(w: Workload, policy: Policy, trees) -> list:
    """``dawa`` on each candidate tree (``(tree, W_T)`` pairs): DAWA on the noise slots of
    ``x_T``, consistency on a bounded path. Data dependent: chosen only when asked for."""
    out = []
    for tree, WT in sorted(trees, key=lambda tw: tw[0].ell):  # least stretch first
        n = tree.n
        if tree.shape == "path" and tree.chain is not None:
            slots = tree.chain[tree.parent[tree.chain] >= 0]
        else:
            slots = np.flatnonzero(tree.parent >= 0)
        if slots.size == 0 or slots.size > MAX_DOMAIN:
            continue
        path = (tree.shape == "path" and policy.bounded and tree.roots.size == 1)
        WTs = sp.csr_matrix(WT)[:, slots] if WT.shape[1] >= n else None
        if WTs is None:
            WTs = sp.csr_matrix(sp.hstack([WT, sp.csr_matrix((WT.shape[0], n - WT.shape[1]))]))[:, slots]

        def run(x, exact, eps, noise, tree=tree, slots=slots, WTs=WTs, path=path):
            xt = tree.forward(x)
            total = float(xt[tree.roots[0]]) if path else None
            z, var, det = dawa_release(xt[slots], WTs, eps, tree.ell, noise, total)
            return public_part(w, tree, xt) + WTs @ z, var, det

        det = f"dawa on {tree.name} (ℓ={tree.ell}" + (", consistent)" if path else ")")
        out.append(Plan("dawa", det, np.full(w.q, np.nan), run, dependent=True))
    return out


def dp_dawa_plans(w: Workload, policy: Policy) -> list:
    """``dp_dawa``: DAWA on ``x`` itself at ε/2 (ε under unbounded DP), the DP baseline."""
    f = dp_factor(policy)
    k = policy.k
    if k > MAX_DOMAIN:
        return []
    cache = {}

    def run(x, exact, eps, noise):
        if "W" not in cache:  # built on first use (a range workload's matrix can be large)
            cache["W"] = sp.csr_matrix(w.matrix())
        z, var, det = dawa_release(np.asarray(x, dtype=float).ravel(), cache["W"], eps, f, noise)
        if isinstance(w, Ranges):
            c = np.r_[0.0, np.cumsum(z)]
            return c[w.hi + 1] - c[w.lo], var, det
        return cache["W"] @ z, var, det

    return [Plan("dp_dawa", f"dp_dawa at ε/{f}", np.full(w.q, np.nan), run, dependent=True)]
