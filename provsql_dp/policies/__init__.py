"""The policy engines: Blowfish (``blowfish``) and δ-neighbourhood privacy (``delta``), for
histogram and range workloads over one table. Users reach them as ``provsql_dp.blowfish`` and
``provsql_dp.delta``."""
