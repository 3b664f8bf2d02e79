"""``.dump``: a database as a SQL script that recreates it (curator only).

The script, in order: the schemas, tables (DuckDB's own ``CREATE`` text) and their rows as
``INSERT`` statements and the views, in one transaction; then our declarations as the statements that
declare them — ``PROTECT TABLE``, ``SET BOUNDS``, ``SET GROUP KEYS``, ``CREATE POLICY``,
``SET PRIVACY BUDGET`` — and last the privacy state that no statement sets: the ε each user has
already spent and the ledger of charges (and the δ-publishers' releases), written into the
catalog tables directly, so that restoring a dump never hands anyone a fresh budget.

Each value is written as a SQL literal computed by DuckDB from its text form (numbers as they
are, everything else quoted and cast back on insert), so the rows read back equal.

>>> import provsql_dp
>>> con = provsql_dp.connect(user="cur")
>>> _ = con.execute("CREATE TABLE t(a INT, s VARCHAR); INSERT INTO t VALUES (1, 'it''s'), (NULL, NULL)")
>>> _ = con.execute("PROTECT TABLE t; SET PRIVACY BUDGET 2")
>>> for line in dump(con):
...     print(line)
BEGIN TRANSACTION;
CREATE TABLE t(a INTEGER, s VARCHAR);
INSERT INTO t VALUES (1, 'it''s');
INSERT INTO t VALUES (NULL, NULL);
COMMIT;
PROTECT TABLE t;
SET PRIVACY BUDGET 2 FOR USER 'cur';
"""

from __future__ import annotations

from fractions import Fraction

from ...privacy._ledger_rows import BUDGET_SET, STATE_SQL, enc, spending
from ...sql.catalog import SCHEMA
from .policy_sql import create_policy_sql, decimal_text
from .policy_sql import quote_ident as _q

__all__ = ["dump"]

_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
            "UINTEGER", "UBIGINT", "UHUGEINT", "DECIMAL")
_FLOAT = ("FLOAT", "DOUBLE", "REAL")


def _lit(s: str) -> str:
    return "'" + str(s).replace("'", "''") + "'"


def _literal_sql(column: str, dtype: str) -> str:
    """A DuckDB expression giving the SQL literal of ``column`` (``NULL`` for a null, and for
    every value of a column typed ``"NULL"`` here)."""
    if dtype == "NULL":
        return "'NULL'"
    c = '"' + column.replace('"', '""') + '"'
    text = f"CAST({c} AS VARCHAR)"
    if dtype.startswith(_NUMERIC):
        value = text
    elif dtype.startswith(_FLOAT):
        value = f"CASE WHEN isfinite({c}) THEN {text} ELSE '''' || {text} || '''' END"
    elif dtype == "BOOLEAN":
        value = f"CASE WHEN {c} THEN 'TRUE' WHEN NOT {c} THEN 'FALSE' END"  # NULL stays NULL
    else:
        quoted = f"'''' || replace({text}, '''', '''''') || ''''"
        # a carriage return would not survive line-based reading: chr(13), cast back explicitly
        cast = "'" + f" AS {dtype})".replace("'", "''") + "'"
        value = (f"CASE WHEN contains({text}, chr(13)) THEN 'CAST(' || replace({quoted}, chr(13), "
                 f"''' || chr(13) || ''') || {cast} ELSE {quoted} END")
    return f"COALESCE({value}, 'NULL')"


def _types(duck, schema: str, table: str) -> list[tuple[str, str]]:
    return duck.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? "
                        "AND table_name = ? AND database_name = current_database() "
                        "ORDER BY column_index ASC", [schema, table]).fetchall()


def _rows(duck, schema: str, table: str, types: list[tuple[str, str]], target: str,
          where: str = "TRUE"):
    """``INSERT`` statements of a table's rows, the literals built by DuckDB (vectorised)."""
    if not types:
        return
    values = " || ', ' || ".join(_literal_sql(n, t) for n, t in types)
    rel = duck.execute(f'SELECT {values} FROM "{schema}"."{table}" WHERE {where}')
    while True:
        chunk = rel.fetchmany(4096)
        if not chunk:
            return
        for (v,) in chunk:
            yield f"INSERT INTO {target} VALUES ({v});"


def _number(x) -> str:
    """A declared bound as a SQL number (the shortest text that reads back equal)."""
    f = float(x)
    return str(int(f)) if f.is_integer() and abs(f) < 1e15 else repr(f)


def _catalog_tables(duck) -> set[str]:
    return {r[0] for r in duck.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = ?", [SCHEMA]).fetchall()}


def _declarations(con, duck, only: str | None):
    have = _catalog_tables(duck)

    def wanted(schema, table):
        return only is None or only.lower() in (table.lower(), f"{schema}.{table}".lower())

    def target(schema, table):
        return _q(table) if schema == "main" else f"{_q(schema)}.{_q(table)}"

    prots = {(p.schema, p.table): p for p in con.protected()}

    def hops(p):  # a table owned along a foreign key comes after the table it references
        return 0 if not p.references or p.references[:2] not in prots else 1 + hops(
            prots[p.references[:2]])

    for p in sorted(prots.values(), key=hops):
        if not wanted(p.schema, p.table):
            continue
        by = f" BY ({', '.join(_q(c) for c in p.by_columns)})" if p.by_columns else ""
        dom = f" AS {_q(p.domain)}" if p.domain != p.table and not p.references else ""
        if p.references:  # owned along a foreign key: the referenced table is dumped before
            by += (f" REFERENCES {target(*p.references[:2])} "
                   f"({', '.join(_q(c) for c in p.references[2])})")
        yield f"PROTECT TABLE {target(p.schema, p.table)}{by}{dom};"
    if "column_bounds" in have:
        for s, t, c, lo, hi in duck.execute(
                f"SELECT schema_name, table_name, column_name, lower, upper FROM {SCHEMA}.column_bounds "
                "ORDER BY ALL").fetchall():
            if wanted(s, t):
                yield (f"SET BOUNDS ON {target(s, t)} ({_q(c)}) BETWEEN {_number(lo)} AND "
                       f"{_number(hi)};")
    if "group_keys" in have:
        for s, t, c, keys, ss, st, sc in duck.execute(
                f"SELECT schema_name, table_name, column_name, key_values, source_schema, "
                f"source_table, source_column FROM {SCHEMA}.group_keys ORDER BY ALL").fetchall():
            if not wanted(s, t):
                continue
            if st is not None:
                yield f"SET GROUP KEYS ON {target(s, t)} ({_q(c)}) FROM {target(ss, st)} ({_q(sc)});"
            else:
                yield (f"SET GROUP KEYS ON {target(s, t)} ({_q(c)}) VALUES "
                       f"({', '.join(_lit(k) for k in keys)});")
    if "policies" in have:
        types = _types(duck, SCHEMA, "policies")
        for name, s, t, cols, spec in duck.execute(
                f"SELECT name, schema_name, table_name, columns, spec FROM {SCHEMA}.policies "
                "ORDER BY created, name").fetchall():
            if not wanted(s, t):
                continue
            stmt = create_policy_sql(name, s, t, cols, spec)
            if stmt is not None:
                yield stmt
            else:  # no exact SQL spelling (a bin width like 1/3): the catalog row itself
                yield from _rows(duck, SCHEMA, "policies", types, f"{SCHEMA}.policies",
                                 where=f"name = {_lit(name)}")


def _budget_rows(duck) -> list[tuple]:
    """``(user, unit, total, spent, total δ, spent δ)`` of every budget (a budget table made
    before units: pure ε)."""
    cols = {r[0] for r in duck.execute(
        "SELECT column_name FROM duckdb_columns() WHERE schema_name = ? AND table_name = 'budget' "
        "AND database_name = current_database()", [SCHEMA]).fetchall()}
    if "charge_no" in cols:  # spent: the row's folded spending and the charges after it
        return [(u, s.total, enc(s.spent), s.unit, s.total_delta, enc(s.spent_delta))
                for u, s in sorted(spending(duck.execute(STATE_SQL).fetchall()).items())]
    extra = ("unit, total_delta, spent_delta" if "spent_delta" in cols
             else "'epsilon', '0/1', '0/1'")
    return duck.execute(f"SELECT user_name, total, spent, {extra} FROM {SCHEMA}.budget "
                        "ORDER BY user_name").fetchall()


def _budgets(duck):
    """Each budget in its unit (``SET PRIVACY BUDGET [RHO | EPSILON … DELTA …]``, or its row
    when a number has no decimal literal), then what was spent, ε and δ: a ρ budget written as
    pure ε of the same number would pay ρ = ε²/2 beyond it (red team h94attack, finding 1)."""
    rows = _budget_rows(duck)
    for user, total, spent, unit, total_d, spent_d in rows:
        unit = unit or "epsilon"
        exact, exact_d = decimal_text(Fraction(total)), decimal_text(Fraction(total_d or 0))
        head = {"epsilon": "", "rho": "RHO ", "epsilon-delta": "EPSILON "}.get(unit)
        if exact is not None and head is not None and (unit != "epsilon-delta" or exact_d):
            tail = f" DELTA {exact_d}" if unit == "epsilon-delta" else ""
            yield f"SET PRIVACY BUDGET {head}{exact}{tail} FOR USER {_lit(user)};"
        else:  # 1/3 has no decimal literal: the exact fraction, as the ledger stores it
            yield (f"INSERT INTO {SCHEMA}.budget (user_name, total, spent, unit, total_delta, "
                   f"spent_delta) VALUES ({_lit(user)}, {_lit(total)}, '0', {_lit(unit)}, "
                   f"{_lit(total_d or '0/1')}, '0/1');")
    for user, total, spent, unit, total_d, spent_d in rows:
        if Fraction(spent) != 0 or Fraction(spent_d or 0) != 0:
            yield (f"UPDATE {SCHEMA}.budget SET spent = {_lit(spent)}, spent_delta = "
                   f"{_lit(spent_d or '0/1')} WHERE user_name = {_lit(user)};  -- already spent")


def _privacy_state(duck):
    """Budgets as statements, then what no statement sets: ε spent, the ledger, the audit log,
    δ releases."""
    have = _catalog_tables(duck)
    if "budget" in have:
        yield from _budgets(duck)
    for table in ("ledger", "audit", "audit_events", "delta_publishers", "delta_releases"):
        if table not in have:  # (audit: a table in a database made before audit_events)
            continue
        types, where = _types(duck, SCHEMA, table), "TRUE"
        if table == "ledger":  # its charges, folded into the budget's spent (above): no number
            types = [(n, "NULL" if n == "charge_no" else t) for n, t in types]
            where = f"mechanism <> '{BUDGET_SET}'"  # (a budget change's row: no charge)
        rows = list(_rows(duck, SCHEMA, table, types, f"{SCHEMA}.{table}", where))
        if not rows:
            continue
        if table in ("ledger", "audit"):  # the audit log goes on numbering after its rows
            top = duck.execute(f"SELECT max(id) FROM {SCHEMA}.{table}").fetchone()[0]
            yield f"DROP SEQUENCE IF EXISTS {SCHEMA}.{table}_seq;"
            yield f"CREATE SEQUENCE {SCHEMA}.{table}_seq START {int(top) + 1};"
        yield from rows
    if "audit_events" in have:  # the log's rows: audit_events' and the ledger's (releases)
        top = duck.execute(f"SELECT max(id) FROM {SCHEMA}.audit").fetchone()[0]
        if top is not None:
            yield f"DROP SEQUENCE IF EXISTS {SCHEMA}.audit_seq;"
            yield f"CREATE SEQUENCE {SCHEMA}.audit_seq START {int(top) + 1};"


def dump(con, only: str | None = None):
    """The lines of the SQL script recreating the database (or only the table ``only`` and its
    declarations), as an iterator. Reads through the curator's DuckDB connection; the shell
    refuses ``.dump`` to an analyst before calling this. An unknown ``only`` is an error
    before any line is produced."""
    duck = con._duck
    if only is not None:
        names = duck.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() WHERE schema_name <> ? UNION ALL "
            "SELECT schema_name, view_name FROM duckdb_views() WHERE NOT internal AND schema_name <> ?",
            [SCHEMA, SCHEMA]).fetchall()
        if not any(only.lower() in (t.lower(), f"{s}.{t}".lower()) for s, t in names):
            from .dot_commands import ShellError

            raise ShellError(f"no table or view named {only!r}")
    return _script(con, duck, only)


def _script(con, duck, only):
    yield "BEGIN TRANSACTION;"
    schemas = [r[0] for r in duck.execute(
        "SELECT DISTINCT schema_name FROM duckdb_tables() WHERE schema_name NOT IN ('main', ?) "
        "AND database_name = current_database() ORDER BY 1", [SCHEMA]).fetchall()]
    if only is None:
        for s in schemas:
            yield f"CREATE SCHEMA IF NOT EXISTS {_q(s)};"
    tables = duck.execute(
        "SELECT schema_name, table_name, sql FROM duckdb_tables() WHERE schema_name <> ? "
        "AND database_name = current_database() ORDER BY schema_name <> 'main', schema_name, "
        "table_name", [SCHEMA]).fetchall()
    for schema, table, sql in tables:
        if only is not None and only.lower() not in (table.lower(), f"{schema}.{table}".lower()):
            continue
        yield sql.strip().rstrip(";") + ";"
        target = _q(table) if schema == "main" else f"{_q(schema)}.{_q(table)}"
        yield from _rows(duck, schema, table, _types(duck, schema, table), target)
    views = duck.execute(
        "SELECT schema_name, view_name, sql FROM duckdb_views() WHERE NOT internal AND "
        "schema_name <> ? AND database_name = current_database() ORDER BY schema_name, view_name",
        [SCHEMA]).fetchall()
    for schema, view, sql in views:
        if only is None or only.lower() in (view.lower(), f"{schema}.{view}".lower()):
            yield sql.strip().rstrip(";") + ";"
    yield "COMMIT;"  # the declarations commit on their own (CREATE POLICY ends a transaction)
    yield from _declarations(con, duck, only)
    if only is None:
        yield from _privacy_state(duck)
