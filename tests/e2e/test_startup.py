"""Start-up refuses unusable data dirs clearly, exits non-zero, and touches nothing: the CLI and a
server run as processes, and a process that dies mid-write."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import ladybug
import pytest

from hippograph.config import Settings
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder
from hippograph.store.migrations import version_mark
from testkit.client import call_error, stdio_session
from testkit.process import run_cli as _run_cli
from testkit.process import settings_at


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
    result = _run_cli(blocker / "data", models_dir, "import", str(blocker))  # import creates one
    assert result.returncode == 2
    assert "cannot create the data dir" in result.stderr
    assert "HIPPOGRAPH_DATA_DIR" in result.stderr
    assert result.stdout == ""


def _data_dir_of_a_newer_hippograph(data_dir: Path, models_dir: Path, embedder: FastEmbedder) -> None:
    memory = Memory.open(settings_at(data_dir, models_dir), embedder=embedder)
    memory.remember("Dana writes Rust at work")
    memory.close()
    db = ladybug.Database(str(data_dir / "graph.kuzu"))
    conn = ladybug.Connection(db)
    conn.execute("MATCH (m:Meta {key: 'schema_version'}) SET m.value = '99'")
    conn.close()
    db.close()
    version_mark(data_dir / "graph.kuzu").write_text("99")  # written first by any newer hippograph


@pytest.mark.embedded  # the embedded stores' schema mark
def test_newer_schema_version_is_refused_and_left_untouched(
    tmp_path: Path, models_dir: Path, embedder: FastEmbedder
) -> None:
    data_dir = tmp_path / "data"
    _data_dir_of_a_newer_hippograph(data_dir, models_dir, embedder)
    before = _digest(data_dir)

    result = _run_cli(data_dir, models_dir, "stats")

    assert result.returncode == 2
    assert "schema version 99" in result.stderr
    assert "Upgrade hippograph" in result.stderr
    assert _digest(data_dir) == before


@pytest.mark.embedded  # a data dir of a newer hippograph's embedded stores
@pytest.mark.anyio
async def test_a_server_answers_initialize_before_its_stores_open_and_tools_say_why_they_cannot(
    tmp_path: Path, models_dir: Path, embedder: FastEmbedder
) -> None:
    # The stores open in the background: a data dir they refuse does not stop the server from
    # answering the client, and every tool call tells the model (and the user) what is wrong.
    data_dir = tmp_path / "data"
    _data_dir_of_a_newer_hippograph(data_dir, models_dir, embedder)
    before = _digest(data_dir)

    async with stdio_session(data_dir, models_dir) as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert {"remember", "search"} <= tools
        error = await call_error(session, "search", query="what does Dana write")
        assert "schema version 99" in error
        assert "Upgrade hippograph" in error

    assert _digest(data_dir) == before


def test_stats_command_reports_counts(tmp_path: Path, models_dir: Path, embedder: FastEmbedder) -> None:
    data_dir = tmp_path / "data"
    memory = Memory.open(settings_at(data_dir, models_dir), embedder=embedder)
    memory.remember("Erin maintains the billing service", entities=["Erin"])
    memory.close()
    result = _run_cli(data_dir, models_dir, "stats", "--json")
    assert result.returncode == 0, result.stderr
    assert '"facts": 1' in result.stdout
    assert '"entities": 1' in result.stdout


_CRASH_AFTER_GRAPH_COMMIT = """
import os, sys
from pathlib import Path
from hippograph.config import DEFAULT_MODEL, Settings
from hippograph.service.memory import Memory

mem = Memory.open(Settings(data_dir=Path(sys.argv[1]), models_dir=Path(sys.argv[2])))
out = mem.remember("The staging database password rotates every Friday at noon.")
# The process dies before the vector index's write-behind buffer is written.
print(out.id, flush=True)
os._exit(0)
"""


@pytest.mark.embedded  # two embedded stores, one crash between their writes
def test_a_clean_close_skips_reconcile_and_a_crash_does_not(
    settings: Settings, embedder: FastEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = Memory.open(settings, embedder=embedder)
    mem.remember("Maya prefers tea to coffee.")
    mem.close()
    reconciles: list[object] = []
    real = Memory.reconcile
    monkeypatch.setattr(Memory, "reconcile", lambda self: reconciles.append(self) or real(self))

    Memory.open(settings, embedder=embedder).close()
    assert reconciles == []  # both stores closed cleanly at the same versions: nothing to check

    crashed = subprocess.run(
        [sys.executable, "-c", _CRASH_AFTER_GRAPH_COMMIT, str(settings.data_dir), str(settings.models_dir)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    lost_id = crashed.stdout.split()[0]

    mem = Memory.open(settings, embedder=embedder)
    try:
        assert len(reconciles) == 1
        hits = mem.search("when does the staging password rotate", limit=3).results
        assert [h.id for h in hits][:1] == [lost_id]
    finally:
        mem.close()


@pytest.mark.embedded  # on PostgreSQL the database, not the data dir, holds the memory
@pytest.mark.parametrize("command", [["stats"], ["search", "anything"], ["export"], ["doctor"], ["maintain"]])
def test_a_command_that_needs_a_memory_refuses_a_data_dir_without_one_and_creates_nothing(
    tmp_path: Path, models_dir: Path, command: list[str]
) -> None:
    typo = tmp_path / "typo"
    result = _run_cli(typo, models_dir, *command)
    assert result.returncode == 2
    assert f"the data dir {typo} does not exist" in result.stderr
    assert "hippograph serve" in result.stderr and "hippograph import" in result.stderr
    assert result.stdout == ""
    assert not typo.exists()

    typo.mkdir()  # a directory that holds no memory, such as a mistyped existing one
    result = _run_cli(typo, models_dir, *command)
    assert result.returncode == 2
    assert "holds no hippograph memory" in result.stderr
    assert list(typo.iterdir()) == []
