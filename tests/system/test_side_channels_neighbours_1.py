"""The side-channel corpus's neighbour pairs, part 1 of ``side_channel_checks.PARTS``: every
statement whose corpus index is 1 modulo the number of parts, on the base database and each
neighbour that triggers it (the rule and its checks: ``side_channel_checks``)."""

from side_channel_checks import harness, neighbours_test  # noqa: F401 - harness: a fixture

test_neighbours_are_indistinguishable = neighbours_test(1)
