"""Capture: the text turns read from a Claude Code transcript, and never a line still being written.

(The hooks and `hippograph capture` storing them, run as processes: tests/e2e/test_capture.py.)"""

from __future__ import annotations

from pathlib import Path

from hippograph import capture
from hippograph.service.memory import Memory
from hippograph.text import transcripts

FIXTURE = Path(__file__).parent / "data" / "capture" / "claude_code_session.jsonl"
TEXT_TURNS = [
    "user: For the apollo orders service we decided to use PostgreSQL 16, not MySQL: "
    "we need row-level security.",
    "assistant: Understood: the orders service will use PostgreSQL 16 for row-level security. "
    "Let me check the current database config.",
    "assistant: The config still points at MySQL on port 3306. I switched config/db.toml to PostgreSQL 16 "
    "on port 5432.",
    "user: Good. Keep the migrations in db/migrations and run them with make migrate.",
    "assistant: Will do: migrations live in db/migrations and run with make migrate.",
]


def test_the_text_turns_of_a_claude_code_transcript_and_nothing_else() -> None:
    turns = transcripts.claude_code_turns(transcripts.complete_lines(FIXTURE.read_text()))
    assert [f"{t.speaker}: {t.text}" for t in turns] == TEXT_TURNS
    assert turns[0].timestamp == "2025-08-14T09:12:41.220Z"


def test_a_line_still_being_written_is_not_read() -> None:
    whole = '{"role": "user", "content": "hi"}\n'
    assert transcripts.complete_lines(whole + '{"role": "assis') == [whole.strip()]
    assert transcripts.complete_lines(whole + '{"role": "user", "content": "yo"}') == [
        whole.strip(),
        '{"role": "user", "content": "yo"}',
    ]


def test_a_line_that_is_no_json_object_is_named_not_dropped_in_silence(
    memory: Memory, tmp_path: Path
) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(
        '{"role": "user", "content": "The allotment gate code changed to the blue padlock."}\n'
        "this line is no JSON\n"
        '["a", "list"]\n'
        '{"role": "assistant", "content": "Noted: the blue padlock."}\n',
        encoding="utf-8",
    )
    report = capture.capture_file(memory, chat, session_id="allotment")  # type: ignore[arg-type]
    assert (report.turns, report.stored) == (2, 2)
    assert report.skipped == [
        "line 2 is no JSON object: left out (a transcript holds one per line)",
        "line 3 is no JSON object: left out (a transcript holds one per line)",
    ]
    again = capture.capture_file(memory, chat, session_id="allotment")  # type: ignore[arg-type]
    assert (again.turns, again.skipped) == (0, [])  # read once, said once
