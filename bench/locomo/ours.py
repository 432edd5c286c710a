"""hippograph's answers: each conversation through remember(), each question through search and recall."""

from __future__ import annotations

import dataclasses
import json
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.locomo.data import Conversation, Question
from bench.locomo.scoring import TOP_K, Answer, count_tokens
from hippograph.config import Settings
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder


def parse_variants(pairs: Sequence[str]) -> dict[str, Any]:
    """'NAME=VALUE' pairs; VALUE is JSON when it parses (3, 0.5, false, {...}), else a string."""
    overrides: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name.strip():
            raise SystemExit(f"--variant {pair!r}: write NAME=VALUE, e.g. --variant graph=false")
        try:
            overrides[name.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            overrides[name.strip()] = raw
    return overrides


def policy_class() -> type | None:
    try:
        from hippograph.retrieval.policy import RetrievalPolicy
    except ImportError:
        return None
    return RetrievalPolicy if dataclasses.is_dataclass(RetrievalPolicy) else None


def check_variants(overrides: Mapping[str, Any]) -> None:
    """Fail before any work when the overrides cannot apply to this hippograph."""
    if not overrides:
        return
    cls = policy_class()
    if cls is None:
        raise SystemExit("--variant needs hippograph.retrieval.RetrievalPolicy, which this hippograph lacks")
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted({n.split(".", 1)[0] for n in overrides} - names)
    if unknown:
        raise SystemExit(f"RetrievalPolicy has no field {unknown}; it has: {', '.join(sorted(names))}")


def apply_variants(memory: Memory, overrides: Mapping[str, Any]) -> Any:
    """Replace fields of the store's RetrievalPolicy; 'field.key=v' sets one key of a mapping field."""
    retriever: Any = getattr(memory, "retriever", None)
    policy: Any = getattr(retriever, "policy", None)
    if policy is None or not dataclasses.is_dataclass(policy):
        if overrides:
            raise SystemExit("--variant: memory.retriever.policy is not a RetrievalPolicy in this hippograph")
        return None
    changes: dict[str, Any] = {}
    for name, value in overrides.items():
        top, _, key = name.partition(".")
        if key:
            changes[top] = {**changes.get(top, getattr(policy, top)), key: value}
        else:
            changes[top] = value
    retriever.policy = dataclasses.replace(retriever.policy, **changes)
    return retriever.policy


def describe_policy(policy: Any) -> str:
    if policy is None:
        return "n/a (this hippograph has no RetrievalPolicy)"
    # Enum keys (intents) are str subclasses, so the policy reads as plain JSON.
    return f"{type(policy).__name__} {json.dumps(dataclasses.asdict(policy), default=str)}"


@dataclass
class StoreReport:
    ingest_s: float = 0.0
    turns: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    repeats: int = 0  # a fact id returned twice in one result list
    unknown: int = 0  # a returned id that is no ingested turn
    service_notes: Counter[str] = field(default_factory=Counter)  # SearchOut/RecallOut.notes
    over_budget: int = 0  # recall narratives longer than budget_tokens
    policy: Any = None
    notes: list[str] = field(default_factory=list)


def open_store(
    data_dir: Path, models_dir: Path, model: str, embedder: FastEmbedder, store_url: str | None = None
) -> Memory:
    options: dict[str, Any] = {"data_dir": data_dir, "models_dir": models_dir, "embedding_model": model}
    if store_url is not None:
        options["store_url"] = store_url
    if "maintenance_interval_s" in Settings.model_fields:
        options["maintenance_interval_s"] = 0  # no background pass mid-benchmark
    return Memory.open(Settings(**options), embedder=embedder)


def ingest(memory: Memory, conv: Conversation, *, entities_given: bool = True) -> dict[str, str]:
    """Write every turn through remember(), in order; return fact id -> dia id. With
    ``entities_given`` the speaker is passed as an entity (a careful caller); without, only the
    content (what a model that sends ``content`` alone does)."""
    fact_to_turn: dict[str, str] = {}
    for turn in conv.turns:
        out = memory.remember(
            turn.content,
            kind="episode",
            event_time=conv.session_times[turn.session],
            session_id=f"{conv.conv_id}-s{turn.session}",
            entities=[turn.speaker] if entities_given else None,
        )
        fact_to_turn[out.id] = turn.dia_id
    return fact_to_turn


def to_turns(ids: Sequence[str], fact_to_turn: Mapping[str, str], report: StoreReport) -> list[str | None]:
    seen: set[str] = set()
    turns: list[str | None] = []
    for fid in ids:
        if fid in seen:
            report.repeats += 1
            turns.append(None)
            continue
        seen.add(fid)
        if fid not in fact_to_turn:
            report.unknown += 1
        turns.append(fact_to_turn.get(fid))
    return turns


def timed_call(call: Callable[[], Any], report: StoreReport, method: str) -> tuple[Any, float]:
    start = time.perf_counter()
    try:
        out = call()
    except Exception as err:  # a benchmark counts failures and goes on
        if not report.errors[f"{method}: {type(err).__name__}"]:
            traceback.print_exc()
        report.errors[f"{method}: {type(err).__name__}"] += 1
        out = None
    return out, (time.perf_counter() - start) * 1000


def ask_search(
    memory: Memory, question: Question, fact_to_turn: Mapping[str, str], report: StoreReport
) -> Answer:
    out, ms = timed_call(lambda: memory.search(question.text, limit=TOP_K), report, "search")
    hits = out.results if out is not None else []
    report.service_notes.update(getattr(out, "notes", None) or [])
    tokens = sum(count_tokens(h.content) for h in hits)
    return Answer(to_turns([h.id for h in hits], fact_to_turn, report), tokens, ms)


def ask_recall(
    memory: Any, question: Question, fact_to_turn: Mapping[str, str], report: StoreReport, budget: int
) -> Answer:
    out, ms = timed_call(lambda: memory.recall(question.text, budget_tokens=budget), report, "recall")
    if out is None:
        return Answer([], 0, ms)
    report.service_notes.update(getattr(out, "notes", None) or [])
    tokens = count_tokens(out.narrative)
    report.over_budget += tokens > budget
    # Older hippographs sent every ranked fact (``facts``); now the ones the narrative shows.
    shown = getattr(out, "fact_ids", None) or [f.id for f in getattr(out, "facts", [])]
    return Answer(to_turns(shown, fact_to_turn, report), tokens, ms)


APPLIED_READS = "hippograph search (reads applied)"


def timed_ingest(
    memory: Memory, conv: Conversation, report: StoreReport, *, entities_given: bool = True
) -> dict[str, str]:
    start = time.perf_counter()
    fact_to_turn = ingest(memory, conv, entities_given=entities_given)
    report.ingest_s += time.perf_counter() - start
    report.turns += len(conv.turns)
    return fact_to_turn


def hippograph_answers(
    conv: Conversation,
    memory: Memory,
    fact_to_turn: Mapping[str, str],
    overrides: Mapping[str, Any],
    budget: int,
    report: StoreReport,
) -> dict[str, list[Answer]]:
    policy = apply_variants(memory, overrides)
    if report.policy is None:
        print(f"policy: {describe_policy(policy)}", file=sys.stderr)
    report.policy = policy
    answers = {"hippograph search": [ask_search(memory, q, fact_to_turn, report) for q in conv.questions]}
    if hasattr(memory, "recall"):
        answers[f"hippograph recall ({budget} tok)"] = [
            ask_recall(memory, q, fact_to_turn, report, budget) for q in conv.questions
        ]
    elif "no recall" not in report.notes:
        report.notes.append("no recall")
        print("note: this hippograph's Memory has no recall(); recall is not evaluated", file=sys.stderr)
    return answers


def candidate_answers(
    conv: Conversation,
    memory: Memory,
    fact_to_turn: Mapping[str, str],
    overrides: Mapping[str, Any],
    report: StoreReport,
) -> list[Answer]:
    """Search answers under another policy (a leave-one-out candidate), the store's policy restored after."""
    retriever: Any = memory.retriever
    kept = retriever.policy
    try:
        apply_variants(memory, overrides)
        return [ask_search(memory, q, fact_to_turn, report) for q in conv.questions]
    finally:
        retriever.policy = kept


def applied_reads_answers(
    conv: Conversation,
    memory: Memory,
    fact_to_turn: Mapping[str, str],
    overrides: Mapping[str, Any],
    report: StoreReport,
) -> list[Answer]:
    """Each question searched in turn on a store where whatever the searches before it recorded
    has been applied, as a long-running server applies it between a user's questions."""
    apply_variants(memory, overrides)
    # hippographs before reads became reads logged each search's results, applied in batches.
    settle: Callable[[], Any] | None = getattr(memory, "apply_accesses", None)
    if settle is None and "reads record nothing" not in report.notes:
        report.notes.append("reads record nothing")
    answers = []
    for question in conv.questions:
        answers.append(ask_search(memory, question, fact_to_turn, report))
        if settle is not None:
            settle()
    return answers
