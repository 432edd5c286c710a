"""Drive hippograph from outside, as a client does: shared by tests/ and bench/, never installed.

- ``testkit.process``: a server's environment, the CLI, an HTTP server on a free port.
- ``testkit.client``: MCP sessions over stdio and HTTP, tool calls that fail loudly.
- ``testkit.workloads``: concurrent writers and kill -9 rounds, checked against both stores.

It lives at the repository root, beside ``server/``, ``tests/`` and ``bench/``: ``python -m pytest``
and ``python -m bench.<name>`` run from the root, which puts it on ``sys.path``. The wheel
ships ``server/hippograph`` only.
"""
