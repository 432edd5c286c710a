"""Start-up refuses unusable data dirs clearly, exits non-zero, and touches nothing."""

from __future__ import annotations

import hashlib
from pathlib import Path

import kuzu

from hippograph.config import Settings
from hippograph.embed import FastEmbedder
from hippograph.memory import Memory
from tests.conftest import run_cli as _run_cli


def _digest(path: Path) -> dict[str, str]:
    return {
        str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(path.rglob("*"))
        if p.is_file()
    }


def test_data_dir_that_cannot_be_created_exits_2_with_a_clear_message(
    tmp_path: Path, models_dir: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    result = _run_cli(blocker / "data", models_dir, "stats")
    assert result.returncode == 2
    assert "cannot create the data dir" in result.stderr
    assert "HIPPOGRAPH_DATA_DIR" in result.stderr
    assert result.stdout == ""


def test_newer_schema_version_is_refused_and_left_untouched(
    tmp_path: Path, models_dir: Path, embedder: FastEmbedder
) -> None:
    data_dir = tmp_path / "data"
    memory = Memory.open(Settings(data_dir=data_dir, models_dir=models_dir), embedder=embedder)
    memory.remember("Dana writes Rust at work")
    memory.close()
    db = kuzu.Database(str(data_dir / "graph.kuzu"))
    conn = kuzu.Connection(db)
    conn.execute("MATCH (m:Meta {key: 'schema_version'}) SET m.value = '99'")
    conn.close()
    db.close()
    before = _digest(data_dir)

    result = _run_cli(data_dir, models_dir, "stats")

    assert result.returncode == 2
    assert "schema version 99" in result.stderr
    assert "Upgrade hippograph" in result.stderr
    assert _digest(data_dir) == before


def test_stats_command_reports_counts(tmp_path: Path, models_dir: Path, embedder: FastEmbedder) -> None:
    data_dir = tmp_path / "data"
    memory = Memory.open(Settings(data_dir=data_dir, models_dir=models_dir), embedder=embedder)
    memory.remember("Erin maintains the billing service", entities=["Erin"])
    memory.close()
    result = _run_cli(data_dir, models_dir, "stats", "--json")
    assert result.returncode == 0, result.stderr
    assert '"facts": 1' in result.stdout
    assert '"entities": 1' in result.stdout
