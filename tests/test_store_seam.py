"""The engine seam: the store_url setting picks the engines; one this version cannot use is
refused before anything is opened, and never repeated whole (it may hold a password)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from hippograph.config import Settings
from hippograph.domain.errors import StoreError
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder


def test_a_postgresql_store_url_is_refused_before_the_data_dir_is_touched(
    settings: Settings, embedder: FastEmbedder
) -> None:
    shared = settings.model_copy(update={"store_url": "postgresql://team:hunter2@db.internal/memory"})
    shared = Settings.model_validate(shared.model_dump())
    with pytest.raises(StoreError, match="unset it to keep the memory in the data dir") as refused:
        Memory.open(shared, embedder=embedder)
    assert "hunter2" not in str(refused.value)
    assert not settings.graph_file.exists()


def test_a_store_url_of_no_known_backend_is_an_invalid_setting_that_hides_the_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HIPPOGRAPH_STORE_URL", "mysql://team:hunter2@db.internal/memory")
    with pytest.raises(ValidationError, match="postgresql://") as invalid:
        Settings()
    assert "hunter2" not in str(invalid.value)


def test_no_store_url_keeps_the_memory_in_the_data_dir(settings: Settings, embedder: FastEmbedder) -> None:
    memory = Memory.open(settings, embedder=embedder)
    try:
        memory.remember("Ines keeps the spare keys in the blue drawer.")
    finally:
        memory.close()
    assert settings.store_url is None
    assert settings.graph_file.exists() and (settings.data_dir / "vectors").is_dir()
