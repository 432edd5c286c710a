"""Faults that must degrade, not lock users out, met by processes: a full disk (a tmpfs mounted by
``mount``) and a running server whose lock file or owner.json is removed or garbled.

(A damaged vector table, and the owner's lock across threads, in process: tests/test_faults.py.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from hippograph.domain.errors import DiskFull
from hippograph.service.memory import Memory
from hippograph.sharing.ownership import lock_path, read_owner
from hippograph.store.embed import FastEmbedder
from testkit.client import call, stdio_session
from testkit.mounts import mounts_under, release_leftovers, unmount
from testkit.process import run_cli, settings_at


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
        unmount(mount)  # for certain: a mount left under pytest's temp dir breaks later runs


def test_a_mount_a_killed_run_left_busy_is_released_and_its_dir_removed(tmp_path: Path) -> None:
    left = tmp_path / "pytest-7" / "test_full_disk0" / "disk"  # as a run killed mid-test leaves it
    left.mkdir(parents=True)
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(left)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small file system here: {made.stderr.decode().strip() or 'no mount'}")
    holder = (left / "held").open("w")  # a process still holding a file: a plain umount is refused
    try:
        assert mounts_under(tmp_path) == [left]
        with pytest.raises(OSError):
            shutil.rmtree(tmp_path / "pytest-7")  # what failed a later run's cleanup

        assert release_leftovers(tmp_path) == [left]

        assert mounts_under(tmp_path) == []
        shutil.rmtree(tmp_path / "pytest-7")
    finally:
        holder.close()
        for point in mounts_under(tmp_path):
            unmount(point)


def _fill(disk: Path, leave: int) -> Path:
    """Fill ``disk`` until ``leave`` bytes are free."""
    filler = disk / "filler"
    with filler.open("wb") as fh:
        fh.write(b"\0" * (os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize - leave))
    return filler


def test_a_full_disk_refuses_writes_clearly_and_reads_go_on(
    small_disk: Path, models_dir: Path, embedder: FastEmbedder
) -> None:
    settings = settings_at(small_disk / "data", models_dir)
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
