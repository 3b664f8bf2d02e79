"""Interval columns in plain DB-API rows: for tools that see only ``description`` and the rows.

``pandas.read_sql(sql, con)``, a CSV writer or any PEP 249 client sees only ``cursor.description``
and ``fetchall()`` — not ``cursor.privacy`` — so by default the interval of a private answer is
lost there. Opt in and every released value column ``<col>`` is followed by ``<col>_low`` and
``<col>_high`` (DOUBLE; NULL where the interval is unbounded on that side), named as
:meth:`Cursor.fetchdf` names them and holding the same numbers as
:meth:`provsql_dp.PrivacyInfo.intervals` at the coverage asked for:

* for a connection: ``provsql_dp.connect(..., interval_columns=True)`` (coverage 0.95) or
  ``interval_columns=0.9`` (that coverage); per cursor: ``cursor.interval_columns``;
* per statement: ``… WITH EPSILON ε OPTIONS (intervals = true | false | 0.9)``.

What each interval covers (the true count, the clamped SUM, or the noise only) is
``cursor.privacy.covers()`` — also on ``con.privacy`` for a caller that never sees the cursor.
The default is unchanged: no extra columns. ``fetchdf()`` and its siblings do not add the
columns a second time.

>>> import provsql_dp
>>> con = provsql_dp.connect(interval_columns=True)
>>> _ = con.execute("CREATE TABLE t(id INT PRIMARY KEY); INSERT INTO t SELECT range FROM range(100)")
>>> _ = con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 2")
>>> cur = con.execute("SELECT COUNT(*) AS n FROM t WITH EPSILON 1")
>>> [c[0] for c in cur.description]
['n', 'n_low', 'n_high']
>>> n, lo, hi = cur.fetchone()
>>> lo <= n <= hi, cur.privacy.covers()
(True, ['the true count'])
"""

from __future__ import annotations

from ...errors import ProgrammingError
from ...sql.expressions import option_text

__all__ = ["coverage_of", "option_coverage", "with_interval_columns"]


def coverage_of(value) -> float | None:
    """The coverage of an ``interval_columns`` setting: None (off), 0.95 for True, else the
    number itself, which must lie strictly between 0.5 and 1.

    >>> coverage_of(False), coverage_of(True), coverage_of(0.9)
    (None, 0.95, 0.9)
    """
    if value is None or value is False:
        return None
    if value is True:
        return 0.95
    try:
        p = float(value)
    except (TypeError, ValueError):
        p = float("nan")
    if isinstance(value, str) or not 0.5 < p < 1:
        raise ProgrammingError(
            f"interval_columns takes true, false or a coverage strictly between 0.5 and 1 (e.g. "
            f"0.9), got {value!r}")
    return p


def option_coverage(value, default: float | None) -> float | None:
    """The coverage of ``OPTIONS (intervals = …)`` (None: the cursor's ``default``)."""
    if value is None:
        return default
    if isinstance(value, bool):
        return (default or 0.95) if value else None
    p = float(value) if not isinstance(value, str) else float("nan")
    if not 0.5 < p < 1:
        raise ProgrammingError("option intervals takes true, false or a coverage strictly "
                               "between 0.5 and 1 such as 0.9 (columns <col>_low, <col>_high "
                               f"after each value), got {option_text(value)}")
    return p


def with_interval_columns(desc: list, rows: list[tuple], info, coverage: float):
    """``(desc, rows)`` with ``<col>_low``, ``<col>_high`` after each released value column
    (the last ``len(info.interval_names())`` columns of each row)."""
    pairs = info.interval_names()
    k = len(pairs)
    first = len(desc) - k
    out_desc = list(desc[:first])
    public = set(info.public_columns)  # GROUP BY keys among the values: no interval
    for j, (lo, hi) in enumerate(pairs):
        out_desc += [desc[first + j]] + ([] if j in public else [(lo, "DOUBLE"), (hi, "DOUBLE")])
    out_rows = []
    for row, ivs in zip(rows, info.intervals(coverage)):
        out = list(row[:first])
        for j in range(k):
            lo, hi = ivs[j]
            out += [row[first + j]] + ([] if j in public else [
                None if lo is None else float(lo), None if hi is None else float(hi)])
        out_rows.append(tuple(out))
    return out_desc, out_rows
