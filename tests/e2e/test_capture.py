"""Capture: Claude Code's hooks and `hippograph capture`, run as processes, store a conversation's
turns, once each."""

from __future__ import annotations

import json
import shutil
import string
from pathlib import Path

import pytest

from testkit.process import http_server
from testkit.process import run_cli as hippograph
from tests.test_capture import FIXTURE, TEXT_TURNS

SESSION = "3f6c2a9e-5b1d-4c7e-9a2f-8d0b1e4c6a71"
# Built here so no credential-shaped string sits in the repository.
GITHUB_TOKEN = "ghp_" + (string.ascii_letters + string.digits)[5:41]


def _event(name: str, transcript: Path, cwd: str = "/home/dev/apollo") -> str:
    return json.dumps(
        {
            "session_id": SESSION,
            "transcript_path": str(transcript),
            "cwd": cwd,
            "hook_event_name": name,
            "permission_mode": "default",
        }
    )


def _facts(data_dir: Path, models_dir: Path) -> list[dict[str, object]]:
    exported = hippograph(data_dir, models_dir, "export")
    assert exported.returncode == 0, exported.stderr
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    return [r for r in records if r.get("type") == "fact"]


def _user_line(text: str, uuid: str) -> str:
    return json.dumps(
        {
            "type": "user",
            "message": {"role": "user", "content": text},
            "uuid": uuid,
            "timestamp": "2025-08-14T09:20:00.000Z",
            "sessionId": SESSION,
        }
    )


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "project" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    shutil.copy(FIXTURE, path)
    return path


def test_stop_stores_the_text_turns_once_and_session_start_recalls_them(
    tmp_path: Path, models_dir: Path, transcript: Path
) -> None:
    data_dir = tmp_path / "data"
    stop = hippograph(data_dir, models_dir, "hook", "claude-code", stdin=_event("Stop", transcript))
    assert (stop.returncode, stop.stdout) == (0, ""), stop.stderr
    facts = _facts(data_dir, models_dir)
    assert sorted(f["content"] for f in facts) == sorted(TEXT_TURNS)
    assert {(f["kind"], f["scope"], f["session_id"]) for f in facts} == {
        ("episode", "project:apollo", SESSION)
    }
    first = next(f for f in facts if str(f["content"]).startswith("user: For the apollo"))
    assert str(first["event_time"]).startswith("2025-08-14T09:12:41")

    again = hippograph(data_dir, models_dir, "hook", "claude-code", stdin=_event("PreCompact", transcript))
    assert (again.returncode, again.stdout) == (0, ""), again.stderr
    assert _facts(data_dir, models_dir) == facts  # nothing new, nothing corroborated

    with transcript.open("a") as f:
        f.write(_user_line("Also: the staging database is called apollo_staging.", "u-0013") + "\n")
    later = hippograph(data_dir, models_dir, "hook", "claude-code", stdin=_event("Stop", transcript))
    assert later.returncode == 0, later.stderr
    added = [f["content"] for f in _facts(data_dir, models_dir) if f not in facts]
    assert added == ["user: Also: the staging database is called apollo_staging."]

    start = hippograph(data_dir, models_dir, "hook", "claude-code", stdin=_event("SessionStart", transcript))
    assert start.returncode == 0, start.stderr
    assert "project:apollo" in start.stdout and "PostgreSQL 16" in start.stdout

    def prompt(text: str) -> str:
        event = {**json.loads(_event("UserPromptSubmit", transcript)), "prompt": text}
        done = hippograph(data_dir, models_dir, "hook", "claude-code", stdin=json.dumps(event))
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "PostgreSQL 16" in prompt("Which database does the apollo orders service use?")
    assert prompt("Write a haiku about autumn leaves") == ""


def test_events_it_ignores_print_nothing_and_bad_input_is_one_line(tmp_path: Path, models_dir: Path) -> None:
    data_dir = tmp_path / "data"
    ignored = hippograph(
        data_dir, models_dir, "hook", "claude-code", stdin=json.dumps({"hook_event_name": "Notification"})
    )
    assert (ignored.returncode, ignored.stdout, ignored.stderr) == (0, "", "")
    assert not data_dir.exists()  # answered without opening the stores

    garbled = hippograph(data_dir, models_dir, "hook", "claude-code", stdin="not json")
    assert garbled.returncode == 1 and garbled.stdout == ""
    assert garbled.stderr.count("\n") == 1 and "Traceback" not in garbled.stderr

    missing = hippograph(
        data_dir, models_dir, "hook", "claude-code", stdin=_event("Stop", tmp_path / "gone.jsonl")
    )
    assert missing.returncode == 1 and "cannot read the transcript" in missing.stderr
    assert missing.stderr.count("\n") == 1 and "Traceback" not in missing.stderr


@pytest.mark.parametrize("mode", ["refuse", "redact"])
def test_a_turn_holding_a_secret_costs_only_that_turn(
    tmp_path: Path, models_dir: Path, transcript: Path, mode: str
) -> None:
    data_dir = tmp_path / "data"
    with transcript.open("a") as f:
        f.write(_user_line(f"Use my token {GITHUB_TOKEN} for the CI push.", "u-0013") + "\n")
    stop = hippograph(
        data_dir, models_dir, "hook", "claude-code", stdin=_event("Stop", transcript), HIPPOGRAPH_SECRETS=mode
    )
    assert stop.returncode == 0, stop.stderr
    contents = [str(f["content"]) for f in _facts(data_dir, models_dir)]
    assert GITHUB_TOKEN not in "".join(contents) and GITHUB_TOKEN not in stop.stderr
    if mode == "refuse":
        assert sorted(contents) == sorted(TEXT_TURNS)
        assert "line 14 (user) not captured" in stop.stderr and "github pat" in stop.stderr
    else:
        assert len(contents) == len(TEXT_TURNS) + 1
        assert "user: Use my token [REDACTED:" in "".join(contents)


def test_capture_a_plain_transcript_incrementally(tmp_path: Path, models_dir: Path) -> None:
    data_dir, chat = tmp_path / "data", tmp_path / "chat.jsonl"
    lines = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "I moved to Lisbon in March.", "timestamp": "2025-03-02T10:00:00Z"},
        {"role": "assistant", "content": [{"type": "text", "text": "Noted, Lisbon since March."}]},
        {"role": "user", "content": "   "},
        {"role": "tool", "content": "ignored"},
        {"speaker": "Maya", "content": "Dinner at eight on Friday?"},
        {"role": "user", "content": "x" * 9000},
    ]
    chat.write_text("".join(json.dumps(line) + "\n" for line in lines))
    first = hippograph(data_dir, models_dir, "capture", str(chat), "--session", "chat-1", "--json")
    assert first.returncode == 0, first.stderr
    summary = {"turns": 4, "stored": 4, "corroborated": 0, "truncated": 1, "skipped": 0}
    assert json.loads(first.stdout) == summary
    facts = _facts(data_dir, models_dir)
    contents = sorted(str(f["content"]) for f in facts)
    assert contents[:3] == [
        "Maya: Dinner at eight on Friday?",
        "assistant: Noted, Lisbon since March.",
        "user: I moved to Lisbon in March.",
    ]
    assert contents[3].startswith("user: xxx") and contents[3].endswith("of 9006 bytes kept]")
    assert len(contents[3].encode()) <= 8192
    assert {(f["scope"], f["session_id"]) for f in facts} == {("global", "chat-1")}

    with chat.open("a") as f:
        f.write(json.dumps({"role": "assistant", "content": "Friday at eight works."}) + "\n")
    second = hippograph(data_dir, models_dir, "capture", str(chat), "--session", "chat-1", "--json")
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["stored"] == 1
    assert len(_facts(data_dir, models_dir)) == 5


@pytest.mark.anyio
async def test_hooks_work_while_a_server_owns_the_data_dir(
    tmp_path: Path, models_dir: Path, transcript: Path
) -> None:
    data_dir = tmp_path / "data"
    async with http_server(data_dir, models_dir):
        stop = hippograph(data_dir, models_dir, "hook", "claude-code", stdin=_event("Stop", transcript))
        assert stop.returncode == 0, stop.stderr
        found = hippograph(data_dir, models_dir, "search", "which database", "--scope", "project:apollo")
        assert "PostgreSQL 16" in found.stdout
        assert sorted(str(f["content"]) for f in _facts(data_dir, models_dir)) == sorted(TEXT_TURNS)
