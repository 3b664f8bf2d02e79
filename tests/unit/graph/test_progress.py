"""Progress of graph.count (issue 13, item 6): phases and counts on a terminal, silence
otherwise, and a clean interrupt whose cost is what the docs say."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import networkx as nx
import numpy as np
import pytest

import provsql_dp
import provsql_dp.graph as graph
from provsql_dp.graph._progress import PHASES, Progress


def _threads():
    return [t for t in threading.enumerate() if t.name == "provsql_dp-progress"]


def test_silent_when_stderr_is_not_a_terminal(capfd):
    graph.count(nx.karate_club_graph(), "triangle", privacy="edge", epsilon=0.5,
                rng=np.random.default_rng(0))
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_phases_and_counts_when_asked(capfd):
    graph.count(nx.karate_club_graph(), "triangle", privacy="node", epsilon=0.5,
                rng=np.random.default_rng(0), progress=True)
    err = capfd.readouterr().err
    for phase in PHASES:
        assert phase in err
    assert "occurrences=45" in err and "nodes=34" in err and "edges=78" in err
    assert "tuples=" in err and "participants=34" in err
    assert not _threads()


def test_lp_counts_are_watched_while_the_release_runs(capfd):
    stats = SimpleNamespace(n_lps=0, lp_seconds=0.0)
    with Progress("x", enabled=True) as p:
        p.phase(PHASES[4])
        p.watch(stats)
        stats.n_lps, stats.lp_seconds = 7, 1.25
        time.sleep(1.2)
    p2 = Progress("y", enabled=True)
    p2.phase(PHASES[1], edges=30000)
    p2.close()
    err = capfd.readouterr().err
    assert "lps=7" in err and "edges=30,000" in err
    assert not _threads()


def test_interrupt_during_the_release_keeps_the_charge(monkeypatch):
    from provsql_dp.mechanisms.recursive import efficient as rm

    con = provsql_dp.connect()
    con.execute("SET PRIVACY BUDGET 2")

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(rm, "release", interrupted)
    with pytest.raises(KeyboardInterrupt):
        graph.count(nx.karate_club_graph(), "triangle", epsilon=0.5, budget=con, progress=True)
    assert con.ledger.remaining(con.user) == 1.5  # charged: the docs say so
    assert not _threads()
    con.execute("SELECT 1")  # the connection is usable


def test_interrupt_before_the_charge_costs_nothing(monkeypatch):
    con = provsql_dp.connect()
    con.execute("SET PRIVACY BUDGET 2")

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(graph, "direct_relation", interrupted)
    with pytest.raises(KeyboardInterrupt):
        graph.count(nx.karate_club_graph(), "triangle", epsilon=0.5, budget=con,
                    capture="direct", progress=True)
    assert con.ledger.remaining(con.user) == 2
    assert not _threads()
