"""Capture: a conversation's new turns stored as session episodes, and Claude Code's hooks.

Nothing reaches memory unless a model calls ``remember``; capture closes that gap from the
outside. ``capture_file`` reads a transcript (Claude Code's JSONL, or plain ``{role, content}``
lines), takes the turns after the last line it read for that conversation, and stores each as
an episode (``"user: ..."``, ``"assistant: ..."``) of the session through ``remember_many``:
restatements corroborate as for any write, and secrets are screened by the same rule as every
write. ``run_claude_code_hook`` answers Claude Code's hook events: at ``SessionStart`` it
prints the project's recall (Claude Code adds a SessionStart hook's stdout to the context); at
``UserPromptSubmit`` it prints the few stored facts the prompt finds with confidence and the
warnings of negative memories it triggers (nothing when there are none); at ``Stop``,
``PreCompact`` and ``SessionEnd`` it captures the transcript.

How far a conversation was read (its mark) is kept in ``<data dir>/capture/``: one small file
per (scope, session, transcript file) holding a line count and a digest of the last line read,
never any text (so a purge has nothing to erase there). The mark is read, the batch written and
the mark moved under one file lock, so two hooks of a session never store a turn twice. A crash
between the write and the mark's move sends those turns again next time: they corroborate the
stored ones instead of being copied.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from filelock import FileLock, Timeout

from hippograph.config import Settings
from hippograph.domain import validation as check
from hippograph.domain.errors import HippographError, InvalidInput, SecretDetected, StoreError
from hippograph.domain.models import GLOBAL_SCOPE, FactKind
from hippograph.retrieval.policy import RetrievalPolicy
from hippograph.service import screening
from hippograph.sharing.proxy import SharedMemory
from hippograph.text import transcripts
from hippograph.text.time_phrases import parse_event_time

FORMATS = ("claude-code", "plain")
RECALL_BUDGET_TOKENS = 800  # a SessionStart hook's output is context the whole session pays for
CAPTURE_EVENTS = ("Stop", "PreCompact", "SessionEnd")
# A prompt's hook adds context to every prompt: a few facts, each cut to a few lines.
PROMPT_FACTS = 3
PROMPT_FACT_BYTES = 400
_MARKS_DIR = "capture"
_LOCK_WAIT_S = 50.0  # under Claude Code's 60 s hook timeout
_TRUNCATED = " [... truncated: {kept} of {size} bytes kept]"


class CaptureError(HippographError):
    """A transcript or a hook's input that capture cannot read."""


@dataclass
class CaptureReport:
    """What one capture did: turns read since the mark, and what became of them."""

    turns: int = 0
    stored: int = 0
    corroborated: int = 0
    truncated: int = 0
    skipped: list[str] = field(default_factory=list)  # one note per line left out (a secret, no JSON)

    def summary(self) -> dict[str, int]:
        return {
            "turns": self.turns,
            "stored": self.stored,
            "corroborated": self.corroborated,
            "truncated": self.truncated,
            "skipped": len(self.skipped),
        }


def capture_file(
    memory: SharedMemory,
    path: Path,
    *,
    session_id: str,
    scope: str = GLOBAL_SCOPE,
    format: str = "plain",
) -> CaptureReport:
    """Store the turns of ``path`` not captured yet as episodes of ``session_id`` in ``scope``."""
    settings = memory.settings
    session_id = check.session_id(session_id) or ""
    scope = check.scope(scope)
    marks = settings.data_dir / _MARKS_DIR
    marks.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = hashlib.sha256(f"{scope}\n{session_id}\n{path.resolve()}".encode()).hexdigest()[:32]
    try:
        with FileLock(str(marks / f"{key}.lock"), timeout=_LOCK_WAIT_S):
            lines = transcripts.complete_lines(_read(path))
            start = _start(lines, _load_mark(marks / f"{key}.json"))
            read = transcripts.claude_code_turns if format == "claude-code" else transcripts.plain_turns
            turns = read(lines, start)
            report = _store(memory, turns, session_id, scope, settings)
            report.skipped += [
                f"line {i + 1} is no JSON object: left out (a transcript holds one per line)"
                for i in range(start, len(lines))
                if lines[i].strip() and transcripts.json_object(lines[i]) is None
            ]
            _save_mark(marks / f"{key}.json", lines)
            return report
    except Timeout:
        raise StoreError(
            f"another capture of session {session_id} held its lock for {_LOCK_WAIT_S:.0f} s: try again"
        ) from None


def project_scope(cwd: str | None) -> str:
    """``project:<basename of cwd>``, or global when there is no usable name."""
    name = Path(cwd).name if cwd else ""
    try:
        return check.scope(f"project:{name}") if name else GLOBAL_SCOPE
    except InvalidInput:
        return GLOBAL_SCOPE


def default_session(path: Path) -> str:
    """A session id for a transcript given without one: the same file, the same conversation."""
    return "capture-" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]


def episodes(
    turns: Sequence[transcripts.Turn], session_id: str, scope: str, max_bytes: int
) -> list[dict[str, Any]]:
    """remember_many's items for ``turns``: one episode each, said by its speaker, cut to fit."""
    items = []
    for turn in turns:
        item: dict[str, Any] = {
            "content": _fit(f"{turn.speaker}: {turn.text}", max_bytes),
            "kind": FactKind.EPISODE.value,
            "scope": scope,
            "session_id": session_id,
        }
        if turn.timestamp and _readable_time(turn.timestamp):
            item["event_time"] = turn.timestamp
        items.append(item)
    return items


def run_claude_code_hook(
    stdin: TextIO, stdout: TextIO, settings: Settings, open_memory: Callable[[Settings], SharedMemory]
) -> list[str]:
    """Answer one Claude Code hook event read from ``stdin``; returns notes for stderr.

    Events it does not handle are answered with nothing, before any store is opened.
    """
    try:
        event = json.loads(stdin.read() or "null")
    except json.JSONDecodeError as err:
        raise CaptureError(f"hook input is not JSON ({err.msg}): run it from a Claude Code hook") from None
    if not isinstance(event, dict):
        raise CaptureError("hook input is not Claude Code's hook JSON object: run it from a Claude Code hook")
    name = event.get("hook_event_name")
    if name not in ("SessionStart", "UserPromptSubmit", *CAPTURE_EVENTS):
        return []
    scope = project_scope(_text(event, "cwd", required=False))
    memory = open_memory(settings)
    try:
        if name == "SessionStart":
            project = scope.removeprefix("project:") if scope != GLOBAL_SCOPE else "this project"
            recalled = memory.recall(
                f"{project}: decisions, preferences, procedures and recent work",
                budget_tokens=RECALL_BUDGET_TOKENS,
                scope=scope,
            )
            if recalled.fact_ids:
                stdout.write(f"What hippograph remembers for {scope}:\n\n{recalled.narrative.strip()}\n")
            return []
        if name == "UserPromptSubmit":
            stdout.write(_prompt_context(memory, _text(event, "prompt"), scope))
            return []
        report = capture_file(
            memory,
            Path(_text(event, "transcript_path")),
            session_id=_text(event, "session_id"),
            scope=scope,
            format="claude-code",
        )
        return report.skipped
    finally:
        memory.close()


def _prompt_context(memory: SharedMemory, prompt: str, scope: str) -> str:
    """What a prompt's hook adds to the context: the warnings it triggers, and its best facts
    whose relevance clears the confident floor (``RetrievalPolicy.confident_relevance``); empty
    when neither. A long prompt is searched by its start; an empty one adds nothing."""
    try:
        found = memory.search(prompt[: memory.settings.max_query_chars], limit=PROMPT_FACTS, scope=scope)
    except InvalidInput:
        return ""
    floor = RetrievalPolicy().confident_relevance
    lines = [f"- WARNING: {_fit(w.content, PROMPT_FACT_BYTES)} [{w.id}]" for w in found.warnings]
    warned = {w.id for w in found.warnings}
    lines += [
        f"- {_fit(h.content, PROMPT_FACT_BYTES)} [{h.id}]"
        for h in found.results
        if h.relevance >= floor and h.id not in warned
    ]
    return f"hippograph remembers, for this prompt ({scope}):\n" + "\n".join(lines) + "\n" if lines else ""


def _store(
    memory: SharedMemory,
    turns: Sequence[transcripts.Turn],
    session_id: str,
    scope: str,
    settings: Settings,
) -> CaptureReport:
    report = CaptureReport(turns=len(turns))
    items = []
    for turn, item in zip(turns, episodes(turns, session_id, scope, settings.max_content_bytes), strict=True):
        # One turn holding a secret must not cost the conversation its other turns: each is
        # screened alone first, by this process's HIPPOGRAPH_SECRETS (the write screens the
        # batch again; a turn masked here passes an owner that refuses).
        try:
            screened = screening.screen(item, settings.secrets)
        except SecretDetected as err:
            report.skipped.append(f"line {turn.line + 1} ({turn.speaker}) not captured: {err}")
            continue
        report.truncated += len(f"{turn.speaker}: {turn.text}".encode()) > settings.max_content_bytes
        items.append(screened)
    if items:
        for out in memory.remember_many(items):
            if out.corroborated:
                report.corroborated += 1
            else:
                report.stored += 1
    return report


def _fit(content: str, max_bytes: int) -> str:
    data = content.encode("utf-8")
    if len(data) <= max_bytes:
        return content
    note = _TRUNCATED.format(kept="{kept}", size=len(data))
    room = max_bytes - len(note.encode("utf-8")) - 8  # the count of bytes kept is a few digits
    kept = data[:room].decode("utf-8", errors="ignore").rstrip()
    return kept + note.format(kept=len(kept.encode("utf-8")))


def _readable_time(value: str) -> bool:
    try:
        parse_event_time(value)
    except InvalidInput:
        return False
    return True


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise CaptureError(f"cannot read the transcript {path}: {err.strerror}") from None


def _digest(line: str) -> str:
    return hashlib.sha256(line.encode("utf-8")).hexdigest()[:32]


def _load_mark(path: Path) -> tuple[int, str] | None:
    try:
        mark = json.loads(path.read_text(encoding="utf-8"))
        return int(mark["lines"]), str(mark["last"])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # no mark (or a garbled one): the stored turns corroborate, none is copied


def _start(lines: Sequence[str], mark: tuple[int, str] | None) -> int:
    """The first line not read yet: after the marked line, wherever it now is."""
    if mark is None:
        return 0
    count, last = mark
    if count == 0:
        return 0
    if count <= len(lines) and _digest(lines[count - 1]) == last:
        return count
    for index in range(len(lines) - 1, -1, -1):
        if _digest(lines[index]) == last:
            return index + 1
    return 0


def _save_mark(path: Path, lines: Sequence[str]) -> None:
    mark = {"lines": len(lines), "last": _digest(lines[-1]) if lines else ""}
    partial = path.with_suffix(".tmp")
    partial.write_text(json.dumps(mark), encoding="utf-8")
    os.replace(partial, path)


def _text(event: dict[str, Any], key: str, *, required: bool = True) -> str:
    value = event.get(key)
    if isinstance(value, str) and value:
        return value
    if required:
        raise CaptureError(f"the hook input has no {key}: run it from a Claude Code hook")
    return ""


def print_notes(notes: Sequence[str]) -> None:
    for note in notes:
        print(f"hippograph: {note}", file=sys.stderr)
