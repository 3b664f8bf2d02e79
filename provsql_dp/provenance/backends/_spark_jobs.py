"""Stop one statement's Spark jobs, and no one else's: a cancel or a time limit reaches Spark.

Every read of protected rows on Spark (a capture, a dictionary's ranks, the bucket rows of a
closed form, an attach's key check) runs inside :func:`spark_step`. It tags the Spark jobs that
the ``with`` block starts with a tag of its own (``SparkContext.addJobTag`` in the thread that
runs them: in pyspark's pinned-thread mode — the default — a job's tags are the submitting JVM
thread's local properties, inherited by the thread that ``collectAsArrowToPython`` starts to
run the collect) and with ``interruptOnCancel`` (executors interrupt the task threads, not only
the scheduler's bookkeeping). A :class:`SparkStep` is then registered twice:

* with the statement's cancel token (:func:`provsql_dp._cancel.interrupting`): ``con.cancel()``
  — the shell's Ctrl-C, the explorer's Cancel, a wire CancelRequest, the server's statement
  time limit — calls :meth:`SparkStep.interrupt`, i.e. ``cancelJobsWithTag(tag)``, at once and
  again every :data:`~provsql_dp._cancel.POLL` seconds until the statement ends (a job
  submitted after one call is reached by the next);
* with the release's deadline (:func:`provsql_dp._deadline.reading`): past the release's time
  budget the same call stops the jobs, and the statement ends with the budget's
  ``DeadlineExceeded`` (the release's data-independent fallback), as on DuckDB.

The tag is unique to the step, so other connections' jobs — other analysts' statements on the
same SparkContext, the user's own jobs — are never cancelled (``cancelAllJobs`` would stop
them; ``SparkSession.interruptAll`` found the operation in our probes but did not stop it).
A Spark error raised after the step was interrupted becomes :class:`SparkJobInterrupted` (a
``duckdb.InterruptException``, the error :func:`~provsql_dp._deadline.reading` and the cancel
token already turn into ``DeadlineExceeded`` or ``StatementCancelled``); any other Spark error
passes unchanged.

Privacy: nothing here changes what a statement reads or releases. A cancel or a deadline ends
the statement earlier, in the way DuckDB's interrupt does; the ledger is charged after the
reads of the capture (:mod:`provsql_dp.privacy.ledger` checks for a cancel before it charges),
so a statement cancelled during its Spark read charges nothing, and a charge already made stays
made. Tested with two connections of one SparkContext (tests/system/test_spark_cancel.py): a
cancelled statement's job stops within moments, the other connection's job completes and its
release equals an uncancelled run under the same seed.

>>> class Context:                                    # a SparkContext's job-tag calls
...     def __init__(self): self.props, self.cancelled = {}, []
...     def addJobTag(self, tag): self.props.setdefault("tags", set()).add(tag)
...     def removeJobTag(self, tag): self.props["tags"].discard(tag)
...     def getLocalProperty(self, key): return self.props.get(key)
...     def setLocalProperty(self, key, value): self.props[key] = value
...     def cancelJobsWithTag(self, tag): self.cancelled.append(tag)
>>> sc = Context()
>>> with spark_step(sc) as step:
...     step.tag in sc.props["tags"], sc.props[INTERRUPT_ON_CANCEL]
(True, 'true')
>>> sc.props["tags"], sc.props[INTERRUPT_ON_CANCEL]  # restored when the step ends
(set(), None)
"""

from __future__ import annotations

import itertools
import os
import threading
from contextlib import contextmanager

import duckdb

from ..._cancel import interrupting
from ..._deadline import reading

__all__ = ["SparkStep", "SparkJobInterrupted", "spark_step", "INTERRUPT_ON_CANCEL"]

#: the local property Spark reads to interrupt a cancelled job's task threads
INTERRUPT_ON_CANCEL = "spark.job.interruptOnCancel"

_NUMBERS = itertools.count()


class SparkJobInterrupted(duckdb.InterruptException):
    """The jobs of a Spark step were cancelled by its statement's cancel or deadline."""


class SparkStep:
    """The Spark jobs that one read of a statement starts, under the tag :attr:`tag`."""

    def __init__(self, sc):
        self.sc = sc
        #: unique in this process and across processes sharing a cluster (job tags: no comma)
        self.tag = f"provsql_dp-{os.getpid()}-{threading.get_ident()}-{next(_NUMBERS)}"
        #: whether :meth:`interrupt` was called (a Spark error after it is the interrupt's)
        self.interrupted = False

    def interrupt(self) -> None:
        """Cancel the jobs tagged :attr:`tag` (those running now; call again for later ones)."""
        self.interrupted = True
        self.sc.cancelJobsWithTag(self.tag)


@contextmanager
def spark_step(sc, where: str = "the reading of the protected rows"):
    """Run the Spark jobs of the ``with`` block (started in this thread, on SparkContext
    ``sc``) as one step of the statement under way: tagged, stopped by a cancel or by the
    release's deadline, and raising :class:`SparkJobInterrupted` when that stopped them."""
    step = SparkStep(sc)
    before = sc.getLocalProperty(INTERRUPT_ON_CANCEL)
    sc.addJobTag(step.tag)
    sc.setLocalProperty(INTERRUPT_ON_CANCEL, "true")
    try:
        with reading(step, where), interrupting(step):
            try:
                yield step
            except Exception as e:
                if step.interrupted and not isinstance(e, duckdb.InterruptException):
                    raise SparkJobInterrupted(
                        f"Spark's jobs of {where} were cancelled") from None
                raise
    finally:
        sc.removeJobTag(step.tag)
        sc.setLocalProperty(INTERRUPT_ON_CANCEL, before)
