"""The side-channel rule (DESIGN §8, issue "No side channels"), as neighbour-pair properties: the
checks and the harness fixture shared by the side-channel test files.

Once the planner accepts a private statement, the outcome an analyst observes — answer or error,
which error class and its exact text, the ε charged, the shape of the result — is a function of
the statement, the schema, the declarations and the budget only; the data reaches the analyst
only through the noisy output. So for every analyst statement and every pair of databases that
differ in ONE protected participant (the base database and a *plant*: one more person, or one
person changed, holding a canary string and extreme values — see ``side_channel_corpus``):

* the outcome class is the same (an answer on both, or the same exception class on both);
* an error's text is the same, character for character;
* the ε charged is the same (read from the analyst's own ledger before and after);
* an answer has the same columns, the same number of rows, the same non-noisy cells (group keys,
  range labels) and the same kind of released values (finite number / NaN / inf / NULL);
* nothing the analyst sees (error text, column names, group keys) contains a protected value —
  the canary, a planted number or date, or a base person's name, salary or birth date — unless
  the statement itself spells it;
* only provsql_dp's PEP 249 errors (:class:`provsql_dp.Error`) escape ``execute``;
* a statement finishes within ``side_channel_corpus.TIMEOUT`` seconds on six people.

Each statement runs on the base database and on every plant that makes a column it reads
extreme (plants such as "max", "zero", "null" or "changed" touch every column; "nan", "long",
"fardate" only their own). A refusal at plan time that is identical on both databases passes; so does an answer on both,
whatever its noisy values. Noise is seeded from Python (``con._rng``) for reproducibility, but
values are never compared.

Statements run in worker processes that hold the databases (``side_channel_corpus.Harness``), as
fresh analyst connections (``role="analyst"``) each with a user of its own whose budget the
curator has just set, so every run starts from the same budget.

The files
---------
The corpus is checked in :data:`PARTS` files (``test_side_channels_neighbours_<k>.py``, part k:
the statements whose index is k modulo :data:`PARTS`, ids unchanged), so that pytest-xdist's
``--dist loadfile`` runs them on both workers; ``test_side_channels.py`` holds the other checks.
A test process builds one harness (two child processes, each holding every database) for all the
files it runs, and the outcomes are shared with the run's other test processes through files (a
statement runs once a run, whichever file asks first): ``test_only_pep249_errors_escape_execute``
reads the whole corpus's outcomes from there.

The default run checks a fixed sample of the corpus (:data:`QUICK_EVERY`: the first statement of
each category and every QUICK_EVERY-th after it, so every category is there); the other cases, and
``test_only_pep249_errors_escape_execute`` (which runs the whole corpus), are marked ``slow``:
.ci/run's second step checks every statement (the whole corpus took ~20% of the default run).
"""

from __future__ import annotations

import os
from collections import Counter

import pytest
from side_channel_corpus import PLANTS_BY_NAME, Harness, corpus, differences, leaks, secrets_of, seen_text

CORPUS = corpus()
_BROKEN = ("Timeout", "Crash", "Skipped")


PARTS = 4  #: test files the corpus is split over (test_side_channels_neighbours_<k>.py)
#: the default run's sample: ranks 0, 5, 10, ... within each category (prime to PARTS, so the
#: sample spreads over the files)
QUICK_EVERY = 5
_HARNESS: list[Harness] = []  # this test process's harness, once built


@pytest.fixture(scope="module")
def harness(request, tmp_path_factory) -> Harness:
    """This test process's harness, shared by every side-channel file it runs; its outcomes are
    shared with the run's other test processes through a directory beside their pytest
    temporary directories (the run's own: never outcomes of an earlier run)."""
    if not _HARNESS:
        base = tmp_path_factory.getbasetemp()
        run_dir = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
        _HARNESS.append(Harness(workers=2, shared=run_dir / "side_channel_outcomes"))
        request.config.add_cleanup(lambda: _HARNESS.pop().close())
    return _HARNESS[0]


def problems(sql: str, outcomes: dict) -> list[str]:
    """Every way the outcomes of ``sql`` on the base and its neighbours break the rule."""
    out = []
    base = outcomes["base"]
    for name, o in outcomes.items():
        if o.kind == "Skipped":
            continue  # another run of the statement timed out: reported there
        if o.kind in _BROKEN or o.kind.startswith("HarnessError"):
            out.append(f"{name}: {o.short()}")
            continue
        if not o.pep249:
            out.append(f"{name}: {o.kind} escaped execute (not a provsql_dp.Error): {o.short()}")
        # a planted value also seen on the base database is not the plant's (base values are
        # checked on the base itself)
        public = seen_text(base) if name != "base" and base.kind not in _BROKEN else ""
        leaked = leaks(o, sql, secrets_of(name), public=public)
        if leaked:
            out.append(f"{name}: the analyst saw protected values {leaked}: {o.short()}")
        if name != "base" and base.kind not in _BROKEN:
            diff = differences(base, o)
            if diff:
                out.append(f"base vs {name} ({PLANTS_BY_NAME[name].what}): {'; '.join(diff)}\n"
                           f"      base: {base.short()}\n      {name}: {o.short()}")
    return out


def fail_with(sql: str, found: list[str]) -> None:
    pytest.fail(f"side channel in\n    {sql}\n  " + "\n  ".join(found), pytrace=False)


def neighbours_test(part: int):
    """``test_neighbours_are_indistinguishable`` over part ``part`` of the corpus (the statements
    whose index is ``part`` modulo :data:`PARTS`), with the corpus-wide ids ``<category>-<index>``.
    A test file binds it to that name."""
    picked = [(k, c, sql) for k, (c, sql) in enumerate(CORPUS) if k % PARTS == part]
    rank, seen = [], Counter()  # a statement's rank within its category, in corpus order
    for c, _ in CORPUS:
        rank.append(seen[c])
        seen[c] += 1
    cases = [pytest.param(sql, id=f"{c}-{k:03d}",
                          marks=() if rank[k] % QUICK_EVERY == 0 else pytest.mark.slow)
             for k, c, sql in picked]

    @pytest.mark.parametrize("sql", cases)
    def test_neighbours_are_indistinguishable(harness, sql):
        found = problems(sql, harness.run(sql))
        if found:
            fail_with(sql, found)

    return test_neighbours_are_indistinguishable
