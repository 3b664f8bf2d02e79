"""The recursive mechanism's interval holds the truth: ``truth ≥ X ≥ X̂ − γk`` (papers/003 eq. 12
with i = |P|), one-sided because the truncation is not released."""

import networkx as nx
import numpy as np
import pytest

from provsql_dp import graph
from provsql_dp.mechanisms.recursive import efficient as rm


@pytest.mark.parametrize("privacy", ["node", "edge"])
@pytest.mark.slow  # 4-10 s (a rate or brute-force check): CI's second step
def test_the_lower_end_covers_the_truth_at_the_stated_rate(privacy):
    G = nx.karate_club_graph()
    kr = graph.relation(G, "triangle", privacy=privacy)
    truth = graph.true_count(G, "triangle")
    rng = np.random.default_rng(11)
    lows = []
    for _ in range(300):
        rel = rm.release(kr, epsilon=0.5, privacy=privacy, rng=rng)
        lo, hi = rel.interval(0.9)
        assert hi is None and lo <= rel.value
        lows.append(lo)
    misses = int(np.sum(np.asarray(lows) > truth))
    # Pr[miss] ≤ 0.1 per release: more than 55 misses in 300 has probability < 1e-6
    assert misses <= 55, misses


def test_a_coverage_at_or_below_one_half_is_refused():
    G = nx.karate_club_graph()
    kr = graph.relation(G, "triangle", privacy="edge")
    rel = rm.release(kr, epsilon=1.0, privacy="edge", rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="one-sided"):
        rel.interval(0.3)
