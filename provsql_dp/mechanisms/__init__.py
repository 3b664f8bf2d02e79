"""The mechanisms: the recursive mechanism (H and G linear programs on HiGHS), the general mechanism, noise."""
