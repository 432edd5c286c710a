"""The engine seam: the store_url setting picks the engines (the data dir's, or a PostgreSQL
database every server shares); a store that cannot be opened is refused before anything is
written, and its URL never repeated whole (it may hold a password)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from hippograph.config import Settings
from hippograph.domain.errors import StoreError
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder


def test_an_unreachable_postgresql_store_is_refused_without_its_password_and_nothing_is_written(
    settings: Settings, embedder: FastEmbedder, tmp_path: Path
) -> None:
    url = f"postgresql://team:hunter2@/memory?host={tmp_path / 'no-server'}"
    shared = Settings.model_validate({**settings.model_dump(), "store_url": url})
    with pytest.raises(StoreError, match="could not open the PostgreSQL store") as refused:
        Memory.open(shared, embedder=embedder)
    assert "hunter2" not in str(refused.value)
    assert not settings.graph_file.exists()


def test_a_postgresql_store_url_keeps_the_memory_there_for_every_server(
    settings: Settings, embedder: FastEmbedder, pg_url: str, tmp_path: Path
) -> None:
    servers = [
        Settings.model_validate({**settings.model_dump(), "data_dir": tmp_path / name, "store_url": pg_url})
        for name in ("laptop", "desktop")
    ]
    first = Memory.open(servers[0], embedder=embedder)
    try:
        stored = first.remember("Ines keeps the spare keys in the blue drawer.")
    finally:
        first.close()
    second = Memory.open(servers[1], embedder=embedder)
    try:
        found = second.search("where are the spare keys?").results
        assert [hit.id for hit in found][:1] == [stored.id]
    finally:
        second.close()
    for server in servers:  # the data dirs keep nothing of the memory
        assert not any(
            (server.data_dir / name).exists()
            for name in ("graph.kuzu", "vectors", "topics.sqlite", "gaps.sqlite")
        )


def test_a_store_url_of_no_known_backend_is_an_invalid_setting_that_hides_the_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HIPPOGRAPH_STORE_URL", "mysql://team:hunter2@db.internal/memory")
    with pytest.raises(ValidationError, match="postgresql://") as invalid:
        Settings()
    assert "hunter2" not in str(invalid.value)


@pytest.mark.embedded
def test_no_store_url_keeps_the_memory_in_the_data_dir(settings: Settings, embedder: FastEmbedder) -> None:
    memory = Memory.open(settings, embedder=embedder)
    try:
        memory.remember("Ines keeps the spare keys in the blue drawer.")
    finally:
        memory.close()
    assert settings.store_url is None
    assert settings.graph_file.exists() and (settings.data_dir / "vectors").is_dir()
