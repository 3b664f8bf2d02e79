"""The scalar and aggregate functions a catalog query may call on the schema replica.

The replica holds no rows, so no answer from it can depend on protected data; what a catalog
query can still do is make the server build values without bound. ``repeat('x', 4294967295)``
was a 4 GiB string (DuckDB's memory limit does not cover string building: 1,500 rows of
``repeat('x', 1000000)`` took the server to 3 GB), ``range(…)`` a list as long as asked, and
twenty CTEs of ``relname || relname || …`` reach DuckDB's 4 GiB string limit, where ``||``
raises an internal error that invalidates the replica for every session until the schema
changes (red team h143). So a catalog query calls only the functions drivers' catalog queries
call (psql, psycopg, SQLAlchemy, JDBC: logged over the client tests) and a few of the same kind,
each bounded by what it reads; ``||`` and ``concat`` at most :data:`MAX_CONCATENATIONS` times,
never beside ``string_agg``/``array_agg`` (their value holds every row of a group); no ``WITH
RECURSIVE`` (a recursion of ``||`` doubles a value each round). ``generate_series`` and ``range``
(table or scalar) count at most :data:`MAX_SERIES` values each between constant bounds (or the
bounds of an array column of the catalog: ``generate_series(1, array_upper(i.indkey, 1))``), and
:data:`MAX_SERIES_PRODUCT` together: ``array_to_string(generate_series(1, 50000000), ',')``, one
catalog query, held the server at 5.9 GB for 13 s (the replica's memory limit does not cover a
list's text), and ``count(*)`` over ``generate_series(1, 1e11)`` a core for the 10 s timer
(red team h147).

>>> import sqlglot
>>> check_catalog_functions(sqlglot.parse_one("SELECT format_type(a.atttypid, a.atttypmod) "
...                                           "FROM pg_attribute a", read="postgres"))
>>> check_catalog_functions(sqlglot.parse_one("SELECT repeat('x', 9), relname FROM pg_class",
...                                           read="postgres"))
Traceback (most recent call last):
...
provsql_dp.errors.ProgrammingError: this catalog query calls repeat(), which the server's catalog does not run: a catalog query may call the functions PostgreSQL clients use to read the catalog (pg_… and has_…_privilege functions, format_type, array_to_string, lower, …); ask for the names and types you need without it
"""

from __future__ import annotations

from sqlglot import exp

from ...errors import ProgrammingError

__all__ = ["CATALOG_FUNCTIONS", "MAX_CONCATENATIONS", "MAX_SERIES", "MAX_SERIES_PRODUCT",
           "check_catalog_functions"]

#: functions by sqlglot's name for them (its class's ``sql_name()``, or the name of a function
#: sqlglot does not know), lower case; ``pg_…``, ``has_…_privilege`` and the compatibility
#: schema's macros besides (those of DuckDB's ``pg_catalog`` read the catalog; ours are constants)
CATALOG_FUNCTIONS = frozenset({
    # logged from the drivers' catalog queries (tests/system/test_pgwire*.py, JDBC included)
    "array", "array_agg", "array_to_string", "array_upper", "case", "cast", "col_description",
    "count", "current_schema", "current_setting", "current_version", "explode",
    "exploding_generate_series", "format_type", "generate_subscripts", "group_concat", "if",
    "json_build_object", "logical_and", "min", "nullif", "obj_description", "row_number",
    "to_regtype", "unnest",
    # of the same kind: each reads the catalog, or returns at most what it reads
    "max", "sum", "avg", "logical_or", "coalesce", "greatest", "least", "lower", "upper",
    "length", "substring", "left", "right", "trim", "array_size", "array_length", "array_lower",
    "array_position", "array_contains", "shobj_description", "version", "current_database",
    "current_schemas", "current_user", "session_user", "current_catalog", "to_regclass",
    "quote_ident", "try_cast", "concat", "concat_ws", "generate_series", "str_position",
    "starts_with", "abs", "round", "rank", "dense_rank", "any_value", "first",
})
#: ``||``, ``concat`` and ``concat_ws`` in one catalog query (psql's ``\d`` uses two): each at
#: most adds what it reads, so a value of the query is at most 2^8 times the longest string it
#: reads (a name, or a literal of the query: 256 × 64 KiB is 16 MiB)
MAX_CONCATENATIONS = 8
#: aggregates whose value holds every row of its group: what concatenates it is refused (its
#: rows can be many — a generate_series — and || past DuckDB's 4 GiB string limit is an
#: internal error that invalidates the replica)
_ROWS_IN_ONE = (exp.GroupConcat, exp.ArrayAgg)
#: values one generate_series/range of a catalog query may count, and all of them together (a
#: series beside another, or in a row of one, multiplies)
MAX_SERIES = 10_000
MAX_SERIES_PRODUCT = 1_000_000
#: what a bound reading an array of the catalog counts as (an index's columns: at most 32)
_ARRAY_BOUND = 1_000
_ARRAY_BOUNDS = {"array_lower", "array_upper", "array_length", "array_size", "cardinality"}


def _name(node: exp.Func) -> str:
    return node.name.lower() if isinstance(node, exp.Anonymous) else node.sql_name().lower()


def check_catalog_functions(tree: exp.Expression, macros: frozenset = frozenset()) -> None:
    """Refuse (:class:`~provsql_dp.errors.ProgrammingError`, nothing run) a catalog query that
    calls a function off :data:`CATALOG_FUNCTIONS` (and the compatibility schema's ``macros``),
    concatenates more than :data:`MAX_CONCATENATIONS` times, or recurses. Table functions are
    judged apart (``_catalog._replica_refuses``)."""
    def refuse(what: str, why: str):
        raise ProgrammingError(f"this catalog query {what}, which the server's catalog does not "
                               f"run: {why}")

    if any(w.args.get("recursive") for w in tree.find_all(exp.With)):
        refuse("is recursive (WITH RECURSIVE)", "send a query without recursion")
    concatenations = 0
    aggregated = tree.find(*_ROWS_IN_ONE) is not None
    for node in tree.find_all(exp.Func, exp.DPipe):
        if isinstance(node, (exp.DPipe, exp.Concat, exp.ConcatWs)):
            concatenations += 1
            if concatenations > MAX_CONCATENATIONS:
                refuse(f"concatenates more than {MAX_CONCATENATIONS} times (||, concat)",
                       "concatenate fewer values")
            if aggregated and node.find_ancestor(*_ROWS_IN_ONE) is None:
                refuse("concatenates beside string_agg/array_agg (whose value holds every row "
                       "of its group)", "concatenate inside the aggregate, or in a query of "
                       "its own")
            continue
        if isinstance(node, (exp.Binary, exp.Unary)) or isinstance(node.parent, exp.Table):
            continue  # an operator (AND, ~, …); a table function: judged apart
        name = _name(node)
        if name in CATALOG_FUNCTIONS or name.startswith("pg_") or name in macros \
                or name.startswith("has_") and name.endswith("_privilege"):
            continue
        refuse(f"calls {name}()", "a catalog query may call the functions PostgreSQL clients "
               "use to read the catalog (pg_… and has_…_privilege functions, format_type, "
               "array_to_string, lower, …); ask for the names and types you need without it")
    _check_series(tree, refuse)


def _series_args(node: exp.Expression) -> list | None:
    """(start, end, step) of a generate_series/range call, None when ``node`` is none."""
    if isinstance(node, (exp.GenerateSeries, exp.ExplodingGenerateSeries)):
        return [node.args.get("start"), node.args.get("end"), node.args.get("step")]
    if isinstance(node, exp.Anonymous) and node.name.lower() in ("range", "generate_series"):
        args = list(node.expressions)
        return ([exp.Literal.number(0)] + args if len(args) == 1 else args + [None])[:3]
    return None


def _constant(node) -> float | None:
    neg = isinstance(node, exp.Neg)
    node = node.this if neg else node
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return -float(node.this) if neg else float(node.this)
        except ValueError:
            return None
    return None


def _array_bound(node) -> bool:
    """Whether ``node`` is the bound of an array column of the catalog (± constants)."""
    if isinstance(node, (exp.Add, exp.Sub)):
        sides = (node.this, node.expression)
        return all(_array_bound(x) or _constant(x) is not None for x in sides) and any(
            _array_bound(x) for x in sides)
    if isinstance(node, exp.Paren):
        return _array_bound(node.this)
    name = (node.name.lower() if isinstance(node, exp.Anonymous) else
            node.sql_name().lower() if isinstance(node, exp.Func) else "")
    args = list(node.iter_expressions()) if name in _ARRAY_BOUNDS else []
    first = args[0] if args else None
    while isinstance(first, exp.Cast) and first.to.is_type(exp.DataType.Type.ARRAY):
        first = first.this  # psql's array_upper(CAST(pr.prattrs AS SMALLINT[]), 1): its length
    return isinstance(first, exp.Column) and all(_constant(a) is not None for a in args[1:])


def _check_series(tree: exp.Expression, refuse) -> None:
    """Every generate_series/range of ``tree`` within :data:`MAX_SERIES` values, all of them
    together within :data:`MAX_SERIES_PRODUCT` (module docstring).

    >>> import sqlglot
    >>> def r(what, why):
    ...     raise ValueError(what)
    >>> _check_series(sqlglot.parse_one("SELECT * FROM generate_series(1, array_upper(i.k, 1)) g, "
    ...                                 "generate_series(-5, 5, 2) h", read="postgres"), r)
    >>> _check_series(sqlglot.parse_one("SELECT generate_series(0, array_upper(CAST(p.a AS "
    ...                                 "SMALLINT[]), 1))", read="postgres"), r)  # psql's \\d
    >>> _check_series(sqlglot.parse_one("SELECT generate_series(1, 50000000)", read="postgres"), r)
    Traceback (most recent call last):
    ...
    ValueError: counts 50,000,000 values in GENERATE_SERIES(1, 50000000)
    """
    product = 1
    for node in tree.find_all(exp.Func):
        args = _series_args(node)
        if args is None:
            continue
        text = node.sql(dialect="postgres")[:80]
        how = ("a catalog query counts with generate_series/range between constant bounds (or "
               "an array column's: array_upper(i.indkey, 1)), at most "
               f"{MAX_SERIES:,} values each and {MAX_SERIES_PRODUCT:,} together")
        start, end, step = args
        step_value = 1.0 if step is None else _constant(step)
        if step_value is None or step_value == 0:
            refuse(f"counts by a step that is not a constant other than 0 in {text}", how)
        values = [_constant(start), _constant(end)]
        if any(v is None and not _array_bound(b) for v, b in zip(values, (start, end))):
            refuse(f"calls {text} with a bound that is neither a constant nor an array's", how)
        if None in values:
            count = _ARRAY_BOUND
        else:
            count = max(0, int((values[1] - values[0]) / step_value) + 1)
        if count > MAX_SERIES:
            refuse(f"counts {count:,} values in {text}", how)
        product *= max(count, 1)
        if product > MAX_SERIES_PRODUCT:
            refuse(f"counts {product:,} values in its series together", how)
