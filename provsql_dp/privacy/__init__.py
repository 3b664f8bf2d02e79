"""The privacy stage: routing a private statement (``routing``, ``policy_route``, ``answer``), the
budget ledger, analyst roles, policy statements and what a release tells the analyst."""
