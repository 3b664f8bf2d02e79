"""The curator's trade-off view (Liu et al. §4, Demo 1): expected error per query across
policies and budgets, as a table and a PNG plot. Errors are data independent, so this reads no
data and spends no budget.

>>> from provsql_dp import blowfish as bf
>>> rows = tradeoff(bf.Prefix(256), 256, thetas=(1, 4, 16), epsilons=(0.1, 1.0))
>>> [(r["policy"], r["epsilon"], r["strategy"]) for r in rows][:2]
[('theta=1', 0.1, 'ordered'), ('theta=1', 1.0, 'ordered')]
>>> rows[-1]["policy"]
'full (DP)'
"""

from __future__ import annotations

from ._engine import expected_error
from .policy import Policy

__all__ = ["tradeoff", "format_table", "plot"]


def tradeoff(W, k, thetas=(1, 2, 4, 8, 16, 32, 64), epsilons=(0.01, 0.1, 1.0), bounded=True,
             include_full=True):
    """Rows ``{policy, theta, epsilon, strategy, detail, expected_mse}`` for threshold policies
    ``Gᶿₖ`` (θ = 1 is the line) and, optionally, the complete graph (differential privacy)."""
    pols = [(f"theta={t}", t, Policy.threshold(k, t, bounded=bounded)) for t in thetas if t < k]
    if include_full:
        pols.append(("full (DP)", None, Policy.full(k, bounded=bounded)))
    rows = []
    for label, t, pol in pols:
        for eps in epsilons:
            name, det, mse = expected_error(W, pol, eps)
            rows.append({"policy": label, "theta": t, "epsilon": eps, "strategy": name,
                         "detail": det, "expected_mse": mse})
    return rows


def format_table(rows) -> str:
    """A markdown table: one row per policy, one column per ε."""
    eps = sorted({r["epsilon"] for r in rows})
    pols = list(dict.fromkeys(r["policy"] for r in rows))
    by = {(r["policy"], r["epsilon"]): r for r in rows}
    out = ["| policy | " + " | ".join(f"ε={e:g}" for e in eps) + " | strategy |",
           "|---|" + "---|" * len(eps) + "---|"]
    for p in pols:
        cells = [f"{by[(p, e)]['expected_mse']:.3g}" for e in eps]
        out.append(f"| {p} | " + " | ".join(cells) + f" | {by[(p, eps[-1])]['strategy']} |")
    return "\n".join(out)


def plot(rows, path):
    """Expected MSE per query against θ, one line per ε (log–log), saved as a PNG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for e in sorted({r["epsilon"] for r in rows}):
        rr = [r for r in rows if r["epsilon"] == e and r["theta"] is not None]
        ax.plot([r["theta"] for r in rr], [r["expected_mse"] for r in rr], "o-", label=f"ε={e:g}")
        full = [r for r in rows if r["epsilon"] == e and r["theta"] is None]
        if full:
            ax.axhline(full[0]["expected_mse"], ls=":", lw=1, color=ax.lines[-1].get_color())
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("policy threshold θ (dotted: differential privacy)")
    ax.set_ylabel("expected MSE per query")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
