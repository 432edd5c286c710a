"""Several server processes and the CLI on one data dir; kill -9; nothing acknowledged is lost."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from testkit.client import call, stdio_session
from testkit.process import PYTHON, server_env
from testkit.workloads import concurrent_processes, kill_rounds, verify

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("processes", "writes_each"), [(2, 60), (4, 30)])
async def test_processes_share_one_memory_without_losing_writes(
    tmp_path: Path, models_dir: Path, processes: int, writes_each: int
) -> None:
    tally = await concurrent_processes(tmp_path / "data", models_dir, processes, writes_each)
    assert tally.errors == []
    assert len(tally.acknowledged) == processes * writes_each
    report = verify(tmp_path / "data", models_dir, tally.acknowledged)
    assert report["missing"] == 0
    assert report["index_disagrees"] == 0
    assert report["graph_facts"] == processes * writes_each


async def test_writes_of_one_process_are_visible_to_the_next_read_of_another(
    tmp_path: Path, models_dir: Path
) -> None:
    data_dir = tmp_path / "data"
    async with stdio_session(data_dir, models_dir) as first, stdio_session(data_dir, models_dir) as second:
        fact = await call(first, "remember", content="Priya is vegetarian")
        hits = (await call(second, "search", query="Priya is vegetarian"))["results"]
        assert hits[0]["id"] == fact["id"]
        stats = subprocess.run(
            [PYTHON, "-m", "hippograph", "stats", "--json"],
            env=server_env(data_dir, models_dir),
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        assert json.loads(stats.stdout)["facts"] == 1


async def test_acknowledged_writes_survive_kill_9(tmp_path: Path, models_dir: Path) -> None:
    tally = await kill_rounds(tmp_path / "data", models_dir, rounds=3, writes_per_round=20)
    assert tally.acknowledged
    report = verify(tmp_path / "data", models_dir, tally.acknowledged)
    assert report["missing"] == 0
    assert report["index_disagrees"] == 0
