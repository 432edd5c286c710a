"""Faults that must degrade, not lock users out, in process: a damaged or deleted vector table, and
the owner's lock taken in one thread and checked and released in others.

(A full disk, and a running server's lock file or owner.json removed or garbled:
tests/e2e/test_faults.py.)"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import filelock
import pytest

from hippograph.config import Settings
from hippograph.domain.errors import IndexDamaged
from hippograph.service.memory import Memory
from hippograph.sharing.ownership import lock_path
from hippograph.sharing.proxy import SharedMemory
from hippograph.store.embed import FastEmbedder


def _facts_table(settings: Settings) -> Path:
    return settings.data_dir / "vectors" / "facts.lance"


def _cut_in_half(directory: Path) -> None:
    for path in directory.iterdir():
        with path.open("r+b") as fh:
            fh.truncate(path.stat().st_size // 2)


@pytest.mark.parametrize(
    "damage",
    [
        lambda table: shutil.rmtree(table / "data"),
        lambda table: shutil.rmtree(table / "_indices"),
        lambda table: _cut_in_half(table / "data"),
    ],
    ids=["data files removed", "indexes removed", "data files cut short"],
)
@pytest.mark.embedded
def test_a_damaged_vector_table_is_rebuilt_from_the_graph_at_open(
    settings: Settings, embedder: FastEmbedder, damage: Callable[[Path], None]
) -> None:
    memory = Memory.open(settings, embedder=embedder)
    kept = {memory.remember(f"Hive {i} gave honey in July").id for i in range(12)}
    memory.close()
    damage(_facts_table(settings))
    memory = Memory.open(settings, embedder=embedder)
    try:
        assert {hit.id for hit in memory.search("honey hive", limit=20).results} == kept
        assert memory.doctor()["vector_tables_rebuilt"] == []
    finally:
        memory.close()


@pytest.mark.embedded
def test_a_vector_table_deleted_while_running_fails_clearly_then_is_rebuilt(
    settings: Settings, embedder: FastEmbedder
) -> None:
    memory = Memory.open(settings, embedder=embedder)
    try:
        kept = {memory.remember(f"Hive {i} gave honey in July").id for i in range(12)}
        memory.vectors.flush()  # no background flush writing into the files deleted next
        shutil.rmtree(_facts_table(settings))
        with pytest.raises(IndexDamaged, match="rebuilt from the graph"):
            memory.call("search", {"query": "honey hive", "limit": 20})
        deadline = time.monotonic() + 60
        while True:  # the repair runs in the background
            try:
                hits = memory.call("search", {"query": "honey hive", "limit": 20}).results
                break
            except IndexDamaged:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        assert {hit.id for hit in hits} == kept
    finally:
        memory.close()


@pytest.mark.embedded
def test_doctor_rebuilds_a_damaged_vector_table(settings: Settings, embedder: FastEmbedder) -> None:
    memory = Memory.open(settings, embedder=embedder)
    try:
        kept = {memory.remember(f"Hive {i} gave honey in July").id for i in range(12)}
        memory.vectors.flush()  # the rows on disk, not waiting in the write-behind buffer
        _cut_in_half(_facts_table(settings) / "data")
        report = memory.doctor()
        assert report["vector_tables_rebuilt"] == ["facts"]
        assert {hit.id for hit in memory.search("honey hive", limit=20).results} == kept
    finally:
        memory.close()


def test_the_owners_lock_is_held_in_every_thread_and_released_by_any(
    settings: Settings, embedder: FastEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    # A server opens its stores in one thread, its guard checks the lock in another, and it
    # closes in a third: a lock held by the opening thread alone looked stolen to the guard
    # (an error every second) and was never released at close.
    shared = SharedMemory.open(settings, embedder=embedder)
    assert shared.is_owner and shared._guard is not None
    with ThreadPoolExecutor(max_workers=1) as elsewhere:
        assert elsewhere.submit(shared._guard.repair).result() == []
        elsewhere.submit(shared.close).result()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    relock = filelock.FileLock(lock_path(settings.data_dir), timeout=0)
    relock.acquire()
    relock.release()
