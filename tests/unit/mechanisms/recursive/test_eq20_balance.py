"""eq. 20 certified by the smoothed Newton path and a balanced dual (``_eq20_balance``): its
bounds always bracket the plain LP's value, a certified value is the plain LP's (and an
independent PuLP/CBC model's), a degenerate optimum (the clique's ``g = 1/3``) is certified, and
``Solver.x_real`` gives the same value and argmin with the certificate on or off."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import breadth
from hypothesis import strategies as hs
from recursive_testkit import make_kr
from test_eq20_dual import close, kr_of, pulp_eq20
from test_recursive_certify import random_triangles

from provsql_dp.mechanisms.recursive import _eq20_balance, _lp
from provsql_dp.mechanisms.recursive._structure import Structure
from provsql_dp.mechanisms.recursive._x_barrier import AnchoredBarrier
from provsql_dp.mechanisms.recursive._x_cuts import Eq20Cuts


def _plain(st, dh):
    return _lp.Solver(st, cuts=False).x_real(dh)[0]


def _model(st, dh):
    cand = st.deg > dh
    if not cand.any():
        return None
    model = Eq20Cuts(st, cand, dh)
    return model if _eq20_balance.applicable(model) else None


def _near_clique(seed, n=9, missing=3):
    """Node triangles of K_n minus a few edges: most nodes distinct (no twin quotient), and a
    degenerate eq.-20 optimum next to ``g = 1/3``."""
    rng = np.random.default_rng(seed)
    adj = ~np.eye(n, dtype=bool)
    for _ in range(missing):
        a, b = rng.choice(n, 2, replace=False)
        adj[a, b] = adj[b, a] = False
    tris = [[[a, b, c]] for a in range(n) for b in range(a + 1, n) for c in range(b + 1, n)
            if adj[a, b] and adj[a, c] and adj[b, c]]
    return make_kr(tris, n_participants=n)


@breadth(8, 40, hs.integers(0, 3), hs.integers(0, 10_000), hs.floats(0.05, 0.95))
def test_bounds_bracket_the_plain_lp_and_a_certified_value_is_it(kind, seed, frac):
    kr = _near_clique(seed) if kind == 3 else kr_of(kind, seed)
    st = Structure(kr)
    if st.n == 0:
        return
    dh = frac * float(st.deg.max())
    model = _model(st, dh)
    if model is None:
        return
    out = _eq20_balance.certify(model, AnchoredBarrier.of(model))
    ref = _plain(st, dh)
    if hasattr(model, "balance_gap"):  # the bounds of the last try, with the constant
        lower, upper = (v + model.const for v in model.balance_gap)
        assert lower <= ref + 1e-7 * max(1.0, abs(ref)), (lower, ref)
        assert ref <= upper + 1e-7 * max(1.0, abs(ref)), (upper, ref)
    if out is not None:
        value, g = out
        assert close(value, ref), (value, ref)
        assert close(value, pulp_eq20(kr, dh)), (value, kr)
        assert np.all((g >= 0) & (g <= 1)) and not g[~model.cand].any()


@pytest.mark.parametrize("seed", range(4))
def test_the_degenerate_clique_optimum_is_certified(seed):
    """K_9 minus edges below the smallest degree: most triangles on their kink at the optimum;
    the certificate decides (no Kelley round) and equals the plain LP and PuLP."""
    kr = _near_clique(100 + seed)
    st = Structure(kr)
    dh = 0.6 * float(st.deg.min())
    model = _model(st, dh)
    out = _eq20_balance.certify(model, AnchoredBarrier.of(model))
    assert out is not None, model.balance_gap
    assert model.rounds == 0
    ref = _plain(st, dh)
    assert close(out[0], ref) and close(out[0], pulp_eq20(kr, dh)), (out[0], ref)


@breadth(5, 25, hs.integers(0, 10_000), hs.floats(0.1, 0.9), hs.booleans())
def test_x_real_is_the_same_with_the_certificate_on_or_off(seed, frac, clique):
    rng = np.random.default_rng(seed)
    kr = _near_clique(seed) if clique else random_triangles(rng, n=int(rng.integers(6, 12)))
    dh = frac * float(Structure(kr).deg.max())
    on, off = _lp.Solver(Structure(kr)), _lp.Solver(Structure(kr))
    off.balance = False
    v_on, j_on = on.x_real(dh)
    v_off, j_off = off.x_real(dh)
    assert close(v_on, v_off), (v_on, v_off)
    assert close(v_on, _plain(Structure(kr), dh))


def test_no_certificate_falls_back_to_the_rounds(monkeypatch):
    """A path cut short certifies nothing: x_real's Kelley rounds answer, the same value."""
    kr = _near_clique(7)
    st = Structure(kr)
    dh = 0.6 * float(st.deg.min())
    monkeypatch.setattr(_eq20_balance, "MAX_STEPS", 1)
    model = _model(st, dh)
    assert _eq20_balance.certify(model, AnchoredBarrier.of(model)) is None
    s = _lp.Solver(Structure(kr))
    value, _ = s.x_real(dh)
    assert s._xcuts is not None and s._xcuts.rounds > 0
    assert close(value, _plain(st, dh))


@breadth(5, 25, hs.integers(0, 10_000), hs.floats(0.2, 0.9), hs.sampled_from([-1, 1, 2]))
def test_anchored_bounds_bracket_the_plain_h(seed, frac, shift):
    """The balanced dual at a Newton path's end bounds H(j) from both sides (any j next to the
    argmin); when they meet, the value is the plain LP's H(j)."""
    kr = _near_clique(seed, n=8, missing=int(seed % 4))
    st = Structure(kr)
    dh = frac * float(st.deg.max())
    model = _model(st, dh)
    if model is None:
        return
    bar = AnchoredBarrier.of(model)
    if _eq20_balance.certify(model, bar) is None:
        return
    j = int(round(float(bar.mult @ bar.g_star))) + shift
    if not 0 < j < float(bar.mult.sum()):
        return
    g, _, _ = bar.start(float(j))
    lower, upper = _eq20_balance.anchored(bar, float(j), g, 1e-3, -np.inf, np.inf)
    ref = _lp.Solver(st, cuts=False).h(j)
    assert lower <= ref + 1e-7 * max(1.0, abs(ref)), (lower, ref)
    assert ref <= upper + 1e-7 * max(1.0, abs(ref)), (upper, ref)
    if upper - lower <= 1e-9 * max(1.0, abs(upper)):
        assert close(upper, ref), (upper, ref)


@breadth(4, 20, hs.integers(0, 10_000), hs.floats(0.1, 0.9))
def test_x_with_both_certificates_is_the_plain_x(seed, frac):
    from provsql_dp.mechanisms.recursive import efficient as rm

    params = rm.resolve_params(0.5, "node", theta=1.0, beta=None, mu=None, eps1=None, eps2=None)
    st = Structure(_near_clique(seed, n=9, missing=int(seed % 5)))
    dh = frac * float(st.deg.max())
    x_c, _ = rm._Run(st, params, cuts=True).x(dh)
    x_p, _ = rm._Run(st, params, cuts=False).x(dh)
    assert close(x_c, x_p), (x_c, x_p)
