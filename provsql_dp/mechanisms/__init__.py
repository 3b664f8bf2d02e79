"""Release mechanisms."""
