"""How people reach the engine: the PEP 249 connection (``dbapi``), the shell, the CLI, the demo."""
