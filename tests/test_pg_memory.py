"""Two servers of one memory in PostgreSQL (issue 27): the rules the embedded owner serialises
hold through the database when two ``Memory`` objects, each with its own pool, write at once."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hippograph.config import Settings
from hippograph.domain.models import EdgeType
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder
from hippograph.store.pg_database import PgDatabase
from hippograph.store.pg_graph import PgGraphStore
from hippograph.store.pg_vectors import PgVectorStore

CITIES = ["Lisbon", "Oslo", "Lima", "Osaka", "Porto", "Quito", "Accra", "Hanoi", "Perth", "Lyon"]


@pytest.fixture
def servers(
    pg_url: str, base_settings: Settings, embedder: FastEmbedder, tmp_path: Path
) -> Iterator[list[Memory]]:
    """Two memories on one database, as two servers on two machines would open it."""
    opened, dbs = [], []
    for n in range(2):
        db = PgDatabase(pg_url)
        settings = base_settings.model_copy(update={"data_dir": tmp_path / f"server-{n}"})
        settings.data_dir.mkdir()
        opened.append(
            Memory(
                settings, PgGraphStore(db), PgVectorStore(db, dim=embedder.dim, model=embedder.name), embedder
            )
        )
        dbs.append(db)
    yield opened
    for memory, db in zip(opened, dbs, strict=True):
        memory.close()
        db.close()


def test_two_servers_changing_one_claim_at_once_leave_one_active_fact(servers: list[Memory]) -> None:
    errors: list[BaseException] = []

    def write(memory: Memory, cities: list[str]) -> None:
        try:
            for city in cities:
                memory.remember(f"Mara lives in {city}", subject="Mara", predicate="lives_in", object=city,
                                source="user_edit")  # fmt: skip
        except BaseException as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=write, args=(m, CITIES[n::2])) for n, m in enumerate(servers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for memory in servers:  # every server reads the same answer
        active = memory.stores.graph.active_facts_with([("mara", "lives_in", "global")])
        assert len(active[("mara", "lives_in", "global")]) == 1
    assert servers[0].stores.graph.census.count_by("status").get("superseded") == len(CITIES) - 1


def test_turns_of_one_session_written_by_two_servers_form_one_chain(servers: list[Memory]) -> None:
    """A conversation's turns may reach different servers: each links to the turn stored last,
    wherever it was written (a server must not link to the last turn it wrote itself)."""
    first, second = servers
    turns = [
        (
            server,
            server.remember(f"Turn {i}: we talked about item {i}", kind="episode", session_id="call-9").id,
        )
        for i, server in enumerate([first, second, first, second, first])
    ]
    ids = [fid for _, fid in turns]
    for server in servers:
        edges = server.graph.view(None).fact_edges(ids, [EdgeType.NEXT])
        assert sorted((e.src, e.dst) for e in edges) == sorted(itertools.pairwise(ids))


def test_a_write_retried_on_another_server_is_done_once(servers: list[Memory]) -> None:
    """A client that retries a write through another server (the first one went away before
    answering) gets the first answer; the memory holds the fact once."""
    first, second = servers
    arguments = {"content": "Oskar's passport is due for renewal in March.", "kind": "fact"}
    done = first.call_once("remember", dict(arguments), "request-7")
    again = second.call_once("remember", dict(arguments), "request-7")
    assert again.id == done.id
    assert second.stores.graph.census.counts()["facts"] == 1


def test_one_write_sent_to_two_servers_at_once_is_done_once(servers: list[Memory]) -> None:
    arguments = {"content": "The boiler service is booked for the 14th.", "kind": "fact"}
    replies: list[object] = []

    def send(memory: Memory) -> None:
        replies.append(memory.call_once("remember", dict(arguments), "request-8"))

    threads = [threading.Thread(target=send, args=(m,)) for m in servers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(replies) == 2 and len({reply.id for reply in replies}) == 1  # type: ignore[attr-defined]
    assert servers[0].stores.graph.census.counts()["facts"] == 1


def test_more_writes_in_flight_than_the_pool_has_connections_all_succeed(
    pg_url: str, base_settings: Settings, embedder: FastEmbedder, tmp_path: Path
) -> None:
    # Each write in flight waited for its request's lock on a connection of the pool: with as
    # many writes as connections, the one holding the writer's lock had none left to write with.
    db = PgDatabase(pg_url, max_connections=4, timeout_s=3)
    memory = Memory(
        base_settings.model_copy(update={"data_dir": tmp_path}),
        PgGraphStore(db),
        PgVectorStore(db, dim=embedder.dim, model=embedder.name),
        embedder,
    )
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            memory.call_once("remember", {"content": f"Shipment {n} left {CITIES[n]} today."}, f"request-{n}")
        except BaseException as err:  # reported below
            errors.append(err)

    try:
        threads = [threading.Thread(target=write, args=(n,)) for n in range(len(CITIES))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert memory.stores.graph.census.counts()["facts"] == len(CITIES)
    finally:
        memory.close()
        db.close()


def test_an_embedded_graph_file_left_in_the_data_dir_is_not_rewritten_at_close(
    servers: list[Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A memory moved into PostgreSQL keeps its data dir, and may keep its old graph file there: a
    # big one must not make each clean close rewrite the database's tables (VACUUM FULL locks
    # them against every other server).
    memory = servers[0]
    memory.remember("Mara lives in Lima")
    with (memory.settings.data_dir / "graph.kuzu").open("wb") as old:
        old.truncate(64 << 20)
    rebuilt: list[str] = []
    monkeypatch.setattr(PgGraphStore, "rebuild", lambda self: rebuilt.append("graph"))
    assert memory.upkeep.compact_graph() is False
    assert rebuilt == []
