"""Budget allocation for sustainable publishing (Fang & Chang §7).

A publisher releases at steps ``1 … n``; step ``i`` costs ``εᵢ`` and Theorem 2 allows any
allocation whose every window of δ consecutive steps sums to at most ε. With weights ``wᵢ ≥ 0``
(``wᵢ = 0``: nothing is published at step ``i``) and the Laplace-type error ``wᵢ/εᵢ²``:

**Problem 1 (offline)** ``min Σ wᵢ/εᵢ²  s.t.  Σ_{i∈window} εᵢ ≤ ε,  εᵢ ≥ 0``. It is convex (the
objective is convex on ``ε > 0``, the constraints linear); :func:`allocate_offline` solves it
exactly with a primal–dual log-barrier Newton method (dense Newton systems, batched over many
instances at once), to a duality gap below ``1e-9`` of the optimum. At the optimum the KKT
conditions hold — ``2wᵢ/εᵢ³ = Σ_{windows ∋ i} λⱼ`` with ``λ ≥ 0`` supported on the tight windows —
which :func:`kkt_residual` checks independently (non-negative least squares). Problem 2 fixes a
prefix of the allocation (``fixed=``).

**Online (§7.2)**: at step ``i`` only ``w₁ … wᵢ`` are known; :func:`allocate_online` draws ``N``
futures from a known distribution, and for every candidate ``εᵢ`` on a grid (the paper's
``0.01, 0.02, …, 1``, times ε) averages the optimal error of Problem 2 over the futures, then
commits the best candidate. The averaged optimal value is convex in the candidate (the optimal
value of a convex problem is convex in its right-hand side), and its slope is
``−2wᵢ/εᵢ³ + Σ λⱼ`` over the windows holding step ``i`` (the multipliers of Problem 2), so a
binary search on the sign of the slope finds the same grid point as trying every candidate, in
``O(log)`` solves. A step with ``wᵢ = 0`` gets 0: spending there only tightens later windows.

**Baseline**: the equal split ``εᵢ = ε/δ`` (:func:`equal_split`).

Examples
--------
>>> import numpy as np
>>> from provsql_dp.policies.delta import allocate_offline, equal_split, total_error
>>> w = np.array([1, 0, 0, 1, 1, 0, 1, 1])
>>> e = allocate_offline(w, delta=3, epsilon=1.0)
>>> bool(np.all(np.convolve(e, np.ones(3), "valid") <= 1 + 1e-9))
True
>>> round(total_error(w, e), 3), round(total_error(w, equal_split(8, 3, 1.0)), 3)
(17.0, 45.0)
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import nnls

__all__ = ["allocate_offline", "allocate_online", "simulate_online", "equal_split",
           "total_error", "window_sums", "window_matrix", "kkt_residual", "bernoulli_future",
           "solve_batch", "candidate_grid"]


def _check(delta, epsilon):
    if int(delta) != delta or delta < 1:
        raise ValueError(f"delta must be a positive whole number of steps, got {delta!r}")
    e = float(epsilon)
    if not (e > 0 and math.isfinite(e)):
        raise ValueError(f"epsilon must be positive and finite, got {epsilon!r}")
    return int(delta), e


def window_matrix(n: int, delta: int) -> np.ndarray:
    """0/1 matrix of the windows of Theorem 2: one row per δ consecutive steps (a single row
    covering everything when ``n < δ``)."""
    n, delta = int(n), int(delta)
    if n <= 0:
        return np.zeros((0, 0))
    starts = np.arange(max(1, n - delta + 1))
    idx = np.arange(n)
    return ((idx[None, :] >= starts[:, None]) & (idx[None, :] < starts[:, None] + delta)).astype(float)


def window_sums(alloc, delta) -> np.ndarray:
    """Sum of the allocation over every window of δ consecutive steps."""
    a = np.asarray(alloc, dtype=float)
    return window_matrix(a.size, int(delta)) @ a


def equal_split(n: int, delta, epsilon) -> np.ndarray:
    """The baseline ``εᵢ = ε/δ`` at every step."""
    delta, eps = _check(delta, epsilon)
    return np.full(int(n), eps / delta)


def total_error(weights, alloc) -> float:
    """``Σ wᵢ/εᵢ²`` (a step with ``wᵢ = 0`` costs nothing; ``wᵢ > 0`` with ``εᵢ = 0`` is ∞)."""
    w = np.asarray(weights, dtype=float)
    a = np.asarray(alloc, dtype=float)
    pos = w > 0
    if np.any(a[pos] <= 0):
        return math.inf
    return float(np.sum(w[pos] / a[pos] ** 2))


# ---------------------------------------------------------------------------- the solver
def solve_batch(W, A, C, tol=1e-10, max_iter=200):
    """Solve ``min Σ wᵢ/xᵢ²  s.t.  A x ≤ c, x ≥ 0`` for a batch of weight vectors and capacities.

    Parameters
    ----------
    W : (B, n) array of non-negative weights.
    A : (J, n) 0/1 window matrix (shared by the batch).
    C : (B, J) capacities; a window of zero capacity forces its variables to 0.

    Returns
    -------
    X : (B, n) optimal allocations (exactly 0 where ``wᵢ = 0``).
    lam : (B, J) window multipliers.
    obj : (B,) optimal values (∞ when a positive weight is forced to 0).

    A primal–dual interior-point method (Mehrotra predictor–corrector), batched; it stops when
    the duality gap is below ``tol`` times the objective and the residuals vanish.
    """
    W = np.atleast_2d(np.asarray(W, dtype=float))
    C = np.atleast_2d(np.asarray(C, dtype=float))
    A = np.asarray(A, dtype=float)
    B, n = W.shape
    J = A.shape[0]
    X = np.zeros((B, n))
    lam = np.zeros((B, J))
    obj = np.zeros(B)
    if n == 0 or B == 0:
        return X, lam, obj
    # variables in a zero-capacity window are 0; a positive weight there is infinite error
    dead_w = (C <= 1e-15)
    dead = (dead_w.astype(float) @ A) > 0  # (B, n)
    live = ~dead & (W > 0)
    inf_rows = np.any(dead & (W > 0), axis=1)
    # active windows: those touching a live variable
    Wl = np.where(live, W, 0.0)
    Cs = np.where(dead_w, 1.0, C)  # dead windows are dropped below (no live vars inside)
    # the live windows of each row; rows with no live variable are trivial
    has = live.any(axis=1)
    rows = np.flatnonzero(has)
    if rows.size:
        Xr, lr = _barrier(Wl[rows], live[rows], A, Cs[rows], tol, max_iter)
        X[rows] = Xr
        lam[rows] = lr
    with np.errstate(divide="ignore"):
        obj = np.where(inf_rows, np.inf,
                       np.sum(np.where(live, W / np.where(live, X, 1.0) ** 2, 0.0), axis=1))
    return X, lam, obj


def _barrier(W, live, A, C, tol, max_iter):
    """Primal–dual interior point (Mehrotra predictor–corrector) on the live variables.

    KKT of ``min Σ wᵢ/xᵢ²  s.t.  Ax + s = c,  s, λ ≥ 0``: ``−2w/x³ + Aᵀλ = 0``, ``λ∘s = 0``.
    Each iteration solves one (batched) ``n × n`` system ``(D + Aᵀ diag(λ/s) A) Δx = r``; steps
    stay inside ``x, s, λ > 0`` by the fraction-to-boundary rule.
    """
    B, n = W.shape
    Lf = live.astype(float)
    wmask = (Lf @ A.T) > 0  # (B, J): windows touching a live variable
    Wm = wmask.astype(float)
    cnt = np.maximum(Lf @ A.T, 1.0)
    share = np.where(wmask, C / cnt, np.inf)
    x = 0.5 * np.min(np.where(A[None, :, :] > 0, share[:, :, None], np.inf), axis=1)
    x = np.where(live, x, 1.0)
    Am = A[None, :, :] * Lf[:, None, :] * Wm[:, :, None]  # (B, J, n)
    Wl = np.where(live, W, 0.0)
    Cm = np.where(wmask, C, 1.0)
    s = np.where(wmask, Cm - (Am @ x[:, :, None])[:, :, 0], 1.0)
    grad0 = 2.0 * Wl / x ** 3
    lam = np.where(wmask, np.max(np.where(Am > 0, grad0[:, None, :], 0.0), axis=2), 1.0)
    lam = np.maximum(lam, 1e-8)
    m_c = np.maximum(wmask.sum(1), 1)
    di = np.arange(n)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return _ipm_loop(W, live, Am, Wl, Cm, x, s, lam, wmask, m_c, di, tol, max_iter, n)


def _ipm_loop(W, live, Am, Wl, Cm, x, s, lam, wmask, m_c, di, tol, max_iter, n):
    B = W.shape[0]
    done = np.zeros(B, dtype=bool)
    stuck = np.zeros(B, dtype=bool)

    def max_step(v, dv):
        r = np.where(dv < 0, -v / np.where(dv < 0, dv, -1.0), np.inf)
        return np.min(r, axis=1)

    for _ in range(max_iter):
        AtL = (lam[:, None, :] @ Am)[:, 0, :]
        g = -2.0 * Wl / x ** 3
        r_d = np.where(live, g + AtL, 0.0)
        r_p = np.where(wmask, (Am @ x[:, :, None])[:, :, 0] + s - Cm, 0.0)
        mu = np.where(wmask, lam * s, 0.0).sum(1) / m_c
        obj = (Wl / x ** 2).sum(1)
        scale = np.maximum(np.abs(g).max(1), 1.0)
        done = ((mu * m_c <= tol * np.maximum(obj, 1e-300))
                & (np.abs(r_d).max(1) <= 1e-6 * scale)
                & (np.abs(r_p).max(1) <= 1e-12 * np.maximum(Cm.max(1), 1.0)))
        # rounding floor: the gap is far below what doubles resolve
        done |= mu * m_c <= 1e-3 * tol * np.maximum(obj, 1e-300)
        # numerical floor: a slack or multiplier at 0 leaves nothing to improve
        done |= np.any(wmask & ((s <= 1e-300) | (lam <= 1e-300)), axis=1) | stuck
        if np.all(done):
            break
        ix = np.flatnonzero(~done)  # work on the rows still running
        xa, sa, la, Wa, lv, wm = x[ix], s[ix], lam[ix], Wl[ix], live[ix], wmask[ix]
        Aa, rd, rp, mua = Am[ix], r_d[ix], r_p[ix], mu[ix]
        D = np.where(lv, 6.0 * Wa / xa ** 4, 1.0)
        ratio = np.where(wm, la / sa, 0.0)
        As = Aa * np.sqrt(ratio)[:, :, None]
        H = np.swapaxes(As, 1, 2) @ As
        H[:, di, di] += D
        try:
            Hinv = np.linalg.inv(H)
        except np.linalg.LinAlgError:
            Hinv = np.linalg.pinv(H)

        def solve(r_c):
            rhs = -rd - (((-r_c + la * rp) / sa)[:, None, :] @ Aa)[:, 0, :]
            rhs = np.where(lv, rhs, 0.0)
            dx = np.where(lv, (Hinv @ rhs[:, :, None])[:, :, 0], 0.0)
            Adx = (Aa @ dx[:, :, None])[:, :, 0]
            ds = np.where(wm, -rp - Adx, 0.0)
            dl = np.where(wm, (-r_c - la * ds) / sa, 0.0)
            return dx, ds, dl

        xpos = np.where(lv, xa, 1.0)
        # predictor
        dx, ds, dl = solve(np.where(wm, la * sa, 0.0))
        a_p = np.minimum(1.0, np.minimum(max_step(xpos, dx), max_step(sa, ds)))
        a_d = np.minimum(1.0, max_step(la, dl))
        mu_aff = np.where(wm, (la + a_d[:, None] * dl) * (sa + a_p[:, None] * ds), 0.0).sum(1) / m_c[ix]
        sigma = np.clip((mu_aff / np.maximum(mua, 1e-300)) ** 3, 0.0, 1.0)
        # corrector
        r_c = np.where(wm, la * sa + dl * ds - sigma[:, None] * mua[:, None], 0.0)
        dx, ds, dl = solve(r_c)
        a_p = np.minimum(1.0, 0.99 * np.minimum(max_step(xpos, dx), max_step(sa, ds)))
        a_d = np.minimum(1.0, 0.99 * max_step(la, dl))
        a = np.minimum(a_p, a_d)[:, None]  # one step length: the objective is non-linear
        xn = xa + a * dx
        sn = np.where(wm, sa + a * ds, 1.0)
        ln = np.where(wm, la + a * dl, 1.0)
        # a step that is not finite (an ill-conditioned system at the rounding floor) is not
        # taken: the row keeps its last iterate, which is feasible, and stops
        fin = (np.all(np.isfinite(xn), 1) & np.all(np.isfinite(sn), 1)
               & np.all(np.isfinite(ln), 1))
        x[ix] = np.where(fin[:, None], xn, xa)
        s[ix] = np.where(fin[:, None], sn, sa)
        lam[ix] = np.where(fin[:, None], ln, la)
        stuck[ix[~fin]] = True
    lam = np.where(wmask, lam, 0.0)
    return np.where(live, x, 0.0), lam


# ---------------------------------------------------------------------------- offline
def _capacities(n, delta, eps, fixed):
    A = window_matrix(n, delta)
    f = np.zeros(n)
    m = 0
    if fixed is not None:
        fx = np.asarray(fixed, dtype=float).ravel()
        m = fx.size
        if m > n:
            raise ValueError("more fixed values than steps")
        if np.any(fx < 0):
            raise ValueError("fixed budgets must be non-negative")
        f[:m] = fx
    C = eps - A @ f
    if np.any(C < -1e-12):
        raise ValueError("the fixed prefix already spends more than epsilon in some window")
    return A, np.maximum(C, 0.0), m


def allocate_offline(weights, delta, epsilon, fixed=None) -> np.ndarray:
    """The optimal allocation of Problem 1 (or Problem 2 with a ``fixed`` prefix).

    Parameters
    ----------
    weights : array_like
        ``w₁ … wₙ ≥ 0``.
    delta : int
        Window length (time steps).
    epsilon : float
        Budget of every window.
    fixed : array_like, optional
        ``ε'₁ … ε'ₘ``: the first ``m`` budgets, already committed (Problem 2).

    Returns
    -------
    numpy.ndarray
        ``ε₁ … εₙ`` (0 where ``wᵢ = 0`` outside the fixed prefix).
    """
    delta, eps = _check(delta, epsilon)
    w = np.asarray(weights, dtype=float).ravel()
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError("weights must be non-negative and finite")
    n = w.size
    A, C, m = _capacities(n, delta, eps, fixed)
    out = np.zeros(n)
    if m:
        out[:m] = np.asarray(fixed, dtype=float).ravel()
    if m < n:
        Af = A[:, m:]
        keep = Af.sum(1) > 0
        X, _, _ = solve_batch(w[None, m:], Af[keep], C[None, keep])
        out[m:] = X[0]
    return out


def kkt_residual(weights, alloc, delta, epsilon, active_tol=1e-7) -> dict:
    """Check the KKT conditions of Problem 1 at ``alloc``, independently of the solver.

    Multipliers ``λ ≥ 0`` on the tight windows are fitted by non-negative least squares to the
    stationarity equations ``2wᵢ/εᵢ³ = Σ_{j ∋ i} λⱼ`` (positive weights); for steps with
    ``wᵢ = 0`` and ``εᵢ = 0``, stationarity is the inequality ``Σ_{j ∋ i} λⱼ ≥ 0`` (always true).

    Returns a dict with ``feasibility`` (largest window excess), ``stationarity`` (relative
    residual) and ``multipliers``.
    """
    delta, eps = _check(delta, epsilon)
    w = np.asarray(weights, dtype=float)
    a = np.asarray(alloc, dtype=float)
    A = window_matrix(w.size, delta)
    sums = A @ a
    feas = float(max(0.0, np.max(sums - eps))) if sums.size else 0.0
    pos = w > 0
    tight = sums >= eps * (1 - active_tol)
    grad = 2.0 * w[pos] / a[pos] ** 3
    M = A[tight][:, pos].T
    if M.shape[1] == 0:
        lam_t = np.zeros(0)
        res = float(np.linalg.norm(grad))
    else:
        lam_t, res = nnls(M, grad)
    lam = np.zeros(A.shape[0])
    lam[tight] = lam_t
    return {"feasibility": feas, "stationarity": float(res / max(np.linalg.norm(grad), 1e-300)),
            "multipliers": lam, "negative": bool(np.any(a < -1e-12))}


# ---------------------------------------------------------------------------- online
def bernoulli_future(p: float):
    """A sampler of future weights: each ``wᵢ ∈ {0, 1}`` is 1 with probability ``p``,
    independently (the paper's §7.3 distribution)."""
    if not 0 <= p <= 1:
        raise ValueError("p must be a probability")

    def sample(rng, prefix, horizon, n_samples):
        return (rng.random((int(n_samples), int(horizon))) < p).astype(float)

    sample.p = p
    return sample


def candidate_grid(epsilon, step=0.01):
    """The paper's candidates ``0.01, 0.02, …, 1`` (scaled by ε)."""
    k = int(round(1 / step))
    return float(epsilon) * np.arange(1, k + 1) / k


def _evaluate(c, w_now, tail, future, delta, eps):
    """For each row ``r`` (a candidate ``c[r]`` with its own committed ``tail[r]`` — the last
    ``δ−1`` budgets — and futures ``future[r]`` of shape ``(N, h)``): the average over the futures
    of ``w_now[r]/c² + optimal future error`` and its derivative in ``c`` (the future part's
    derivative is the sum of the multipliers of the windows holding the current step)."""
    R, N, h = future.shape
    lt = tail.shape[1]
    A = window_matrix(lt + 1 + h, delta)
    Af = A[:, lt + 1:]
    keep = Af.sum(1) > 0
    Ak, Af = A[keep], Af[keep]
    f = np.concatenate([tail, c[:, None], np.zeros((R, h))], axis=1)  # (R, lt+1+h)
    cap = np.maximum(eps - f @ Ak.T, 0.0)  # (R, J)
    Wb = future.reshape(R * N, h)
    Cb = np.repeat(cap, N, axis=0)
    _, lam, obj = solve_batch(Wb, Af, Cb)
    holds = Ak[:, lt] > 0  # windows containing the current step
    slope_f = (lam[:, holds].sum(1)).reshape(R, N).mean(1)
    val_f = obj.reshape(R, N).mean(1)
    return w_now / c ** 2 + val_f, -2.0 * w_now / c ** 3 + slope_f


def _decide(w_now, tail, future, delta, eps, cands):
    """The grid candidate of least expected error, per row (binary search on the slope of the
    convex expected error, then the better of the two grid points around its minimum)."""
    R = w_now.size
    used = tail.sum(1)
    cap = eps - used
    ok = cands[None, :] <= cap[:, None] + 1e-12
    nk = ok.sum(1)  # candidates allowed per row
    out = np.where(nk > 0, 0.0, np.maximum(cap, 0.0))
    rows = np.flatnonzero((nk > 0) & (w_now > 0))
    if rows.size == 0:
        return out
    if future.shape[2] == 0:  # last step: spend what the window allows
        out[rows] = cands[nk[rows] - 1]
        return out
    lo = np.zeros(rows.size, dtype=np.int64)       # first index whose slope may be ≥ 0
    hi = nk[rows] - 1
    while True:
        act = lo < hi
        if not np.any(act):
            break
        mid = (lo + hi) // 2
        _, sl = _evaluate(cands[mid], w_now[rows], tail[rows], future[rows], delta, eps)
        sl = np.where(np.isfinite(sl), sl, np.inf)
        hi = np.where(act & (sl >= 0), mid, hi)
        lo = np.where(act & (sl < 0), mid + 1, lo)
    k = lo
    prev = np.maximum(k - 1, 0)
    v1, _ = _evaluate(cands[k], w_now[rows], tail[rows], future[rows], delta, eps)
    v0, _ = _evaluate(cands[prev], w_now[rows], tail[rows], future[rows], delta, eps)
    out[rows] = np.where(v0 < v1, cands[prev], cands[k])
    return out


def allocate_online(weights_so_far, committed, delta, epsilon, n, sampler, n_samples=1000,
                    candidates=None, rng=None) -> float:
    """The budget to commit at the current step (§7.2).

    Parameters
    ----------
    weights_so_far : array_like
        ``w₁ … wᵢ`` (the current step's weight last).
    committed : array_like
        ``ε₁ … ε_{i−1}``, already committed.
    delta, epsilon : the window rule.
    n : int
        The horizon (total number of steps).
    sampler : callable
        ``sampler(rng, prefix, horizon, n_samples)`` → ``(n_samples, horizon)`` future weights
        drawn conditionally on the prefix (e.g. :func:`bernoulli_future`).
    n_samples : int
        ``N`` (the paper uses 1,000).
    candidates : array_like, optional
        Increasing grid; default :func:`candidate_grid` (``0.01ε … ε``).
    rng : numpy.random.Generator, optional
        For the futures (simulation randomness, not privacy noise); default OS entropy.
    """
    delta, eps = _check(delta, epsilon)
    w = np.asarray(weights_so_far, dtype=float).ravel()
    past = np.asarray(committed, dtype=float).ravel()
    i = past.size
    if w.size != i + 1:
        raise ValueError("give the weights up to and including the current step, and the "
                         "budgets committed before it")
    from ...mechanisms.noise.sources import resolve_rng
    g = resolve_rng(rng)
    h = int(n) - i - 1
    fut = sampler(g, w, h, n_samples) if h > 0 else np.zeros((1, 0))
    fut = np.asarray(fut, dtype=float).reshape(1, -1, max(h, 0))
    tail = np.zeros((1, delta - 1))
    t = past[max(0, i - delta + 1):]
    if t.size:
        tail[0, delta - 1 - t.size:] = t
    cands = candidate_grid(eps) if candidates is None else np.sort(np.asarray(candidates, float))
    return float(_decide(w[-1:], tail, fut, delta, eps, cands)[0])


def simulate_online(weights, delta, epsilon, sampler, n_samples=1000, candidates=None,
                    rng=None) -> np.ndarray:
    """Run the online algorithm on weight sequences revealed one step at a time.

    ``weights`` is one sequence ``(n,)`` or a batch ``(R, n)`` (run in lockstep, vectorised).
    Returns the committed budgets, of the same shape.
    """
    delta, eps = _check(delta, epsilon)
    W = np.asarray(weights, dtype=float)
    single = W.ndim == 1
    W = np.atleast_2d(W)
    R, n = W.shape
    from ...mechanisms.noise.sources import resolve_rng
    g = resolve_rng(rng)
    cands = candidate_grid(eps) if candidates is None else np.sort(np.asarray(candidates, float))
    E = np.zeros((R, n + delta - 1))  # left-padded with δ−1 zeros
    for i in range(n):
        h = n - i - 1
        fut = np.stack([np.asarray(sampler(g, W[r, : i + 1], h, n_samples), dtype=float)
                        .reshape(n_samples, h) for r in range(R)]) if h > 0 \
            else np.zeros((R, 1, 0))
        tail = E[:, i:i + delta - 1]
        E[:, i + delta - 1] = _decide(W[:, i], tail, fut, delta, eps, cands)
    out = E[:, delta - 1:]
    return out[0] if single else out
