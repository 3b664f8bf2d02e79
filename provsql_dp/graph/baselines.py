"""Baselines for private subgraph counting: what a user would pick instead of the recursive
mechanism. Used by ``benchmarks/subgraph.py``; all of them give **edge** privacy unless stated.

* :func:`global_sensitivity` and :func:`laplace_release`: the Laplace mechanism calibrated to the
  global sensitivity of the count, for any pattern. Adding or removing one edge (node) changes the
  count by at most the number of occurrences in the complete graph K_n that contain a given edge
  (node): ``|E(P)| · occ(K_n) / C(n, 2)`` (``|V(P)| · occ(K_n) / n``), with
  ``occ(K_n) = n! / ((n − |V(P)|)! · |Aut(P)|)``. For triangles under edge privacy that is n − 2.
* :func:`triangle_smooth_sensitivity` and :func:`smooth_triangle_release`: triangle counting with
  smooth sensitivity (Nissim, Raskhodnikova & Smith, STOC 2007, §3). The local sensitivity at
  distance s is ``A(s) = max_{i≠j} min(a_ij + ⌊(s + min(s, b_ij)) / 2⌋, n − 2)``, with a_ij the
  common neighbours of i and j and b_ij the nodes adjacent to exactly one of them; the β-smooth
  sensitivity is ``S* = max_s e^{−βs} A(s)``.

  Noise. *Pure ε-DP* (default): ``T + (S*/α)·Z`` with ``Z`` of density ∝ 1/(1 + |z|^γ), γ = 4. That
  density is (α, β)-admissible for α = ε/(2γ), β = ε/(2(γ + 1)): |d/dz ln h| ≤ γ bounds the
  sliding term by γα = ε/2, and a dilation by e^λ changes ln h by at most (γ + 1)|λ| ≤ ε/2. These
  constants are derived here from the definition and are more conservative than the ones usually
  quoted. *(ε, δ)-DP* (``delta=…``, the setting of Karwa et al. PVLDB 2011 that Chen & Zhou §6.1
  follows): Laplace noise, α = ε/2, β = ε/(2 ln(2/δ)).

* :func:`kstar_pure_release`: Karwa et al.'s k-star count (edge privacy) as an **ε-DP** release —
  the exact smooth sensitivity of :func:`provsql_dp.mechanisms.subgraph.smooth.kstar_smooth_sensitivity`
  with Cauchy noise instead of the (ε, δ) Laplace calibration of ``graph_smooth.kstar_release``.
  Calibration (:func:`cauchy_params`): ``T + (S/α)·Z``, ``Z`` standard Cauchy (density
  ``h(z) = 1/(π(1 + z²))``), ``S`` the β-smooth sensitivity, ``α = β = ε/6`` — the Cauchy rule of
  Nissim, Raskhodnikova & Smith (noise ``6S/ε`` with an ε/6-smooth bound; it is what RelM's
  ``CauchyMechanism`` implements, the one source for the constants we could read). Proof that it
  is ε-DP (NRS Lemma 2.6's argument): for neighbours G, G' the output law of G' is that of G slid
  by ``Δ = (T' − T)·α/S`` (``|Δ| ≤ α·LS/S ≤ α``) and dilated by ``e^λ = S'/S`` (``|λ| ≤ β``);
  sliding costs ``sup_z ln h(z)/h(z + Δ) ≤ |Δ|·sup_z |2z/(1 + z²)| = |Δ|`` and dilation
  ``sup_z |λ + ln h(e^λ z) − ln h(z)| ≤ |λ|`` (``ln(1 + z²) − ln(1 + e^{2λ}z²) ∈ [−2|λ|, 0]``), so
  the privacy loss is at most ``α + β = ε/3 ≤ ε``: conservative by the NRS constants, as
  published. These are Karwa et al.'s constants (PVLDB 4(11) 2011, Theorem 2.3 citing NRS, and
  §5.1: "it suffices to add Cauchy noise scaled up by a factor of 6S*(G)/ε, where S* is the
  ε/6-smooth sensitivity", used there for triangles, 2- and 3-stars). Same floating-point caveat
  as the power-law release below (benchmark only).

* :func:`rhms_params` and :func:`rhms_release`: **RHMS** (Rastogi, Hay, Miklau & Suciu,
  "Relationship privacy: output perturbation for queries with joins", PODS 2009), the third
  baseline of Chen & Zhou §6.1 / Fig. 4. **Not differential privacy**: it gives (ε, γ)-*adversarial*
  privacy (edge), against Bayesian attackers whose prior on the graph is
  ``(log(n)/n, log n)``-bounded — expected average degree about ``log n`` and mostly non-positive
  correlations between edges (Karwa et al. §1, §5.1, citing RHMS Theorem 2.6). Implemented as
  stated in **Karwa, Raskhodnikova, Smith & Yaroslavtsev, "Private Analysis of Graph Structure",
  PVLDB 4(11):1146–1157, 2011, Appendix, "Algorithm 2 RHMS Output Perturbation"** (the RHMS paper
  itself was not readable here), for a data graph on ``n`` nodes and a pattern
  ``H = (V_H, E_H)``:

  1. ``λ = (8 (|V_H| + 1) |E_H|² log n)^(|E_H| − 1)`` — a high-probability bound on the local
     sensitivity over the attacker's prior;
  2. with probability ``θ = |E_H| / (n γ)``, return a uniformly random element of
     ``{0, 1, …, n^|V_H|}``;
  3. otherwise return ``f_H(G) + Lap(λ / (√2 ε))`` (Karwa et al. §2.1: ``Lap(b)`` has density
     ``e^(−|z|/b) / (2b)``, standard deviation ``√2·b``: the noise's standard deviation is ``λ/ε``).

  Karwa et al.'s Claim 5.1 bounds its median absolute error ``M``:
  ``b ln(2(1 − θ)) ≤ M ≤ b ln((1 − θ)/(1/2 − θ))`` with ``b = λ/(√2 ε)``
  (:func:`rhms_median_error_bounds`). The base of ``log n`` is not printed in the algorithm: the
  natural logarithm is used (base 2 would multiply ``λ`` by ``(1/ln 2)^(|E_H| − 1)``). λ grows
  like ``(c log n)^(|E_H| − 1)``: Chen & Zhou's "error grows exponentially with the number of
  edges". Exactness: the Laplace noise is :func:`provsql_dp.mechanisms.noise.safe_noise.plan_laplace`'s
  exact discrete Laplace on a public grid with scale ``≥ λ/(√2 ε)`` (``plan_laplace(λ/√2, ε)``);
  the θ coin (θ as an exact rational) and the uniform element are exact integer rejection
  sampling. Scales beyond that sampler's range (``Δ/ε > 2**64``: 3-triangles on every graph here)
  are refused; Claim 5.1 then still gives the error. A benchmark baseline, never reachable from
  SQL.

Floating-point safety. :func:`laplace_release` uses the exact discrete Laplace sampler on the
public grid of :func:`provsql_dp.mechanisms.noise.safe_noise.plan_laplace` (an integer answer for an
integer count with ``integer=True``). The (ε, δ) smooth release adds *integer* discrete Laplace
noise ``DLap(S*/α)`` to the integer count: the answer is an exact integer, and the smooth-sensitivity
proof carries over (sliding: the pmf ratio at integer shifts ≤ S* is that of the continuous law;
dilation: the normaliser ``coth(1/(2λ))`` grows at most like ``λ``, as the continuous one). The
**pure ε-DP power-law release is not floating-point safe**: its noise is a continuous
heavy-tailed variable of a data-dependent scale, for which no exact sampler on a data-independent
grid is available here; it is a benchmark baseline (never reachable from SQL) and its low-order
bits may reveal the count — do not publish its output.

Examples
--------
>>> import networkx as nx
>>> global_sensitivity("triangle", 100, "edge"), global_sensitivity("k-star", 100, "edge", k=2)
(98, 196)
>>> g = nx.complete_graph(5)
>>> triangle_local_sensitivity(g, 0), triangle_local_sensitivity(nx.path_graph(4), 1)
(3, 2)
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from fractions import Fraction

import networkx as nx
import numpy as np
import scipy.sparse as sp

from ..errors import InterfaceError
from ..mechanisms.noise.sources import discrete_laplace, resolve_rng
from ..mechanisms.noise.safe_noise import laplace_release as _safe_laplace_release, plan_laplace
from ._symmetry import automorphism_count
from .patterns import resolve_pattern

__all__ = [
    "global_sensitivity",
    "laplace_release",
    "triangle_local_sensitivity",
    "triangle_smooth_sensitivity",
    "smooth_triangle_release",
    "sample_power_law_noise",
    "cauchy_params",
    "kstar_pure_release",
    "RHMSParams",
    "rhms_params",
    "rhms_median_error_bounds",
    "rhms_release",
]


def global_sensitivity(pattern, n_nodes: int, privacy: str = "edge", k: int | None = None) -> int:
    """Global sensitivity of the count of ``pattern`` over graphs on ``n_nodes`` nodes.

    Examples
    --------
    >>> global_sensitivity("4-cycle", 10, "edge"), global_sensitivity("triangle", 10, "node")
    (56, 36)
    """
    p = resolve_pattern(pattern, k)
    n, v = int(n_nodes), p.n_nodes
    if n < v:
        return 0
    occ = math.perm(n, v) // automorphism_count(p.graph)
    if privacy == "edge":
        return p.n_edges * occ // math.comb(n, 2)
    if privacy == "node":
        return v * occ // n
    raise InterfaceError(f"privacy must be 'node' or 'edge', got {privacy!r}")


def laplace_release(true_value: float, sensitivity: float, epsilon: float, *, rng=None,
                    integer: bool = False) -> float:
    """``true_value + Lap(sensitivity / ε)``, exact discrete Laplace on the public grid of
    ``plan_laplace(sensitivity, ε, integer=integer)`` (``integer=True`` for a count: the unit grid,
    an integer answer).

    >>> import numpy as np
    >>> float(laplace_release(10, 3, 1.0, rng=np.random.default_rng(0), integer=True)).is_integer()
    True
    """
    return float(_safe_laplace_release(true_value, sensitivity, epsilon, integer=integer,
                                       rng=resolve_rng(rng)))


def _pair_stats(g: nx.Graph):
    """Unique (a_ij, b_ij) over all pairs i < j that can matter, plus n.

    Pairs with a common neighbour come from A²; among pairs without one, c_ij(s) depends on b_ij
    only and grows with it, so the pair with the largest b_ij stands for all of them."""
    nodes = list(g.nodes())
    n = len(nodes)
    if n < 2:
        return np.zeros((0, 2), dtype=np.int64), n
    index = {v: i for i, v in enumerate(nodes)}
    rows = np.fromiter((index[u] for u, _ in g.edges()), dtype=np.int64, count=g.number_of_edges())
    cols = np.fromiter((index[v] for _, v in g.edges()), dtype=np.int64, count=g.number_of_edges())
    keep = rows != cols
    rows, cols = rows[keep], cols[keep]
    adj = sp.coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n)).tocsr()
    adj = ((adj + adj.T) > 0).astype(np.int64)
    deg = np.asarray(adj.sum(axis=1)).ravel()
    a2 = sp.triu(adj @ adj, k=1).tocoo()
    i, j, a = a2.row, a2.col, a2.data.astype(np.int64)
    is_edge = np.asarray(adj[i, j]).ravel() if len(i) else np.zeros(0, dtype=np.int64)
    b = deg[i] + deg[j] - 2 * a - 2 * is_edge
    stats = [np.stack([a, b], axis=1)] if len(a) else []
    common = set(zip(i.tolist(), j.tolist()))
    # pairs without a common neighbour: edges (b = d_i + d_j − 2) and non-edges (b = d_i + d_j)
    best_b = -1
    er, ec = sp.triu(adj, k=1).nonzero()
    for x, y in zip(er.tolist(), ec.tolist()):
        if (x, y) not in common:
            best_b = max(best_b, int(deg[x] + deg[y] - 2))
    edges = set(zip(er.tolist(), ec.tolist()))
    # non-edges without a common neighbour: best-first over pairs of degree-sorted nodes; every
    # pair skipped is an edge or has a common neighbour, so this stops after |E| + nnz(A²) pops
    order = np.argsort(-deg, kind="stable")
    dsorted = deg[order]
    seen = {(0, 1)}
    heap = [(-int(dsorted[0] + dsorted[1]), 0, 1)]
    while heap:
        neg, p, q = heapq.heappop(heap)
        if -neg <= best_b:
            break
        x, y = sorted((int(order[p]), int(order[q])))
        if (x, y) not in edges and (x, y) not in common:
            best_b = -neg
            break
        for pp, qq in ((p + 1, q), (p, q + 1)):
            if pp < qq < n and (pp, qq) not in seen:
                seen.add((pp, qq))
                heapq.heappush(heap, (-int(dsorted[pp] + dsorted[qq]), pp, qq))
    if best_b >= 0:
        stats.append(np.array([[0, best_b]], dtype=np.int64))
    out = np.unique(np.concatenate(stats), axis=0) if stats else np.zeros((0, 2), dtype=np.int64)
    return out, n


def _local_at(stats: np.ndarray, n: int, s: int) -> int:
    if len(stats) == 0:
        return 0
    a, b = stats[:, 0], stats[:, 1]
    return int(np.minimum(a + (s + np.minimum(s, b)) // 2, n - 2).max())


def triangle_local_sensitivity(g: nx.Graph, s: int = 0) -> int:
    """``A(s)``: the largest local sensitivity of the triangle count within s edge changes."""
    stats, n = _pair_stats(g)
    return _local_at(stats, n, int(s))


def triangle_smooth_sensitivity(g: nx.Graph, beta: float) -> float:
    """``S* = max_{s ≥ 0} e^{−βs} A(s)`` (NRS 2007) for the triangle count under edge privacy.

    Examples
    --------
    >>> round(triangle_smooth_sensitivity(nx.complete_graph(5), 0.1), 6)
    3.0
    """
    if not beta > 0:
        raise InterfaceError(f"beta must be positive, got {beta!r}")
    stats, n = _pair_stats(g)
    if len(stats) == 0:
        return 0.0
    best = 0.0
    s = 0
    cap = n - 2
    while True:
        val = math.exp(-beta * s) * _local_at(stats, n, s)
        best = max(best, val)
        if math.exp(-beta * s) * cap <= best:
            return best
        s += 1


def sample_power_law_noise(gamma: float, size=None, *, rng=None):
    """Samples of density ∝ 1/(1 + |z|^γ) for γ ≥ 2, by rejection from the Cauchy law."""
    if gamma < 2:
        raise InterfaceError("gamma must be at least 2")
    gen = resolve_rng(rng)
    m = int(np.prod(size)) if size is not None else 1
    out = np.empty(0)
    # bound of (1 + z²)/(1 + |z|^γ) over z
    zs = np.linspace(0, 10, 100001)
    bound = float(((1 + zs**2) / (1 + zs**gamma)).max()) * 1.0001
    while len(out) < m:
        z = gen.standard_cauchy(2 * m + 16)
        accept = gen.random(len(z)) * bound < (1 + z**2) / (1 + np.abs(z) ** gamma)
        out = np.concatenate([out, z[accept]])
    out = out[:m]
    return float(out[0]) if size is None else out.reshape(size)


def smooth_triangle_release(
    g: nx.Graph, epsilon: float, *, gamma: float = 4.0, delta: float | None = None, rng=None,
    true_value: float | None = None, smooth: float | None = None,
) -> float:
    """Release the triangle count of ``g`` with smooth-sensitivity noise (edge privacy).

    ``delta=None``: ε-DP with power-law noise (γ) — continuous noise, **not floating-point safe**
    (module docstring; a benchmark baseline only); else (ε, δ)-DP with exact integer discrete
    Laplace noise added to the integer count (floating-point safe). Pass ``true_value`` /
    ``smooth`` (computed with the matching β) to reuse them across releases.
    """
    if delta is None:
        alpha, beta = epsilon / (2 * gamma), epsilon / (2 * (gamma + 1))
    else:
        alpha, beta = epsilon / 2, epsilon / (2 * math.log(2 / delta))
    if true_value is None:
        true_value = sum(nx.triangles(g).values()) / 3
    if smooth is None:
        smooth = triangle_smooth_sensitivity(g, beta)
    scale = smooth / alpha
    if delta is None:
        noise = sample_power_law_noise(gamma, rng=rng)
        return float(true_value) + scale * noise
    # exact DLap(λ) on the integers, λ = max(S*/α, 1): a smooth bound raised to a constant is
    # still a smooth upper bound; λ is taken exactly as the float computed
    lam = Fraction(max(float(scale), 1.0))
    return float(round(float(true_value)) + discrete_laplace(lam, rng=resolve_rng(rng)))


def smooth_beta(epsilon: float, *, gamma: float = 4.0, delta: float | None = None) -> float:
    """The β that :func:`smooth_triangle_release` uses."""
    if delta is None:
        return epsilon / (2 * (gamma + 1))
    return epsilon / (2 * math.log(2 / delta))


def cauchy_params(epsilon: float) -> tuple[float, float]:
    """``(α, β) = (ε/6, ε/6)``: the NRS Cauchy rule of :func:`kstar_pure_release` (privacy loss
    at most ``α + β = ε/3``, proved in the module docstring).

    >>> cauchy_params(0.6)
    (0.09999999999999999, 0.09999999999999999)
    """
    if not (epsilon > 0 and math.isfinite(epsilon)):
        raise InterfaceError(f"epsilon must be positive, got {epsilon!r}")
    return epsilon / 6, epsilon / 6


def kstar_pure_release(src, dst, n: int, k: int, *, epsilon: float, rng=None,
                       smooth: float | None = None, true_value: float | None = None) -> float:
    """Karwa et al.'s k-star count under edge privacy, **ε-DP**: ``T + (S/α)·Cauchy`` with ``S``
    the β-smooth sensitivity at ``β = ε/6`` and ``α = ε/6`` (:func:`cauchy_params`; calibration
    and proof in the module docstring). Continuous noise: **not floating-point safe**, a benchmark
    baseline only. Pass ``smooth`` (computed at :func:`cauchy_params`' β) and ``true_value`` to
    reuse them across releases.

    >>> import numpy as np
    >>> src, dst = np.array([0, 0, 0, 1]), np.array([1, 2, 3, 2])
    >>> r = kstar_pure_release(src, dst, 4, 2, epsilon=1.0, rng=np.random.default_rng(0))
    >>> bool(np.isfinite(r))
    True
    """
    from ..mechanisms.subgraph import smooth as gsm

    alpha, beta = cauchy_params(epsilon)
    if isinstance(k, bool) or int(k) != k or k < 2:
        raise InterfaceError(f"k must be an integer >= 2, got {k!r}")
    if smooth is None:
        smooth = gsm.kstar_smooth_sensitivity(src, dst, n, int(k), beta)
    if true_value is None:
        true_value = gsm.kstar_count(src, dst, n, int(k))
    return float(true_value) + float(smooth) / alpha * float(resolve_rng(rng).standard_cauchy())


@dataclass(frozen=True)
class RHMSParams:
    """The public parameters of one RHMS release (:func:`rhms_params`).

    Attributes
    ----------
    lam : float
        ``λ = (8 (|V_H| + 1) |E_H|² ln n)^(|E_H| − 1)``.
    theta : fractions.Fraction
        ``θ = |E_H| / (n γ)``, exactly (γ as the decimal it prints as: 0.1 is 1/10).
    scale : float
        The Laplace scale ``b = λ / (√2 ε)``.
    upper : int
        ``n^|V_H|``: the random branch draws from ``{0, …, upper}``.
    """

    lam: float
    theta: Fraction
    scale: float
    upper: int


def rhms_params(pattern, n_nodes: int, *, epsilon: float, gamma: float = 0.1,
                k: int | None = None) -> RHMSParams:
    """RHMS's λ, θ and Laplace scale for ``pattern`` on a graph with ``n_nodes`` nodes
    (Karwa et al. 2011, Algorithm 2; module docstring). **Adversarial privacy, not DP.**

    Raises :class:`~provsql_dp.errors.InterfaceError` for ε or γ not positive, or ``θ ≥ 1``
    (``n ≤ |E_H|/γ``: the algorithm would always answer at random).

    >>> p = rhms_params("2-star", 1000, epsilon=0.5, gamma=0.1)
    >>> round(p.lam, 4), p.theta, round(p.scale, 2)     # λ = 128 ln 1000, θ = 2/(1000·0.1)
    (884.1927, Fraction(1, 50), 1250.44)
    """
    h = resolve_pattern(pattern, k)
    n = int(n_nodes)
    for name, v in (("epsilon", epsilon), ("gamma", gamma)):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise InterfaceError(f"RHMS needs a positive, finite {name}, got {v!r}")
    if n < 2:
        raise InterfaceError(f"RHMS needs a graph with at least 2 nodes, got {n_nodes!r}")
    v_h, e_h = h.n_nodes, h.n_edges
    lam = (8.0 * (v_h + 1) * e_h**2 * math.log(n)) ** (e_h - 1)
    theta = Fraction(e_h) / (n * Fraction(repr(float(gamma))))
    if theta >= 1:
        raise InterfaceError(
            f"RHMS with γ = {gamma!r} on {n} nodes has θ = |E_H|/(nγ) = {float(theta):.3g} ≥ 1: it "
            f"would always return a random number; it needs n > {e_h}/γ")
    return RHMSParams(lam, theta, lam / (math.sqrt(2.0) * epsilon), n**v_h)


def rhms_median_error_bounds(params: RHMSParams) -> tuple[float, float]:
    """Karwa et al.'s Claim 5.1: the median absolute error ``M`` of one RHMS release lies in
    ``[b ln(2(1 − θ)), b ln((1 − θ)/(1/2 − θ))]``; when ``θ ≥ 1/2`` the uniform answer decides
    the median and the claim says nothing: ``[0, ∞]`` (the lower end is never negative).

    >>> lo, hi = rhms_median_error_bounds(RHMSParams(1.0, Fraction(0), 1.0, 1))
    >>> round(lo, 6) == round(hi, 6) == round(math.log(2), 6)
    True
    >>> rhms_median_error_bounds(RHMSParams(1.0, Fraction(3, 4), 1.0, 1))
    (0.0, inf)
    """
    b, t = params.scale, float(params.theta)
    if t >= 0.5:
        return 0.0, math.inf
    return b * math.log(2 * (1 - t)), b * math.log((1 - t) / (0.5 - t))


def _uniform_below(gen: np.random.Generator, m: int) -> int:
    """A uniform integer in ``[0, m)`` (``m ≥ 1``, any size): exact rejection from 32-bit words."""
    bits = (m - 1).bit_length()
    if bits == 0:
        return 0
    words = -(-bits // 32)
    while True:
        x = 0
        for w in gen.integers(0, 2**32, size=words, dtype=np.uint64).tolist():
            x = (x << 32) | int(w)
        x >>= 32 * words - bits
        if x < m:
            return x


def rhms_release(true_value: float, pattern, n_nodes: int, *, epsilon: float, gamma: float = 0.1,
                 k: int | None = None, rng=None, params: RHMSParams | None = None) -> float:
    """One RHMS release of the count ``true_value`` of ``pattern`` (Karwa et al. 2011,
    Algorithm 2; module docstring). **(ε, γ)-adversarial privacy for (log(n)/n, log n)-bounded
    attackers — not differential privacy.** A benchmark baseline only.

    Raises ``ValueError`` (from :func:`~provsql_dp.mechanisms.noise.safe_noise.plan_laplace`) when the
    Laplace scale is beyond the exact sampler's range.

    >>> import numpy as np
    >>> y = rhms_release(16284, "2-star", 1589, epsilon=0.5, rng=np.random.default_rng(1))
    >>> bool(np.isfinite(y))
    True
    """
    p = params if params is not None else rhms_params(pattern, n_nodes, epsilon=epsilon,
                                                      gamma=gamma, k=k)
    plan = plan_laplace(p.lam / math.sqrt(2.0), epsilon)  # scale ≥ λ/(√2 ε), fixed before data
    gen = resolve_rng(rng)
    if _uniform_below(gen, p.theta.denominator) < p.theta.numerator:
        return float(_uniform_below(gen, p.upper + 1))
    return float(plan.release(float(true_value), rng=gen))
