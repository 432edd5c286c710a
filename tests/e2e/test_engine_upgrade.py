"""The one-time upgrade of a graph kuzu 0.11.3 wrote, killed -9 in a process of its own at its
export and at its import: nothing is lost, and the next open finishes it (issue 22).

(An old data dir opening with everything in it, in process: tests/test_engine_upgrade.py.)
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hippograph.config import Settings
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder
from hippograph.store.engine_upgrade import upgrade_paths
from tests.test_engine_upgrade import _expected, _exported, _old_data_dir

pytestmark = pytest.mark.embedded  # the embedded graph engine's upgrade

_OPEN_GRAPH = """
import sys
from pathlib import Path
from hippograph.store.graph import KuzuGraphStore
KuzuGraphStore(Path(sys.argv[1]), max_db_size=1 << 36).close()
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
