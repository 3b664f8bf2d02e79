"""Tab completion for the interactive shell (readline): dot-commands at the start of a line;
elsewhere SQL keywords, the keywords of our statements, table names and column names
(``alias.col`` completes after a dot too).

Names come from ``SHOW ALL TABLES`` — what the connection's role may list anyway (an analyst sees
the names and columns of the tables, never their rows) — and are re-read after each statement.

>>> import provsql_dp
>>> from provsql_dp.interfaces.shell import Shell
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE employees(salary INT, dept INT)")
>>> c = Completer(Shell(con))
>>> c.candidates("empl", "SELECT * FROM empl"), c.candidates("sal", "SELECT sal")
(['employees'], ['salary'])
>>> c.candidates("EPSI", "SELECT 1 WITH EPSI"), c.candidates(".sc", ".sc")
(['EPSILON'], ['.schema'])
>>> c.candidates("e.d", "SELECT e.d")
['e.dept']
"""

from __future__ import annotations

from ...sql import dialect as d
from .statement_help import KEYWORDS

__all__ = ["Completer", "install"]

_DELIMS = " \t\n(),;=<>+-*/|'\"`"


def _sql_keywords() -> list[str]:
    words = {k for k in d.ProvDP.Tokenizer.KEYWORDS if k.replace("_", "").isalpha() and " " not in k}
    return sorted(words | set(KEYWORDS))


class Completer:
    """Completes words for readline from the shell's connection (see the module docstring)."""

    def __init__(self, shell):
        self.shell = shell
        self.keywords = _sql_keywords()
        self._names: tuple[list[str], list[str]] | None = None
        self._matches: list[str] = []

    def invalidate(self) -> None:
        """Forget the table and column names (after a statement that may have changed them)."""
        self._names = None

    def names(self) -> tuple[list[str], list[str]]:
        """(tables, columns) the connection lists; empty when it cannot list them."""
        if self._names is None:
            tables, columns = set(), set()
            try:
                cur = self.shell.con.cursor()
                cur.execute("SHOW ALL TABLES")
                cols = [c[0] for c in cur.description]
                i_s, i_n, i_c = cols.index("schema"), cols.index("name"), cols.index("column_names")
                for row in cur.fetchall():
                    if row[i_s] == "_provsql_dp":
                        continue
                    tables.add(row[i_n] if row[i_s] == "main" else f"{row[i_s]}.{row[i_n]}")
                    tables.add(row[i_n])
                    columns.update(row[i_c] or ())
            except Exception:  # completion must never break the prompt
                pass
            self._names = (sorted(tables), sorted(columns))
        return self._names

    def candidates(self, text: str, line: str) -> list[str]:
        """What ``text`` (the word under the cursor, ``line`` the input so far) may become."""
        if line.lstrip().startswith(".") and line.lstrip() == text:
            commands = sorted("." + n[5:] for n in dir(self.shell) if n.startswith("_dot_"))
            return [c for c in commands if c.startswith(text.lower())]
        tables, columns = self.names()
        if "." in text:
            head, _, tail = text.rpartition(".")
            out = [f"{head}.{c}" for c in columns if c.lower().startswith(tail.lower())]
            out += [t for t in tables if t.lower().startswith(text.lower())]
            return sorted(set(out))
        low = text.lower()
        names = [n for n in (*tables, *columns) if n.lower().startswith(low)]
        upper = not text or text.isupper()
        words = [w if upper else w.lower() for w in self.keywords if w.lower().startswith(low)]
        return sorted(set(names)) + [w for w in words if w not in names]

    def complete(self, text: str, state: int) -> str | None:
        """The readline completer protocol: the ``state``-th candidate, or None."""
        if state == 0:
            try:
                import readline

                line = readline.get_line_buffer()[: readline.get_endidx()]
            except Exception:
                line = text
            try:
                self._matches = self.candidates(text, line)
            except Exception:
                self._matches = []
        return self._matches[state] if state < len(self._matches) else None


def install(shell, readline) -> Completer:
    """Bind Tab to a :class:`Completer` of ``shell`` in ``readline`` (GNU readline or libedit)."""
    completer = Completer(shell)
    readline.set_completer(completer.complete)
    readline.set_completer_delims(_DELIMS)
    if "libedit" in (getattr(readline, "__doc__", "") or ""):
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")
    shell.completer = completer
    return completer
