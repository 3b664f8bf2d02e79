"""The shell's dot-commands for input and output: ``.output``/``.once`` (where results go),
``.headers``, ``.show`` (the settings), ``.import`` (a CSV, Parquet or JSON file into a table)
and ``.dump`` (the database as SQL, see :mod:`.dump`). A mixin of :class:`.session.Shell`.

``.import`` and ``.dump`` are the curator's: an analyst may neither load files into the database
nor read protected rows, so both are refused on an analyst's connection before anything happens.

>>> import io, provsql_dp
>>> from provsql_dp.interfaces.shell import Shell
>>> out = io.StringIO()
>>> sh = Shell(provsql_dp.connect(), out=out, err=out, mode="list")
>>> sh.run_text(".headers off\\nSELECT 1 AS a, 'x' AS b;")
True
>>> print(out.getvalue().strip())
1|x
"""

from __future__ import annotations

import os

from ...errors import PrivacyError
from .formatting import cell

__all__ = ["IOCommands", "import_sql", "READERS"]

#: ``.import`` readers by option and by file extension (DuckDB's own readers).
READERS = {"csv": "read_csv", "parquet": "read_parquet", "json": "read_json_auto"}
_EXTENSIONS = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".parquet": "parquet", ".pq": "parquet",
               ".json": "json", ".ndjson": "json", ".jsonl": "json"}


def _sql_string(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _ident(parts: str) -> str:
    """``schema.table`` or ``table`` as quoted identifiers (a quoted name kept as written)."""
    out = []
    for p in parts.split("."):
        p = p.strip()
        if len(p) >= 2 and p[0] == p[-1] == '"':
            out.append(p)
        else:
            out.append('"' + p.replace('"', '""') + '"')
    return ".".join(out)


def import_sql(path: str, table: str, kind: str, exists: bool) -> str:
    """The statement ``.import`` runs: a new table from the file, or its rows appended to an
    existing table (columns by position, as sqlite3 and duckdb do).

    >>> import_sql("/d/x.csv", "t", "csv", exists=False)
    'CREATE TABLE "t" AS SELECT * FROM read_csv(\\'/d/x.csv\\')'
    >>> import_sql("/d/x.parquet", "s.t", "parquet", exists=True)
    'INSERT INTO "s"."t" SELECT * FROM read_parquet(\\'/d/x.parquet\\')'
    """
    source = f"{READERS[kind]}({_sql_string(path)})"
    if exists:
        return f"INSERT INTO {_ident(table)} SELECT * FROM {source}"
    return f"CREATE TABLE {_ident(table)} AS SELECT * FROM {source}"


class IOCommands:
    """``.output``, ``.once``, ``.headers``, ``.show``, ``.import`` and ``.dump``."""

    # ------------------------------------------------------------------ where output goes
    def redirect(self, path: str | None, *, once: bool = False) -> None:
        """Send results to ``path`` (``None``: back to stdout); the previous file is closed."""
        if self.out is not self.stdout:
            try:
                self.out.close()
            except OSError:
                pass
        self.out, self.output_name, self._once = self.stdout, "stdout", False
        if path is None:
            return
        path = os.path.expanduser(path)
        try:
            self.out = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed by the next redirect
        except OSError as e:
            from .dot_commands import ShellError

            raise ShellError(f"cannot write {path}: {e.strerror or e}") from None
        self.output_name, self._once = path, once

    def _dot_output(self, rest: str) -> None:
        name = rest.strip().strip("'\"")
        self.redirect(None if name in ("", "stdout") else name)

    def _dot_once(self, rest: str) -> None:
        from .dot_commands import ShellError

        name = rest.strip().strip("'\"")
        if not name:
            raise ShellError("usage: .once FILE (the next statement's output goes to FILE)")
        self.redirect(name, once=True)

    def _dot_headers(self, rest: str) -> None:
        from .dot_commands import ShellError

        if rest.lower() not in ("on", "off"):
            raise ShellError("usage: .headers on|off")
        self.headers = rest.lower() == "on"

    def _dot_show(self, rest: str) -> None:
        eps = getattr(self.con, "default_epsilon", None)
        settings = [
            ("role", self.role),
            ("user", getattr(self.con, "user", None) or ""),
            ("database", getattr(self.con, "database", None) or ""),
            ("mode", self.mode),
            ("headers", "on" if self.headers else "off"),
            ("maxrows", str(self.maxrows)),
            ("output", self.output_name + (" (once)" if self._once else "")),
            ("timer", "on" if self.timer else "off"),
            ("bail", "on" if self.bail else "off"),
            ("epsilon", cell(eps) if eps is not None else "(none: private queries need WITH EPSILON)"),
        ]
        width = max(len(k) for k, _ in settings)
        self._print("\n".join(f"{k.rjust(width)}: {v}" for k, v in settings))

    # ------------------------------------------------------------------ curator only
    def _curator_only(self, command: str, why: str) -> None:
        if self.role != "curator":
            raise PrivacyError(f"{command} is for the curator only: {why}")

    def _dot_import(self, rest: str) -> None:
        from .dot_commands import ShellError

        self._curator_only(".import", "an analyst cannot load files into the database")
        self._local_only(".import")
        words = rest.split()
        kind = None
        while words and words[0].startswith("--"):
            opt = words.pop(0)[2:].lower()
            if opt not in READERS:
                raise ShellError(f"unknown option --{opt} of .import; use --csv, --parquet or --json")
            kind = opt
        if len(words) != 2:
            raise ShellError("usage: .import [--csv|--parquet|--json] FILE TABLE")
        path, table = os.path.expanduser(words[0].strip("'\"")), words[1].rstrip(";")
        if not os.path.isfile(path):
            raise ShellError(f"cannot read {path}: no such file")
        if kind is None:
            ext = os.path.splitext(path)[1].lower()
            kind = _EXTENSIONS.get(ext, "csv")
        names, rows = self._query("SHOW ALL TABLES")
        i_schema, i_name = names.index("schema"), names.index("name")
        wanted = table.replace('"', "").lower().split(".")
        exists = any([r[i_name].lower()] == wanted or [r[i_schema].lower(), r[i_name].lower()] == wanted
                     for r in rows)
        before = self._count(table) if exists else 0
        self.con.cursor().execute(import_sql(path, table, kind, exists))
        n = self._count(table) - before
        self._print(f"imported {n} row{'s' if n != 1 else ''} from {os.path.basename(path)} "
                    f"into {'existing' if exists else 'new'} table {table}")

    def _count(self, table: str) -> int:
        return int(self._query(f"SELECT COUNT(*) FROM {_ident(table)}")[1][0][0])

    def _dot_dump(self, rest: str) -> None:
        from .dump import dump

        self._curator_only(".dump", "it writes every row of every table, protected ones included")
        self._local_only(".dump")
        for line in dump(self.con, rest.strip().strip("'\";") or None):
            self._print(line)

