"""The shell proper: :class:`Shell` reads lines, gathers them into statements, runs them on
a connection and prints the results (private answers with their noise bound) and the errors.

Its dot-commands are in :mod:`.dot_commands`; the ``provsql-dp shell`` command that opens a
connection and feeds it lines is in :mod:`.command`.

>>> import io, provsql_dp
>>> out = io.StringIO()
>>> sh = Shell(provsql_dp.connect(), out=out, err=out, mode="csv")
>>> sh.run_lines(["CREATE TABLE t(a INT);", "INSERT INTO t", "VALUES (1), (2);", "SELECT a FROM t"])
>>> print(out.getvalue().strip())
a
1
2
"""

from __future__ import annotations

import re
import sys
import time

from ..._progress import listening
from ...errors import Error
from ...privacy.intervals import shown
from ...privacy.ledger import format_eps
from .dot_commands import DotCommands
from .io_commands import IOCommands
from .formatting import MODES, cell, first_line, render
from .interrupt import ctrl_c_interrupts
from .progress import PROGRESS_DELAY, Progress
from ...sql.suggest import with_hint
from .reading import only_comments, statement_complete, statements, tokenizes

__all__ = ["Shell"]

# Statements that return rows worth showing even when DuckDB calls the column "Count".
#: ``.maxrows``' default, as duckdb's CLI has it: a result with more rows shows its first and
#: last rows in the display modes (table, box, markdown)
MAXROWS = 40

_QUERY_WORDS = {"SELECT", "WITH", "FROM", "VALUES", "TABLE", "SHOW", "DESCRIBE", "DESC",
                "SUMMARIZE", "EXPLAIN", "PRAGMA", "CALL", "(", "PIVOT", "UNPIVOT"}


def _trailing_dot_command(buf: list[str], line: str) -> tuple[str, str | None]:
    """Split ``…; .command`` at the ``;`` that ends the statements when the rest of the line is
    a dot-command (as in ``-c "SELECT 1; .tables"``); else ``(text, None)``.

    >>> _trailing_dot_command(["SELECT 1; .mode csv"], "SELECT 1; .mode csv")
    ('SELECT 1;', '.mode csv')
    >>> _trailing_dot_command(["SELECT '; .x'"], "SELECT '; .x'")[1] is None
    True
    """
    before = "\n".join(buf[:-1])
    start = 0
    while True:
        i = line.find(";", start)
        if i < 0:
            return "\n".join(buf), None
        rest = line[i + 1:].strip()
        head = (before + "\n" if before else "") + line[:i + 1]
        if rest.startswith(".") and statement_complete(head):
            return head, rest
        start = i + 1


#: DuckDB's error for a query stopped by Ctrl-C (it catches the KeyboardInterrupt itself)
_INTERRUPTED = re.compile(r"\b(query )?interrupted\b", re.I)


class Shell(DotCommands, IOCommands):
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
        self.headers = True  # .headers on|off
        self.maxrows = MAXROWS  # .maxrows N: rows drawn in the display modes (0: all)
        #: ``.open FILE``: a callable(path) giving the new connection (set by :func:`.command.main`)
        self.opener = None
        self.stdout = self.out  # where .output with no file goes back to
        self.output_name = "stdout"  # what .show reports
        self._once = False  # .once: the next statement's output only, then back to stdout
        self.completer = None  # the interactive shell's tab completion (names re-read after a statement)
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
        self.run_lines(text.split("\n"))  # not splitlines(): \x1e in a string ends no line
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
        if buf and only_comments("\n".join(buf)):
            buf = []  # comments between statements are not part of the next one
        if not buf and line.lstrip().startswith("."):
            command, _, tail = line.strip().partition(";")
            if command.split()[0].lower() == ".explain" or not tail.strip():
                self.dot(line.strip())  # .explain takes SQL, whose ';' may sit in a string
                return []
            self.dot(command)  # ".mode csv; SELECT 1;": the command, then the rest of the line
            return [] if self.stopped else self.feed([], tail)
        if not buf and not line.strip():
            return []
        buf = buf + [line]
        text = "\n".join(buf)
        head, dot = _trailing_dot_command(buf, line)
        if dot is not None:  # "SELECT 1; .tables": the statements, then the dot-command
            self.run_sql(head)
            return [] if self.stopped else self.feed([], dot)  # the dot-command, and any rest
        if statement_complete(text):
            self.run_sql(text)
            return []
        return buf

    def finish(self, buf: list[str]) -> None:
        text = "\n".join(buf)
        if not text.strip():
            return
        if tokenizes(text):
            if statements(text):
                self.run_sql(text)
        else:
            self.error("incomplete input: an unterminated string or comment at the end")

    # ------------------------------------------------------------------ SQL
    def run_sql(self, text: str) -> None:
        try:
            stmts = statements(text)
        except Error as e:
            self.error(first_line(e))
            return
        for stmt in stmts:
            if self.stopped:
                return
            self.run_statement(stmt)

    def run_statement(self, stmt: str) -> None:
        if self.completer is not None:
            self.completer.invalidate()
        t0 = time.perf_counter()
        progress = Progress(self.err, delay=self.progress_delay, public_only=self.role != "curator")
        try:
            with progress, listening(progress.update, interruptible=True), \
                    ctrl_c_interrupts(self.con):
                cur = self.con.cursor()
                cur.execute(stmt)
                rows = cur.fetchall() if cur.description is not None else None
        except KeyboardInterrupt:
            self._interrupted(progress)
            return
        except Error as e:
            message = first_line(e)
            if _INTERRUPTED.search(message):  # DuckDB turns Ctrl-C into its own error
                self._interrupted(progress)
                return
            message = with_hint(message, stmt)  # the cursor's hint, or one for another error
            self.error(message)
            return
        except Exception as e:  # a bug of ours: still one line, never a traceback
            if _INTERRUPTED.search(first_line(e)):  # DuckDB's "Query interrupted"
                self._interrupted(progress)
            else:
                self.error(f"internal error ({type(e).__name__}): {first_line(e)}")
            return
        elapsed = time.perf_counter() - t0
        try:
            self.show(stmt, cur, rows)
            self.notices(getattr(cur, "notices", ()))
            if self.timer:
                self._print(f"Run Time: {elapsed:.3f} s")
        finally:
            if self._once:
                self.redirect(None)

    def _interrupted(self, progress) -> None:
        if getattr(self.con, "remote", False):  # the charge, if any, was the server's: not seen here
            self.error("interrupted: the server stopped the statement; ε it had charged before the "
                       "interrupt stays spent (.budget shows what is left)")
        elif progress.charged:
            self.error("interrupted after the release was charged: that ε stays spent "
                       "(nothing was released); .budget shows what is left")
        else:
            self.error("interrupted (nothing was charged)")

    def _render(self, names, rows) -> str:
        return render(self.mode, names, rows, headers=self.headers, maxrows=self.maxrows)

    def notices(self, notes) -> None:
        """A server's notices during the statement (``--server``: what a release charged), after
        its rows: on stdout in the display modes, on stderr in the machine-readable ones."""
        stream = self.out if self.mode in ("table", "box", "markdown") else self.err
        for note in notes:
            print(note, file=stream, flush=True)

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
        self._print(self._render(names, rows))

    def show_private(self, names, rows, info) -> None:
        if info.estimates:  # EXPLAIN PRIVACY … ESTIMATE ERROR: rows as they are, then the charge
            self._print(self._render(names, rows))
            user = getattr(self.con, "user", None)
            who = f" of user {user!r}" if user else ""
            stream = self.out if self.mode in ("table", "box", "markdown") else self.err
            print(f"private error estimate: ε charged {format_eps(info.epsilon)}, budget left "
                  f"{format_eps(info.remaining)}{who} (the release itself will be charged its "
                  "own ε)", file=stream, flush=True)
            return
        # the same intervals as cursor.privacy.intervals, the demo and fetchdf (privacy.intervals)
        ivs = info.intervals(0.95)
        what = info.covers()
        one = _released_column(info)  # the one released value column, wherever it is
        if info.columns:  # several aggregates: an interval after each released column
            k = len(info.columns)
            keys = list(names)[:-k]
            public = set(info.public_columns)  # GROUP BY keys among the values: no interval
            names = keys + [n for j, c in enumerate(info.columns)
                            for n in ((c,) if j in public else (c, f"{c} 95% interval"))]
            rows = [tuple(r[:-k]) + tuple(x for j, (v, iv) in enumerate(zip(r[-k:], ivs_r))
                                          for x in ((v,) if j in public else (v, shown(iv))))
                    for r, ivs_r in zip(rows, ivs)]
            at = None if one is None else names.index(f"{info.columns[one]} 95% interval") - 1
        else:
            names = list(names) + ["95% interval"]
            rows = [tuple(r) + (shown(iv[0]),) for r, iv in zip(rows, ivs)]
            at = len(names) - 2
        self._print(self._render(names, rows))
        eps = format_eps(info.epsilon)
        per = ""
        if len(rows) > 1 and one is not None and info.mechanism in (
                "laplace", "recursive", "recursive-signed"):
            first = info.releases[0][one] if info.columns else info.releases[0]
            if abs(float(first.epsilon) - float(info.epsilon)) < 1e-12:
                per = f" (every one of {len(rows)} groups at the full ε: a participant is in one group)"
            else:
                per = f" ({format_eps(info.epsilon / len(rows))} per group, {len(rows)} groups)"
        value = ""
        if len(rows) == 1 and one is not None:
            value = f"{cell(rows[0][at])}, 95% interval {rows[0][at + 1]}, "
        user = getattr(self.con, "user", None)
        who = f" of user {user!r}" if user else ""
        unit = "ρ" if getattr(info, "unit", "epsilon") == "rho" else "ε"
        if getattr(info, "delta", 0):
            eps = f"{eps}, δ {info.delta:g}"
        line = (f"private answer: {value}{info.mechanism} mechanism, {unit} charged {eps}{per}, "
                f"budget left {format_eps(info.remaining)}{who}")
        labels = info.columns or ("",)
        line += "".join(f"\n{coverage_sentence(label, w)}" for j, (label, w)
                        in enumerate(zip(labels, what)) if j not in info.public_columns)
        # csv, json, line, list and html stay machine-readable: the summary goes to stderr there
        stream = self.out if self.mode in ("table", "box", "markdown") else self.err
        print(line, file=stream, flush=True)


def _released_column(info) -> int | None:
    """The position among ``info.columns`` (0 for a single column) of the one value column the
    answer releases, the others being public GROUP BY keys (``SELECT count(*) AS n, dept``);
    None when it releases several."""
    if not info.columns:
        return 0
    released = [j for j in range(len(info.columns)) if j not in info.public_columns]
    return released[0] if len(released) == 1 else None


def coverage_sentence(column: str, what: str) -> str:
    """The shell's line on what a release's 95 % interval holds (``what``: :func:`~provsql_dp.
    privacy.intervals.covers`), worded as a probability, never as a fact about this release.

    >>> coverage_sentence("", "the true count")
    'the 95% interval holds the true count with probability ≥ 95%'
    >>> coverage_sentence("n", "nothing: a signed SUM's truncations are unbounded")
    "n: no interval: a signed SUM's truncations are unbounded"
    >>> coverage_sentence("", "noise only: the truncation is not bounded")
    'the 95% interval bounds the noise only: the truncation is not bounded'
    """
    subject = f"{column}: the 95% interval" if column else "the 95% interval"
    if what.startswith("nothing"):
        return f"{column + ': ' if column else ''}no interval{what[len('nothing'):]}"
    if what.startswith("noise only"):
        return f"{subject} bounds the {what}"
    return f"{subject} holds {what} with probability ≥ 95%"
