"""Private subgraph counting (placeholder while building)."""
