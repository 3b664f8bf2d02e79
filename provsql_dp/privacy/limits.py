"""Limits an operator states on analyst statements: their size and their nesting depth.

An analyst's statement is checked **before it is parsed** (so before anything is planned or
charged): its size in bytes (UTF-8) against ``max_statement_bytes``, then its expression depth —
how deeply parentheses, brackets and braces nest outside string literals, quoted names and
comments — against ``max_expression_depth``. Both are public and decided by the text alone;
a refusal is a :class:`~provsql_dp.errors.ProgrammingError` that names the limit and how to
raise it, and charges nothing. The curator's statements are not limited (the curator keeps
full power; a script of bulk ``INSERT`` s is the curator's business).

Why: the parser and the planner work in time (and recursion) that grows with the text. Before
these limits an 829 KB statement held the explorer's lock for minutes, and a few hundred nested
calls overflowed the parser's recursion. The defaults are far above what the project's own
statements need (measured over the tests, the grammar examples and the docs: at most 24 KB for
a whole file of examples, a nesting depth of at most 6).

:func:`tree_depth` measures a parsed statement the same way (for a compiler that re-checks
after parsing; a chain ``a + b + … + z`` is deep as a tree but flat as text, and is bounded by
the size limit instead).

>>> class Analyst:
...     role, max_statement_bytes, max_expression_depth = "analyst", 100, 3
>>> check_statement(Analyst, "SELECT abs(abs(1))")
>>> check_statement(Analyst, "SELECT abs(abs(abs(abs(1))))")
Traceback (most recent call last):
...
provsql_dp.errors.ProgrammingError: the statement nests expressions 4 deep, more than this connection allows (max_expression_depth = 3); simplify it, or ask the operator to raise the limit: provsql_dp.connect(..., max_expression_depth=N) or provsql-dp shell/serve --max-expression-depth N. Nothing was charged
>>> check_statement(Analyst, "SELECT '((((((' AS s -- ((((((")
>>> expression_depth("SELECT f((1), [2, {'a': (3)}])")
4
"""

from __future__ import annotations

import numbers

from ..errors import InterfaceError, ProgrammingError

__all__ = ["DEFAULT_MAX_STATEMENT_BYTES", "DEFAULT_MAX_EXPRESSION_DEPTH", "check_statement",
           "expression_depth", "tree_depth", "check_limit"]

#: the largest analyst statement by default, in bytes (64 KiB)
DEFAULT_MAX_STATEMENT_BYTES = 64 * 1024

#: the deepest nesting of parentheses / brackets / braces in an analyst statement by default
DEFAULT_MAX_EXPRESSION_DEPTH = 64

_OPEN, _CLOSE = "([{", ")]}"


def check_limit(name: str, value) -> int | None:
    """A limit's value: a positive whole number, or ``None`` for no limit; else refused by name."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise InterfaceError(f"{name} must be a positive whole number or None, got {value!r}")
    return int(value)


def check_statement(con, sql: str, parameters=None) -> None:
    """Refuse ``sql`` (the whole text given to ``execute``) when it is not Unicode text (a lone
    surrogate, which a JSON body's ``"\\ud800"`` gives: DuckDB can neither run nor log it — the
    refusal went unlogged, red team h94attack finding 5), and an analyst's past the connection's
    ``max_statement_bytes`` (the text with its ``parameters``, which are bound into the tree as
    literals: a wire Bind of a 300,000-number list for ``x = ANY($1)`` held the server 17 s and
    ~360 MB before a refusal, a 64 MiB one would have taken minutes and gigabytes — red team
    h143) or ``max_expression_depth``.

    >>> check_statement(None, "SELECT 1 -- \\ud800")
    Traceback (most recent call last):
      ...
    provsql_dp.errors.ProgrammingError: the statement holds a lone surrogate ('\\ud800' at character 13), which is no Unicode character: DuckDB can neither run nor store it. Remove it (a JSON body spells it \\ud800). Nothing was charged
    """
    if not isinstance(sql, str):
        return
    try:
        if not sql.isascii():  # (no copy of an ASCII text)
            sql.encode("utf-8")
    except UnicodeEncodeError as e:
        bad = sql[e.start].encode("unicode_escape").decode()
        raise ProgrammingError(
            f"the statement holds a lone surrogate ('{bad}' at character {e.start + 1}), which is "
            "no Unicode character: DuckDB can neither run nor store it. Remove it (a JSON body "
            "spells it \\ud800). Nothing was charged") from None
    if getattr(con, "role", "curator") != "analyst":
        return
    limit = getattr(con, "max_statement_bytes", None)
    bound = _parameter_bytes(parameters, limit) if limit is not None else 0
    if bound and len(sql.encode("utf-8", "surrogatepass")) + bound > limit:
        raise ProgrammingError(
            f"the statement's parameters are {'over ' if bound > limit else ''}{bound:,} bytes "
            "as the literals they are bound as, more with its text than this connection allows "
            f"(max_statement_bytes = {limit:,}); bind fewer or shorter values (a long list of "
            "x = ANY(…) can be a table the curator loads), or ask the operator to raise the "
            "limit: provsql_dp.connect(..., max_statement_bytes=N) or provsql-dp shell/serve "
            "--max-statement-bytes N. Nothing was charged")
    if limit is not None and len(sql) * 4 > limit:  # a character is at most 4 bytes in UTF-8
        size = len(sql.encode("utf-8", "surrogatepass"))
        if size > limit:
            raise ProgrammingError(
                f"the statement is {size:,} bytes long, more than this connection allows "
                f"(max_statement_bytes = {limit:,}); shorten it, or ask the operator to raise "
                "the limit: provsql_dp.connect(..., max_statement_bytes=N) or provsql-dp "
                "shell/serve --max-statement-bytes N. Nothing was charged")
    depth_limit = getattr(con, "max_expression_depth", None)
    if depth_limit is not None:
        depth = expression_depth(sql)
        if depth > depth_limit:
            raise ProgrammingError(
                f"the statement nests expressions {depth} deep, more than this connection "
                f"allows (max_expression_depth = {depth_limit}); simplify it, or ask the "
                "operator to raise the limit: provsql_dp.connect(..., max_expression_depth=N) "
                "or provsql-dp shell/serve --max-expression-depth N. Nothing was charged")


def _parameter_bytes(parameters, limit: int) -> int:
    """About how many bytes ``parameters`` (a sequence, a mapping, lists inside) take as the
    SQL literals they are bound as; counting stops past ``limit``.

    >>> _parameter_bytes([1, "ab", [1, 22, None], b"x"], 10**6), _parameter_bytes(None, 10)
    (34, 0)
    """
    if parameters is None:
        return 0
    total, stack = 0, [parameters]
    while stack and total <= limit:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            total += 2 * len(v)  # brackets and separators
            stack.extend(v)
        elif isinstance(v, str):
            total += len(v) + 2
        elif isinstance(v, (bytes, bytearray, memoryview)):
            total += 2 * len(v) + 3
        elif isinstance(v, int):  # (str() of an int of over 4,300 digits raises)
            total += v.bit_length() * 3 // 10 + 2
        else:
            total += len(str(v)) if v is not None else 4
    return total


def expression_depth(sql: str) -> int:
    """The deepest nesting of ``( [ {`` in ``sql``, outside '…' literals, "…" names, ``--``
    and ``/* */`` comments (one pass, no parsing)."""
    depth = deepest = 0
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch in _OPEN:
            depth += 1
            deepest = max(deepest, depth)
        elif ch in _CLOSE:
            depth = max(depth - 1, 0)
        elif ch in "'\"":  # a literal or a quoted name: its doubled quote is two adjacent ones
            end = sql.find(ch, i + 1)
            i = n if end < 0 else end
        elif ch == "-" and sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end
        elif ch == "/" and sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end < 0 else end + 1
        i += 1
    return deepest


def tree_depth(tree) -> int:
    """The depth of a parsed (sqlglot) statement, measured without recursion.

    >>> import sqlglot
    >>> tree_depth(sqlglot.parse_one("SELECT abs(1 + 2)"))
    4
    """
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((child, d + 1) for child in node.iter_expressions())
    return deepest
