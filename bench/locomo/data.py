"""The LoCoMo file: conversations, their turns and session times, and questions with clean evidence."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO.parent / "shared" / "bench" / "locomo_dev.json"
CATEGORIES = (1, 2, 3, 4)


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    content: str
    session: int


@dataclass(frozen=True)
class Question:
    index: int  # position in the conversation's qa list
    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass
class Conversation:
    conv_id: str
    turns: list[Turn]
    session_times: dict[int, str]  # session number -> ISO 8601
    questions: list[Question]
    skipped: Counter[str] = field(default_factory=Counter)


_MONTHS = {
    name: number
    for number, name in enumerate(
        ("january february march april may june july august september october november december".split()),
        1,
    )
}
_SESSION_TIME = re.compile(r"(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([a-z]+),?\s+(\d{4})", re.I)
_EVIDENCE_ID = re.compile(r"D:?(\d+):0*(\d+)")


def parse_session_time(text: str) -> str:
    """'1:56 pm on 8 May, 2023' -> '2023-05-08T13:56:00' (LoCoMo gives no time zone)."""
    match = _SESSION_TIME.fullmatch(text.strip())
    if match is None or match.group(5).lower() not in _MONTHS:
        raise ValueError(f"not a LoCoMo session time: {text!r}")
    hour, minute, half, day, month, year = match.groups()
    hour24 = int(hour) % 12 + (12 if half.lower() == "p" else 0)
    when = datetime(int(year), _MONTHS[month.lower()], int(day), hour24, int(minute))
    return when.isoformat()


def clean_evidence(entries: Iterable[str]) -> tuple[list[str], int]:
    """Evidence ids per LOCOMO_SOURCE.md: split, rewrite 'D:?N:0*M' as 'DN:M', drop the rest.

    Returns the ids (deduplicated, in order) and how many pieces were dropped.
    """
    ids: list[str] = []
    dropped = 0
    for entry in entries:
        for piece in re.split(r"[;,\s]+", str(entry)):
            if not piece:
                continue
            match = _EVIDENCE_ID.fullmatch(piece)
            if match is None:
                dropped += 1
            elif (fixed := f"D{match.group(1)}:{match.group(2)}") not in ids:
                ids.append(fixed)
    return ids, dropped


def turn_content(turn: Mapping[str, Any]) -> str:
    content = f"{turn['speaker']}: {turn['text']}"
    caption = (turn.get("blip_caption") or "").strip()
    return f"{content} [image: {caption}]" if caption else content


def load_conversation(sample: Mapping[str, Any]) -> Conversation:
    raw = sample["conversation"]
    numbers = sorted(int(m.group(1)) for key in raw if (m := re.fullmatch(r"session_(\d+)", key)))
    turns = [
        Turn(t["dia_id"], t["speaker"], turn_content(t), n) for n in numbers for t in raw[f"session_{n}"]
    ]
    times = {n: parse_session_time(raw[f"session_{n}_date_time"]) for n in numbers}
    conv = Conversation(sample["sample_id"], turns, times, [])
    known = {t.dia_id for t in turns}
    for index, qa in enumerate(sample["qa"]):
        if qa["category"] not in CATEGORIES:
            conv.skipped[f"category {qa['category']}"] += 1
            continue
        ids, dropped = clean_evidence(qa.get("evidence", []))
        conv.skipped["malformed evidence pieces dropped"] += dropped
        missing = [i for i in ids if i not in known]
        conv.skipped["evidence ids not in the conversation"] += len(missing)
        ids = [i for i in ids if i in known]
        if not ids:
            conv.skipped["no usable evidence"] += 1
            continue
        conv.questions.append(Question(index, qa["question"], qa["category"], tuple(ids)))
    return conv


def load_dataset(path: Path, conversations: int | None, limit_questions: int | None) -> list[Conversation]:
    samples = json.loads(path.read_text("utf-8"))
    convs = [load_conversation(s) for s in samples[:conversations]]
    if limit_questions is not None:
        for conv in convs:
            conv.questions = conv.questions[:limit_questions]
    return convs
