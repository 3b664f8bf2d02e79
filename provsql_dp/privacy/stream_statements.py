"""Running the stream statements: ``CREATE STREAM``, ``PUBLISH STREAM``, ``SHOW STREAMS``
(syntax: :mod:`provsql_dp.sql.stream_grammar`), on :class:`provsql_dp.policies.delta.Publisher`.

A stream is the SQL face of a publisher (Fang & Chang §6): ``CREATE STREAM`` charges the curator's
ledger the window budget ε once, and each ``PUBLISH STREAM`` is checked against the stream's
window account only (Theorem 2), so a stream can publish for as long as its windows allow,
whatever the ledger's total. ``PUBLISH`` runs the curator's query on the raw data, so it is a
curator statement; ``SHOW STREAMS`` lists what was published (public) to anyone. Each step's
query reads that step's rows only (Theorem 2's premise, the curator's to keep: see
:mod:`.stream_sensitivity` for the neighbourhood and the sensitivity it takes).

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

With ``ALLOCATE`` the stream picks each step's ε (Fang & Chang §7, public weights only):

>>> msg = con.execute("CREATE STREAM weekly WINDOW 2 STEPS WITH EPSILON 0.5 "
...                   "ALLOCATE OFFLINE WEIGHTS (1, 1, 0, 4)").fetchone()[0]
>>> msg.split("; ")[1]
'offline allocation over steps 1–4 (Fang & Chang Problem 1): 0.25, 0.25, 0, 0.5'
>>> con.execute("PUBLISH STREAM weekly STEP 4 AS SELECT count(*) FROM visits WHERE day = 4"
...             ).fetchone()[3]
'0.5'
"""

from __future__ import annotations

from .._numbers import format_eps
from ..errors import DeclarationError, OperationalError, ProgrammingError
from ..policies.delta.publisher import Publisher, list_publishers, published
from ..policies.delta.schedule import Schedule
from ..provenance.backends import refuse_attached
from ..sql import stream_grammar as g
from ..sql.expressions import exact_number
from .stream_sensitivity import stream_sensitivity

__all__ = ["execute_stream_statement", "PUBLISH_COLUMNS", "STREAMS_COLUMNS", "PUBLISHED_COLUMNS"]

#: the columns of ``PUBLISH STREAM`` (a release), ``SHOW STREAMS`` and ``SHOW STREAMS name``
PUBLISH_COLUMNS = [("stream", "VARCHAR"), ("step", "BIGINT"), ("value", "DOUBLE"),
                   ("epsilon", "VARCHAR"), ("noise_scale", "DOUBLE"),
                   ("available_at_step", "VARCHAR")]
STREAMS_COLUMNS = [("name", "VARCHAR"), ("window", "BIGINT"), ("epsilon", "VARCHAR"),
                   ("releases", "BIGINT"), ("last_step", "BIGINT"), ("state", "VARCHAR")]
PUBLISHED_COLUMNS = [("step", "BIGINT"), ("value", "DOUBLE"), ("epsilon", "VARCHAR"),
                     ("statistic", "VARCHAR"), ("sensitivity", "VARCHAR")]


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
        if eps <= 0:
            raise DeclarationError("the stream's ε must be positive")
        planned = _allocation(tree.args.get("allocate"), window, eps)  # before any charge
        pub = Publisher(con, name, delta=window, epsilon=eps)
        msg = (f"created stream {name}: any {window} consecutive steps spend at most "
               f"ε = {format_eps(eps)} (charged once)")
        if planned is not None:
            msg += "; " + Schedule.store(pub, planned).describe()
        return msg
    if isinstance(tree, g.Publish):
        pub = _existing(con, tree.name)
        sens = tree.args.get("sensitivity")
        stated = exact_number(sens, "the sensitivity") if sens is not None else None
        refuse_attached(con, tree.args["query"].sql(dialect="duckdb"), "PUBLISH")
        step = int(tree.text("step"))
        schedule = Schedule.load(pub)
        weight = tree.args.get("weight")
        weight = exact_number(weight, "the weight") if weight is not None else None
        if schedule is None:
            if weight is not None:
                raise ProgrammingError(f"WEIGHT applies to a stream created with ALLOCATE; "
                                       f"stream {pub.name!r} takes WITH EPSILON ε per release")
            if tree.args.get("epsilon") is None:
                raise ProgrammingError(f"stream {pub.name!r} has no allocation: give the step's "
                                       "budget with WITH EPSILON ε before AS")
            eps = exact_number(tree.args["epsilon"], "epsilon")
        else:
            if tree.args.get("epsilon") is not None:
                raise ProgrammingError(f"stream {pub.name!r} allocates each step's ε itself "
                                       f"({schedule.mode}): drop WITH EPSILON")
            eps = schedule.epsilon_for(step, weight)
        # the planner's sensitivity where it derives one: the floor (privacy.stream_sensitivity)
        sensitivity, basis, query = stream_sensitivity(con, tree.args["query"], stated, float(eps))
        rel = pub.release(step, query, eps, sensitivity=sensitivity, basis=basis,
                          shown=tree.args["query"].sql(dialect="duckdb"), saturate=True)
        if schedule is not None:
            schedule.commit(step, weight, eps)
        return (list(PUBLISH_COLUMNS),
                [(pub.name, rel.step, rel.value, format_eps(rel.epsilon), rel.scale,
                  format_eps(pub.available(step)))])
    raise ProgrammingError(f"unhandled stream statement {type(tree).__name__}")  # pragma: no cover


def _allocation(node, window: int, eps):
    """The planned schedule of an ``ALLOCATE`` clause (None without one); refused clauses
    raise before the stream is created, so they charge nothing."""
    if node is None:
        return None
    mode = node.text("mode").lower()
    if mode == "offline":
        return Schedule.plan(mode, window, eps,
                             weights=[exact_number(w, "a weight") for w in node.expressions])
    samples = node.args.get("samples")
    return Schedule.plan(mode, window, eps, horizon=int(node.text("horizon")),
                         probability=exact_number(node.args["probability"], "the probability"),
                         samples=int(samples.name) if samples is not None else None)


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
        return list(STREAMS_COLUMNS), rows
    _known(con, name)
    rows = [(r.step, r.value, format_eps(r.epsilon), r.statistic, r.sensitivity)
            for r in published(con._duck, name)]
    return list(PUBLISHED_COLUMNS), rows
