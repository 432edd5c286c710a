"""A proxied write runs once across owners: proxies retrying through kill -9s of the owner
process write each conversation turn once; receipts by the hundred fit the smallest page cache.

(A retry with its request id answered with the first reply, in process: tests/test_exactly_once.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from hippograph.config import MEMORY_BUDGET_MIN
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder
from testkit.process import settings_at
from testkit.workloads import owner_kills, verify

pytestmark = pytest.mark.anyio


async def test_proxies_retrying_across_owner_kills_write_each_turn_once(
    tmp_path: Path, models_dir: Path
) -> None:
    tally = await owner_kills(tmp_path / "data", models_dir, rounds=2, proxies=2, writes_each=12)
    assert tally.acknowledged
    report = verify(tmp_path / "data", models_dir, tally.acknowledged)
    assert report["missing"] == 0
    assert report["duplicated"] == 0
    assert report["index_disagrees"] == 0


def test_receipts_do_not_fill_a_small_buffer_pool(
    tmp_path: Path, models_dir: Path, embedder: FastEmbedder
) -> None:
    # Kùzu 0.11.3 leaked pool pages when a receipt's long reply was SET on it (failed at ~100).
    settings = settings_at(tmp_path / "data", models_dir, memory_budget_bytes=MEMORY_BUDGET_MIN)
    memory = Memory.open(settings, embedder=embedder)
    try:
        for i in range(250):
            memory.call_once("remember", {"content": f"Otter {i} was seen at the weir"}, f"req-{i}")
        assert memory.stats()["facts"] == 250
    finally:
        memory.close()
