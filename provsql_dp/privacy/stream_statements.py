"""Running the stream statements: ``CREATE STREAM``, ``PUBLISH STREAM``, ``SHOW STREAMS``
(syntax: :mod:`provsql_dp.sql.stream_grammar`), on :class:`provsql_dp.policies.delta.Publisher`.

A stream is the SQL face of a publisher (papers/004 §6): ``CREATE STREAM`` charges the curator's
ledger the window budget ε once, and each ``PUBLISH STREAM`` is checked against the stream's
window account only (Theorem 2), so a stream can publish for as long as its windows allow,
whatever the ledger's total. ``PUBLISH`` runs the curator's query on the raw data, so it is a
curator statement; ``SHOW STREAMS`` lists what was published (public) to anyone.

>>> import provsql_dp
>>> con = provsql_dp.connect()
>>> _ = con.execute("SET PRIVACY BUDGET 2")
>>> _ = con.execute("CREATE TABLE visits(day INT, person INT)")
>>> con.execute("CREATE STREAM daily WINDOW 3 STEPS WITH EPSILON 1").fetchall()
[('created stream daily: any 3 consecutive steps spend at most ε = 1 (charged once)',)]
>>> cur = con.execute("PUBLISH STREAM daily STEP 1 WITH EPSILON 0.5 AS "
...                   "SELECT count(*) FROM visits WHERE day = 1")
>>> [c[0] for c in cur.description]
['stream', 'step', 'value', 'epsilon', 'noise_scale', 'available_at_step']
>>> con.execute("SHOW STREAMS").fetchall()
[('daily', 3, '1', 1, 1, 'open')]
"""

from __future__ import annotations

from .._numbers import format_eps
from ..errors import DeclarationError, OperationalError, ProgrammingError
from ..policies.delta.publisher import Publisher, list_publishers, published
from ..sql import stream_grammar as g
from ..sql.expressions import exact_number

__all__ = ["execute_stream_statement"]


def execute_stream_statement(con, tree):
    """Run one stream statement; returns a status message or ``(description, rows)``."""
    if isinstance(tree, g.ShowStreams):
        return _show(con, tree.name or None)
    if con.read_only:
        raise OperationalError("the database is open read-only; streams cannot be created or "
                               "published to")
    if isinstance(tree, g.CreateStream):
        name = tree.name
        if any(row[0] == name for row in list_publishers(con._duck)):
            raise DeclarationError(f"stream {name!r} already exists (SHOW STREAMS lists them); "
                                   "its window rule cannot change: use a new name")
        eps = exact_number(tree.args["epsilon"], "the stream's ε")
        window = int(tree.text("window"))
        if window < 1:
            raise DeclarationError("the window must be at least 1 step")
        Publisher(con, name, delta=window, epsilon=eps)
        return (f"created stream {name}: any {window} consecutive steps spend at most "
                f"ε = {format_eps(eps)} (charged once)")
    if isinstance(tree, g.Publish):
        pub = _existing(con, tree.name)
        sens = tree.args.get("sensitivity")
        sensitivity = float(exact_number(sens, "the sensitivity")) if sens is not None else 1.0
        query = tree.args["query"].sql(dialect="duckdb")
        step = int(tree.text("step"))
        rel = pub.release(step, query, exact_number(tree.args["epsilon"], "epsilon"),
                          sensitivity=sensitivity)
        return ([("stream", "VARCHAR"), ("step", "BIGINT"), ("value", "DOUBLE"),
                 ("epsilon", "VARCHAR"), ("noise_scale", "DOUBLE"),
                 ("available_at_step", "VARCHAR")],
                [(pub.name, rel.step, rel.value, format_eps(rel.epsilon), rel.scale,
                  format_eps(pub.available(step)))])
    raise ProgrammingError(f"unhandled stream statement {type(tree).__name__}")  # pragma: no cover


def _existing(con, name: str) -> Publisher:
    _known(con, name)
    return Publisher(con, name)


def _known(con, name: str) -> None:
    names = [row[0] for row in list_publishers(con._duck)]
    if name not in names:
        raise DeclarationError(f"stream {name!r} does not exist (streams: "
                               f"{', '.join(names) or 'none'}); create it with CREATE STREAM "
                               f"{name} WINDOW δ STEPS WITH EPSILON ε")


def _show(con, name: str | None):
    if name is None:
        rows = [(n, d, format_eps(e), r, s, st) for n, d, e, r, s, st in list_publishers(con._duck)]
        return ([("name", "VARCHAR"), ("window", "BIGINT"), ("epsilon", "VARCHAR"),
                 ("releases", "BIGINT"), ("last_step", "BIGINT"), ("state", "VARCHAR")], rows)
    _known(con, name)
    rows = [(r.step, r.value, format_eps(r.epsilon), r.statistic)
            for r in published(con._duck, name)]
    return ([("step", "BIGINT"), ("value", "DOUBLE"), ("epsilon", "VARCHAR"),
             ("statistic", "VARCHAR")], rows)
