"""Blowfish strategies: data-independent matrix mechanisms on the transformed data, with exact
expected error, plus the data-dependent ordered mechanism.

Every strategy releases ``W·x + noise`` where the noise is ``W_T · A⁺η`` for a strategy ``A`` on
the transformed domain and i.i.d. Laplace ``η`` (Haney et al. Thm 4.1): the noise never depends on
the data, so its variance — reported per query — is safe to publish.

Floating-point safety (no continuous noise is ever added to a private number):
**released rows** — the 1-D tree strategies, ``ordered``, ``ordered_hierarchical`` and ``dp_*``
release the strategy rows ``A·v`` of a fixed transform ``v`` of ``x`` (L1 sensitivity Δ over at
most ``⌊Δ⌋`` rows) on the public grid of ``plan_laplace(Δ, ε, changed=⌊Δ⌋)``, then apply ``A⁺``,
consistency and ``W_T`` to the released numbers only (public root slots added as they are);
**exact noise-only** — ``grid_*`` (a neighbour is a path in a graph with cycles, so no fixed
transform has the stated sensitivity) compute ``W·x + W_G·A⁺K``, ``K`` integer ``DLap(Δ/ε)``,
exactly in rationals and round once. Errors: see :class:`~._engine.Answer` (``noise_plans``).

Names (pass one as ``strategy=`` to :func:`provsql_dp.policies.blowfish.answer`):

==========================  ==================================================================
``laplace``                 Laplace on the transformed data ``P_T⁻¹x`` of the best spanning tree,
                            at ``ε/ℓ`` (ℓ = stretch; 1 for trees).
``ordered``                 ``laplace`` on prefix sums + consistency (isotonic regression and
                            clipping to [0, n], Hay et al. 2010) — the ordered mechanism of
                            He et al. §7.1; bounded path trees only. Data dependent: the stated
                            error is that of ``laplace``, an upper bound for CDF workloads.
``hierarchical``            a b-ary tree with least-squares consistency on the transformed data
                            (blocked by θ for Hᶿ, Haney et al. §5.3.1), best b ∈ {2, 4, 8, 16}.
``privelet``                the Haar wavelet strategy on the transformed data.
``ordered_hierarchical``    He et al. §7.2 for Gᶿ (bounded): prefix counts every θ values
                            (sensitivity 1) plus a tree inside each block (sensitivity 2·levels),
                            the budget split optimally; no ε/3 loss.
``grid_laplace``            2-D: Laplace on every edge of the grid G¹ (any workload).
``grid_hierarchical``,      2-D ranges under the grid (Haney et al. Thm 5.4): each rectangle is
``grid_privelet``           ±4 ranges along rows/columns of edges, answered by a hierarchical
                            or Privelet strategy per line (parallel composition); Gᶿ through G¹ at
                            ε/θ (Lemma 4.5).
``dp_laplace``,             differential-privacy baselines at ε/2 (a bounded neighbour is two
``dp_hierarchical``,        unbounded ones); 2-D ranges use the tensor product of the 1-D
``dp_privelet``             strategies.
``dawa``                    data dependent (Haney et al. §5.4, "Transformed + DAWA"): DAWA (Li et
                            al. 2014, :mod:`.dawa`) on the transformed data of each spanning tree
                            at ε/ℓ, with consistency on a bounded path; its stated error is the
                            noise only (the partition's bias is data dependent). Never chosen by
                            default: ask for it by name (SQL: ``OPTIONS (strategy = 'dawa')``).
``dp_dawa``                 DAWA on ``x`` at ε/2: the data-dependent differential-privacy baseline.
==========================  ==================================================================
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import isotonic_regression

from ._ops import Hierarchical, Identity, Privelet, noise_slots, public_part, release_on
from ._plan import BRANCHINGS, MAX_NNZ, Plan, dp_factor, matrix_ok
from ._transform import candidate_trees, htheta_tree
from .consistency import SimultaneousBound
from .dawa import dawa_plans, dp_dawa_plans
from .grid_plans import grid_plans
from .policy import Policy
from .workload import Ranges, Rects, Workload

__all__ = ["STRATEGIES", "DEPENDENT", "Plan", "plans", "best_plan"]

STRATEGIES = ("laplace", "ordered", "hierarchical", "privelet", "ordered_hierarchical",
              "grid_laplace", "grid_hierarchical", "grid_privelet",
              "dp_laplace", "dp_hierarchical", "dp_privelet", "dawa", "dp_dawa")
#: data-dependent strategies: planned only when named, never the default choice
DEPENDENT = ("dawa", "dp_dawa")


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
    if not matrix_ok(w):
        return None
    return tree.workload(w.matrix(), noise_only=True)


def _remap(n, group, B):
    """Coordinate v → (v // group)·B + v % group (blocks of ``group`` padded to ``B``)."""
    v = np.arange(n)
    return (v // group) * B + v % group


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

            def run(x, exact, eps, noise, op=op, f=f, remap=remap, WT=WT):
                xt = tree.forward(x)
                z = release_on(op, noise_slots(tree, xt, n), f, eps, noise, remap)
                return public_part(w, tree, xt) + WT @ z[: WT.shape[1]]

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

    def run(x, exact, eps, noise, tree=tree, WT=WT):
        xt = tree.forward(x)
        released = noise.release(xt[chain], tree.ell, eps, changed=tree.ell)
        fit = isotonic_regression(released, increasing=True).x
        total = float(xt[tree.roots[0]])  # bounded: the public total n
        noisy = np.zeros(tree.n)
        noisy[chain] = np.clip(fit, 0.0, total)
        return public_part(w, tree, xt) + WT @ noisy

    # the honest bound through the consistency step (.consistency): every prefix draw within a
    # at once moves each query by at most a·‖W_T[q]‖₁ (W_T has no column outside the chain)
    weights = np.asarray(abs(WT).sum(axis=1)).ravel()
    sim = SimultaneousBound(weights, int(chain.size), float(tree.ell),
                            max(1, min(int(tree.ell), max(1, int(chain.size)))))
    return Plan("ordered", f"ordered: laplace on {tree.name} (ℓ={tree.ell}) + isotonic consistency",
                uv, run, upper_bound=True, simultaneous=sim)


def _oh_plans(w, policy):
    """Ordered hierarchical mechanism (He et al. §7.2) for bounded Gᶿ, on the Hᶿ transform."""
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

        def run(x, exact, eps, noise, op=op, cols_map=cols_map, dH=dH, fs=fs, fh=fh, WT=WT):
            xt = tree.forward(x)
            z = np.zeros(tree.n)
            # two releases at fs·ε and fh·ε (sequential composition): the red prefix counts
            # (L1 sensitivity 1) and the trees inside the blocks (sensitivity dH)
            z[red] = noise.release(xt[red], 1, fs * eps, changed=1)
            z[nonidx] = release_on(op, xt[nonidx], dH, fh * eps, noise, cols_map)
            return public_part(w, tree, xt) + WT @ z

        det = (f"ordered_hierarchical (θ={t}, inner {inner}"
               + (f" b={b}" if inner != "identity" else "")
               + f", ε split {fs:.2f}/{fh:.2f})")
        out.append(Plan("ordered_hierarchical", det, uv, run))
    return out


def _dp1_plans(w, policy, op_kind):
    f = dp_factor(policy)
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

        def run(x, exact, eps, noise, op=op, s=s, Wm=Wm):
            z = op.release(np.asarray(x, dtype=float).ravel(), s, eps, noise)
            if Wm is None:
                c = np.r_[0.0, np.cumsum(z)]
                return c[w.hi + 1] - c[w.lo]
            return Wm @ z

        name = "dp_" + {"identity": "laplace"}.get(op_kind, op_kind)
        det = f"{name} at ε/{f}" + (f" (b={b})" if op_kind == "hierarchical" else "")
        out.append(Plan(name, det, uv, run))
    return out


# ---------------------------------------------------------------------------- dispatch
def plans(w: Workload, policy: Policy, names=None) -> list:
    """Every applicable plan (all variants) for the given strategy names (default: all)."""
    names = tuple(n for n in STRATEGIES if n not in DEPENDENT) if names is None else tuple(names)
    out = []
    two_d = len(policy.shape) == 2
    if not two_d:
        trees = None
        if {"laplace", "hierarchical", "privelet", "ordered", "dawa"} & set(names):
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
            elif name == "dawa":
                out += dawa_plans(w, policy, trees)
            elif name == "dp_dawa":
                if isinstance(w, Ranges) or matrix_ok(w):
                    out += dp_dawa_plans(w, policy)
            elif name.startswith("dp_"):
                kind = {"dp_laplace": "identity"}.get(name, name[3:])
                if kind in ("identity", "hierarchical", "privelet"):
                    if kind == "identity" or isinstance(w, Ranges) or matrix_ok(w):
                        out += _dp1_plans(w, policy, kind)
    else:
        out += grid_plans(w, policy, names)
        if "dp_laplace" in names and not isinstance(w, Rects) and matrix_ok(w):
            out += _dp1_plans(w, policy, "identity")  # any matrix workload over the cells
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
    if strategy in DEPENDENT:  # no data-independent error to compare: least stretch first
        return cands[0]
    best = min(cands, key=lambda p: p.unit_mse)
    if strategy is None and best.name == "laplace" and w.kind == "prefix":
        # CDF under a path: consistency is a projection onto a convex set holding the truth,
        # so its squared error is never larger — upgrade.
        for p in plans(w, policy, ("ordered",)):
            if p.detail.split("laplace on ")[1].split(" ")[0] == best.detail.split("laplace on ")[1].split(" ")[0]:
                return p
    return best
