"""The console script, run as a user would: real processes, exit codes, JSON output."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import time
from pathlib import Path

import pytest

from hippograph.store.schema import graph_schema_version
from testkit.process import PYTHON, server_env
from testkit.process import run_cli as hippograph

FIXTURE = Path(__file__).parents[1] / "data" / "transfer" / "mcp_memory.jsonl"


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
    assert stats["schema_version"] == graph_schema_version()
    assert set(stats["by_status"]) == {"staged"}


def _env_without_log_level(data_dir: Path, models_dir: Path) -> dict[str, str]:
    env = server_env(data_dir, models_dir)
    del env["HIPPOGRAPH_LOG_LEVEL"]
    return env


def test_commands_are_quiet_by_default_and_verbose_on_request(tmp_path: Path, models_dir: Path) -> None:
    data_dir = tmp_path / "data"
    assert hippograph(data_dir, models_dir, "import", str(FIXTURE), "--format", "mcp-memory").returncode == 0

    def stats(*flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PYTHON, "-m", "hippograph", "stats", *flags],
            env=_env_without_log_level(data_dir, models_dir),
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )

    assert stats().stderr == ""
    assert "INFO hippograph.sharing.proxy: owning" in stats("--verbose").stderr


def test_stats_does_not_load_the_embedding_model(tmp_path: Path, models_dir: Path) -> None:
    data_dir = tmp_path / "data"
    assert hippograph(data_dir, models_dir, "import", str(FIXTURE), "--format", "mcp-memory").returncode == 0
    probe = (
        "import sys; from hippograph.cli import main; code = main(['stats', '--json']); "
        "print('fastembed' in sys.modules, file=sys.stderr); sys.exit(code)"
    )
    result = subprocess.run(
        [PYTHON, "-c", probe],
        env=server_env(data_dir, models_dir),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["facts"] > 0
    assert result.stderr.strip() == "False"


def test_serve_on_a_terminal_says_it_waits_for_a_client_and_ctrl_c_stops_it_quietly(
    tmp_path: Path, models_dir: Path
) -> None:
    terminal, other_end = pty.openpty()
    try:
        process = subprocess.Popen(
            [PYTHON, "-m", "hippograph", "serve"],
            env=server_env(tmp_path / "data", models_dir),
            stdin=other_end,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stderr is not None
        hint = process.stderr.readline().decode()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        os.close(terminal)
        os.close(other_end)
    assert "waits for an MCP client" in hint and "README" in hint
    assert process.returncode == 0, err.decode()  # what it said, when a loaded machine makes it fail
    assert out == b""  # stdout is the protocol's
    assert b"Traceback" not in err


@pytest.mark.parametrize("delay", [0.3, 1.5, 3.0, 6.0])
def test_ctrl_c_at_any_moment_of_start_up_stops_the_server_promptly_and_quietly(
    tmp_path: Path, models_dir: Path, delay: float
) -> None:
    # Whatever the server is doing when the signal lands (importing, opening the stores in the
    # background, serving), it stops within seconds, without a traceback, and the data dir
    # opens afterwards. Before: a traceback of the interrupted import, or ~10 s waiting for the
    # stores to finish opening.
    data_dir = tmp_path / "data"
    process = subprocess.Popen(
        [PYTHON, "-m", "hippograph", "serve"],
        env=server_env(data_dir, models_dir),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    sent = time.monotonic()
    out, err = process.communicate(timeout=120)
    assert time.monotonic() - sent < 30, err
    assert process.returncode in (0, 130), err  # 130: stopped before it served
    assert out == b""
    assert b"Traceback" not in err, err
    if (data_dir / "graph.kuzu").exists():
        stats = hippograph(data_dir, models_dir, "stats", "--json")
        assert stats.returncode == 0, stats.stderr


def test_a_memory_moves_into_postgresql_with_two_commands(
    tmp_path: Path, models_dir: Path, pg_url: str
) -> None:
    """The README's move: export the embedded memory, import it with --store-url; the second
    server's data dir then holds no store, and search answers from the database."""
    embedded, server = tmp_path / "embedded", tmp_path / "server"
    assert hippograph(embedded, models_dir, "import", str(FIXTURE), "--format", "mcp-memory").returncode == 0
    dump = tmp_path / "memory.jsonl"
    assert hippograph(embedded, models_dir, "export", "--out", str(dump)).returncode == 0
    moved = hippograph(server, models_dir, "import", str(dump), "--store-url", pg_url, "--json")
    assert moved.returncode == 0, moved.stderr
    assert json.loads(moved.stdout)["skipped_existing"] == 0
    redump = hippograph(server, models_dir, "export", HIPPOGRAPH_STORE_URL=pg_url)
    assert redump.returncode == 0, redump.stderr
    assert redump.stdout.splitlines()[1:] == dump.read_text().splitlines()[1:]
    assert not (server / "graph.kuzu").exists() and not (server / "vectors").exists()
    found = hippograph(server, models_dir, "search", "programming language preferences", "--json",
                       HIPPOGRAPH_STORE_URL=pg_url)  # fmt: skip
    assert json.loads(found.stdout)["results"]


def test_a_reader_that_stops_early_ends_no_command_in_a_traceback(tmp_path: Path, models_dir: Path) -> None:
    data_dir = tmp_path / "data"
    assert hippograph(data_dir, models_dir, "import", str(FIXTURE), "--format", "mcp-memory").returncode == 0
    read_end, write_end = os.pipe()
    os.close(read_end)  # "hippograph stats | head -0": nobody reads
    try:
        done = subprocess.run(
            [PYTHON, "-m", "hippograph", "stats"],
            env=server_env(data_dir, models_dir),
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
            check=False,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
