"""The arrays of a K-relation that the recursive mechanism's LPs are built on, and their
twin-class quotient.

Private: computes functions of the private data; reached only through
:mod:`provsql_dp.mechanisms.recursive.efficient` and :mod:`provsql_dp.mechanisms.recursive._lp`. Why the quotient is
exact is proved in :mod:`provsql_dp.mechanisms.recursive._symmetry`, which finds the classes.
"""

from __future__ import annotations

import time

import numpy as np

from ._symmetry import _positions, twin_classes

__all__ = ["Structure", "quotient", "reduced", "ls_tilde"]

#: the twin-class quotient is used only if it may merge at least this fraction of the tuples
#: (measured: on edge-privacy triangles twins merge columns but almost no rows, and the exact
#: verification then costs more than the LPs save)
_MIN_GAIN = 0.05

#: ``_load_view`` of a structure that is its own load view: a marker, not ``self`` — a
#: reference to itself would be a cycle, and a structure's arrays (gigabytes on a 6 M-row join)
#: would then outlive its K-relation until the cyclic collector happened to run (issue 29)
_SELF = object()


def _sorted_distinct(key: np.ndarray) -> np.ndarray:
    """``np.unique(key)`` by one sort, skipped when ``key`` is already sorted (entries grouped
    by tuple with sorted participants, as capture produces them)."""
    if len(key) > 1 and not bool(np.all(key[1:] >= key[:-1])):
        key = np.sort(key)
    return key[np.concatenate([[True], key[1:] != key[:-1]])] if len(key) else key


def _sorted_rows(mat: np.ndarray) -> np.ndarray:
    """Each row of a small-width integer matrix sorted (a sorting network for widths 2 and 3,
    several times faster than ``np.sort(axis=1)``; the input is returned when already sorted)."""
    k = mat.shape[1]
    if k < 2 or bool(np.all(mat[:, 1:] >= mat[:, :-1])):
        return mat
    if k == 2:
        return np.column_stack([mat.min(axis=1), mat.max(axis=1)])
    if k == 3:
        a, b, c = mat[:, 0], mat[:, 1], mat[:, 2]
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        top = np.maximum(hi, c)
        mid = np.minimum(hi, c)
        return np.column_stack([np.minimum(lo, mid), np.maximum(lo, mid), top])
    return np.sort(mat, axis=1)


class Structure:
    """The arrays of a K-relation that the LPs need, over the participants that occur.

    Tuples of weight 0 are dropped; tuples annotated ``True`` (an empty monomial) contribute the
    constant :attr:`const_true` to every H. Participants are re-indexed densely over those that
    occur (``n`` of them); ``n_absent`` counts the participants of ``P`` that occur nowhere.
    """

    def __init__(self, kr, weights: np.ndarray | None = None):
        w = np.asarray(kr.weights if weights is None else weights, dtype=np.float64)
        if w.shape != (kr.n_tuples,):
            raise ValueError("one weight per tuple is required")
        if not np.all(np.isfinite(w)):
            raise ValueError("weights must be finite")
        if np.any(w < 0):
            raise ValueError(
                "the recursive mechanism needs nonnegative weights q(t); for a signed SUM use "
                "recursive.release_signed, which releases the positive and negative parts "
                "separately"
            )
        tuple_ptr = np.asarray(kr.tuple_ptr, dtype=np.int64)
        mono_ptr = np.asarray(kr.mono_ptr, dtype=np.int64)
        mono_part = np.asarray(kr.mono_part, dtype=np.int64)
        if self._fixed_arity(kr, w, tuple_ptr, mono_ptr, mono_part):
            return
        n_tuples = len(w)
        n_mono = len(mono_ptr) - 1
        mono_size = np.diff(mono_ptr)
        mono_tuple = np.repeat(np.arange(n_tuples), np.diff(tuple_ptr))
        # a tuple with an empty monomial is True (absorption leaves it alone)
        has_empty = np.zeros(n_tuples, dtype=bool)
        if n_mono:
            has_empty[mono_tuple[mono_size == 0]] = True
        positive = w > 0
        self.const_true = float(w[has_empty & positive].sum())
        keep_t = positive & ~has_empty
        keep_m = keep_t[mono_tuple]
        ent_mono_all = np.repeat(np.arange(n_mono), mono_size)
        keep_e = keep_m[ent_mono_all]

        self.n_total = int(kr.n_participants)
        part = mono_part[keep_e]
        # dense re-indexing by counting (np.unique hashes/argsorts: minutes at 10^7 entries)
        present = np.bincount(part, minlength=int(kr.n_participants)) > 0 if len(part) else (
            np.zeros(int(kr.n_participants), dtype=bool))
        occurring = np.flatnonzero(present)
        ent_part = (np.cumsum(present) - 1)[part]
        sizes_k = mono_size[keep_m]
        if len(sizes_k) and int(sizes_k.min()) == int(sizes_k.max()) > 1:
            # participants sorted inside each monomial (order is immaterial): entries then
            # coincide with the sorted incidence pairs, which spares later binary searches
            k = int(sizes_k[0])
            ent_part = np.sort(ent_part.reshape(-1, k), axis=1).ravel()
        self.occurring = occurring  # indices into kr.participant_list
        self.n = int(len(occurring))
        self.n_absent = self.n_total - self.n

        t_new = np.cumsum(keep_t) - 1
        self.q = w[keep_t]
        self.n_tuples = int(len(self.q))
        self.mono_tuple = t_new[mono_tuple[keep_m]].astype(np.int64)
        sizes = mono_size[keep_m]
        self.mono_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.n_mono = int(len(sizes))
        self.ent_part = ent_part.astype(np.int64)
        self.ent_mono = np.repeat(np.arange(self.n_mono), sizes)
        self.tuple_mono_ptr = np.concatenate(
            [[0], np.cumsum(np.bincount(self.mono_tuple, minlength=self.n_tuples))]
        ).astype(np.int64)
        # distinct (tuple, participant) pairs: p occurs in the annotation of t
        pair = _sorted_distinct(self.mono_tuple[self.ent_mono] * max(self.n, 1) + self.ent_part)
        self.var_tuple = pair // max(self.n, 1)
        self.var_part = pair % max(self.n, 1)
        self.deg = np.bincount(self.var_part, weights=self.q[self.var_tuple], minlength=self.n)
        self.total = float(self.q.sum())
        self.order = np.argsort(-self.deg, kind="stable")  # participants by decreasing deg_q
        self._unit_coefficients()

    def _fixed_arity(self, kr, w, tuple_ptr, mono_ptr, mono_part) -> bool:
        """The common case built directly: every tuple one monomial of ``k ≥ 1`` distinct
        participants and a positive weight (counts and subgraph counts). Returns False, having
        set nothing, when the input is not of that form. The arrays equal those of the general
        path: entries sorted within each monomial, incidence pairs = entries."""
        n_t = len(w)
        if n_t == 0 or len(tuple_ptr) != n_t + 1 or len(mono_ptr) != n_t + 1:
            return False
        k = int(mono_ptr[1] - mono_ptr[0])
        if k == 0 or len(mono_part) != k * n_t or not bool(w.min() > 0):
            return False
        if not (np.array_equal(tuple_ptr, np.arange(n_t + 1))
                and np.array_equal(mono_ptr, np.arange(n_t + 1) * k)):
            return False
        mat = _sorted_rows(mono_part.reshape(n_t, k))
        if k > 1 and not bool(np.all(mat[:, 1:] != mat[:, :-1])):
            return False  # a repeated participant: the general path dedupes the pairs
        n_all = int(kr.n_participants)
        present = np.zeros(n_all, dtype=bool)
        present[mat.ravel()] = True
        occurring = np.flatnonzero(present)
        if len(occurring) < n_all:  # dense re-indexing keeps the order (rows stay sorted)
            mat = (np.cumsum(present) - 1)[mat]
        self.const_true = 0.0
        self.n_total = n_all
        self.occurring = occurring
        self.n = int(len(occurring))
        self.n_absent = self.n_total - self.n
        self.q = w.copy()
        self.n_tuples = n_t
        self.mono_tuple = np.arange(n_t, dtype=np.int64)
        self.mono_ptr = np.arange(n_t + 1, dtype=np.int64) * k
        self.n_mono = n_t
        self.ent_part = np.ascontiguousarray(mat, dtype=np.int64).ravel()
        self.ent_mono = np.repeat(self.mono_tuple, k)
        self.tuple_mono_ptr = np.arange(n_t + 1, dtype=np.int64)
        self.var_tuple = self.ent_mono
        self.var_part = self.ent_part
        self.deg = np.bincount(self.var_part, weights=np.repeat(self.q, k), minlength=self.n)
        self.total = float(self.q.sum())
        self.order = np.argsort(-self.deg, kind="stable")
        self._unit_coefficients()
        return True

    def _unit_coefficients(self) -> None:
        """Coefficients of an unreduced structure (a quotient sets its own, see _symmetry)."""
        self.mult = np.ones(self.n)  # participants per LP column
        self.ent_coef = np.ones(len(self.ent_part))  # coefficient of g_p in a monomial row
        self.var_coef = np.ones(len(self.var_tuple))  # load coefficient per unit of q
        self.mass = float(self.n)  # Σ mult: the withdrawable mass

    def load_view(self) -> "Structure":
        """The structure of the *loads* that G and J bound, as its own :class:`Structure`.

        ``load_p(f) = Σ_{t ∋ p} q_t φ_{t,p}(f)`` where ``φ_{t,p}`` is the relaxation of the
        monomials of ``R(t)`` that contain ``p``. When ``p`` is in every monomial of ``R(t)`` (all
        conjunctive annotations, e.g. subgraph counting) ``φ_{t,p} = φ_t`` and this is exactly
        eq. 19. With disjunctions, eq. 19 as printed is **not** a recursive sequence: a
        participant added with ``f(p) = 0`` keeps a positive load through monomials without
        it (counterexample: ``R(t₁) = a ∨ b``, ``R(t₂) = a ∨ c`` with weights ½ gives
        ``G₁(R) = 2/3 > G₁(R − a) = 1/2``), so Lemma 1 could fail. With ``φ_{t,p}`` both the
        recursive property (a new participant at 0 has load 0; other loads are unchanged) and the
        2-bounding proof of Theorem 4 go through (φ_t(f) − φ_t(f') ≤ Σ_p (f_p − f'_p)·[φ_{t,p}(f)
        > 0], and truncated linearity holds for every sub-DNF), and the values are never larger.

        Units of the view: each tuple with at least one participant in all its monomials (its
        load incidence: those participants), plus one unit per other (tuple, participant) pair
        with the monomials containing that participant.
        """
        cached = getattr(self, "_load_view", None)
        if cached is not None:  # _SELF: no weak reference needed, and no cycle to collect
            return self if cached is _SELF else cached
        key = self.mono_tuple[self.ent_mono] * max(self.n, 1) + self.ent_part
        pair_of_ent = _positions(self.var_tuple * max(self.n, 1) + self.var_part, key)
        pair_count = np.bincount(pair_of_ent, minlength=len(self.var_tuple))
        in_all = pair_count == np.diff(self.tuple_mono_ptr)[self.var_tuple]
        if in_all.all():
            self._load_view = _SELF
            return self
        v = Structure.__new__(Structure)
        t_unit = np.bincount(self.var_tuple[in_all], minlength=self.n_tuples) > 0
        n_tu = int(t_unit.sum())
        others = np.flatnonzero(~in_all)
        # unit ids: tuple units first (in tuple order), then one per pair in `others`
        unit_of_tuple = np.cumsum(t_unit) - 1
        unit_of_pair = np.full(len(self.var_tuple), -1)
        unit_of_pair[others] = n_tu + np.arange(len(others))
        # monomial copies: all monomials of tuple units, then monomials containing p per pair
        m_tu = np.flatnonzero(t_unit[self.mono_tuple])
        e_sel = ~in_all[pair_of_ent]
        m_pair = self.ent_mono[e_sel]  # one copy per (pair, monomial containing p)
        u_pair = unit_of_pair[pair_of_ent[e_sel]]
        order = np.lexsort((m_pair, u_pair))
        m_pair, u_pair = m_pair[order], u_pair[order]
        mono_src = np.concatenate([m_tu, m_pair])
        v.mono_tuple = np.concatenate([unit_of_tuple[self.mono_tuple[m_tu]], u_pair])
        sizes = np.diff(self.mono_ptr)[mono_src]
        v.mono_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        v.n_mono = int(len(mono_src))
        starts = self.mono_ptr[mono_src]
        v.ent_part = self.ent_part[np.repeat(starts - v.mono_ptr[:-1], sizes) + np.arange(v.mono_ptr[-1])]
        v.ent_mono = np.repeat(np.arange(v.n_mono), sizes)
        v.q = np.concatenate([self.q[t_unit], self.q[self.var_tuple[others]]])
        v.n_tuples = int(len(v.q))
        v.tuple_mono_ptr = np.concatenate(
            [[0], np.cumsum(np.bincount(v.mono_tuple, minlength=v.n_tuples))]
        ).astype(np.int64)
        inc_unit = np.concatenate([unit_of_tuple[self.var_tuple[in_all]], unit_of_pair[others]])
        inc_part = np.concatenate([self.var_part[in_all], self.var_part[others]])
        o = np.lexsort((inc_part, inc_unit))
        v.var_tuple, v.var_part = inc_unit[o], inc_part[o]
        v.n, v.n_total, v.n_absent = self.n, self.n_total, self.n_absent
        v.occurring, v.const_true = self.occurring, 0.0
        v.deg = np.bincount(v.var_part, weights=v.q[v.var_tuple], minlength=v.n)
        v.total = float(v.q.sum())
        v.order = np.argsort(-v.deg, kind="stable")
        v._unit_coefficients()
        v._load_view = _SELF
        self._load_view = v
        return v

    # ------------------------------------------------------------------ closed forms
    def h_closed(self, j: float) -> float | None:
        """H at withdrawn mass ``j`` when no LP is needed, else None."""
        if j <= 0:
            return self.const_true + self.total
        if j >= self.n:
            return self.const_true
        return None

    def g_closed(self, j: float) -> float | None:
        if j <= 0:
            return 2.0 * float(self.deg.max()) if self.n else 0.0
        if j >= self.n:
            return 0.0
        return None

    def greedy_max_loads(self, k_max: int) -> np.ndarray:
        """``M[k]``: the largest load after fully withdrawing ``k`` participants greedily.

        Each step withdraws the participant of largest current load. Withdrawing ``k`` whole
        participants is a feasible ``g`` with ``Σ g = k``, so ``G_{|P|−j} ≤ 2 min_{k≤j} M[k]``:
        a free upper bound that settles most of the Δ search without an LP.
        """
        k_max = max(0, min(int(k_max), self.n))
        loads = self.deg.copy()
        out = np.empty(k_max + 1)
        out[0] = loads.max() if self.n else 0.0
        if k_max == 0:
            return out
        if not hasattr(self, "_part_ent"):
            self._part_ent = np.argsort(self.ent_part, kind="stable")
            self._part_ptr = np.concatenate([[0], np.cumsum(np.bincount(self.ent_part, minlength=self.n))])
            self._tuple_var_ptr = np.concatenate(
                [[0], np.cumsum(np.bincount(self.var_tuple, minlength=self.n_tuples))]
            )
        mono_alive = np.ones(self.n_mono, dtype=bool)
        alive_count = np.diff(self.tuple_mono_ptr).copy()
        for k in range(1, k_max + 1):
            p = int(np.argmax(loads))
            ents = self._part_ent[self._part_ptr[p] : self._part_ptr[p + 1]]
            monos = self.ent_mono[ents]
            monos = monos[mono_alive[monos]]
            mono_alive[monos] = False
            ts = self.mono_tuple[monos]
            np.subtract.at(alive_count, ts, 1)
            dead = np.unique(ts[alive_count[ts] == 0])
            if len(dead):
                lo = self._tuple_var_ptr[dead]
                hi = self._tuple_var_ptr[dead + 1]
                lens = hi - lo
                sel = np.repeat(lo - (np.cumsum(lens) - lens), lens) + np.arange(int(lens.sum()))
                np.subtract.at(loads, self.var_part[sel], self.q[self.var_tuple[sel]])
            loads[p] = 0.0
            out[k] = loads.max()
        return out

    # ------------------------------------------------------------------ helpers
    def top(self, k: int) -> np.ndarray:
        mask = np.zeros(self.n, dtype=bool)
        mask[self.order[: max(0, min(k, self.n))]] = True
        return mask

    def phi(self, g: np.ndarray) -> np.ndarray:
        """φ_t for every tuple, given the withdrawn mass ``g`` of every participant."""
        k = self._layout()[0]
        if k:  # one monomial of k entries per tuple: the same sums, in the same order
            x = (g[self.ent_part] * self.ent_coef).reshape(-1, k)
            s = x[:, 0].copy()
            for j in range(1, k):
                s += x[:, j]
            np.subtract(1.0, s, out=s)  # 0.0 + a + b … = a + b …, up to the sign of a zero
            return np.maximum(s, 0.0, out=s)  # one monomial per tuple: φ_t is its value
        s = np.bincount(self.ent_mono, weights=g[self.ent_part] * self.ent_coef, minlength=self.n_mono)
        val = np.maximum(0.0, 1.0 - s)
        if self.n_mono == self.n_tuples and np.array_equal(  # one monomial per tuple (a twin
                self.tuple_mono_ptr, np.arange(self.n_tuples + 1)):  # quotient of triangles:
            return val  # 1–3 entries each): the max over one is itself, bit for bit
        return np.maximum.reduceat(val, self.tuple_mono_ptr[:-1]) if self.n_tuples else val

    def loads(self, g: np.ndarray) -> np.ndarray:
        k, qc = self._layout()
        ph = self.phi(g)
        return np.bincount(self.var_part, weights=qc * (np.repeat(ph, k) if k else ph[self.var_tuple]),
                           minlength=self.n)

    def _layout(self) -> tuple[int, np.ndarray]:
        """``(k, q_t·coef per incidence pair)``, built once per structure (``phi``/``loads`` run
        dozens of times on millions of tuples). ``k > 0`` when every tuple is one monomial of
        ``k`` entries and its incidence pairs are those entries (:meth:`_fixed_arity`'s layout,
        and quotients of it): then φ is a row sum and no ``reduceat`` or gather is needed. The
        values are bit-identical to the general formulas (same products, same summation order)."""
        key = (self.q, self.var_tuple, self.var_coef, self.var_part, self.ent_part,
               self.ent_mono, self.tuple_mono_ptr, self.mono_ptr)  # the arrays themselves
        cached = getattr(self, "_layout_cache", None)
        if cached is not None and all(a is b for a, b in zip(cached[0], key)):
            return cached[1]
        qc = self.q[self.var_tuple] * self.var_coef
        k, nt = 0, self.n_tuples
        if nt and self.n_mono == nt and len(self.ent_part) % nt == 0:
            k = len(self.ent_part) // nt
            ar = np.arange(nt + 1, dtype=np.int64)
            fixed = (k > 0 and np.array_equal(self.tuple_mono_ptr, ar)
                     and np.array_equal(self.mono_ptr, ar * k)
                     and np.array_equal(self.var_part, self.ent_part)
                     and np.array_equal(self.var_tuple, np.repeat(ar[:-1], k)))
            k = k if fixed else 0
        self._layout_cache = (key, (k, qc))
        return k, qc


def quotient(st, cls: np.ndarray):
    """The quotient :class:`Structure` of ``st`` under twin classes ``cls`` (see module doc).

    Works for any structure, including a load view (whose units' load incidence need not be
    every participant of the unit). Tuples of equal labelled form are merged exactly (no hashing).
    """
    k_cls = int(cls.max()) + 1 if len(cls) else 0
    size = np.bincount(cls, minlength=k_cls).astype(np.float64)
    n_mono_t = np.diff(st.tuple_mono_ptr)
    msize = np.diff(st.mono_ptr)
    fixed = st.n_tuples > 0 and bool(np.all(n_mono_t == 1)) and len(np.unique(msize)) == 1
    if fixed:
        k = int(msize[0])
        lab = np.sort(cls[st.ent_part].reshape(-1, k), axis=1)
        if k_cls ** k < 2 ** 62:
            code = np.zeros(len(lab), dtype=np.int64)
            for c in range(k):
                code = code * k_cls + lab[:, c]
            _, first, form = np.unique(code, return_index=True, return_inverse=True)
        else:
            _, first, form = np.unique(lab, axis=0, return_index=True, return_inverse=True)
        form = form.ravel()
        rep_lab = lab[first]  # one labelled monomial per form
        n_form = len(first)
        # entries: run-length of the sorted class labels of each form's monomial
        flat = rep_lab.ravel()
        row = np.repeat(np.arange(n_form), k)
        new = np.ones(len(flat), dtype=bool)
        if k > 1:
            new.reshape(n_form, k)[:, 1:] = rep_lab[:, 1:] != rep_lab[:, :-1]
        grp = np.cumsum(new) - 1
        ent_part = flat[new]
        ent_coef = np.bincount(grp, minlength=int(new.sum())).astype(np.float64)
        ent_form = row[new]
        mono_tuple = np.arange(n_form)
        mono_ptr = np.concatenate([[0], np.cumsum(np.bincount(ent_form, minlength=n_form))])
    else:
        forms: dict = {}
        form = np.empty(st.n_tuples, dtype=np.int64)
        for t in range(st.n_tuples):
            ms = set()
            for m in range(st.tuple_mono_ptr[t], st.tuple_mono_ptr[t + 1]):
                ms.add(tuple(sorted(cls[st.ent_part[st.mono_ptr[m] : st.mono_ptr[m + 1]]].tolist())))
            key = tuple(sorted(ms))
            form[t] = forms.setdefault(key, len(forms))
        n_form = len(forms)
        mt, ep, ec = [], [], []
        ptr = [0]
        for f, key in enumerate(forms):
            for mono in key:
                labels, counts = np.unique(mono, return_counts=True)
                mt.append(f)
                ep.extend(labels.tolist())
                ec.extend(counts.tolist())
                ptr.append(len(ep))
        mono_tuple = np.asarray(mt, dtype=np.int64)
        ent_part = np.asarray(ep, dtype=np.int64)
        ent_coef = np.asarray(ec, dtype=np.float64)
        mono_ptr = np.asarray(ptr, dtype=np.int64)
    v = Structure.__new__(Structure)
    v.n = k_cls
    v.n_total, v.n_absent, v.const_true = st.n_total, st.n_absent, st.const_true
    v.occurring = None
    v.q = np.bincount(form, weights=st.q, minlength=n_form)
    v.n_tuples = n_form
    v.mono_tuple = mono_tuple.astype(np.int64)
    v.mono_ptr = mono_ptr.astype(np.int64)
    v.n_mono = len(v.mono_ptr) - 1
    v.ent_part = ent_part.astype(np.int64)
    v.ent_mono = np.repeat(np.arange(v.n_mono), np.diff(v.mono_ptr))
    v.ent_coef = ent_coef
    v.tuple_mono_ptr = np.concatenate(
        [[0], np.cumsum(np.bincount(v.mono_tuple, minlength=n_form))]
    ).astype(np.int64)
    # load incidence: (form, class) with Σ_{u∈L} q_u k_u(C) / (|C| Q_L)
    if fixed and len(st.var_part) == len(st.ent_part):
        # one monomial per tuple with distinct members: every member is in the load incidence,
        # so Σ_{u∈L} q_u k_u(C) = Q_L k(C) and the coefficient is k(C)/|C| (no grouping needed)
        v.var_tuple = v.ent_mono
        v.var_part = v.ent_part
        v.var_coef = v.ent_coef / size[v.ent_part]
    else:
        pk = form[st.var_tuple] * max(k_cls, 1) + cls[st.var_part]
        uk, inv = np.unique(pk, return_inverse=True)
        mass = np.bincount(inv.ravel(), weights=st.q[st.var_tuple], minlength=len(uk))
        v.var_tuple = uk // max(k_cls, 1)
        v.var_part = uk % max(k_cls, 1)
        v.var_coef = mass / (size[v.var_part] * v.q[v.var_tuple])
    v.mult = size
    v.deg = np.bincount(v.var_part, weights=v.q[v.var_tuple] * v.var_coef, minlength=v.n)
    v.total = float(v.q.sum())
    v.order = np.argsort(-v.deg, kind="stable")
    v.mass = float(size.sum())
    return v


def reduced(st: Structure, symmetry: bool = True) -> Structure:
    """The structure the LPs are built on: the twin-class quotient of ``st`` when it is smaller.

    Exact by LP symmetry and convexity (see :mod:`provsql_dp.mechanisms.recursive._symmetry`); cached on
    ``st``. Its load view is the quotient of ``st.load_view()`` under the same classes.
    """
    if not symmetry or st.n == 0:
        return st
    if not hasattr(st, "_reduced"):
        t0 = time.perf_counter()
        cls = twin_classes(st, min_gain=_MIN_GAIN)
        if int(cls.max()) + 1 == st.n:
            st._reduced = _SELF  # not st: no reference cycle (see _SELF)
        else:
            red = quotient(st, cls)
            view = st.load_view()
            if view is st:
                red._load_view = _SELF
            else:
                red._load_view = quotient(view, cls)
                red._load_view._load_view = _SELF
            red.classes = cls
            st._reduced = red
        st._reduce_seconds = time.perf_counter() - t0
    return st if st._reduced is _SELF else st._reduced


def ls_tilde(st: Structure) -> float:
    """LS̃ (Def. 9): the largest drop of q when one participant withdraws."""
    if st.n_tuples == 0:
        return 0.0
    key = st.mono_tuple[st.ent_mono] * max(st.n, 1) + st.ent_part
    uniq, counts = np.unique(key, return_counts=True)
    t = uniq // max(st.n, 1)
    p = uniq % max(st.n, 1)
    n_mono = np.diff(st.tuple_mono_ptr)
    in_all = counts == n_mono[t]
    drop = np.bincount(p[in_all], weights=st.q[t[in_all]], minlength=st.n)
    return float(drop.max()) if st.n else 0.0
