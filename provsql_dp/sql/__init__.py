"""The SQL stage: our dialect, the grammar of our statements, the planner and its plan."""
