"""How the shell shows results: a result set in one of the output :data:`MODES`, one value,
one error message.

>>> print(render("table", ["name", "n"], [("a", 1.5), (None, 10)]))
+------+-----+
| name |   n |
+------+-----+
| a    | 1.5 |
| NULL |  10 |
+------+-----+
>>> print(render("csv", ["name", "n"], [("a", 1.5), (None, 10)]))
name,n
a,1.5
,10
"""

from __future__ import annotations

import csv
import datetime as _dt
import decimal
import html
import io
import json
from fractions import Fraction

from ...privacy.ledger import format_eps

__all__ = ["MODES", "render", "cell", "visible", "fmt_float", "first_line"]

MODES = ("table", "box", "csv", "json", "markdown", "line", "list", "html")


def cell(v) -> str:
    """A value as shown in table and markdown modes."""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return fmt_float(v)
    if isinstance(v, Fraction):
        return format_eps(v)
    return str(v)


#: control characters (C0 but the newline, DEL, C1) as the display modes show them: a value is
#: data, never a command to the terminal — an analyst's statement in the audit log carried
#: ``\r`` and ANSI escapes that erased or hid rows of the curator's ``.audit`` (red team
#: h94attack, finding 3)
_CONTROLS = {c: (f"\\x{c:02x}" if c not in (9, 13) else ("\\t" if c == 9 else "\\r"))
             for c in (*range(32), *range(0x7f, 0xa0)) if c != 10}


def visible(v) -> str:
    """:func:`cell`, its control characters escaped (the display modes).

    >>> visible("a\\x1b[2K\\rb\\tc\\u009b"), visible(None)
    ('a\\\\x1b[2K\\\\rb\\\\tc\\\\x9b', 'NULL')
    """
    return cell(v).translate(_CONTROLS)


def fmt_float(v: float) -> str:
    """A float with at most four decimals (no trailing zeros), or six significant digits when
    very large or small."""
    if v != v or v in (float("inf"), float("-inf")):
        return str(v)
    if v == 0 or 1e-4 <= abs(v) < 1e15:
        s = f"{v:.4f}".rstrip("0").rstrip(".")
        return "0" if s in ("-0", "") else s
    return f"{v:.6g}"


def _json_value(v):
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if v == v and abs(v) != float("inf") else str(v)
    if isinstance(v, (decimal.Decimal, Fraction)):
        return float(v)
    if isinstance(v, (_dt.date, _dt.datetime, _dt.time)):
        return v.isoformat()
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _json_value(x) for k, x in v.items()}
    return str(v)


def _is_numeric(v) -> bool:
    return isinstance(v, (int, float, decimal.Decimal, Fraction)) and not isinstance(v, bool)


#: the modes drawn for a person to read, where ``.maxrows`` applies (as duckdb's duckbox)
DISPLAY_MODES = ("table", "box", "markdown")


def render(mode: str, names: list[str], rows: list[tuple], *, headers: bool = True,
           maxrows: int = 0) -> str:
    """Render a result in one of :data:`MODES` (without a trailing newline); ``headers=False``
    leaves out the column names (``.headers off``) in the modes that have a header line.

    ``maxrows`` > 0 (``.maxrows``): in the display modes (:data:`DISPLAY_MODES`) a result with
    more rows shows its first and last rows around a ``…`` row, and a line saying how many there
    are; the other modes are for programs and always give every row.

    >>> print(render("table", ["x"], [(i,) for i in range(10)], maxrows=4))
    +---+
    | x |
    +---+
    | 0 |
    | 1 |
    | … |
    | 8 |
    | 9 |
    +---+
    10 rows (4 shown: .maxrows 0 shows every row)

    >>> print(render("markdown", ["a", "b"], [(1, "x")]))
    | a | b |
    |--:|---|
    | 1 | x |
    >>> print(render("line", ["a", "bb"], [(1, "x"), (2, None)]))
     a = 1
    bb = x
    <BLANKLINE>
     a = 2
    bb = NULL
    >>> print(render("list", ["a", "b"], [(1, "x")], headers=False))
    1|x
    """
    if mode == "line":
        width = max((len(n) for n in names), default=0)
        return "\n\n".join("\n".join(f"{n.rjust(width)} = {visible(v)}" for n, v in zip(names, r))
                           for r in rows)
    if mode == "list":
        out = ["|".join(names)] if headers else []
        out += ["|".join(visible(v) for v in r) for r in rows]
        return "\n".join(out)
    if mode == "html":
        out = []
        if headers:
            out.append("<tr>" + "".join(f"<th>{html.escape(n)}</th>" for n in names) + "</tr>")
        out += ["<tr>" + "".join(f"<td>{html.escape(visible(v))}</td>" for v in r) + "</tr>" for r in rows]
        return "\n".join(out)
    if mode == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        if headers:
            w.writerow(names)
        for r in rows:
            w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else cell(v)) for v in r])
        return buf.getvalue().rstrip("\n")
    if mode == "json":
        objs = [json.dumps(dict(zip(names, (_json_value(v) for v in r))), ensure_ascii=False) for r in rows]
        return "[" + ",\n".join(objs) + "]"
    total, cut = len(rows), None
    if maxrows > 0 and total > maxrows:
        cut = (maxrows + 1) // 2
        rows = list(rows[:cut]) + list(rows[total - (maxrows - cut):])
    cells = [[visible(v).replace("\n", "\\n") for v in r] for r in rows]
    numeric = [any(_is_numeric(r[i]) for r in rows) and all(_is_numeric(r[i]) or r[i] is None for r in rows)
               for i in range(len(names))]
    widths = [max([len(n)] + [len(c[i]) for c in cells]) for i, n in enumerate(names)]
    if cut is not None:
        cells.insert(cut, ["…"] * len(names))
        shown = _framed(mode, names, cells, numeric, widths, headers)
        return shown + f"\n{total:,} rows ({maxrows:,} shown: .maxrows 0 shows every row)"
    return _framed(mode, names, cells, numeric, widths, headers)


def _framed(mode: str, names, cells, numeric, widths, headers: bool) -> str:
    """The table, box and markdown drawings of cells already formatted."""

    def line(values, pad_num=True):
        parts = []
        for i, v in enumerate(values):
            parts.append(v.rjust(widths[i]) if (numeric[i] and pad_num) else v.ljust(widths[i]))
        return parts

    if mode == "markdown":
        out = ["| " + " | ".join(line(names, False)) + " |",
               "|" + "|".join(("-" * (w + 1) + ":") if numeric[i] else "-" * (w + 2)
                              for i, w in enumerate(widths)) + "|"]
        out += ["| " + " | ".join(line(c)) + " |" for c in cells]
        return "\n".join(out if headers else out[2:])
    if mode == "box":
        def rule(left, mid, right):
            return left + mid.join("─" * (w + 2) for w in widths) + right

        out = [rule("┌", "┬", "┐")]
        if headers:
            out += ["│ " + " │ ".join(line(names, False)) + " │", rule("├", "┼", "┤")]
        out += ["│ " + " │ ".join(line(c)) + " │" for c in cells]
        out.append(rule("└", "┴", "┘"))
        return "\n".join(out)
    sep = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    out = [sep, "| " + " | ".join(line(names, False)) + " |", sep] if headers else [sep]
    out += ["| " + " | ".join(line(c)) + " |" for c in cells]
    if cells or not headers:
        out.append(sep)
    return "\n".join(out)


def first_line(e: BaseException) -> str:
    """An error's first non-blank line (the shell prints errors on one line)."""
    text = str(e).strip()
    for ln in text.splitlines():
        if ln.strip():
            return ln.strip()
    return type(e).__name__
