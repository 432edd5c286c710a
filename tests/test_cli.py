"""The console script, run as a user would: real processes, exit codes, JSON output."""

from __future__ import annotations

import json
from pathlib import Path

from testkit.process import run_cli as hippograph

FIXTURE = Path(__file__).parent / "data" / "transfer" / "mcp_memory.jsonl"


def test_import_mcp_memory_then_export_and_round_trip(tmp_path: Path, models_dir: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    imported = hippograph(first, models_dir, "import", str(FIXTURE), "--format", "mcp-memory", "--json")
    assert imported.returncode == 0, imported.stderr
    report = json.loads(imported.stdout)
    assert report["facts_added"] > 0 and report["entities_added"] > 0
    again = json.loads(
        hippograph(first, models_dir, "import", str(FIXTURE), "--format", "mcp-memory", "--json").stdout
    )
    assert again["facts_added"] == 0

    dump = tmp_path / "memory.jsonl"
    assert hippograph(first, models_dir, "export", "--out", str(dump)).returncode == 0
    assert hippograph(second, models_dir, "import", str(dump)).returncode == 0
    redump = hippograph(second, models_dir, "export")
    assert redump.returncode == 0
    body = [line for line in dump.read_text().splitlines()[1:]]
    assert redump.stdout.splitlines()[1:] == body

    found = hippograph(second, models_dir, "search", "programming language preferences", "--json")
    assert json.loads(found.stdout)["results"]


def test_bad_import_file_exits_1_and_says_which_line(tmp_path: Path, models_dir: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"type": "entity", "name": "Ann", "entityType": "person", "observations": []}\nnot json\n'
    )
    result = hippograph(tmp_path / "data", models_dir, "import", str(bad), "--format", "mcp-memory")
    assert result.returncode == 1
    assert "line 2" in result.stderr


def test_doctor_and_stats_report_a_consistent_store(tmp_path: Path, models_dir: Path) -> None:
    data_dir = tmp_path / "data"
    assert hippograph(data_dir, models_dir, "import", str(FIXTURE), "--format", "mcp-memory").returncode == 0
    doctor = json.loads(hippograph(data_dir, models_dir, "doctor", "--json").stdout)
    assert doctor["reindexed"] == 0 and doctor["orphan_rows_removed"] == 0
    stats = json.loads(hippograph(data_dir, models_dir, "stats", "--json").stdout)
    assert stats["facts"] == stats["indexed_facts"] > 0
    assert stats["schema_version"] == 4
    assert set(stats["by_status"]) == {"staged"}
