"""A data dir whose graph kuzu 0.11.3 wrote (hippograph 0.1) opens under ladybug with everything
in it, after a one-time upgrade that a kill at any moment cannot make lose anything (issue 22).

The data dir in tests/data/kuzu-0.11.3 was made by hippograph at 2cfbba0 (see make_store.py),
with the export that version gave of it.

(The upgrade killed -9 mid-way, in a process of its own: tests/e2e/test_engine_upgrade.py.)
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

from hippograph.config import Settings
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder
from hippograph.store.engine_upgrade import written_by_kuzu

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
    left = sorted(p.name for p in data_dir.iterdir())
    # nothing left over:
    assert left == [
        "gaps.sqlite",
        "graph.kuzu",
        "graph.kuzu.index",
        "graph.kuzu.schema",
        "topics.sqlite",
        "vectors",
    ]
    reopened = Memory.open(settings, embedder=embedder)
    try:
        assert reopened.stats()["facts"] == len([r for r in _expected() if r["type"] == "fact"]) + 1
    finally:
        reopened.close()
