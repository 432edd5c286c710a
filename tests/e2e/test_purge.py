"""``hippograph forget --purge``, run as a process: no file of the data dir keeps the fact's text.

(forget(purge=True) in process, its tombstone and an interrupted purge: tests/test_purge.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from hippograph.config import Settings
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder
from testkit.process import run_cli as hippograph
from tests.test_purge import files_holding


def test_the_cli_purges_by_id(settings: Settings, embedder: FastEmbedder, models_dir: Path) -> None:
    memory = Memory.open(settings, embedder=embedder)
    try:
        secret = memory.remember("The spare key code is xylophonequark").id
        memory.remember("The garden has roses")
    finally:
        memory.close()

    done = hippograph(settings.data_dir, models_dir, "forget", "--purge", secret, "--json")

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "purged"
    assert files_holding(settings) == {}
    missing = hippograph(settings.data_dir, models_dir, "forget", "--purge", "f_0000000000000000")
    assert missing.returncode == 1 and "no fact has id f_0000000000000000" in missing.stderr
