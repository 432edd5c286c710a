"""A data dir whose graph kuzu 0.11.3 wrote (hippograph 0.1) opens under ladybug with everything
in it, after a one-time upgrade that a kill at any moment cannot make lose anything (issue 22).

The data dir in tests/data/kuzu-0.11.3 was made by hippograph at 2cfbba0 (see make_store.py),
with the export that version gave of it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from hippograph.config import Settings
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder
from hippograph.store.engine_upgrade import upgrade_paths, written_by_kuzu

_OLD = Path(__file__).parent / "data" / "kuzu-0.11.3"


def _old_data_dir(tmp_path: Path) -> Path:
    with tarfile.open(_OLD / "store.tgz") as archive:
        archive.extractall(tmp_path, filter="data")
    data_dir = tmp_path / "store"
    assert written_by_kuzu(data_dir / "graph.kuzu")
    return data_dir


def _exported(lines: str) -> list[dict[str, object]]:
    """An export's records, in a stable order, without its header (which dates the export)."""
    records = [json.loads(line) for line in lines.splitlines() if line.strip()]
    return sorted(
        (r for r in records if r["type"] != "hippograph"), key=lambda r: json.dumps(r, sort_keys=True)
    )


def _expected() -> list[dict[str, object]]:
    return _exported((_OLD / "export.jsonl").read_text())


def test_an_old_data_dir_opens_with_every_fact_entity_and_edge_as_it_was(
    tmp_path: Path, models_dir: Path, embedder: FastEmbedder
) -> None:
    data_dir = _old_data_dir(tmp_path)
    settings = Settings(data_dir=data_dir, models_dir=models_dir)

    memory = Memory.open(settings, embedder=embedder)
    try:
        assert _exported(memory.call("export", {})["jsonl"]) == _expected()
        assert (
            memory.search("When does Atlas go live?").results[0].content == "Atlas go-live moved to 2 April."
        )
        memory.remember("Noor joined the Atlas team in May.")
    finally:
        memory.close()

    assert not written_by_kuzu(data_dir / "graph.kuzu")
    assert sorted(p.name for p in data_dir.iterdir()) == ["graph.kuzu", "vectors"]  # nothing left over
    reopened = Memory.open(settings, embedder=embedder)
    try:
        assert reopened.stats()["facts"] == len([r for r in _expected() if r["type"] == "fact"]) + 1
    finally:
        reopened.close()


_OPEN_GRAPH = """
import sys
from pathlib import Path
from hippograph.store.graph import KuzuGraphStore
KuzuGraphStore(Path(sys.argv[1]), max_db_size=1 << 36, buffer_pool_bytes=64 << 20).close()
"""


@pytest.mark.parametrize("moment", ["export", "import"])
def test_a_kill_during_the_upgrade_loses_nothing_and_the_next_open_finishes_it(
    moment: str, tmp_path: Path, models_dir: Path, embedder: FastEmbedder
) -> None:
    data_dir = _old_data_dir(tmp_path)
    graph = data_dir / "graph.kuzu"
    export, fresh = upgrade_paths(graph)
    marker = export if moment == "export" else fresh
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen(
        [sys.executable, "-c", _OPEN_GRAPH, str(graph)],
        env=env,
        start_new_session=True,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.001)
        assert marker.exists(), f"the upgrade never reached its {moment}"
    finally:
        os.killpg(child.pid, signal.SIGKILL)  # the child and the kuzu process it runs
        child.wait()

    memory = Memory.open(Settings(data_dir=data_dir, models_dir=models_dir), embedder=embedder)
    try:
        assert _exported(memory.call("export", {})["jsonl"]) == _expected()
    finally:
        memory.close()
    assert not export.exists() and not fresh.exists()
