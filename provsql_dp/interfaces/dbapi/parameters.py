"""Binding parameters into a private query before it is planned.

A private query (``… WITH EPSILON ε``, or any aggregate over protected tables once ``SET PRIVACY
EPSILON`` gave a default) accepts parameters like any other statement: ``?`` (PEP 249's qmark),
``$1``, ``$2`` … (positions, from a sequence) or ``$name`` / ``:name`` (from a mapping). They are
bound *before* the query is planned, by replacing each placeholder of the parsed tree with a
literal node — a string parameter becomes one string literal, however many quotes it holds, so
a parameter can never add SQL. The planner then sees exactly what it would see had the values
been typed into the query: the privacy analysis does not depend on how a value arrived.

Accepted values: ``None``, ``bool``, ``int``, finite ``float``, finite ``decimal.Decimal``,
``str``, ``datetime.date`` / ``datetime.datetime`` / ``datetime.time`` (numpy scalars of these
kinds too), ``datetime.timedelta`` (a constant INTERVAL), and a list or tuple of them as the list
of ``x = ANY(?)`` or ``x <> ALL(?)``
(PostgreSQL's idioms, which psycopg users write); anything else is a
:class:`~provsql_dp.errors.ProgrammingError` naming the parameter. ``x = ANY(list)`` — a list
parameter, or a list written ``[1, 2]`` / ``ARRAY[1, 2]`` — is planned as ``x IN (1, 2)``, its
equal (``ANY`` of an empty list: false), and ``x <> ALL(list)`` as ``x NOT IN (1, 2)`` (``ALL`` of
an empty list: true).

>>> from provsql_dp.sql import dialect as d
>>> tree = d.parse_one("SELECT COUNT(*) FROM t WHERE city = ? AND age > ? WITH EPSILON 1")
>>> bind(tree, ["O'Hare", 30]).this.sql(dialect="duckdb")
"SELECT COUNT(*) FROM t WHERE city = 'O''Hare' AND age > 30"
>>> bind(d.parse_one("SELECT COUNT(*) FROM t WHERE c = :c"), {"c": None}).sql(dialect="duckdb")
'SELECT COUNT(*) FROM t WHERE c = NULL'
>>> bind(tree, [1])
Traceback (most recent call last):
...
provsql_dp.errors.ProgrammingError: the statement has 2 parameter placeholders, but 1 parameter was given
>>> bind(d.parse_one("SELECT COUNT(*) FROM t WHERE c = ANY(?)"), [["a", None]]).sql(dialect="duckdb")
"SELECT COUNT(*) FROM t WHERE c IN ('a', NULL)"
>>> bind(d.parse_one("SELECT COUNT(*) FROM t WHERE c > ?"), [[1, 2]])
Traceback (most recent call last):
...
provsql_dp.errors.ProgrammingError: parameter $1 is a list: a list is bound only as the list of x = ANY(?) (planned as x IN (…)) or of x <> ALL(?) (x NOT IN (…))
>>> bind(d.parse_one("SELECT COUNT(*) FROM t WHERE c <> ALL(?)"), [[1, 2]]).sql(dialect="duckdb")
'SELECT COUNT(*) FROM t WHERE NOT c IN (1, 2)'
>>> import datetime
>>> bind(d.parse_one("SELECT COUNT(*) FROM t WHERE took < ? AND t0 > ?"),
...      [datetime.timedelta(hours=1), datetime.time(9, 30)]).sql(dialect="duckdb")
"SELECT COUNT(*) FROM t WHERE took < INTERVAL '3600000000' MICROSECONDS AND t0 > '09:30:00'"
"""

from __future__ import annotations

import datetime
import decimal
import math
import numbers
from collections.abc import Mapping, Sequence

import numpy as np
from sqlglot import exp
from sqlglot.tokens import TokenType

from ...errors import ProgrammingError
from ...sql import dialect as d

__all__ = ["bind", "literal", "placeholders", "number_qmarks"]


def number_qmarks(stmt: str) -> str:
    """``?`` placeholders rewritten as ``$1``, ``$2``, … in order of appearance (found by the
    tokenizer, so a ``?`` inside a string literal or a comment is left alone); other text is
    unchanged. The positions of ``?`` then survive parsing."""
    tokens = [t for t in d.ProvDP().tokenize(stmt) if t.token_type == TokenType.PLACEHOLDER
              and t.text == "?"]
    if not tokens:
        return stmt
    out, last = [], 0
    for i, tok in enumerate(tokens, 1):
        out.append(stmt[last:tok.start])
        out.append(f"${i}")
        last = tok.end + 1
    out.append(stmt[last:])
    return "".join(out)


def placeholders(tree: exp.Expression) -> list[exp.Placeholder]:
    """The placeholders of a parsed statement."""
    return list(tree.find_all(exp.Placeholder))


def bind(tree: exp.Expression, parameters, copy: bool = True) -> exp.Expression:
    """A copy of ``tree`` (``tree`` itself with ``copy=False``: a tree of the caller's own)
    with every placeholder replaced by the literal of its parameter.

    Positional placeholders (``?``, numbered ``$1``…; a ``?`` that was not numbered by
    :func:`number_qmarks` takes the next position in tree order) take a sequence; named ones
    (``$name``, ``:name``) a mapping. Every placeholder needs a value and every value must be
    used: a mismatch is an error, never a silent NULL."""
    tree = tree.copy() if copy else tree
    marks = placeholders(tree)
    if parameters is None:
        if marks:
            raise ProgrammingError(
                f"the statement has {len(marks)} parameter placeholder{'s' * (len(marks) != 1)} "
                "but no parameters were given")
        return any_as_in(tree)
    names = ["" if m.name == "?" else m.name for m in marks]
    positional = [n == "" or n.isdigit() for n in names]
    if any(positional) and not all(positional):
        raise ProgrammingError("a statement cannot mix positional (?, $1) and named ($name) "
                               "parameters")
    if isinstance(parameters, Mapping):
        if any(positional):
            raise ProgrammingError("the statement uses positional parameters (? or $1); pass a "
                                   "sequence, not a mapping")
        lower = {}
        for k, v in parameters.items():
            if not isinstance(k, str):
                raise ProgrammingError(f"parameter names must be strings, got {k!r}")
            lower[k.lower()] = v
        missing = sorted({n for n in names if n.lower() not in lower})
        if missing:
            raise ProgrammingError(f"no value for parameter{'s' * (len(missing) > 1)} "
                                   f"{', '.join(missing)}")
        unused = sorted(set(lower) - {n.lower() for n in names})
        if unused:
            raise ProgrammingError(f"parameter{'s' * (len(unused) > 1)} {', '.join(unused)} "
                                   "not used by the statement")
        for m, n in zip(marks, names):
            m.replace(literal(lower[n.lower()], n, _as_list(m)))
        return any_as_in(tree)
    if isinstance(parameters, (str, bytes)) or not isinstance(parameters, Sequence):
        raise ProgrammingError(
            f"parameters must be a sequence (for ?) or a mapping (for $name), got "
            f"{type(parameters).__name__}")
    values = list(parameters)
    if any(names):  # numbered: $k is values[k - 1]
        wanted = sorted({int(n) for n in names})
        if not wanted or wanted[0] < 1 or wanted != list(range(1, len(wanted) + 1)):
            raise ProgrammingError(f"parameter numbers must run from $1 without gaps, got "
                                   f"{', '.join('$' + str(w) for w in wanted)}")
        count = len(wanted)
    else:
        count = len(marks)
    if count != len(values):
        raise ProgrammingError(
            f"the statement has {count} parameter placeholder{'s' * (count != 1)}, but "
            f"{len(values)} parameter{'s' * (len(values) != 1)} {'was' if len(values) == 1 else 'were'}"
            " given")
    for i, (m, n) in enumerate(zip(marks, names)):
        k = int(n) - 1 if n else i
        m.replace(literal(values[k], f"${k + 1}", _as_list(m)))
    return any_as_in(tree)


def _as_list(mark: exp.Expression) -> bool:
    """Whether placeholder ``mark`` is the list of ``x = ANY(mark)`` or ``x <> ALL(mark)``."""
    node = mark.parent
    while isinstance(node, exp.Paren):
        node = node.parent
    return (isinstance(node, exp.Any) and isinstance(node.parent, exp.EQ) or
            _all_of(node) is not None and isinstance(node.parent, exp.NEQ)) and \
        node.parent.expression is node


def _all_of(node: exp.Expression):
    """The argument of ``ALL(…)`` (sqlglot reads it as a function named ALL), or None."""
    if isinstance(node, exp.All):
        return node.this
    if isinstance(node, exp.Anonymous) and str(node.this).upper() == "ALL" and \
            len(node.expressions) == 1:
        return node.expressions[0]
    return None


def any_as_in(tree: exp.Expression) -> exp.Expression:
    """``tree`` with each ``x = ANY(<list>)`` (a list literal, ``[…]`` or ``ARRAY[…]``) as
    ``x IN (…)``, its equal in SQL's three-valued logic (an empty list: false), and each ``x <>
    ALL(<list>)`` as ``NOT x IN (…)``, the negation of that (an empty list: true)."""
    for node in list(tree.find_all(exp.EQ, exp.NEQ)):
        right = node.expression
        inner = right.this if isinstance(right, exp.Any) else _all_of(right)
        if inner is None or isinstance(right, exp.Any) != isinstance(node, exp.EQ):
            continue
        while isinstance(inner, exp.Paren):
            inner = inner.this
        if isinstance(inner, exp.Array):
            items = list(inner.expressions)
            found = exp.In(this=node.this, expressions=items) if items else exp.false()
            node.replace(found if isinstance(node, exp.EQ) else
                         exp.Not(this=found) if items else exp.true())
    return tree


def literal(value, name: str = "?", as_list: bool = False) -> exp.Expression:
    """The SQL literal node of one parameter value (see the module docstring for the types;
    ``as_list``: the list of ``x = ANY(?)``, which takes a list or tuple of them)."""
    if isinstance(value, (list, tuple)):
        if not as_list:
            raise ProgrammingError(f"parameter {name} is a list: a list is bound only as the list "
                                   "of x = ANY(?) (planned as x IN (…)) or of x <> ALL(?) (x NOT "
                                   "IN (…))")
        return exp.Array(expressions=[literal(v, name) for v in value])
    if value is None:
        return exp.Null()
    if isinstance(value, (bool, np.bool_)):
        return exp.Boolean(this=bool(value))
    if isinstance(value, numbers.Integral):
        return _number(str(int(value)))
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise ProgrammingError(f"parameter {name} is {value}: only finite numbers can be bound")
        return _number(str(value))
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Rational):
        x = float(value)
        if not math.isfinite(x):
            raise ProgrammingError(f"parameter {name} is {x}: only finite numbers can be bound")
        return _number(repr(x))
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, datetime.datetime):
        kind = "TIMESTAMPTZ" if value.tzinfo is not None else "TIMESTAMP"
        return exp.cast(exp.Literal.string(value.isoformat(sep=" ")), kind)
    if isinstance(value, datetime.date):
        return exp.cast(exp.Literal.string(value.isoformat()), "DATE")
    if isinstance(value, datetime.time):  # its text, which DuckDB casts where it meets a TIME
        # (an analyst's query may not CAST to TIME)
        return exp.Literal.string(value.isoformat())
    if isinstance(value, datetime.timedelta):
        us = value // datetime.timedelta(microseconds=1)  # a constant INTERVAL, as written
        return exp.Interval(this=exp.Literal.string(str(us)), unit=exp.Var(this="MICROSECONDS"))
    raise ProgrammingError(
        f"parameter {name} has type {type(value).__name__}, which cannot be bound into a private "
        "query; use None, bool, int, float, Decimal, str, date, time, datetime or timedelta")


def _number(text: str) -> exp.Expression:
    if text.startswith("-"):
        return exp.Neg(this=exp.Literal.number(text[1:]))
    return exp.Literal.number(text)
