"""``provsql-dp shell``: an interactive SQL shell over a provsql_dp connection.

In the spirit of the duckdb and sqlite3 shells:

* statements end in ``;`` and may span lines (quotes, ``$$`` strings and comments are respected:
  the input is tokenized by our SQL dialect, so a ``;`` inside a string does not end anything);
* lines starting with ``.`` at the start of a statement are dot-commands (``.help`` lists them
  and every statement of ours, each with an example); a dot-command may also follow the
  statements of a line after their ``;`` (``SELECT 1; .tables``), and a ``;`` ends a dot-command
  too (``.mode csv; SELECT 1;``) except ``.explain``, which takes the rest of the line;
* when stdin and stdout are terminals, lines are read with :mod:`readline` (editing, history,
  Tab completion; the history file is ``~/.provsql_dp_history``, or ``$PROVSQL_DP_HISTORY``; set
  it to the empty string to keep no history);
* otherwise (a script file, ``-c SQL``, or a script piped on stdin) the input is run without
  prompts.

The package, by job: :mod:`.session` (the :class:`Shell`: lines into statements, results and
errors printed), :mod:`.dot_commands`, :mod:`.io_commands` (``.output``, ``.once``, ``.headers``,
``.show``, ``.import``, ``.dump``), :mod:`.dump` and :mod:`.policy_sql` (the database as SQL),
:mod:`.statement_help` (``.help``'s statements, "did you mean"), :mod:`.completion` (Tab),
:mod:`.reading` (when a statement is complete), :mod:`.formatting` (the output modes),
:mod:`.progress` (the status line) and :mod:`.command` (the ``provsql-dp shell`` command:
:func:`main`).

Every private answer is printed with its ``95% interval`` (one column per value column, from
:mod:`provsql_dp.privacy.intervals`, as the demo, ``cursor.privacy`` and the web explorer show
it), followed by one line giving the mechanism, the ε charged and the budget left, and one saying
what the interval covers: two-sided ``[lo, hi]`` for the Laplace route and Blowfish, one-sided
``≥ lo`` for the recursive mechanism and R2T (their truncation can only lower the answer and is
not published), ``—`` where no interval is honest (a signed SUM).

Errors print one line, ``Error: …``, and the shell goes on with the next statement. The exit
status of a non-interactive run is 0 when every statement succeeded and 1 otherwise; like
sqlite3, the shell continues after an error unless ``--bail`` is given, which stops at the first
one. An interactive session exits with 0.

When a statement runs longer than about a second and stderr is a terminal, a status line on
stderr shows the phase under way, its count and the elapsed time (for an analyst only the
charge and the elapsed time: later phases depend on the data). Ctrl-C interrupts the statement,
even inside an LP; ε charged before the interrupt stays spent, and the error says so.

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

from .command import HISTORY_ENV, main
from .dot_commands import ShellError, explain_query, policies_available
from .formatting import MODES, render
from .progress import Progress
from .reading import statement_complete, statements
from .session import Shell

__all__ = ["Shell", "Progress", "statement_complete", "main", "MODES", "HISTORY_ENV", "render",
           "statements", "policies_available", "explain_query", "ShellError"]
