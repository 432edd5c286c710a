"""Faults that must degrade, not lock users out: a full disk, a removed lock file, a garbled owner.json."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
import filelock
import pytest

from hippograph.config import Settings
from hippograph.domain.errors import DiskFull, IndexDamaged
from hippograph.service.memory import Memory
from hippograph.sharing.ownership import lock_path, read_owner
from hippograph.sharing.proxy import SharedMemory
from hippograph.store.embed import FastEmbedder
from testkit.client import call, stdio_session
from testkit.process import run_cli


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """An 80 MiB file system of its own (a tmpfs: mounting one needs root)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=80m", "tmpfs", str(mount)], capture_output=True, check=False
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small file system here: {made.stderr.decode().strip() or 'no mount'}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def _fill(disk: Path, leave: int) -> Path:
    """Fill ``disk`` until ``leave`` bytes are free."""
    filler = disk / "filler"
    with filler.open("wb") as fh:
        fh.write(b"\0" * (os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize - leave))
    return filler


def test_a_full_disk_refuses_writes_clearly_and_reads_go_on(
    small_disk: Path, models_dir: Path, embedder: FastEmbedder
) -> None:
    settings = Settings(data_dir=small_disk / "data", models_dir=models_dir)
    memory = Memory.open(settings, embedder=embedder)
    try:
        kept = [
            memory.call("remember", {"content": f"Bed {i} of the garden grows tulips"}).id for i in range(5)
        ]
        filler = _fill(small_disk, leave=8 * 2**20)
        with pytest.raises(DiskFull, match="free some space"):
            memory.call("remember", {"content": "The roses need pruning in March"})
        assert {hit.id for hit in memory.call("search", {"query": "garden tulips"}).results} >= set(kept)
        assert memory.call("stats", {})["facts"] == 5
        filler.unlink()
        kept.append(memory.call("remember", {"content": "The roses need pruning in March"}).id)
    finally:
        memory.close()
    memory = Memory.open(settings, embedder=embedder)
    try:
        assert memory.graph.fact_ids() == set(kept)
    finally:
        memory.close()


@pytest.mark.anyio
@pytest.mark.parametrize("damage", ["remove the lock file", "remove owner.json", "garble owner.json"])
async def test_the_running_owner_repairs_its_files_and_nobody_is_locked_out(
    tmp_path: Path, models_dir: Path, damage: str
) -> None:
    data_dir = tmp_path / "data"
    async with stdio_session(data_dir, models_dir) as owner:
        kept = await call(owner, "remember", content="Pia keeps the spare keys in the red box")
        info = read_owner(data_dir)
        assert info is not None
        if damage == "remove the lock file":
            lock_path(data_dir).unlink()
        elif damage == "remove owner.json":
            (data_dir / "owner.json").unlink()
        else:
            (data_dir / "owner.json").write_bytes(b'{"pid": 12, "addr\xff')
        stats = run_cli(data_dir, models_dir, "stats", "--json")
        assert stats.returncode == 0, stats.stderr
        assert json.loads(stats.stdout)["facts"] == 1
        async with stdio_session(data_dir, models_dir) as other:
            hits = (await call(other, "search", query="spare keys"))["results"]
            assert hits[0]["id"] == kept["id"]
        with anyio.fail_after(10):
            while read_owner(data_dir) != info or not lock_path(data_dir).exists():
                await anyio.sleep(0.2)
        assert (await call(owner, "search", query="red box"))["results"][0]["id"] == kept["id"]


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


def test_doctor_rebuilds_a_damaged_vector_table(settings: Settings, embedder: FastEmbedder) -> None:
    memory = Memory.open(settings, embedder=embedder)
    try:
        kept = {memory.remember(f"Hive {i} gave honey in July").id for i in range(12)}
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
