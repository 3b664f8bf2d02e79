"""``provsql-dp shell``: an interactive SQL shell over a provsql_dp connection.

In the spirit of the duckdb and sqlite3 shells:

* statements end in ``;`` and may span lines (quotes, ``$$`` strings and comments are respected:
  the input is tokenized by our SQL dialect, so a ``;`` inside a string does not end anything);
* lines starting with ``.`` at the start of a statement are dot-commands (``.help`` lists them);
* when stdin and stdout are terminals, lines are read with :mod:`readline` (editing, history;
  the history file is ``~/.provsql_dp_history``, or ``$PROVSQL_DP_HISTORY``; set it to the empty
  string to keep no history);
* otherwise (``-c SQL``, or a script piped on stdin) the input is run without prompts.

Every private answer is printed with its ``± 95%`` noise bound (one column per row), followed by
one line giving the mechanism, the ε charged and the budget left. The bound covers the Laplace
noise only: the recursive mechanism's answer also under-estimates the true one by a truncation
bias that is never published.

Errors print one line, ``Error: …``, and the shell goes on with the next statement. The exit
status of a non-interactive run is 0 when every statement succeeded and 1 otherwise; like
sqlite3, the shell continues after an error unless ``--bail`` is given, which stops at the first
one. An interactive session exits with 0.

When a statement runs longer than about a second and stderr is a terminal, an elapsed-time
spinner is shown on stderr until it finishes.

Example
-------
>>> import io, provsql_dp
>>> out = io.StringIO()
>>> sh = Shell(provsql_dp.connect(), out=out, err=out)
>>> sh.run_text("CREATE TABLE t(a INT); INSERT INTO t VALUES (1), (2);\\nSELECT SUM(a) AS s FROM t;")
True
>>> print(out.getvalue().strip())
+---+
| s |
+---+
| 3 |
+---+
"""

from __future__ import annotations

import csv
import datetime as _dt
import decimal
import io
import json
import os
import sys
import threading
import time
from fractions import Fraction

from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from ..errors import Error, PrivacyError
from ..privacy.ledger import format_eps
from ..sql import dialect as d
from .dbapi.connection import split_statements

__all__ = ["Shell", "Progress", "statement_complete", "main", "MODES", "HISTORY_ENV"]

MODES = ("table", "csv", "json", "markdown")
HISTORY_ENV = "PROVSQL_DP_HISTORY"
PROGRESS_DELAY = 1.0  # seconds before the spinner shows
PROMPT = "provsql_dp> "
CONTINUE = "      ...> "
_CATALOG_SCHEMA = "_provsql_dp"
_MAX_READ_DEPTH = 16

# Statements that return rows worth showing even when DuckDB calls the column "Count".
_QUERY_WORDS = {"SELECT", "WITH", "FROM", "VALUES", "TABLE", "SHOW", "DESCRIBE", "DESC",
                "SUMMARIZE", "EXPLAIN", "PRAGMA", "CALL", "(", "PIVOT", "UNPIVOT"}

HELP = """\
Statements end with ';' and may span several lines. Besides DuckDB's SQL:
  PROTECT TABLE t [BY (c, ...)] [AS domain]   declare who is protected (curator)
  UNPROTECT TABLE t | SHOW PROTECTED
  SET PRIVACY BUDGET eps [FOR USER 'name'] | SHOW PRIVACY BUDGET
  SET PRIVACY EPSILON eps                      session default for aggregate queries
  <query> WITH EPSILON eps [OPTIONS (...)]     release one query privately
A private answer is shown with '± 95%', the noise bound at 95% (noise only; the recursive
mechanism also under-estimates by an unpublished truncation bias), the ε charged and the
budget left.

.budget              the privacy budget (a curator sees every user, an analyst their own)
.exit, .quit         leave the shell
.explain SQL         the plan of a query and, for an aggregate, the mechanism's private
                     diagnostics (curator only; nothing is charged, nothing is released)
.help                this message
.ledger              the charges recorded (a curator sees all, an analyst their own)
.mode MODE           output mode: table (default), csv, json, markdown
.policies            the Blowfish policies declared (when policy statements are available)
.protected           the PROTECT TABLE declarations
.read FILE           run the statements and dot-commands of FILE
.schema [TABLE]      CREATE statements of the tables and views (or of one)
.tables              the tables and views (protected ones marked)
.timer on|off        print the run time of each statement"""


class ShellError(Exception):
    """A dot-command's own error (printed as ``Error: …`` like any other)."""


# ---------------------------------------------------------------------- input
def statement_complete(text: str) -> bool:
    """Whether ``text`` ends a statement: its last token is a top-level ``;``.

    An unterminated string or block comment is incomplete (more lines follow); a ``;`` inside a
    string or after ``--`` does not count.

    >>> statement_complete("SELECT 1;"), statement_complete("SELECT ';'"), statement_complete("SELECT 'a;")
    (True, False, False)
    >>> statement_complete("SELECT 1; -- done"), statement_complete("SELECT 1 -- ;")
    (True, False)
    """
    if not text.strip():
        return False
    try:
        tokens = d.ProvDP().tokenize(text)
    except (TokenError, ParseError):
        return False
    return bool(tokens) and tokens[-1].token_type == TokenType.SEMICOLON


def statements(text: str) -> list[str]:
    """The statements of ``text``: :func:`provsql_dp.interfaces.dbapi.connection.split_statements` without the
    pieces that hold only comments (``SELECT 1; -- done`` is one statement).

    >>> statements("SELECT 1; -- done\\nSELECT ';' /* x */;")
    ['SELECT 1', "-- done\\nSELECT ';' /* x */"]
    """
    out = []
    for piece in split_statements(text):
        try:
            if not d.ProvDP().tokenize(piece):
                continue
        except (TokenError, ParseError):
            pass
        out.append(piece)
    return out


def _only_comments(text: str) -> bool:
    """Whether ``text`` holds nothing but whitespace and complete comments."""
    try:
        return not d.ProvDP().tokenize(text)
    except (TokenError, ParseError):
        return False


def _tokenizes(text: str) -> bool:
    try:
        d.ProvDP().tokenize(text)
    except (TokenError, ParseError):
        return False
    return True


# ---------------------------------------------------------------------- progress
class Progress:
    """An elapsed-time spinner on ``stream``, shown only if the work outlasts ``delay`` seconds
    and ``stream`` is a terminal. Use as a context manager around the work."""

    FRAMES = "|/-\\"

    def __init__(self, stream, delay: float = PROGRESS_DELAY, interval: float = 0.1):
        self.stream = stream
        self.delay = delay
        self.interval = interval
        self.shown = False
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Progress:
        isatty = getattr(self.stream, "isatty", None)
        if isatty is not None and isatty():
            self._start = time.monotonic()
            self._thread = threading.Thread(target=self._spin, name="provsql-dp-progress", daemon=True)
            self._thread.start()
        return self

    def _spin(self) -> None:
        if self._done.wait(self.delay):
            return
        i = 0
        while not self._done.is_set():
            elapsed = time.monotonic() - self._start
            try:
                self.stream.write(f"\r{self.FRAMES[i % len(self.FRAMES)]} running… {elapsed:.1f} s")
                self.stream.flush()
            except (OSError, ValueError):
                return
            self.shown = True
            i += 1
            self._done.wait(self.interval)

    def __exit__(self, *exc) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
            if self.shown:
                try:
                    self.stream.write("\r\x1b[K")
                    self.stream.flush()
                except (OSError, ValueError):
                    pass


# ---------------------------------------------------------------------- formatting
def _cell(v) -> str:
    """A value as shown in table and markdown modes."""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return _fmt_float(v)
    if isinstance(v, Fraction):
        return format_eps(v)
    return str(v)


def _fmt_float(v: float) -> str:
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


def render(mode: str, names: list[str], rows: list[tuple]) -> str:
    """Render a result in one of :data:`MODES` (without a trailing newline).

    >>> print(render("markdown", ["a", "b"], [(1, "x")]))
    | a | b |
    |--:|---|
    | 1 | x |
    """
    if mode == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(names)
        for r in rows:
            w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else _cell(v)) for v in r])
        return buf.getvalue().rstrip("\n")
    if mode == "json":
        objs = [json.dumps(dict(zip(names, (_json_value(v) for v in r))), ensure_ascii=False) for r in rows]
        return "[" + ",\n".join(objs) + "]"
    cells = [[_cell(v).replace("\n", "\\n") for v in r] for r in rows]
    numeric = [any(_is_numeric(r[i]) for r in rows) and all(_is_numeric(r[i]) or r[i] is None for r in rows)
               for i in range(len(names))]
    widths = [max([len(n)] + [len(c[i]) for c in cells]) for i, n in enumerate(names)]

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
        return "\n".join(out)
    sep = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    out = [sep, "| " + " | ".join(line(names, False)) + " |", sep]
    out += ["| " + " | ".join(line(c)) + " |" for c in cells]
    if cells:
        out.append(sep)
    return "\n".join(out)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    for ln in text.splitlines():
        if ln.strip():
            return ln.strip()
    return type(e).__name__


# ---------------------------------------------------------------------- the shell
class Shell:
    """Reads statements and dot-commands, runs them on ``con``, prints results and errors.

    Parameters
    ----------
    con : provsql_dp.Connection
    out, err : text streams for results and for errors/diagnostics
    mode : one of :data:`MODES`
    bail : stop at the first error (non-interactive runs)
    """

    def __init__(self, con, out=None, err=None, *, mode: str = "table", bail: bool = False,
                 progress_delay: float = PROGRESS_DELAY):
        self.con = con
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}")
        self.mode = mode
        self.bail = bail
        self.timer = False
        self.progress_delay = progress_delay
        self.failed = False  # some statement or command failed
        self.stopped = False  # .quit, or --bail after an error
        self._depth = 0

    @property
    def role(self) -> str:
        return getattr(self.con, "role", "curator")

    # ------------------------------------------------------------------ output
    def _print(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def error(self, message: str) -> None:
        self.failed = True
        self.out.flush()
        print(f"Error: {message}", file=self.err, flush=True)
        if self.bail:
            self.stopped = True

    # ------------------------------------------------------------------ input processing
    def run_text(self, text: str) -> bool:
        """Run a whole script (statements and dot-commands); True when nothing failed."""
        before = self.failed
        self.failed = False
        self.run_lines(text.splitlines())
        ok = not self.failed
        self.failed = before or self.failed
        return ok

    def run_lines(self, lines) -> None:
        """Run an iterable of input lines; a trailing statement without ``;`` is run at the end
        when it is complete SQL, else reported as incomplete."""
        buf: list[str] = []
        for raw in lines:
            if self.stopped:
                return
            buf = self.feed(buf, raw.rstrip("\r\n"))
        if not self.stopped:
            self.finish(buf)

    def feed(self, buf: list[str], line: str) -> list[str]:
        """Process one line given the pending statement lines ``buf``; returns the new buffer."""
        if buf and _only_comments("\n".join(buf)):
            buf = []  # comments between statements are not part of the next one
        if not buf and line.lstrip().startswith("."):
            self.dot(line.strip())
            return []
        if not buf and not line.strip():
            return []
        buf = buf + [line]
        text = "\n".join(buf)
        if statement_complete(text):
            self.run_sql(text)
            return []
        return buf

    def finish(self, buf: list[str]) -> None:
        text = "\n".join(buf)
        if not text.strip():
            return
        if _tokenizes(text):
            if statements(text):
                self.run_sql(text)
        else:
            self.error("incomplete input: an unterminated string or comment at the end")

    # ------------------------------------------------------------------ SQL
    def run_sql(self, text: str) -> None:
        try:
            stmts = statements(text)
        except Error as e:
            self.error(_first_line(e))
            return
        for stmt in stmts:
            if self.stopped:
                return
            self.run_statement(stmt)

    def run_statement(self, stmt: str) -> None:
        t0 = time.perf_counter()
        try:
            with Progress(self.err, delay=self.progress_delay):
                cur = self.con.cursor()
                cur.execute(stmt)
                rows = cur.fetchall() if cur.description is not None else None
        except KeyboardInterrupt:
            self.error("interrupted")
            return
        except Error as e:
            self.error(_first_line(e))
            return
        except Exception as e:  # a bug of ours: still one line, never a traceback
            self.error(f"internal error ({type(e).__name__}): {_first_line(e)}")
            return
        elapsed = time.perf_counter() - t0
        self.show(stmt, cur, rows)
        if self.timer:
            self._print(f"Run Time: {elapsed:.3f} s")

    def show(self, stmt: str, cur, rows) -> None:
        if cur.description is None or rows is None:
            return
        names = [c[0] for c in cur.description]
        first = stmt.lstrip("( \t\n").split(None, 1)
        first = first[0].upper() if first else ""
        if first not in _QUERY_WORDS:
            if names == ["Count"]:
                return  # DDL/DML: DuckDB reports a count, like sqlite3 we stay quiet
            if names == ["status"] and len(rows) == 1:
                self._print(str(rows[0][0]))  # our statements' confirmations
                return
        if names == ["explain_key", "explain_value"] and self.mode == "table":
            self._print("\n".join(str(r[1]).rstrip() for r in rows))  # DuckDB's EXPLAIN, as drawn
            return
        info = getattr(cur, "privacy", None)
        if info is not None:
            self.show_private(names, rows, info)
            return
        self._print(render(self.mode, names, rows))

    def show_private(self, names, rows, info) -> None:
        bounds = info.noise_bound(0.95)
        names = list(names) + ["± 95%"]
        rows = [tuple(r) + (b,) for r, b in zip(rows, bounds)]
        self._print(render(self.mode, names, rows))
        eps = format_eps(info.epsilon)
        per = ""
        if len(rows) > 1 and info.mechanism.startswith("recursive"):
            per = f" ({format_eps(info.epsilon / len(rows))} per group, {len(rows)} groups)"
        if len(rows) == 1:
            value = f"{_cell(rows[0][-2])} ± {_cell(rows[0][-1])} (95%), "
        else:
            value = ""
        user = getattr(self.con, "user", None)
        who = f" of user {user!r}" if user else ""
        line = (f"private answer: {value}{info.mechanism} mechanism, ε charged {eps}{per}, "
                f"budget left {format_eps(info.remaining)}{who}")
        # csv and json stay machine-readable on stdout: the summary goes to stderr there
        stream = self.out if self.mode in ("table", "markdown") else self.err
        print(line, file=stream, flush=True)

    # ------------------------------------------------------------------ dot-commands
    def dot(self, line: str) -> None:
        word, _, rest = line.partition(" ")
        rest = rest.strip()
        name = word[1:].lower()
        handler = getattr(self, f"_dot_{name}", None)
        if handler is None or not name.isidentifier():
            self.error(f"unknown command {word!r}; .help lists the commands")
            return
        try:
            handler(rest)
        except (Error, ShellError) as e:
            self.error(_first_line(e))
        except KeyboardInterrupt:
            self.error("interrupted")
        except Exception as e:
            self.error(f"internal error ({type(e).__name__}): {_first_line(e)}")

    def _query(self, sql: str, params=None) -> tuple[list[str], list[tuple]]:
        cur = self.con.cursor()
        cur.execute(sql, params)
        return [c[0] for c in cur.description], cur.fetchall()

    def _dot_help(self, rest: str) -> None:
        self._print(HELP)

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
            self.run_lines(text.splitlines())
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

    def _dot_ledger(self, rest: str) -> None:
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
        sql = rest.strip().rstrip(";").strip()
        if not sql:
            raise ShellError("usage: .explain SQL")
        self._print(explain_query(self.con, sql))


def policies_available() -> bool:
    """Whether this version has the SQL policy statements (``SHOW POLICIES`` and its executor)."""
    import importlib.util

    from ..sql import policy_grammar as _policy_grammar

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
    from ..sql.plan import Aggregate
    from ..sql.plan import explain as explain_plan

    eps, options = _epsilon_and_options(con, sql)
    plan = con.plan(sql)
    text = explain_plan(plan)
    if not isinstance(plan, Aggregate):
        return text + "\n(not an aggregate: no mechanism diagnostics)"
    if plan.group_by:
        return text + "\n(GROUP BY: per-group diagnostics are not shown)"
    try:
        from ..mechanisms import recursive as rm
        from ..privacy.answer import mechanism_kwargs, privacy_style
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
        f"  true answer       {_fmt_float(ex.true_answer)}",
        f"  participants      {ex.n_participants} ({ex.n_occurring} occurring), tuples {ex.n_tuples}",
        f"  Δ                 {_fmt_float(ex.delta)} (j = {ex.delta_j}); median Δ̂ = {_fmt_float(ex.delta_hat)}",
        f"  X                 {_fmt_float(ex.x)} (i = {ex.x_index}); truncation bias {_fmt_float(ex.truncation_bias)}",
        f"  LS~ / US~         {_fmt_float(ex.ls_tilde)} / {_fmt_float(ex.us_tilde)}",
        f"  accuracy (95%)    {', '.join(_fmt_float(a) for a in ex.accuracy)}",
        "  parameters        " + ", ".join(f"{k}={_cell(v)}" for k, v in ex.params.items()),
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
    if isinstance(tree, d.PrivateQuery):
        eps = d.exact_number(tree.args["epsilon"], "epsilon")
        try:
            options = d.mechanism_options(tree)
        except ParseError as e:
            raise ShellError(str(e)) from None
    return eps, options


# ---------------------------------------------------------------------- the command
def _history_path() -> str | None:
    env = os.environ.get(HISTORY_ENV)
    if env is not None:
        return env or None
    return os.path.join(os.path.expanduser("~"), ".provsql_dp_history")


def _interactive(shell: Shell, stdin, banner: str) -> None:
    """The read-eval-print loop on a terminal, with readline when available."""
    history = _history_path()
    try:
        import readline
    except ImportError:  # pragma: no cover - e.g. Windows without pyreadline
        readline = None
    if readline is not None and history:
        try:
            readline.read_history_file(history)
        except OSError:
            pass
        readline.set_history_length(2000)
    print(banner, file=shell.out, flush=True)
    buf: list[str] = []
    try:
        while not shell.stopped:
            try:
                line = input(CONTINUE if buf else PROMPT)
            except EOFError:
                print(file=shell.out, flush=True)
                break
            except KeyboardInterrupt:
                print("^C", file=shell.out, flush=True)
                buf = []
                continue
            shell.bail = False  # never leave an interactive session on an error
            buf = shell.feed(buf, line)
    finally:
        if readline is not None and history:
            try:
                readline.write_history_file(history)
            except OSError:
                pass


def _open(database: str, role: str, user: str | None, read_only: bool):
    """A connection for the shell: every statement commits at once, as in the duckdb and
    sqlite3 shells (explicit BEGIN … COMMIT still groups statements)."""
    from .. import connect

    con = connect(database, role=role, user=user, read_only=read_only)
    con.autocommit = True
    return con


def main(database: str = ":memory:", *, role: str = "curator", user: str | None = None,
         read_only: bool = False, command: str | None = None, bail: bool = False,
         mode: str = "table", stdin=None, stdout=None, stderr=None) -> int:
    """Run the shell; returns the exit status (see the module docstring)."""
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr
    try:
        con = _open(database, role, user, read_only)
    except (Error, ShellError) as e:
        print(f"Error: {_first_line(e)}", file=stderr, flush=True)
        return 1
    try:
        shell = Shell(con, stdout, stderr, mode=mode, bail=bail)
        if command is not None:
            shell.run_lines(command.splitlines())
            return 1 if shell.failed else 0
        if stdin.isatty() and stdout.isatty():
            from .. import __version__

            who = f"{role}" + (f" {getattr(con, 'user', user)!r}" if user else "")
            where = "an in-memory database" if database == ":memory:" else database
            banner = (f"provsql_dp {__version__} shell on {where} as {who}\n"
                      "Enter \".help\" for usage hints; statements end with ';'.")
            _interactive(shell, stdin, banner)
            return 0
        shell.run_lines(stdin)
        return 1 if shell.failed else 0
    finally:
        con.close()
