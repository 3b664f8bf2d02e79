"""Other engines' steps under a statement's cancel token (provsql_dp._cancel.interrupting): a
cancel interrupts every step under way, again until the statement ends, reaches a step that
starts after the cancel, and never one outside the statement."""

from __future__ import annotations

import threading
import time

from provsql_dp._cancel import POLL, CancelToken, interrupting


class Step:
    def __init__(self):
        self.calls = 0
        self.lock = threading.Lock()

    def interrupt(self):
        with self.lock:
            self.calls += 1


def test_a_step_is_interrupted_until_the_statement_ends():
    tok, step = CancelToken(), Step()
    with tok.statement():
        with interrupting(step):
            assert tok.cancel()
            time.sleep(POLL * 6)
            assert step.calls >= 2, "again every POLL seconds (a job started later is reached)"
    after = step.calls
    time.sleep(POLL * 4)
    assert step.calls == after, "no interrupt once the statement ended"


def test_a_step_that_starts_after_the_cancel_is_interrupted_at_once():
    tok, step = CancelToken(), Step()
    with tok.statement():
        tok.cancel()
        with interrupting(step):
            assert step.calls >= 1


def test_no_statement_no_interrupt():
    step = Step()
    with interrupting(step):
        pass
    tok = CancelToken()
    assert not tok.cancel()
    assert step.calls == 0


def test_another_statements_token_leaves_the_step_alone():
    mine, other, step = CancelToken(), CancelToken(), Step()
    done = threading.Event()

    def run_other():
        with other.statement():
            done.wait(2)

    t = threading.Thread(target=run_other)
    t.start()
    with mine.statement(), interrupting(step):
        time.sleep(POLL)
        assert other.cancel()
        time.sleep(POLL * 4)
        assert step.calls == 0
    done.set()
    t.join()
