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
centred; an AVG (which releases a count anyway) always is, on the Laplace path.

>>> centre((2500, 6500)), centred_sensitivity(1, (2500, 6500))
(4500.0, 2000.0)
>>> centred_sensitivity(2, (-1, 3))
4.0
>>> sum_alone_centred_is_worse((2500, 6500))
True
"""

from __future__ import annotations

__all__ = ["centre", "centred_sensitivity", "centre_avg_sums", "sum_alone_centred_is_worse"]


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
    (marked in that part's decision, ``memo["centre"]``), or None: only an AVG whose SUM and
    COUNT both take the Laplace route (decided from the declarations, never the data)."""
    out = []
    for col in plan.columns:
        ds = [decisions[i] for i in col.parts]
        m = None
        if (col.kind == "avg" and all(d.path == "laplace" for d in ds) and ds[0].bounds is not None
                and float(ds[0].bounds[1]) > float(ds[0].bounds[0])):
            m = centre(ds[0].bounds)
            ds[0].memo["centre"] = m
        out.append(m)
    return out


def sum_alone_centred_is_worse(bounds) -> bool:
    """Whether a lone bounded SUM released as ``S' + m·ĉ`` (best ε split) has a variance at least
    the direct release's — always true (the module docstring's arithmetic), checked numerically."""
    a = (float(bounds[1]) - float(bounds[0])) / 2.0
    b = abs(centre(bounds))
    return (a ** (2 / 3) + b ** (2 / 3)) ** 3 >= (a + b) ** 2 * (1 - 1e-12)
