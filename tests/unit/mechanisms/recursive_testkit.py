"""Shared helpers for the recursive-mechanism tests: random K-relations, neighbours, and two
independent formulations of H and G (PuLP/CBC and brute-force vertex enumeration)."""

from __future__ import annotations

import itertools

import numpy as np
import pulp

from provsql_dp.provenance.krelation import KRelation

from pulp_cbc import cbc_solver


def make_kr(annotations, weights=None, n_participants=None):
    """A K-relation over participants ("p", 0..n-1) from lists of monomials of ints."""
    ann = [[{("p", x) for x in m} for m in a] for a in annotations]
    universe = None
    if n_participants is not None:
        universe = [("p", x) for x in range(n_participants)]
    return KRelation.from_annotations(
        rows=[(k,) for k in range(len(ann))], annotations=ann, weights=weights,
        participants=universe,
    )


def random_annotations(rng, n, n_tuples, max_monos=2, max_size=3):
    out = []
    for _ in range(n_tuples):
        k = int(rng.integers(1, max_monos + 1))
        monos = []
        for _ in range(k):
            size = int(rng.integers(1, min(max_size, n) + 1))
            monos.append(sorted(rng.choice(n, size=size, replace=False).tolist()))
        out.append(monos)
    return out


def random_kr(rng, n=6, n_tuples=8, max_monos=2, max_size=3, integer_weights=False):
    ann = random_annotations(rng, n, n_tuples, max_monos, max_size)
    if integer_weights:
        w = rng.integers(1, 4, size=n_tuples).astype(float)
    else:
        w = rng.uniform(0.1, 3.0, size=n_tuples)
    return make_kr(ann, w, n_participants=n)


def neighbour(kr: KRelation, p) -> KRelation:
    """R' = R with participant ``p`` set False, on P' = P − {p} (papers/003 Def. 14)."""
    rows, anns, ws = [], [], []
    for t in range(kr.n_tuples):
        monos = [m for m in kr.annotation(t) if p not in m]
        if monos:
            rows.append(kr.rows[t])
            anns.append(monos)
            ws.append(float(kr.weights[t]))
    return KRelation.from_annotations(
        rows=rows, annotations=anns, weights=ws,
        participants=[x for x in kr.participant_list if x != p],
    )


def _annotations(kr):
    index = kr.participant_index
    return [[sorted(index[p] for p in m) for m in kr.annotation(t)] for t in range(kr.n_tuples)]


def pulp_h(kr: KRelation, i: float) -> float:
    """H_i (eq. 16) in the f-form with one auxiliary variable per monomial, solved by CBC."""
    n = kr.n_participants
    prob = pulp.LpProblem("H", pulp.LpMinimize)
    f = [prob.add_variable(f"f{p}", 0, 1) for p in range(n)]
    obj = []
    for t, monos in enumerate(_annotations(kr)):
        phi = prob.add_variable(f"phi{t}", 0)
        for k, m in enumerate(monos):
            z = prob.add_variable(f"z{t}_{k}", 0)
            prob += z >= pulp.lpSum(f[p] for p in m) - len(m) + 1
            prob += phi >= z
        obj.append(float(kr.weights[t]) * phi)
    prob += pulp.lpSum(obj) + 0.0
    prob += pulp.lpSum(f) == i
    prob.solve(cbc_solver())
    assert pulp.LpStatus[prob.status] == "Optimal"
    return float(pulp.value(prob.objective) or 0.0)


def pulp_g(kr: KRelation, i: float, printed: bool = False) -> float:
    """G_i solved by CBC, with S_{k,p} by the recursive rules of §5.2.

    ``printed=True`` is eq. 19 exactly as printed (load of p uses φ of the whole annotation);
    otherwise the load of p uses φ of the monomials containing p, the recursive variant the
    mechanism implements (see ``_lp.Structure.load_view``). They agree on conjunctions.
    """
    n = kr.n_participants
    prob = pulp.LpProblem("G", pulp.LpMinimize)
    f = [prob.add_variable(f"f{p}", 0, 1) for p in range(n)]
    w = prob.add_variable("w")
    anns = _annotations(kr)
    terms = {p: [] for p in range(n)}
    for t, monos in enumerate(anns):
        for p in range(n):
            s = max(sum(1 for x in m if x == p) for m in monos)
            if not s:
                continue
            sub = monos if printed else [m for m in monos if p in m]
            phi = prob.add_variable(f"phi{t}_{p}", 0)
            for m in sub:
                prob += phi >= pulp.lpSum(f[x] for x in m) - len(m) + 1
            terms[p].append(float(kr.weights[t]) * s * phi)
    for p in range(n):
        prob += w >= pulp.lpSum(terms[p])
    prob += w
    prob += pulp.lpSum(f) == i
    prob.solve(cbc_solver())
    assert pulp.LpStatus[prob.status] == "Optimal"
    return 2.0 * float(pulp.value(w) or 0.0)


def brute_h_g(kr: KRelation, i: float, which: str) -> float:
    """Eq. 16 / 19 by enumerating every vertex of the LP's polyhedron (tiny inputs only).

    Variables (f, y[, w]); the optimum of a bounded LP is attained at a vertex, and every vertex
    is the unique solution of ``d`` linearly independent active constraints.
    """
    n = kr.n_participants
    anns = _annotations(kr)
    T = len(anns)
    d = n + T + (1 if which == "G" else 0)
    A, b = [], []  # rows a·x >= b
    for p in range(n):
        e = np.zeros(d); e[p] = 1; A.append(e); b.append(0.0)
        e = np.zeros(d); e[p] = -1; A.append(e); b.append(-1.0)
    for t in range(T):
        e = np.zeros(d); e[n + t] = 1; A.append(e); b.append(0.0)
        for m in anns[t]:
            e = np.zeros(d); e[n + t] = 1
            for p in m:
                e[p] -= 1
            A.append(e); b.append(1.0 - len(m))
    if which == "G":
        for p in range(n):
            e = np.zeros(d); e[-1] = 1
            for t in range(T):
                if any(p in m for m in anns[t]):
                    e[n + t] -= float(kr.weights[t])
            A.append(e); b.append(0.0)
    A = np.array(A); b = np.array(b)
    eq = np.zeros(d); eq[:n] = 1
    c = np.zeros(d)
    if which == "H":
        c[n:n + T] = kr.weights
    else:
        c[-1] = 1.0
    best = np.inf
    for rows in itertools.combinations(range(len(A)), d - 1):
        M = np.vstack([A[list(rows)], eq])
        if abs(np.linalg.det(M)) < 1e-9:
            continue
        x = np.linalg.solve(M, np.append(b[list(rows)], i))
        if np.all(A @ x >= b - 1e-9):
            best = min(best, float(c @ x))
    return best if which == "H" else 2 * best
