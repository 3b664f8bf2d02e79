"""The ``CREATE POLICY`` statement that recreates a stored Blowfish policy (for ``.dump``).

The catalog keeps a policy as a JSON spec (the graph, each column's domain, bounded or not, the
source bins); :func:`create_policy_sql` writes it back in the grammar's words. A spec that has
no exact SQL spelling (a bin width such as 1/3 that is not a whole fraction of its range) gives
``None``, and ``.dump`` then copies the catalog row itself.

>>> spec = ('{"graph":{"kind":"DELTA","params":[0.02,"EUCLIDEAN"]},"domains":[{"low":"0",'
...         '"high":"1","width":"1/100"}],"bounded":false,"sources":[0]}')
>>> create_policy_sql("near_x", "main", "checkins", ["x"], spec)
'CREATE POLICY near_x ON checkins (x) AS DELTA 0.02 METRIC EUCLIDEAN DOMAIN [0, 1) WIDTH 0.01 UNBOUNDED SOURCES (0);'
"""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction

from ...policies.blowfish.sql import ColumnDomain

__all__ = ["create_policy_sql", "decimal_text", "quote_ident"]


def quote_ident(name: str) -> str:
    """An identifier, quoted only when it has to be.

    >>> quote_ident("age"), quote_ident("Odd Name")
    ('age', '"Odd Name"')
    """
    if name.isidentifier() and name.lower() == name:
        return name
    return '"' + name.replace('"', '""') + '"'


def decimal_text(f) -> str | None:
    """``f`` as an exact decimal literal, or None when it has none.

    >>> decimal_text(Fraction(3, 10)), decimal_text(Fraction(1, 3)), decimal_text(Fraction(-5))
    ('0.3', None, '-5')
    """
    f = Fraction(f) if not isinstance(f, Fraction) else f
    d = f.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    if d != 1:
        return None
    text = format(Decimal(f.numerator) / Decimal(f.denominator), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


class _NoSpelling(Exception):
    pass


def _value(v) -> str:
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    text = decimal_text(Fraction(str(v)))
    if text is None:
        raise _NoSpelling
    return text


def _number(x) -> str:
    text = decimal_text(Fraction(str(x)))
    if text is None:
        raise _NoSpelling
    return text


def _graph(g: dict) -> str:
    kind = g["kind"]
    if kind == "COMPOSE":
        return "(" + ", ".join(_graph(p) for p in g["parts"]) + ")"
    params = g.get("params") or []
    if kind == "PARTITION":
        if "width" in params:
            return f"PARTITION BY WIDTH {_number(params['width'])}"
        return "PARTITION BY (" + ", ".join(
            "(" + ", ".join(_value(v) for v in grp) + ")" for grp in params.get("groups", [])) + ")"
    if kind == "DELTA":
        delta, *metric = params
        return f"DELTA {_number(delta)}" + (f" METRIC {metric[0]}" if metric else "")
    return " ".join([kind] + [_number(x) for x in params])


def _domain(d: ColumnDomain) -> str:
    if d.values is not None:
        return "(" + ", ".join(_value(v) for v in d.values) + ")"
    head = f"[{_number(d.low)}, {_number(d.high)})"
    width = decimal_text(d.width)
    if width is not None:
        return f"{head} WIDTH {width}"
    bins = (d.high - d.low) / d.width
    if bins.denominator != 1:
        raise _NoSpelling
    return f"{head} BINS {bins.numerator}"


def create_policy_sql(name: str, schema: str, table: str, columns, spec: str) -> str | None:
    """The statement declaring this policy again, or None when it has no exact SQL spelling."""
    d = json.loads(spec)
    domains = [ColumnDomain.from_dict(x) for x in d["domains"]]
    target = quote_ident(table) if schema == "main" else f"{quote_ident(schema)}.{quote_ident(table)}"
    try:
        text = (f"CREATE POLICY {quote_ident(name)} ON {target} "
                f"({', '.join(quote_ident(c) for c in columns)}) AS {_graph(d['graph'])} "
                f"DOMAIN {', '.join(_domain(x) for x in domains)} "
                f"{'BOUNDED' if d['bounded'] else 'UNBOUNDED'}")
        sources = d.get("sources")
        if sources is not None:
            labels = [x.labels() for x in domains]
            items = []
            for flat in sources:
                idx = [flat] if len(domains) == 1 else [flat // domains[1].k, flat % domains[1].k]
                vals = [_value(lab[i]) for lab, i in zip(labels, idx)]
                items.append(vals[0] if len(vals) == 1 else "(" + ", ".join(vals) + ")")
            text += f" SOURCES ({', '.join(items)})"
        if d.get("known_sql"):  # publicly known counts, as declared (He et al. §8)
            text += f" KNOWN COUNTS {d['known_sql']}"
    except _NoSpelling:
        return None
    return text + ";"
