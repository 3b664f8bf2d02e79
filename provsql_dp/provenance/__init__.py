"""The provenance stage: a plan compiled into one DuckDB query that carries every protected row's
participants (``capture``, ``slots``), and the K-relation it returns (``krelation``)."""
