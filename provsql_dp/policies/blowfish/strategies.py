"""Blowfish strategies: data-independent matrix mechanisms on the transformed data, with exact
expected error, plus the data-dependent ordered mechanism.

Every strategy releases ``W·x + noise`` where the noise is ``W_T · A⁺η`` for a strategy ``A`` on
the transformed domain and i.i.d. Laplace ``η`` (papers/000 Thm 4.1): the noise never depends on
the data, so its variance — reported per query — is exact and safe to publish.

Names (pass one as ``strategy=`` to :func:`provsql_dp.policies.blowfish.answer`):

==========================  ==================================================================
``laplace``                 Laplace on the transformed data ``P_T⁻¹x`` of the best spanning tree,
                            at ``ε/ℓ`` (ℓ = stretch; 1 for trees).
``ordered``                 ``laplace`` on prefix sums + consistency (isotonic regression and
                            clipping to [0, n], Hay et al. 2010) — the ordered mechanism of
                            papers/002 §7.1; bounded path trees only. Data dependent: the stated
                            error is that of ``laplace``, an upper bound for CDF workloads.
``hierarchical``            a b-ary tree with least-squares consistency on the transformed data
                            (blocked by θ for Hᶿ, papers/000 §5.3.1), best b ∈ {2, 4, 8, 16}.
``privelet``                the Haar wavelet strategy on the transformed data.
``ordered_hierarchical``    papers/002 §7.2 for Gᶿ (bounded): prefix counts every θ values
                            (sensitivity 1) plus a tree inside each block (sensitivity 2·levels),
                            the budget split optimally; no ε/3 loss.
``grid_laplace``            2-D: Laplace on every edge of the grid G¹ (any workload).
``grid_hierarchical``,      2-D ranges under the grid (papers/000 Thm 5.4): each rectangle is
``grid_privelet``           ±4 ranges along rows/columns of edges, answered by a hierarchical
                            or Privelet strategy per line (parallel composition); Gᶿ through G¹ at
                            ε/θ (Lemma 4.5).
``dp_laplace``,             differential-privacy baselines at ε/2 (a bounded neighbour is two
``dp_hierarchical``,        unbounded ones); 2-D ranges use the tensor product of the 1-D
``dp_privelet``             strategies.
==========================  ==================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.optimize import isotonic_regression

from ._ops import Hierarchical, Identity, Privelet
from ._transform import candidate_trees, htheta_tree
from .policy import Policy
from .workload import Matrix, Ranges, Rects, Workload

__all__ = ["STRATEGIES", "Plan", "plans", "best_plan"]

STRATEGIES = ("laplace", "ordered", "hierarchical", "privelet", "ordered_hierarchical",
              "grid_laplace", "grid_hierarchical", "grid_privelet",
              "dp_laplace", "dp_hierarchical", "dp_privelet")

BRANCHINGS = (2, 4, 8, 16)
#: never build a workload matrix with more non-zeros than this
MAX_NNZ = 30_000_000


@dataclass
class Plan:
    """A strategy prepared for one (workload, policy): its exact per-query variance at ε = 1
    and a sampler. Variances scale as ``1/ε²``."""

    name: str
    detail: str
    unit_var: np.ndarray
    _run: object = field(repr=False)
    upper_bound: bool = False

    @property
    def unit_mse(self) -> float:
        return float(np.mean(self.unit_var)) if self.unit_var.size else 0.0

    def variances(self, epsilon):
        return self.unit_var / epsilon ** 2

    def expected_mse(self, epsilon):
        return self.unit_mse / epsilon ** 2

    def run(self, x, exact, epsilon, rng):
        """Noisy answers, given the exact answers ``exact = W·x``."""
        return self._run(x, exact, epsilon, rng)


# ---------------------------------------------------------------------------- helpers
def _dp_factor(policy: Policy) -> int:
    """ε/f for DP baselines: 1 when the policy is unbounded DP itself, else 2."""
    if not policy.bounded and policy.n_value_edges() == 0:
        return 1
    return 2


def _matrix_ok(w: Workload) -> bool:
    if isinstance(w, Matrix):
        return True
    if isinstance(w, Ranges):
        return int((w.hi - w.lo + 1).sum()) <= MAX_NNZ
    if isinstance(w, Rects):
        return int(((w.r1 - w.r0 + 1) * (w.c1 - w.c0 + 1)).sum()) <= MAX_NNZ
    return True


def _tree_span(tree):
    """Largest |v − parent(v)| over value–value tree edges (None if ⊥ has many children)."""
    ch = np.flatnonzero(tree.parent >= 0)
    par = tree.parent[ch]
    vv = par < tree.k
    nb = int((~vv).sum())
    if nb > 1:
        return None
    if not vv.any():
        return 1
    return int(np.abs(ch[vv] - par[vv]).max())


def _tree_workload(tree, w: Workload):
    """``W_T`` (noise columns only), from ranges without building ``W`` when possible."""
    if isinstance(w, Ranges):
        s = _tree_span(tree)
        if s is not None and 4 * s * w.q <= MAX_NNZ:
            k = tree.k
            off = np.arange(-s, s)
            c1 = w.lo[:, None] + off[None, :]
            c2 = w.hi[:, None] + 1 + off[None, :]
            dup = (c2 >= (w.lo[:, None] - s)) & (c2 < (w.lo[:, None] + s))
            cand = np.concatenate([c1, np.where(dup, -1, c2)], axis=1)
            rows = np.broadcast_to(np.arange(w.q)[:, None], cand.shape)
            ok = (cand >= 0) & (cand < k)
            v, r = cand[ok], rows[ok]
            p = tree.parent[v]
            lo, hi = w.lo[r], w.hi[r]
            inv = (v >= lo) & (v <= hi)
            inp = (p >= 0) & (p < k) & (p >= lo) & (p <= hi)
            coef = inv.astype(float) - inp.astype(float)
            coef[p < 0] = 0.0  # roots carry no noise
            nz = coef != 0
            return sp.csr_matrix((coef[nz], (r[nz], v[nz])), shape=(w.q, tree.n))
    if not _matrix_ok(w):
        return None
    return tree.workload(w.matrix(), noise_only=True)


def _remap(n, group, B):
    """Coordinate v → (v // group)·B + v % group (blocks of ``group`` padded to ``B``)."""
    v = np.arange(n)
    return (v // group) * B + v % group


def _sample_on(op, n_coords, scale, rng, remap=None):
    z = op.sample((), scale, rng)
    if remap is None:
        return z[:n_coords]
    return z[remap]


# ---------------------------------------------------------------------------- 1-D tree plans
def _tree_op_plans(w, policy, tree, WT, op_kind):
    n = tree.n
    if n == tree.k + 1 and tree.parent[tree.k] < 0:
        n = tree.k  # the ⊥ slot is a root: no noise, no column
        WT = WT[:, :n]
    out = []
    layouts = [(None, None)]
    if tree.group and tree.group > 1 and op_kind != "identity":
        layouts.append((tree.group, None))
    bs = BRANCHINGS if op_kind == "hierarchical" else (2,)
    for group, _ in layouts:
        for b in bs:
            if op_kind == "identity":
                op = Identity(n)
                remap, cols = None, WT
            else:
                if group is None:
                    op = Hierarchical(n, b) if op_kind == "hierarchical" else Privelet(n)
                    remap, cols = None, WT
                else:
                    op = (Hierarchical(group, b) if op_kind == "hierarchical" else Privelet(group))
                    B = op.B
                    remap = _remap(n, group, B)
                    m2 = int(remap.max()) + 1
                    op = (Hierarchical(m2, b, block=B) if op_kind == "hierarchical"
                          else Privelet(m2, block=B))
                    coo = WT.tocoo()
                    cols = sp.csr_matrix((coo.data, (coo.row, remap[coo.col])),
                                         shape=(WT.shape[0], op.m))
            f = tree.ell * op.sensitivity
            uv = 2.0 * f * f * op.query_coeffs(cols)

            def run(x, exact, eps, rng, op=op, f=f, remap=remap, WT=WT):
                z = _sample_on(op, n, f / eps, rng, remap)
                return exact + WT @ z[: WT.shape[1]]

            name = {"identity": "laplace"}.get(op_kind, op_kind)
            det = f"{name} on {tree.name} (ℓ={tree.ell}"
            if op_kind == "hierarchical":
                det += f", b={b}"
            if group:
                det += f", blocks of {group}"
            det += ")"
            out.append(Plan(name, det, uv, run))
            if op_kind != "hierarchical":
                break
    return out


def _ordered_plan(w, policy, tree, WT):
    """Laplace on the prefix sums + isotonic regression + clipping to [0, n]."""
    uv = 2.0 * tree.ell ** 2 * np.asarray(WT.multiply(WT).sum(axis=1)).ravel()
    chain = tree.chain[tree.parent[tree.chain] >= 0]

    def run(x, exact, eps, rng, tree=tree, WT=WT):
        xt = tree.forward(x)
        noisy = xt.copy()
        noisy[chain] = xt[chain] + rng.laplace(0.0, tree.ell / eps, size=chain.size)
        fit = isotonic_regression(noisy[chain], increasing=True).x
        noisy[chain] = np.clip(fit, 0.0, float(np.sum(x)))
        return exact + WT @ (noisy - xt)

    return Plan("ordered", f"ordered: laplace on {tree.name} (ℓ={tree.ell}) + isotonic consistency",
                uv, run, upper_bound=True)


def _oh_plans(w, policy):
    """Ordered hierarchical mechanism (papers/002 §7.2) for bounded Gᶿ, on the Hᶿ transform."""
    if not policy.bounded or policy.kind != "threshold":
        return []
    k, t = policy.k, int(policy.theta)
    if t >= k - 1 or t < 2:
        return []
    tree = htheta_tree(policy)
    WT = _tree_workload(tree, w)
    if WT is None:
        return []
    v = np.arange(k)
    red = (v % t == t - 1) & (tree.parent >= 0)
    non = (v % t != t - 1) & (tree.parent >= 0)
    a = np.asarray(WT[:, red].multiply(WT[:, red]).sum(axis=1)).ravel()
    nonidx = np.flatnonzero(non)
    WN = WT[:, nonidx].tocoo()
    out = []
    g = t - 1
    for inner, b in [("identity", 1)] + [("hierarchical", bb) for bb in BRANCHINGS]:
        if inner == "identity":
            op = Identity(nonidx.size)
            cols_map = np.arange(nonidx.size)
        else:
            B = Hierarchical(g, b).B
            pos = (nonidx // t) * B + (nonidx % t)
            op = Hierarchical(int(pos.max()) + 1, b, block=B)
            cols_map = pos
        cols = sp.csr_matrix((WN.data, (WN.row, cols_map[WN.col])), shape=(WT.shape[0], op.m))
        dH = 2 * op.sensitivity
        c = op.query_coeffs(cols) * dH * dH
        A, C = 2 * a.mean(), 2 * c.mean()
        if A <= 0 and C <= 0:
            fs = 0.5
        else:
            fs = A ** (1 / 3) / (A ** (1 / 3) + C ** (1 / 3))
        fs = min(max(fs, 1e-6), 1 - 1e-6)
        fh = 1 - fs
        uv = 2 * a / fs ** 2 + 2 * c / fh ** 2

        def run(x, exact, eps, rng, op=op, cols_map=cols_map, dH=dH, fs=fs, fh=fh, WT=WT):
            z = np.zeros(tree.n)
            z[red] = rng.laplace(0.0, 1.0 / (fs * eps), size=int(red.sum()))
            zn = op.sample((), dH / (fh * eps), rng)
            z[nonidx] = zn[cols_map]
            return exact + WT @ z

        det = (f"ordered_hierarchical (θ={t}, inner {inner}"
               + (f" b={b}" if inner != "identity" else "")
               + f", ε split {fs:.2f}/{fh:.2f})")
        out.append(Plan("ordered_hierarchical", det, uv, run))
    return out


def _dp1_plans(w, policy, op_kind):
    f = _dp_factor(policy)
    k = policy.k
    out = []
    bs = BRANCHINGS if op_kind == "hierarchical" else (2,)
    for b in bs:
        op = {"identity": lambda: Identity(k), "hierarchical": lambda: Hierarchical(k, b),
              "privelet": lambda: Privelet(k)}[op_kind]()
        s = f * op.sensitivity
        if isinstance(w, Ranges):
            uv = 2.0 * s * s * op.range_coeffs(w.lo, w.hi)
            Wm = None
        else:
            Wm = w.matrix()
            uv = 2.0 * s * s * op.query_coeffs(Wm)

        def run(x, exact, eps, rng, op=op, s=s, Wm=Wm):
            z = op.sample((), s / eps, rng)
            if Wm is None:
                c = np.r_[0.0, np.cumsum(z)]
                return exact + c[w.hi + 1] - c[w.lo]
            return exact + Wm @ z

        name = "dp_" + {"identity": "laplace"}.get(op_kind, op_kind)
        det = f"{name} at ε/{f}" + (f" (b={b})" if op_kind == "hierarchical" else "")
        out.append(Plan(name, det, uv, run))
    return out


# ---------------------------------------------------------------------------- 2-D plans
def _grid_ell(policy: Policy):
    """Stretch of the policy's value edges inside the grid G¹ on the same shape (None: n/a)."""
    if policy.kind == "grid":
        return int(policy.theta)
    if policy.kind == "product" and len(policy.factors) == 2:
        ths = []
        for f in policy.factors:
            if f.kind not in ("line", "threshold"):
                return None
            ths.append(int(f.theta))
        return max(ths)
    return None


def _source_counter(policy, shape):
    """Function (r0, r1, c0, c1) → number of ⊥-neighbours inside each rectangle."""
    k1, k2 = shape
    S = np.zeros((k1 + 1, k2 + 1))
    ind = np.zeros(k1 * k2)
    ind[policy.bottom_neighbours()] = 1
    S[1:, 1:] = ind.reshape(k1, k2).cumsum(0).cumsum(1)
    return lambda r0, r1, c0, c1: (S[r1 + 1, c1 + 1] - S[r0, c1 + 1] - S[r1 + 1, c0] + S[r0, c0])


def _rect_prefix(field):
    k1, k2 = field.shape
    S = np.zeros((k1 + 1, k2 + 1))
    S[1:, 1:] = field.cumsum(0).cumsum(1)
    return S


def _grid_line_plans(w: Rects, policy, op_kind):
    ell = _grid_ell(policy)
    if ell is None:
        return []
    k1, k2 = w.shape
    out = []
    bs = BRANCHINGS if op_kind == "hierarchical" else (2,)
    r0, r1, c0, c1 = w.r0, w.r1, w.c0, w.c1
    hasL, hasR, hasT, hasB = c0 > 0, c1 < k2 - 1, r0 > 0, r1 < k1 - 1
    count_src = _source_counter(policy, w.shape) if not policy.bounded else None
    for b in bs:
        mk = {"identity": lambda m: Identity(m), "hierarchical": lambda m: Hierarchical(m, b),
              "privelet": lambda m: Privelet(m)}[op_kind]
        opH, opV = mk(k1), mk(k2)  # H lines run over rows (length k1), V lines over columns
        d = max(opH.sensitivity, opV.sensitivity)
        s = ell * d
        vr = opH.range_coeffs(r0, r1)
        vc = opV.range_coeffs(c0, c1)
        uv = 2.0 * s * s * (vr * (hasL.astype(float) + hasR) + vc * (hasT.astype(float) + hasB))
        if count_src is not None:
            uv = uv + 2.0 * ell * ell * count_src(r0, r1, c0, c1)

        def run(x, exact, eps, rng, opH=opH, opV=opV, s=s):
            noise = np.zeros(w.q)
            if k2 > 1:
                zh = opH.sample((k2 - 1,), s / eps, rng)  # line j: edges (i,j)-(i,j+1), i = 0..k1-1
                P = np.concatenate([np.zeros((k2 - 1, 1)), np.cumsum(zh, axis=1)], axis=1)
                jl = np.where(hasL, c0 - 1, 0)
                jr = np.where(hasR, c1, 0)
                noise -= np.where(hasL, P[jl, r1 + 1] - P[jl, r0], 0.0)
                noise += np.where(hasR, P[jr, r1 + 1] - P[jr, r0], 0.0)
            if k1 > 1:
                zv = opV.sample((k1 - 1,), s / eps, rng)  # line i: edges (i,j)-(i+1,j)
                P = np.concatenate([np.zeros((k1 - 1, 1)), np.cumsum(zv, axis=1)], axis=1)
                it = np.where(hasT, r0 - 1, 0)
                ib = np.where(hasB, r1, 0)
                noise -= np.where(hasT, P[it, c1 + 1] - P[it, c0], 0.0)
                noise += np.where(hasB, P[ib, c1 + 1] - P[ib, c0], 0.0)
            if not policy.bounded:
                fld = np.zeros(k1 * k2)
                src = policy.bottom_neighbours()
                fld[src] = rng.laplace(0.0, ell / eps, size=src.size)
                S = _rect_prefix(fld.reshape(k1, k2))
                noise += S[r1 + 1, c1 + 1] - S[r0, c1 + 1] - S[r1 + 1, c0] + S[r0, c0]
            return exact + noise

        name = "grid_" + {"identity": "laplace"}.get(op_kind, op_kind)
        det = f"{name}: ±4 line ranges on the edges of G¹ (ℓ={ell}"
        det += (f", b={b})" if op_kind == "hierarchical" else ")")
        out.append(Plan(name, det, uv, run))
    return out


def _grid_incidence(policy, shape):
    k1, k2 = shape
    idx = np.arange(k1 * k2).reshape(k1, k2)
    u = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    v = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    e = np.arange(u.size)
    rows = [u, v]
    cols = [e, e]
    data = [np.ones(u.size), -np.ones(u.size)]
    if not policy.bounded:
        b = policy.bottom_neighbours()
        rows.append(b)
        cols.append(u.size + np.arange(b.size))
        data.append(np.ones(b.size))
        ne = u.size + b.size
    else:
        ne = u.size
    return sp.csr_matrix((np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(k1 * k2, ne))


def _grid_laplace_matrix_plan(w, policy):
    ell = _grid_ell(policy)
    if ell is None or not _matrix_ok(w):
        return []
    WG = (w.matrix() @ _grid_incidence(policy, policy.shape)).tocsr()
    uv = 2.0 * ell * ell * np.asarray(WG.multiply(WG).sum(axis=1)).ravel()

    def run(x, exact, eps, rng):
        return exact + WG @ rng.laplace(0.0, ell / eps, size=WG.shape[1])

    return [Plan("grid_laplace", f"grid_laplace: Laplace on every edge of G¹ (ℓ={ell})", uv, run)]


def _dp2_plans(w: Rects, policy, op_kind):
    f = _dp_factor(policy)
    k1, k2 = w.shape
    out = []
    bs = BRANCHINGS if op_kind == "hierarchical" else (2,)
    for b in bs:
        mk = {"identity": lambda m: Identity(m), "hierarchical": lambda m: Hierarchical(m, b),
              "privelet": lambda m: Privelet(m)}[op_kind]
        o1, o2 = mk(k1), mk(k2)
        s = f * o1.sensitivity * o2.sensitivity
        uv = 2.0 * s * s * o1.range_coeffs(w.r0, w.r1) * o2.range_coeffs(w.c0, w.c1)

        def run(x, exact, eps, rng, o1=o1, o2=o2, s=s):
            eta = rng.laplace(0.0, s / eps, size=(o1.n_rows, o2.n_rows))
            z = o2.pinv_apply(eta)
            z = o1.pinv_apply(z.T).T
            S = _rect_prefix(z)
            return exact + (S[w.r1 + 1, w.c1 + 1] - S[w.r0, w.c1 + 1] - S[w.r1 + 1, w.c0]
                            + S[w.r0, w.c0])

        name = "dp_" + {"identity": "laplace"}.get(op_kind, op_kind)
        det = f"{name} at ε/{f} (2-D tensor" + (f", b={b})" if op_kind == "hierarchical" else ")")
        out.append(Plan(name, det, uv, run))
    return out


# ---------------------------------------------------------------------------- dispatch
def plans(w: Workload, policy: Policy, names=None) -> list:
    """Every applicable plan (all variants) for the given strategy names (default: all)."""
    names = STRATEGIES if names is None else tuple(names)
    out = []
    two_d = len(policy.shape) == 2
    if not two_d:
        trees = None
        if {"laplace", "hierarchical", "privelet", "ordered"} & set(names):
            trees = []
            for t in candidate_trees(policy):
                WT = _tree_workload(t, w)
                if WT is not None:
                    trees.append((t, WT))
        for name in names:
            if name in ("laplace", "hierarchical", "privelet"):
                kind = {"laplace": "identity"}.get(name, name)
                for t, WT in trees:
                    out += _tree_op_plans(w, policy, t, WT, kind)
            elif name == "ordered":
                for t, WT in trees:
                    if t.shape == "path" and policy.bounded and t.roots.size == 1:
                        out.append(_ordered_plan(w, policy, t, WT))
            elif name == "ordered_hierarchical":
                out += _oh_plans(w, policy)
            elif name.startswith("dp_"):
                kind = {"dp_laplace": "identity"}.get(name, name[3:])
                if kind in ("identity", "hierarchical", "privelet"):
                    if kind == "identity" or isinstance(w, Ranges) or _matrix_ok(w):
                        out += _dp1_plans(w, policy, kind)
    else:
        for name in names:
            if name in ("grid_hierarchical", "grid_privelet", "grid_laplace"):
                kind = {"grid_laplace": "identity"}.get(name, name[5:])
                if isinstance(w, Rects):
                    out += _grid_line_plans(w, policy, kind)
                elif name == "grid_laplace":
                    out += _grid_laplace_matrix_plan(w, policy)
            elif name.startswith("dp_"):
                kind = {"dp_laplace": "identity"}.get(name, name[3:])
                if isinstance(w, Rects):
                    out += _dp2_plans(w, policy, kind)
                elif kind == "identity" and _matrix_ok(w):
                    out += _dp1_plans(w, policy, "identity")
    return out


def best_plan(w: Workload, policy: Policy, strategy=None) -> Plan:
    """The plan of least expected error, among all strategies or the variants of one."""
    from ...errors import ProgrammingError  # local: avoid cycles at import

    if strategy is not None and strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)} "
                         "or None for the least expected error")
    names = None if strategy is None else (strategy,)
    cands = plans(w, policy, names)
    if strategy is None:
        cands = [p for p in cands if p.name != "ordered"]
    if not cands:
        if strategy is not None:
            ok = sorted({p.name for p in plans(w, policy)})
            raise ValueError(f"strategy {strategy!r} does not apply to a {w.kind} workload under "
                             f"{policy!r}; applicable: {', '.join(ok) or 'none'}")
        raise ProgrammingError(f"no strategy applies to a {w.kind} workload under {policy!r}")
    best = min(cands, key=lambda p: p.unit_mse)
    if strategy is None and best.name == "laplace" and w.kind == "prefix":
        # CDF under a path: consistency is a projection onto a convex set holding the truth,
        # so its squared error is never larger — upgrade.
        for p in plans(w, policy, ("ordered",)):
            if p.detail.split("laplace on ")[1].split(" ")[0] == best.detail.split("laplace on ")[1].split(" ")[0]:
                return p
    return best
