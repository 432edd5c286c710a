"""``hippograph forget``, run as a process, sees what its scope sees: its own scope and global.

(Every operation on a fact id, asked from another scope, in process: tests/test_scope_fact_ids.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from hippograph.service.memory import Memory
from testkit.process import run_cli as hippograph


def test_the_cli_forgets_in_the_scope_it_is_given(memory: Memory, models_dir: Path) -> None:
    falcon = memory.remember("Falcon ships in May", scope="project:falcon").id
    data_dir = memory.settings.data_dir
    memory.close()

    unscoped = hippograph(data_dir, models_dir, "forget", falcon)
    assert unscoped.returncode == 1 and f"no fact has id {falcon} in global:" in unscoped.stderr
    other = hippograph(data_dir, models_dir, "forget", falcon, HIPPOGRAPH_SCOPE="project:hack")
    assert other.returncode == 1 and f"no fact has id {falcon} in project:hack or global" in other.stderr
    done = hippograph(data_dir, models_dir, "forget", falcon, "--scope", "project:falcon", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "retracted"
