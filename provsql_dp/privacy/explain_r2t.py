"""``EXPLAIN PRIVACY`` of a query released with ``OPTIONS (mechanism = 'r2t', …)``.

Everything an analyst sees is computed from the statement and its OPTIONS alone: the thresholds
(``L`` of them, at most one truncation LP each, chosen from ``max_contribution`` and β by
:func:`~provsql_dp.mechanisms.r2t.race.threshold_count`), ε per threshold, and R2T's ex-ante
error (:meth:`~provsql_dp.mechanisms.r2t.race.R2TRelease.error_bound`): with probability ≥ the
confidence the release is at least ``Q(I) − α`` for every instance in which no participant
contributes more than ``max_contribution`` (``α``, the bound at the top threshold), and at least
``Q(I) − c·max(τ₁, b·DS)`` when the largest contribution is ``DS`` (``c`` and the base ``b``
stated in the note); it exceeds the true answer with probability ≤ β. ``DS`` depends on the data
and is not published: the **curator** also gets the private shape — participants, monomials, the
largest contribution and the bound at it, and how many thresholds are decided without an LP.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE e(src INT, dst INT); INSERT INTO e VALUES (1,2),(2,3),(1,3)")
>>> _ = con.execute("PROTECT TABLE e BY (src, dst) AS node")
>>> row = con.execute("EXPLAIN PRIVACY SELECT COUNT(*) FROM e a JOIN e b ON a.dst = b.src "
...                   "WITH EPSILON 1 OPTIONS (mechanism = 'r2t', max_contribution = 16)").fetchall()[0]
>>> row[0], row[3], "2 thresholds" in row[-1], row[8]
('r2t', 1, True, 'r2t')
"""

from __future__ import annotations

from ..mechanisms.r2t import race as r2t
from ..mechanisms.r2t.truncation import R2TModel
from ..errors import CaptureTooLarge
from ..provenance.backends import engine_of
from ..provenance.capture import capture, max_rows_of
from .r2t_release import with_declared_bound

__all__ = ["r2t_row", "PUBLIC_NOTE"]

PUBLIC_NOTE = (
    "R2T (Dong et al., SIGMOD 2022): one truncation LP per threshold τ = b, b², …, b^L = "
    "max_contribution (L chosen from max_contribution and β alone, to minimise the error bound), "
    "each released with ε/L and shifted down; the race solves only "
    "the thresholds that can win, and a threshold at or above the largest contribution needs no "
    "LP. Each LP has one row per participant contributing more than τ and one column per set "
    "of such participants that some monomial touches (monomials touching the same set merged), "
    "is split into its independent blocks, and is tried against a dual bound before HiGHS's "
    "interior point method runs; it stops after the time limit (each group's whole release "
    "after the connection's release_time_limit, default 300 s) and then the data-independent fallback is released. The error grows like b·L·ln(L/β)·DS/ε with DS the largest contribution of one "
    "participant: declare the smallest public bound on one participant's contribution"
)


def r2t_row(con, decision, eps, confidence: float):
    """The ``EXPLAIN PRIVACY`` row of an R2T release (route r2t of
    :data:`provsql_dp.privacy.routing.ROUTES`)."""
    kwargs = with_declared_bound(decision.plan, decision.bounds, decision.kwargs)
    gs = kwargs.get("max_contribution", r2t.DEFAULT_MAX_CONTRIBUTION)
    beta = kwargs.get("beta", r2t.DEFAULT_BETA)
    n_groups = len(decision.groups)
    e = 1.0 if eps is None else float(eps)
    per_group = e / max(1, n_groups)  # no group: nothing is released
    rel = r2t.fallback(per_group, max_contribution=gs, beta=beta, rng=None,
                       lp_gap=kwargs.get("lp_gap", r2t.DEFAULT_LP_GAP))  # plan only: public
    alpha = rel.error_bound(confidence)
    taus = rel.params["thresholds"]
    base = taus[1] / taus[0] if len(taus) > 1 else taus[0]
    at = "ε = 1" if eps is None else "this ε"
    note = (f"{PUBLIC_NOTE}. {len(taus)} thresholds (at most {len(taus)} LPs per group), "
            f"base b = {base:.4g}, lowest τ₁ = {taus[0]:.4g}, "
            f"ε/L = {rel.params['eps_each']:.4g} each at {at}"
            + (f" over {n_groups} groups" if n_groups > 1 else "")
            + f"; α: with probability ≥ confidence the release is ≥ Q(I) − α whenever no "
            f"participant contributes more than max_contribution = {gs:g}, and ≥ Q(I) − "
            f"c·max(τ₁, b·DS) with c = {rel.error_factor(confidence):.4g} when the largest "
            f"contribution is DS (private: not stated); it exceeds the true answer with "
            f"probability ≤ β = {beta:g}")
    if rel.params["lp_gap"]:
        note += (f"; lp_gap γ = {rel.params['lp_gap']:g}: each LP may be solved within γ·τ below "
                 "its optimum (certified), the noise is calibrated to (1 + γ)·τ and α includes γ·τ")
    if getattr(con, "role", "curator") == "curator":
        note += _private_sizes(con, decision, rel, confidence)
    return ("r2t", None, f"race over {len(taus)} thresholds", n_groups,
            None if eps is None else str(eps), None, float(alpha), float(confidence), note)


def _private_sizes(con, decision, rel, confidence) -> str:
    """The curator's part of the note: the LP sizes of this data (reads protected rows)."""
    try:
        kr = capture(engine_of(con), decision.plan, decision.bounds, max_rows=max_rows_of(con),
                     columns=())
    except CaptureTooLarge as e:
        return f". Curator only: {e} — a release would read no data and return the fallback"
    m = R2TModel(kr)
    taus = rel.params["thresholds"]
    free = sum(1 for t in taus if t >= m.max_load)
    rows, cols = m.shape
    return (f". Curator only (private sizes): tuples={m.n_tuples}, monomials={len(m.t_of_m)}, "
            f"participants={m.n_participants}, largest contribution={m.max_load:g} (α at it: "
            f"{rel.error_bound(confidence, m.max_load):.4g}), "
            f"plain LP {rows}×{cols}, thresholds without LP={free}")
