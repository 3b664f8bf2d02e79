"""The shell's dot-commands (``.help`` lists them): a mixin of :class:`.session.Shell`, one
``_dot_<name>`` method a command, dispatched by :meth:`DotCommands.dot`; and the text of
``.explain`` (:func:`explain_query`).

A dot-command's own failure is a :class:`ShellError`, printed as ``Error: …`` like any other.

>>> import io, provsql_dp
>>> from provsql_dp.interfaces.shell import Shell
>>> out = io.StringIO()
>>> sh = Shell(provsql_dp.connect(), out=out, err=out)
>>> sh.dot(".mode csv"); sh.dot(".mode"); sh.dot(".nothing")
>>> print(out.getvalue().strip())
current output mode: csv
Error: unknown command '.nothing'; .help lists the commands
"""

from __future__ import annotations

import os
from fractions import Fraction

from sqlglot.errors import ParseError, TokenError

from ...errors import Error, PrivacyError
from ...privacy.ledger import format_eps
from ...sql import dialect as d
from ..dbapi.statements import epsilon_clause
from .formatting import MODES, cell, first_line, fmt_float, render
from .statement_help import statements_help

__all__ = ["DotCommands", "ShellError", "HELP", "policies_available", "explain_query"]

_CATALOG_SCHEMA = "_provsql_dp"
_MAX_READ_DEPTH = 16

HELP_INTRO = """\
Statements end with ';' and may span several lines; a line starting with '.' is a dot-command.
Besides DuckDB's SQL, these statements of ours (".help WORD" shows those mentioning WORD):
"""

HELP_AFTER = """\
A private answer is shown with its 95% interval and what it covers ('[lo, hi]' two-sided;
'≥ lo' one-sided for the recursive mechanism and R2T, whose unpublished truncation can only
lower the answer), the ε charged and the budget left. Ctrl-C interrupts a statement; ε already
charged for a release stays spent.
"""

DOT_HELP = """\
.audit [N]           the audit log's last N rows (default 20): every release and refusal, with
                     user, role, client, route and ε (curator only; SQL: _provsql_dp.audit_log)
.budget              the privacy budget (a curator sees every user, an analyst their own)
.dump [TABLE]        the database (or one table) as SQL: tables, rows, views, our declarations,
                     budgets and ε spent (curator only)
.exit, .quit         leave the shell
.explain SQL         the plan of a query and, for an aggregate, the mechanism's private
                     diagnostics (curator only; nothing is charged, nothing is released)
.headers on|off      show column names (default on)
.help [WORD]         this message (only the statements and commands mentioning WORD)
.import [--csv|--parquet|--json] FILE TABLE
                     load a file into TABLE (created, or appended to) with DuckDB's readers;
                     the format follows the extension (curator only)
.ledger              the charges recorded (a curator sees all, an analyst their own)
.maxrows [N]         in the table, box and markdown modes, show at most N rows of a result (its
                     first and last; default 40, as duckdb's shell; 0 shows every row)
.mode MODE           output mode: table (default), box, csv, json, markdown, line, list, html
.once FILE           send the next statement's output to FILE
.open [FILE]         close this database and open FILE (created when new), or an in-memory one
                     without FILE, with the shell's role and user (also ends a --server session)
.output [FILE]       send output to FILE, or back to the screen without one
.policies            the Blowfish policies declared (when policy statements are available)
.protected           the PROTECT TABLE declarations
.read FILE           run the statements and dot-commands of FILE
.schema [TABLE]      CREATE statements of the tables and views (or of one)
.show                the current settings
.tables              the tables and views (protected ones marked)
.timer on|off        print the run time of each statement"""

HELP = HELP_INTRO + statements_help() + "\n" + HELP_AFTER + "\n" + DOT_HELP


def _dot_blocks() -> list[str]:
    """The entries of :data:`DOT_HELP`, continuation lines kept with their command."""
    blocks: list[str] = []
    for line in DOT_HELP.splitlines():
        if line.startswith(".") or not blocks:
            blocks.append(line)
        else:
            blocks[-1] += "\n" + line
    return blocks


class ShellError(Exception):
    """A dot-command's own error (printed as ``Error: …`` like any other)."""


class DotCommands:
    """The dot-commands of :class:`.session.Shell`, which provides what they use: ``con``,
    ``role``, ``mode``, ``timer``, ``stopped``, ``_depth``, ``_print``, ``error``,
    ``run_statement`` and ``run_lines``."""

    def dot(self, line: str) -> None:
        word, _, rest = line.partition(" ")
        rest = rest.strip()
        if word.endswith(";") or rest.endswith(";"):  # ".mode csv;" as typed after SQL
            word, rest = word.rstrip(";"), rest.rstrip(";").strip()
        name = word[1:].lower()
        handler = getattr(self, f"_dot_{name}", None)
        if handler is None or not name.isidentifier():
            self.error(f"unknown command {word!r}; .help lists the commands")
            return
        try:
            handler(rest)
        except (Error, ShellError) as e:
            self.error(first_line(e))
        except KeyboardInterrupt:
            self.error("interrupted")
        except Exception as e:
            self.error(f"internal error ({type(e).__name__}): {first_line(e)}")
        if getattr(self, "_once", False) and name not in ("once", "read"):
            self.redirect(None)  # .once covers the next statement or dot-command only

    def _query(self, sql: str, params=None) -> tuple[list[str], list[tuple]]:
        cur = self.con.cursor()
        cur.execute(sql, params)
        return [c[0] for c in cur.description], cur.fetchall()

    def _dot_help(self, rest: str) -> None:
        if not rest:
            self._print(HELP)
            return
        word = rest.strip().lower().lstrip(".")
        statements = statements_help(word)
        dots = [block for block in _dot_blocks() if word in block.lower()]
        if not statements and not dots:
            raise ShellError(f"nothing in .help mentions {rest.strip()!r}")
        self._print("\n".join(x for x in (statements, "\n".join(dots)) if x))

    def _dot_quit(self, rest: str) -> None:
        self.stopped = True

    _dot_exit = _dot_quit

    def _dot_mode(self, rest: str) -> None:
        if not rest:
            self._print(f"current output mode: {self.mode}")
            return
        if rest.lower() not in MODES:
            raise ShellError(f"unknown mode {rest!r}; choose one of {', '.join(MODES)}")
        self.mode = rest.lower()

    def _dot_maxrows(self, rest: str) -> None:
        if not rest:
            self._print(f"maxrows: {self.maxrows}" + (" (every row)" if not self.maxrows else ""))
            return
        try:
            n = int(rest)
        except ValueError:
            n = -1
        if n < 0:
            raise ShellError(f"usage: .maxrows N (a count of rows, 0 for all), got {rest!r}")
        self.maxrows = n

    def _dot_open(self, rest: str) -> None:
        path = os.path.expanduser(rest.strip().strip("'\"")) or ":memory:"
        if self.opener is None:
            raise ShellError(".open is not available here: this shell was given its connection")
        con = self.opener(path)  # the old connection stays open when this one fails
        old, self.con = self.con, con
        if self.completer is not None:
            self.completer.invalidate()
        try:
            old.close()
        except Exception:  # noqa: BLE001 - a server gone away: the new database is open anyway
            pass
        where = "an in-memory database" if path == ":memory:" else path
        self._print(f"opened {where} as {self.role}" + (f" {self.con.user!r}" if self.role != "curator" else ""))

    def _local_only(self, command: str) -> None:
        if getattr(self.con, "remote", False):
            raise ShellError(f"{command} is not available over --server (it needs the database in this "
                             "process); run it in a shell on the server's machine, or use SQL")

    def _dot_timer(self, rest: str) -> None:
        if rest.lower() not in ("on", "off"):
            raise ShellError("usage: .timer on|off")
        self.timer = rest.lower() == "on"

    def _dot_read(self, rest: str) -> None:
        if not rest:
            raise ShellError("usage: .read FILE")
        path = os.path.expanduser(rest.strip().strip("'\""))
        if self._depth >= _MAX_READ_DEPTH:
            raise ShellError(f".read nested more than {_MAX_READ_DEPTH} deep")
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise ShellError(f"cannot read {path}: {e.strerror or e}") from None
        self._depth += 1
        try:
            self.run_lines(text.split("\n"))  # not splitlines(): \x1e in a string ends no line
        finally:
            self._depth -= 1

    def _dot_tables(self, rest: str) -> None:
        names, rows = self._query("SHOW ALL TABLES")
        i_schema, i_name = names.index("schema"), names.index("name")
        protected = {(p.schema, p.table) for p in self.con.protected()}
        out = []
        for r in sorted(rows, key=lambda r: (r[i_schema] != "main", r[i_schema], r[i_name])):
            schema, table = r[i_schema], r[i_name]
            if schema == _CATALOG_SCHEMA:
                continue
            label = table if schema == "main" else f"{schema}.{table}"
            out.append(label + ("  (protected)" if (schema, table) in protected else ""))
        self._print("\n".join(out) if out else "(no tables)")

    def _dot_schema(self, rest: str) -> None:
        table = rest.strip().strip("'\";")
        protected = {(p.schema, p.table): p for p in self.con.protected()}
        out = []
        if self.role == "curator":
            sql = ("SELECT schema_name, table_name, sql FROM duckdb_tables() "
                   "WHERE schema_name <> ? UNION ALL "
                   "SELECT schema_name, view_name, sql FROM duckdb_views() "
                   "WHERE NOT internal AND schema_name <> ? "
                   "ORDER BY schema_name <> 'main', schema_name, table_name")
            _, rows = self._query(sql, [_CATALOG_SCHEMA, _CATALOG_SCHEMA])
        else:  # an analyst may DESCRIBE but not read the catalog table functions
            _, tables = self._query("SHOW ALL TABLES")
            rows = []
            for _db, schema, name, *_ in tables:
                if schema == _CATALOG_SCHEMA:
                    continue
                _, cols = self._query(f'DESCRIBE "{schema}"."{name}"')
                body = ", ".join(f"{c[0]} {c[1]}" + (" NOT NULL" if c[2] == "NO" else "") for c in cols)
                rows.append((schema, name, f"CREATE TABLE {name}({body});"))
        for schema, name, sql in rows:
            if table and table.lower() not in (name.lower(), f"{schema}.{name}".lower()):
                continue
            out.append(sql.strip())
            p = protected.get((schema, name))
            if p is not None:
                out.append(f"-- PROTECTED: {p.describe()}")
        if table and not out:
            raise ShellError(f"no table or view named {table!r}")
        if out:
            self._print("\n".join(out))

    def _dot_protected(self, rest: str) -> None:
        self.run_statement("SHOW PROTECTED")

    def _dot_policies(self, rest: str) -> None:
        if not policies_available():
            raise ShellError(
                "policy statements (CREATE POLICY, SHOW POLICIES) are not available in this "
                "version; Blowfish policies are reachable from Python (provsql_dp.policies.blowfish)")
        self.run_statement("SHOW POLICIES")

    def _dot_budget(self, rest: str) -> None:
        self.run_statement("SHOW PRIVACY BUDGET")

    def _dot_audit(self, rest: str) -> None:
        if self.role != "curator":
            raise PrivacyError(".audit is for the curator only: the audit log names every user's "
                               "statements")
        try:
            n = int(rest or 20)
        except ValueError:
            n = 0
        if n <= 0:
            raise ShellError(f"usage: .audit [N] (the last N rows, N > 0), got {rest!r}")
        names, rows = self._query(
            "SELECT id, strftime(logged_at, '%Y-%m-%d %H:%M:%S') AS at, user_name AS user, role, "
            "client, outcome, route, epsilon, unit, reason, statement FROM "
            f"(SELECT * FROM {_CATALOG_SCHEMA}.audit_log ORDER BY id DESC LIMIT {n}) ORDER BY id")
        if not rows:
            self._print("(nothing in the audit log)")
            return
        rows = [r[:-1] + (_shorten(r[-1]),) for r in rows]
        self._print(render(self.mode, names, rows, headers=self.headers))

    def _dot_ledger(self, rest: str) -> None:
        self._local_only(".ledger")
        if self.role == "curator":
            entries = self.con.ledger.entries()
        else:
            entries = self.con.ledger.entries(self.con.user)
        rows = [(c.id, c.at.strftime("%Y-%m-%d %H:%M:%S") if c.at else None, c.user,
                 format_eps(c.epsilon), c.mechanism, _shorten(c.statement))
                for c in entries]
        if not rows:
            self._print("(no charges recorded)")
            return
        self._print(render(self.mode, ["id", "at", "user", "epsilon", "mechanism", "statement"], rows))

    def _dot_explain(self, rest: str) -> None:
        if self.role != "curator":
            raise PrivacyError(".explain is for the curator only: its diagnostics are functions "
                               "of the private data")
        self._local_only(".explain")
        sql = rest.strip().rstrip(";").strip()
        if not sql:
            raise ShellError("usage: .explain SQL")
        self._print(explain_query(self.con, sql))


def policies_available() -> bool:
    """Whether this version has the SQL policy statements (``SHOW POLICIES`` and its executor)."""
    import importlib.util

    from ...sql import policy_grammar as _policy_grammar

    return (("SHOW", "POLICIES") in getattr(_policy_grammar, "KEYWORD_PAIRS", set())
            and importlib.util.find_spec("provsql_dp.privacy.policy_statements") is not None)


def _shorten(s: str | None, n: int = 60) -> str | None:
    if s is None:
        return None
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def explain_query(con, sql: str) -> str:
    """The plan of ``sql`` and, for an aggregate, the recursive mechanism's private diagnostics
    at the query's ε (its ``WITH EPSILON``, else the session default, else 1). Curator only:
    nothing is charged and no noise is drawn, but the diagnostics reveal the data."""
    from ...sql.plan import Aggregate
    from ...sql.plan import explain as explain_plan

    eps, options = _epsilon_and_options(con, sql)
    plan = con.plan(sql)
    text = explain_plan(plan)
    if not isinstance(plan, Aggregate):
        return text + "\n(not an aggregate: no mechanism diagnostics)"
    if plan.group_by:
        return text + "\n(GROUP BY: per-group diagnostics are not shown)"
    try:
        from ...mechanisms.recursive import efficient as rm
        from ...privacy.answer import mechanism_kwargs, privacy_style
    except ImportError:  # pragma: no cover - the mechanism is part of the package
        return text
    kr = con.provenance(sql)
    if (kr.weights < 0).any():
        return text + "\n(signed SUM: its two parts are released separately; diagnostics not shown)"
    style, kwargs = mechanism_kwargs(options, float(eps), privacy_style(plan))
    ex = rm.explain(kr, float(eps), style, **kwargs)
    lines = [
        text,
        f"recursive mechanism diagnostics at ε = {format_eps(eps)} (curator only, nothing charged):",
        f"  true answer       {fmt_float(ex.true_answer)}",
        f"  participants      {ex.n_participants} ({ex.n_occurring} occurring), tuples {ex.n_tuples}",
        f"  Δ                 {fmt_float(ex.delta)} (j = {ex.delta_j}); median Δ̂ = {fmt_float(ex.delta_hat)}",
        f"  X                 {fmt_float(ex.x)} (i = {ex.x_index}); truncation bias {fmt_float(ex.truncation_bias)}",
        f"  LS~ / US~         {fmt_float(ex.ls_tilde)} / {fmt_float(ex.us_tilde)}",
        f"  accuracy (95%)    {', '.join(fmt_float(a) for a in ex.accuracy)}",
        "  parameters        " + ", ".join(f"{k}={cell(v)}" for k, v in ex.params.items()),
        f"  LPs               {ex.n_lps} in {ex.lp_seconds:.3f} s",
    ]
    return "\n".join(lines)


def _epsilon_and_options(con, sql: str):
    """ε and OPTIONS of a query's ``WITH EPSILON`` clause (defaults: session ε, else 1)."""
    eps = getattr(con, "default_epsilon", None) or Fraction(1)
    options: dict = {}
    try:
        tree = d.parse_one(sql)
    except (ParseError, TokenError):
        return eps, options
    if isinstance(tree, d.PrivateQuery) and tree.args.get("epsilon") is not None:
        eps, options = epsilon_clause(tree)
    return eps, options
