"""Fixtures of a fast test module that its process-level half needs too (``tests/conftest.py``'s
are seen here already): imported here, not in the test modules, so that a test's argument of the
same name does not shadow an import. On PostgreSQL, each data dir a server or the CLI is started
on gets a database of its own."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit import process
from testkit.postgres import new_database
from tests.conftest import ON_POSTGRES
from tests.test_explorer import seeded  # noqa: F401
from tests.test_trust_over_time import opened  # noqa: F401


@pytest.fixture(autouse=True)
def _databases_of_data_dirs(request: pytest.FixtureRequest) -> Iterator[None]:
    if not ON_POSTGRES:
        yield
        return
    server: Any = request.getfixturevalue("pg_server")
    urls: dict[Path, str] = request.getfixturevalue("pg_databases")

    def url(data_dir: Path) -> str:
        key = Path(data_dir).resolve()
        if key not in urls:
            urls[key] = new_database(server)
        return urls[key]

    process.store_url_for = url
    try:
        yield
    finally:
        process.store_url_for = None
