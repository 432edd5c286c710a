"""Transcripts: the spoken turns of a conversation file (Claude Code's JSONL, or plain role/content lines).

Pure functions over the file's lines: no stores, no I/O. A turn is what a person or the model
said in words: tool calls, tool results, thinking, summaries, meta lines (slash-command
plumbing) and sub-agent lines are not turns. Each turn keeps the index of the line it ends on,
so a caller can remember how far it has read (``capture`` keeps that per session).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

ROLES = ("user", "assistant")
# Claude Code writes these as user text, but the user did not say them.
_PLUMBING = ("<command-name>", "<command-message>", "<local-command-", "<system-reminder>", "Caveat: ")
_INTERRUPTED = "[Request interrupted by user"
# Lines of a Claude Code transcript that nobody said in this conversation: a sub-agent's, meta
# lines, and the summary that opens a compacted session.
_NOT_SAID = ("isSidechain", "isMeta", "isCompactSummary")


@dataclass(frozen=True)
class Turn:
    """One spoken turn: who said it, what, when (as the file wrote it), and the line it ends on."""

    speaker: str
    text: str
    timestamp: str | None
    line: int


def complete_lines(raw: str) -> list[str]:
    """The file's lines, without a last line still being written (no newline yet, not JSON)."""
    lines = raw.split("\n")
    last = lines.pop()
    if last.strip() and json_object(last) is not None:
        lines.append(last)
    return lines


def block_text(content: Any) -> str:
    """The words of a message's content: the string itself, or its text blocks joined (tool
    calls, tool results, thinking and images are left out)."""
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    parts = [
        block["text"].strip()
        for block in content
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    ]
    return "\n\n".join(part for part in parts if part)


def claude_code_turns(lines: Sequence[str], start: int = 0) -> list[Turn]:
    """The user and assistant text turns of a Claude Code transcript from line ``start`` on.

    Claude Code writes one assistant message as several lines (one per content block, the same
    ``message.id``): consecutive text of one message is one turn.
    """
    turns: list[Turn] = []
    last_message: str | None = None
    for index in range(start, len(lines)):
        record = json_object(lines[index])
        if record is None or record.get("type") not in ROLES or any(record.get(k) for k in _NOT_SAID):
            continue
        message = record.get("message")
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            continue
        text = block_text(message.get("content"))
        if not text or text.startswith(_PLUMBING) or text.startswith(_INTERRUPTED):
            continue
        role = str(message["role"])
        message_id = message.get("id") if isinstance(message.get("id"), str) else None
        if turns and message_id is not None and message_id == last_message and turns[-1].speaker == role:
            previous = turns.pop()
            turns.append(Turn(role, f"{previous.text}\n\n{text}", previous.timestamp, index))
        else:
            turns.append(Turn(role, text, _timestamp(record), index))
        last_message = message_id
    return turns


def plain_turns(lines: Sequence[str], start: int = 0) -> list[Turn]:
    """The turns of a plain transcript from line ``start`` on: JSON lines of ``{role, content}``
    (content a string or text blocks), with an optional ``timestamp`` and an optional
    ``speaker`` (or ``name``) said instead of the role. Other roles (system, tool) are left out.
    """
    turns: list[Turn] = []
    for index in range(start, len(lines)):
        record = json_object(lines[index])
        if record is None:
            continue
        role = record.get("role")
        speaker = record.get("speaker") or record.get("name")
        if role not in ROLES and not (role is None and isinstance(speaker, str)):
            continue
        text = block_text(record.get("content"))
        if text:
            said_by = speaker.strip() if isinstance(speaker, str) and speaker.strip() else str(role)
            turns.append(Turn(said_by, text, _timestamp(record), index))
    return turns


def json_object(line: str) -> dict[str, Any] | None:
    """The JSON object a transcript line holds, or None (not JSON, or not an object)."""
    try:
        record = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def _timestamp(record: dict[str, Any]) -> str | None:
    value = record.get("timestamp")
    return value if isinstance(value, str) and value.strip() else None
