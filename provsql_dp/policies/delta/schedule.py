"""A stream's budget allocation (Fang & Chang §7), kept in the database beside its window account.

``CREATE STREAM … ALLOCATE`` (:mod:`provsql_dp.privacy.stream_statements`) attaches a
:class:`Schedule` to a :class:`~provsql_dp.policies.delta.Publisher`; each ``PUBLISH STREAM`` then
asks it for the step's ε instead of taking one from the curator:

* **offline** — the weights ``w₁ … wₙ`` of every step are known when the stream is created: the
  optimal allocation of Problem 1 (:func:`~provsql_dp.policies.delta.allocate_offline`,
  ``min Σ wᵢ/εᵢ²`` with every window of δ steps spending at most ε) is computed once and stored.
  Each ``εᵢ`` is rounded to a multiple of ``ε/10⁶`` and a window left over ε by the rounding is
  trimmed by ``ε/10⁶`` at its largest step, so the exact windows never exceed ε. A step of
  weight 0 gets no budget; a step is published once (a second release would take the budget
  planned for its neighbours).
* **online** — only the current step's weight is known (``PUBLISH … WEIGHT w``, default 1),
  the future ones are modelled as Bernoulli(p) (the paper's §7.3): at each step
  :func:`~provsql_dp.policies.delta.allocate_online` picks the candidate ``ε·k/100`` of least
  expected total error over ``N`` sampled futures, given the budgets already committed. Steps
  come in increasing order up to the horizon; a skipped step counts as weight 0, budget 0.

Everything here reads public parameters only (the weights, δ, ε, p, the horizon): the budget of a
step never depends on the data. The sampled futures are simulation randomness, not privacy noise.
The window account still checks every release (Theorem 2): the schedule only proposes.

>>> import provsql_dp
>>> from provsql_dp.policies.delta import Publisher
>>> from provsql_dp.policies.delta.schedule import Schedule
>>> con = provsql_dp.connect()
>>> con.ledger.set_budget(con.user, 10)
>>> pub = Publisher(con, "s", delta=2, epsilon=1)
>>> sch = Schedule.create(pub, "offline", weights=[1, 1, 0, 1])
>>> [str(e) for e in sch.epsilons]
['1/2', '1/2', '0', '1']
>>> sch.epsilon_for(2, None)
Fraction(1, 2)
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np

from ..._numbers import format_eps
from ...errors import BudgetExceededError, DeclarationError, ProgrammingError
from ...sql.catalog import SCHEMA
from .allocation import allocate_offline, allocate_online, bernoulli_future, candidate_grid

__all__ = ["Schedule", "MAX_STEPS", "MAX_HORIZON", "DEFAULT_SAMPLES"]

#: the most steps an offline allocation may plan: Problem 1's dense Newton steps cost O(n³)
#: (about 20 s for 1,000 steps on a loaded 2-core machine)
MAX_STEPS = 1_000
#: the longest online horizon: each decision solves Problem 2 for every sampled future, about
#: 6 s at 50 steps and N = 200 (2 minutes at 100): the paper's experiments use 20
MAX_HORIZON = 50
#: sampled futures per online decision unless SAMPLES says otherwise (the paper uses 1,000)
DEFAULT_SAMPLES = 200
_GRID = 10 ** 6  # offline budgets are multiples of ε/_GRID (a window over ε is trimmed)

_DDL = [
    f"""CREATE TABLE IF NOT EXISTS {SCHEMA}.delta_allocations (
        publisher VARCHAR PRIMARY KEY,
        mode VARCHAR NOT NULL,
        horizon BIGINT NOT NULL,
        probability DOUBLE,
        samples BIGINT,
        weights VARCHAR,
        epsilons VARCHAR)""",
    f"""CREATE TABLE IF NOT EXISTS {SCHEMA}.delta_allocated_steps (
        publisher VARCHAR NOT NULL,
        step BIGINT NOT NULL,
        weight DOUBLE NOT NULL,
        epsilon VARCHAR NOT NULL,
        PRIMARY KEY (publisher, step))""",
]


def _weight(w, what="a weight") -> float:
    try:
        v = float(w)
    except (TypeError, ValueError):
        raise DeclarationError(f"{what} must be a number, got {w!r}") from None
    if not (math.isfinite(v) and v >= 0):
        raise DeclarationError(f"{what} must be finite and ≥ 0, got {w!r}")
    return v


class Schedule:
    """The allocation of one stream (see the module docstring)."""

    def __init__(self, pub, mode: str, horizon: int, probability=None, samples=None,
                 weights=None, epsilons=None):
        self.pub, self.mode, self.horizon = pub, mode, int(horizon)
        self.probability, self.samples = probability, samples
        self.weights, self.epsilons = weights, epsilons

    # ------------------------------------------------------------------ storage
    @staticmethod
    def _ensure(cur) -> None:
        for stmt in _DDL:
            cur.execute(stmt)

    @classmethod
    def load(cls, pub) -> "Schedule | None":
        """The stream's schedule, or None when its ε is given release by release."""
        cls._ensure(pub._cur)
        row = pub._cur.execute(
            f"SELECT mode, horizon, probability, samples, weights, epsilons FROM "
            f"{SCHEMA}.delta_allocations WHERE publisher = ?", [pub.name]).fetchone()
        if row is None:
            return None
        mode, horizon, p, samples, weights, epsilons = row
        return cls(pub, mode, horizon, p, samples,
                   json.loads(weights) if weights else None,
                   [Fraction(e) for e in json.loads(epsilons)] if epsilons else None)

    @staticmethod
    def plan(mode: str, delta: int, epsilon, *, weights=None, horizon=None, probability=None,
             samples=None) -> dict:
        """Validate an ``ALLOCATE`` clause and, offline, compute the allocation — before the
        stream is created, so a refused clause charges nothing."""
        if mode == "offline":
            w = [_weight(x) for x in weights or []]
            if not w or len(w) > MAX_STEPS:
                raise DeclarationError(f"ALLOCATE OFFLINE needs 1 to {MAX_STEPS:,} weights (one "
                                       "per step 1, 2, …)")
            if not any(w):
                raise DeclarationError("every weight is 0: the stream would publish nothing")
            eps = Fraction(epsilon)
            x = allocate_offline(w, int(delta), float(eps))
            units = [max(0, round(v / float(eps) * _GRID)) if wi > 0 else 0
                     for v, wi in zip(x, w)]
            d = int(delta)
            for a in range(len(units)):  # Theorem 2's rule, exactly: trim a window over ε
                while sum(units[a:a + d]) > _GRID:
                    i = a + int(np.argmax(units[a:a + d]))
                    units[i] -= 1
            out = [eps * Fraction(u, _GRID) for u in units]
            return {"mode": mode, "horizon": len(w), "weights": w, "epsilons": out}
        if mode != "online":
            raise DeclarationError("ALLOCATE is OFFLINE WEIGHTS (…) or ONLINE HORIZON n "
                                   "PROBABILITY p")
        n = int(horizon)
        if not 1 <= n <= MAX_HORIZON:
            raise DeclarationError(f"the horizon must be 1 to {MAX_HORIZON} steps, got {n} (each "
                                   "online decision solves the rest of the horizon for every "
                                   "sampled future; start a new stream for the next period)")
        p = float(probability)
        if not 0 <= p <= 1:
            raise DeclarationError(f"PROBABILITY must be in [0, 1], got {float(probability):g}")
        s = DEFAULT_SAMPLES if samples is None else int(samples)
        if not 1 <= s <= 10_000:
            raise DeclarationError(f"SAMPLES must be 1 to 10,000, got {s}")
        return {"mode": mode, "horizon": n, "probability": p, "samples": s}

    @classmethod
    def create(cls, pub, mode: str, **params) -> "Schedule":
        """Plan (:meth:`plan`) and store the schedule of ``pub``."""
        return cls.store(pub, cls.plan(mode, pub.delta, pub.epsilon, **params))

    @classmethod
    def store(cls, pub, planned: dict) -> "Schedule":
        """Store a :meth:`plan` as the schedule of the freshly created ``pub``."""
        cls._ensure(pub._cur)
        sch = cls(pub, **planned)
        pub._cur.execute(
            f"INSERT INTO {SCHEMA}.delta_allocations VALUES (?, ?, ?, ?, ?, ?, ?)",
            [pub.name, sch.mode, sch.horizon, sch.probability, sch.samples,
             json.dumps(sch.weights) if sch.weights is not None else None,
             json.dumps([str(e) for e in sch.epsilons]) if sch.epsilons is not None else None])
        return sch

    def describe(self) -> str:
        if self.mode == "offline":
            return (f"offline allocation over steps 1–{self.horizon} (Fang & Chang Problem 1): "
                    + ", ".join(format_eps(e) for e in self.epsilons[:8])
                    + (", …" if self.horizon > 8 else ""))
        return (f"online allocation over steps 1–{self.horizon} (Fang & Chang §7.2: future "
                f"weights Bernoulli({self.probability:g}), {self.samples} sampled futures)")

    # ------------------------------------------------------------------ per step
    def _committed(self) -> dict:
        rows = self.pub._cur.execute(
            f"SELECT step, weight, epsilon FROM {SCHEMA}.delta_allocated_steps WHERE "
            "publisher = ? ORDER BY step", [self.pub.name]).fetchall()
        return {int(s): (float(w), Fraction(e)) for s, w, e in rows}

    def epsilon_for(self, step: int, weight) -> Fraction:
        """The ε the schedule gives ``step`` (weight ``weight`` online; None: 1). Refused with
        ProgrammingError, nothing spent, for a step outside the plan or of weight 0."""
        step = int(step)
        if not 1 <= step <= self.horizon:
            raise ProgrammingError(f"stream {self.pub.name!r} allocates steps 1–{self.horizon}; "
                                   f"step {step} is outside its plan. Nothing was spent.")
        if self.mode == "offline":
            if weight is not None:
                raise ProgrammingError("WEIGHT applies to an online allocation; this stream's "
                                       "weights were given at CREATE STREAM")
            e = self.epsilons[step - 1]
            if step in self._committed():
                raise ProgrammingError(f"step {step} of stream {self.pub.name!r} is already "
                                       f"published at its allocated ε = {format_eps(e)}; a "
                                       "second release would take the budget planned for "
                                       "other steps. Nothing was spent.")
            if e <= 0:
                raise ProgrammingError(f"step {step} has weight 0 in stream "
                                       f"{self.pub.name!r}'s allocation: nothing is published "
                                       "there. Nothing was spent.")
            return e
        w = 1.0 if weight is None else _weight(weight, "WEIGHT")
        done = self._committed()
        last = max(done, default=0)
        if step <= last:
            raise ProgrammingError(f"stream {self.pub.name!r} allocates online, step by step: "
                                   f"step {last} is committed, so the next step is "
                                   f"{last + 1} or later. Nothing was spent.")
        if w == 0:
            raise ProgrammingError("WEIGHT 0: the online allocation gives this step no budget. "
                                   "Nothing was spent.")
        weights = [done.get(s, (0.0, 0))[0] for s in range(1, step)] + [w]
        committed = [float(done.get(s, (0.0, Fraction(0)))[1]) for s in range(1, step)]
        x = allocate_online(weights, committed, self.pub.delta, float(self.pub.epsilon),
                            self.horizon, bernoulli_future(self.probability),
                            n_samples=self.samples)
        # the decision is a candidate ε·k/100: made exact, within what the windows allow
        k = int(np.argmin(np.abs(candidate_grid(1.0) - x / float(self.pub.epsilon))))
        e = min(self.pub.epsilon * Fraction(k + 1, 100), self.pub.available(step))
        if e <= 0:
            raise BudgetExceededError(f"stream {self.pub.name!r}: no budget is left at step "
                                      f"{step} (its windows are spent). Nothing was spent.")
        return e

    def commit(self, step: int, weight, epsilon: Fraction) -> None:
        """Record a step's weight and budget once its release is made (one release per step)."""
        if weight is None:
            weight = 1.0 if self.mode == "online" else self.weights[int(step) - 1]
        self.pub._cur.execute(
            f"INSERT INTO {SCHEMA}.delta_allocated_steps VALUES (?, ?, ?, ?)",
            [self.pub.name, int(step), float(weight),
             f"{epsilon.numerator}/{epsilon.denominator}"])
