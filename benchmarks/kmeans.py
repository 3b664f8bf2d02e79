"""Blowfish k-means (papers/002 §6, Fig. 1): objective of private SuLQ k-means divided by that of
non-private k-means (Lloyd, same initial centres), mean and quartiles over runs.

Data: the paper's synthetic set (1000 points in 4 dimensions around 4 random centres, Gaussian
noise σ = 0.2 per axis, in the box [0, 1]⁴ … clipped) and a 2-D set. Policies: differential privacy
(bounded), attribute, threshold θ (L1), partition into a uniform grid — each with the sensitivity
provsql_dp.policies.blowfish.clustering proves (pairs split by a cluster boundary included), plus, for
reference only, "lemma 6.1" columns using the same-cluster bound alone as papers/002 states it,
which is NOT a private mechanism (a record crossing a cluster boundary moves its whole mass).

    python benchmarks/kmeans.py [--runs 50]
    python benchmarks/kmeans.py --smoke      # seconds: 2 runs, 200 points, ε = 1 (CI)
"""

from __future__ import annotations

import argparse

import numpy as np

from provsql_dp.policies.blowfish import clustering as km


def synthetic(n, d, k, sigma, rng):
    centres = rng.uniform(0.15, 0.85, size=(k, d))
    lab = rng.integers(0, k, n)
    return np.clip(centres[lab] + rng.normal(0, sigma, size=(n, d)), 0, 1)


def run(X, k, eps, policy, runs, rng, lemma_only=False, **kw):
    ratios = []
    d = X.shape[1]
    for _ in range(runs):
        init = rng.uniform(0, 1, size=(k, d))
        base = km.objective(X, km.lloyd(X, k, init=init))
        if lemma_only:
            res = _lemma_kmeans(X, k, eps, policy, init, rng, **kw)
        else:
            res = km.kmeans(X, k, eps, lo=0, hi=1, policy=policy, init=init, rng=rng, **kw).centers
        ratios.append(km.objective(X, res) / base)
    r = np.array(ratios)
    return np.mean(r), np.quantile(r, 0.25), np.quantile(r, 0.75)


def _lemma_kmeans(X, k, eps, policy, init, rng, theta=None, cells=None, iterations=10):
    """The paper's Lemma 6.1 sensitivities (same-cluster term only) — reference, not private."""
    d = X.shape[1]
    lo, hi = np.zeros(d), np.ones(d)
    same = {"dp": float(d), "attribute": 1.0, "threshold": theta,
            "partition": None if cells is None else d / cells}[policy]
    centers = init.copy()
    e = eps / iterations / 2
    for _ in range(iterations):
        lab = km._assign(X, centers)
        counts = np.bincount(lab, minlength=k) + rng.laplace(0, 2 / e, k)
        sums = np.zeros((k, d))
        np.add.at(sums, lab, X)
        sums += rng.laplace(0, same / e, (k, d))
        ok = counts >= 1
        centers[ok] = np.clip(sums[ok] / counts[ok, None], lo, hi)
    return centers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--seed", type=int, default=2014)
    ap.add_argument("--smoke", action="store_true", help="seconds: 2 runs, n = 200, ε = 1 (CI)")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    n4, n2, epsilons = (200, 200, (1.0,)) if args.smoke else (1000, 5000, (0.5, 1.0, 2.0))
    if args.smoke:
        args.runs = 2
    sets = {f"synthetic 4-D (n={n4}, k=4)": (synthetic(n4, 4, 4, 0.05, rng), 4),
            f"synthetic 2-D (n={n2}, k=4)": (synthetic(n2, 2, 4, 0.05, rng), 4)}
    policies = [("dp", {}), ("attribute", {}), ("threshold", {"theta": 0.1}),
                ("threshold", {"theta": 0.01}), ("partition", {"cells": 10}),
                ("partition", {"cells": 100})]
    for eps in epsilons:
        print(f"\n### ε = {eps}: objective / non-private objective, mean [q25, q75] over "
              f"{args.runs} runs\n")
        head = "| dataset | " + " | ".join(
            f"{p}{'' if not kw else ' ' + ','.join(f'{a}={b}' for a, b in kw.items())}"
            for p, kw in policies) + " |"
        print(head)
        print("|---" * (len(policies) + 1) + "|")
        for name, (X, k) in sets.items():
            cells = []
            for p, kw in policies:
                m, q1, q3 = run(X, k, eps, p, args.runs, rng, **kw)
                cells.append(f"{m:.2f} [{q1:.2f}, {q3:.2f}]")
            print(f"| {name} | " + " | ".join(cells) + " |")
            cells = []
            for p, kw in policies:
                m, q1, q3 = run(X, k, eps, p, args.runs, rng, lemma_only=True, **kw)
                cells.append(f"{m:.2f}")
            print(f"| ↳ Lemma 6.1 as stated (not private) | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
