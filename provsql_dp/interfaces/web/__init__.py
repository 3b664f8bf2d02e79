"""The explorer in the browser: BlowfishDB's curator and analyst tabs (Liu et al.) over our engine.

``provsql-dp serve DATABASE`` (:func:`.app.serve`) starts it; accounts are stored in the database
(``provsql-dp serve DATABASE --add-account NAME --role analyst`` asks for a password). Modules:
:mod:`.app` (routes, sign-in, security headers), :mod:`.accounts` (password hashes, sessions),
:mod:`.csrf`, :mod:`.engine` (the connections: :func:`provsql_dp.connect` per role and user),
:mod:`.curator` and :mod:`.analyst` (one per tab), :mod:`.sandbox` (the curator's what-if
releases and trade-off view), :mod:`.history`; ``static/`` holds the page and its SVG charts
(``charts.js``, no third-party script).

Needs the ``web`` extra: ``pip install 'provsql_dp[web]'``.
"""
