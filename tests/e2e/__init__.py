"""Process-level tests: real server processes, transports, signals, kill -9, the CLI, a browser.

The fast, in-process tests are the rest of ``tests/``; ``pytest`` runs both, ``pytest tests/e2e``
this half alone, ``pytest tests --ignore=tests/e2e`` the other.
"""
