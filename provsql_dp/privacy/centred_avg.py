"""A bounded AVG released from its *centred* sum: ``AVG = Σ(x − m) / COUNT + m``, ``m = (L + U)/2``.

An AVG of values clamped to the declared bounds ``[L, U]`` is released (on the Laplace path:
one bounded tuple per participant, :mod:`.fast_path`) as two noisy parts, each at half the
column's ε as before: the number ``c`` of the rows it averages, and — instead of their SUM
``S = Σ clamp(x)`` — their centred sum ``S' = Σ (clamp(x) − m) = S − m·c``.

**Privacy.** Adding or removing one participant adds or removes at most ``k`` rows
(``rows_per_owner``), each moving ``S'`` by ``|clamp(x) − m| ≤ (U − L)/2``: the sensitivity of
``S'`` is ``k·(U − L)/2 ≤ k·(|L| + |U|)/2 ≤ k·max(|L|, |U|)`` (that of ``S``), equal only when
``L = −U`` (then ``m = 0`` and nothing changes). ``c`` keeps its sensitivity ``k``. Both are released with the same exact discrete Laplace noise on the public
grid of their sensitivity (:func:`provsql_dp.mechanisms.global_sensitivity.laplace.release_many`)
at the same ε as before; ``m`` is public (from the declarations), so ``S'/max(ĉ, 1) + m``
clamped to ``[L, U]`` is post-processing. The ε charged is unchanged.

**Accuracy.** With ``n`` rows and true mean ``μ``, the error of the ratio is about
``noise(S')/n + (μ − m)·noise(c)/n``: the first term shrinks by ``max(|L|, |U|) / ((U − L)/2)``
(3.25× for body mass in [2500, 6500]) and the second by ``μ / (μ − m)`` (the count's noise
multiplies the centred mean, near 0, instead of the mean).

**Interval.** With probability ≥ ``q = (1 + p)/2`` each, ``S'`` and ``c`` lie within their
exact bounds ``b_S``, ``b_c``; on that event (probability ≥ p, union bound) the true mean
``S'/c + m`` lies between the extreme values of ``a/b + m`` over the box
``[S' ± b_S] × [ĉ ± b_c]`` (``a/b`` is monotone in each argument for ``b > 0``, so its extremes
are at the corners), cut to ``[L, U]`` (:class:`.release_info.AvgRelease`).

**SUM stays uncentred.** ``SUM = S' + m·c`` would need a noisy count too. With ε split
``ε₁ + ε₂ = ε`` and Laplace noise, its variance is ``2(a²/ε₁² + b²/ε₂²)`` with
``a = (U − L)/2``, ``b = |m|``, at best ``2(a^{2/3} + b^{2/3})³/ε²`` — never below the direct
release's ``2 max(|L|, |U|)²/ε² = 2(a + b)²/ε²``, since ``(a^{2/3} + b^{2/3})^{3/2} ≥ a + b``
(equal when ``a = 0`` or ``b = 0``). The public rule is therefore: a bounded SUM alone is never
centred; an AVG (which releases a count anyway) always is, on the Laplace path — and on the
single-owner route (:func:`centred_decision`: there the centred SUM is a signed single-owner
SUM, its own argument), unless ``OPTIONS (split = …)`` is given (a signed SUM takes none).

>>> centre((2500, 6500)), centred_sensitivity(1, (2500, 6500))
(4500.0, 2000.0)
>>> centred_sensitivity(2, (-1, 3))
4.0
>>> sum_alone_centred_is_worse((2500, 6500))
True
"""

from __future__ import annotations

from dataclasses import is_dataclass, replace

from sqlglot import exp

from ..errors import ProgrammingError

__all__ = ["column_bounds", "centre", "centred_decision", "centred_sensitivity", "centre_avg_sums",
           "sum_alone_centred_is_worse"]


def centre(bounds) -> float:
    """The public centre ``(L + U)/2`` of declared bounds."""
    lower, upper = bounds
    return (float(lower) + float(upper)) / 2.0


def centred_sensitivity(rows_per_owner, bounds) -> float:
    """``k·(U − L)/2``: how far one participant (``k`` rows) moves ``Σ (clamp(x) − m)``."""
    lower, upper = bounds
    return float(rows_per_owner) * (float(upper) - float(lower)) / 2.0


def centre_avg_sums(plan, decisions) -> list:
    """Per column of the ``Aggregates`` plan, the centre its AVG's SUM part is released around
    (marked in that part's decision, ``memo["centre"]``), or None: an AVG whose SUM and COUNT
    both take the Laplace route, or both the single-owner route (its SUM part's decision is then
    replaced in ``decisions`` by :func:`centred_decision`) — decided from the declarations and
    the options, never the data. Calling it again on the same decisions changes nothing."""
    out = []
    for col in plan.columns:
        ds = [decisions[i] for i in col.parts]
        m = ds[0].memo.get("centre") if col.kind == "avg" else None
        if m is None and (col.kind == "avg" and ds[0].bounds is not None
                          and float(ds[0].bounds[1]) > float(ds[0].bounds[0])):
            if all(d.path == "laplace" for d in ds):
                m = centre(ds[0].bounds)
                ds[0].memo["centre"] = m
            elif all(d.path == "single-owner" for d in ds) and "eps1" not in ds[0].kwargs:
                m = centre(ds[0].bounds)
                decisions[col.parts[0]] = centred_decision(ds[0], m)
        out.append(m)
    return out


def centred_decision(d, m: float):
    """The single-owner decision of an AVG's SUM part released as ``Σ (clamp(x) − m)``: the
    weight ``x − m`` clamped to ``[L − m, U − m]`` (the same as ``clamp(x) − m``; NaN and ±∞ still
    add nothing), a *signed* SUM — two nonnegative parts, as every signed single-owner SUM.

    **Privacy.** It is a single-owner SUM of a public function of each tuple (``m`` is from the
    declarations), released by the unchanged signed route: the argument of
    :mod:`provsql_dp.mechanisms.recursive.single_owner` (or, with groups a participant may span,
    :mod:`provsql_dp.mechanisms.recursive.single_owner_groups`) applies as to any signed SUM;
    ``S'/max(ĉ, 1) + m`` clamped to ``[L, U]`` is post-processing. The ε is unchanged.

    **Accuracy.** A participant's norm is ``Σ |clamp(x) − m| ≤ k·(U − L)/2`` instead of
    ``Σ clamp(x) ≤ k·max(|L|, |U|)``: ``Δ̂`` (and the truncation's reach) shrinks with it, at
    the price of the two parts (each at half the SUM's ε, or one ℓ1 bound over both across
    groups). Measured in ``benchmarks/centred_avg.py`` (the ``recursive`` variants).

    >>> from types import SimpleNamespace as NS
    >>> from provsql_dp.sql.plan import Aggregate, Scan
    >>> p = Aggregate(Scan("t", "main", ("x",), ("v0",), ("x",)), "sum", exp.column("v0"),
    ...               bounds=(2500.0, 6500.0))
    >>> c = centred_decision(NS(plan=p, bounds=(2500.0, 6500.0), signed=False, memo={}), 4500.0)
    >>> c.bounds, c.signed, c.memo["centre"], c.plan.weight.sql()
    ((-2000.0, 2000.0), True, 4500.0, 'v0 - CAST(4500.0 AS DOUBLE)')
    """
    lo, hi = (float(b) - m for b in d.bounds)
    weight = exp.Sub(this=d.plan.weight.copy(),
                     expression=exp.cast(exp.Literal.number(repr(float(m))), "DOUBLE"))
    plan = replace(d.plan, weight=weight, bounds=(lo, hi))
    fields = dict(plan=plan, bounds=(lo, hi), signed=True, memo={**d.memo, "centre": m})
    return replace(d, **fields) if is_dataclass(d) else type(d)(**{**vars(d), **fields})


def sum_alone_centred_is_worse(bounds) -> bool:
    """Whether a lone bounded SUM released as ``S' + m·ĉ`` (best ε split) has a variance at least
    the direct release's — always true (the module docstring's arithmetic), checked numerically."""
    a = (float(bounds[1]) - float(bounds[0])) / 2.0
    b = abs(centre(bounds))
    return (a ** (2 / 3) + b ** (2 / 3)) ** 3 >= (a + b) ** 2 * (1 - 1e-12)


def column_bounds(plan, given) -> list:
    """Each column's bounds — ``given`` (the statement's ``OPTIONS (lower, upper)``) or its
    SUM part's declared ones — refusing, before any charge, an AVG that has none.

    >>> from types import SimpleNamespace as N
    >>> plan = N(parts=[N(bounds=None)], columns=[N(kind="avg", label="a", parts=(0,))])
    >>> column_bounds(plan, None)
    Traceback (most recent call last):
    ...
    provsql_dp.errors.ProgrammingError: the AVG in column 'a' needs bounds on its values: declare them (SET BOUNDS ON table (column) BETWEEN a AND b) or give OPTIONS (lower = …, upper = …)
    """
    out = [given or plan.parts[c.parts[0]].bounds for c in plan.columns]
    for col, bounds in zip(plan.columns, out):
        if col.kind == "avg" and bounds is None:
            what = (col.label if col.label.upper().startswith("AVG(")
                    else f"the AVG in column {col.label!r}")
            raise ProgrammingError(
                f"{what} needs bounds on its values: declare them (SET BOUNDS ON table "
                "(column) BETWEEN a AND b) or give OPTIONS (lower = …, upper = …)")
    return out
