"""``SHOW <name>``: our SHOW statements beside DuckDB's ``SHOW table`` (describe a table).

Our SHOW statements are keyword phrases: ``SHOW AUDIT LOG``, ``SHOW GROUP KEYS``, ``SHOW PRIVACY
BUDGET`` (two words at least), ``SHOW BOUNDS``, ``SHOW POLICIES``, ``SHOW STREAMS``, ``SHOW
PROTECTED [TABLES]`` (one word suffices). DuckDB's ``SHOW t`` describes table ``t``. The two are
told apart from the statement's words alone — never from the schema, so a statement means the same
whatever tables exist:

* ``SHOW "name"`` (quoted) is DuckDB's, whatever the name;
* ``SHOW`` and one word that begins only a two-word statement of ours (``audit``, ``group``,
  ``privacy``), then the end of the statement: DuckDB's ``SHOW`` of the table of that name;
* for an analyst, DuckDB's ``SHOW t`` is answered as ``DESCRIBE t`` (:func:`shown_table`: from
  the catalog, like every analyst ``DESCRIBE``);
* for the curator, DuckDB's ``SHOW t`` runs with ``t``'s names quoted
  (:func:`provsql_dp.sql._quoted_show.quoted_show`): ``SHOW group`` — a table named with a
  keyword — is otherwise DuckDB's own parse error;
* a complete statement of ours (``SHOW bounds``, ``SHOW policies`` …) stays ours: a user's table
  of that name is described by ``SHOW "bounds"``, ``SHOW TABLE bounds``,
  ``SHOW main.bounds`` or ``DESCRIBE bounds`` — the grammar (``grammar/provsql_dp.ebnf``) says so.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("CREATE TABLE audit(x INT, note VARCHAR)")
>>> [r[0] for r in con.execute("SHOW audit").fetchall()]
['x', 'note']
>>> [d[0] for d in con.execute("SHOW AUDIT LOG LIMIT 1").description][:3]
['id', 'logged_at', 'user_name']
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.tokens import TokenType

__all__ = ["show_of_a_table", "shown_table", "PHRASE_ONLY"]

#: DuckDB's own ``SHOW <word>`` statements (not a table)
_DUCKDB_SHOW_WORDS = frozenset({"TABLES", "ALL", "DATABASES", "FUNCTIONS", "SCHEMAS",
                                "VARIABLES", "USERS", "SECRETS"})

#: the words that begin only a two-word SHOW statement of ours
PHRASE_ONLY = frozenset({"AUDIT", "GROUP", "PRIVACY"})


def show_of_a_table(tokens) -> bool:
    """Whether ``tokens`` (the next three of the statement) are DuckDB's ``SHOW`` of a table:
    ``SHOW "name" …`` (quoted: never a keyword of ours), or ``SHOW <word>`` and the end of the
    statement with ``<word>`` one of :data:`PHRASE_ONLY`."""
    if len(tokens) < 2 or tokens[0].text.upper() != "SHOW":
        return False
    word = tokens[1]
    if word.token_type == TokenType.IDENTIFIER:  # a quoted name is never our keyword
        return True
    if word.token_type == TokenType.STRING or word.text.upper() not in PHRASE_ONLY:
        return False
    return len(tokens) == 2 or tokens[2].token_type == TokenType.SEMICOLON


def shown_table(tree: exp.Expression) -> exp.Table | None:
    """The table of DuckDB's ``SHOW t`` (``t``, ``schema.t``, quoted names) as parsed — sqlglot
    keeps it as a command — or None for any other SHOW.

    >>> from provsql_dp.sql.dialect import parse_one
    >>> shown_table(parse_one('SHOW main."audit"')).sql(dialect="duckdb")
    'main."audit"'
    >>> shown_table(parse_one("SHOW TABLES")) is None
    True
    >>> shown_table(parse_one("SHOW TABLE bounds")).sql(dialect="duckdb")
    'bounds'

    """
    if not (isinstance(tree, exp.Command) and str(tree.this).upper() == "SHOW"):
        return None
    rest = tree.expression
    rest = (rest.name if isinstance(rest, exp.Literal) else rest if isinstance(rest, str)
            else "").strip()
    if not rest or rest.split()[0].upper() in _DUCKDB_SHOW_WORDS:
        return None
    if rest.split()[0].upper() == "TABLE" and len(rest.split()) > 1:  # SHOW TABLE t: DuckDB's too
        rest = rest.split(None, 1)[1]
    try:
        table = exp.to_table(rest, dialect="duckdb")
    except (ParseError, ValueError):
        return None
    if not isinstance(table, exp.Table) or any(
            v for k, v in table.args.items() if k not in ("this", "db", "catalog")) or not all(
            isinstance(p, exp.Identifier) for p in table.parts) or any(
            not p.quoted and not p.name.replace("_", "a").isalnum() for p in table.parts):
        return None
    return table

