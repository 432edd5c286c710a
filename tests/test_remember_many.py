"""remember_many: the outcome of remember called in turn, written a batch at a time."""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hippograph.config import Settings
from hippograph.domain.errors import InvalidInput, SecretDetected, StoreError
from hippograph.domain.models import RememberOut
from hippograph.service import intake, upkeep, writes
from hippograph.service.memory import Memory
from hippograph.service.transfer import export
from hippograph.store.embed import FastEmbedder

# Already stored when the batch arrives: the batch supersedes one and continues its session.
BEFORE: list[dict[str, Any]] = [
    {"content": "Carol lives in Rome", "subject": "Carol", "predicate": "lives_in", "object": "Rome"},
    {"content": "Retro: the build is flaky", "kind": "episode", "session_id": "retro"},
]
BATCH: list[dict[str, Any]] = [
    {
        "content": "Alice lives in Berlin",
        "subject": "Alice",
        "predicate": "lives_in",
        "object": "Berlin",
        "source": "user_edit",
        "tags": ["home"],
    },
    {"content": "Standup: the release is blocked on the migration", "kind": "episode", "session_id": "s1"},
    {"content": "Project Apollo ships in May", "entities": ["Project Apollo"], "tags": ["release"]},
    {"content": "Standup: Bob will pair with Alice on it", "kind": "episode", "session_id": "s1"},
    # Supersedes the first fact of this batch (the user says so).
    {
        "content": "Alice lives in Paris",
        "subject": "Alice",
        "predicate": "lives_in",
        "object": "Paris",
        "source": "user_edit",
        "tags": ["home"],
    },
    {"content": "Bob works at Acme", "subject": "Bob", "predicate": "works_at", "object": "Acme"},
    # Not confident enough to replace Acme: both stay, flagged as contradicting.
    {"content": "Bob works at Globex", "subject": "Bob", "predicate": "works_at", "object": "Globex"},
    # Mentions, by name only, entities the batch itself created.
    {"content": "Alice presented Project Apollo to Bob", "tags": ["release"]},
    {"content": "Standup: release moved to Thursday", "kind": "episode", "session_id": "s1"},
    {
        "content": "Carol lives in Oslo",
        "subject": "Carol",
        "predicate": "lives_in",
        "object": "Oslo",
        "source": "user_edit",
    },
    {"content": "Retro: the flaky test is fixed", "kind": "episode", "session_id": "retro"},
    # Restatements: of a fact the batch superseded (no longer believed: stored anew), and two of
    # one the batch stores (the second with a session: a restatement is no turn of it).
    {"content": "Carol lives in Rome", "evidence": "said again"},
    {"content": "Dana keeps her notes in Obsidian", "tags": ["tools"]},
    {"content": "Dana keeps her notes in Obsidian.", "tags": ["tools"]},
    {"content": "Dana keeps her notes in Obsidian", "session_id": "s1", "source": "user_edit"},
    {"content": "Standup: the build is green again", "kind": "episode", "session_id": "s1"},
    # A changed value (shown, not linked) and an exact denial (linked). (No two texts tie on
    # BM25 for a question: LanceDB orders ties by where rows lie, which differs between the two.)
    {"content": "Dana keeps her notes in Notion"},
    {"content": "Dana does not keep her notes in Obsidian"},
    # The same subject in other letters ("ß" casefolds to "ss", lower() keeps it): superseded.
    {
        "content": "Jörg Weiß lives in Graz",
        "subject": "Jörg Weiß",
        "predicate": "lives_in",
        "object": "Graz",
        "source": "user_edit",
    },
    {
        "content": "JÖRG WEISS lives in Linz",
        "subject": "JÖRG WEISS",
        "predicate": "Lives_In",
        "object": "Linz",
        "source": "user_edit",
    },
]
QUESTIONS = ("where does Alice live", "what happened at standup", "where does Bob work", "Apollo release")


@pytest.fixture
def open_store(
    settings_for: Callable[[Path], Settings], embedder: FastEmbedder, tmp_path: Path
) -> Iterator[Any]:
    """Open stores in their own data dirs, on a clock that ticks a second a call (same times both ways)."""
    opened: list[Memory] = []

    def open_one(name: str) -> Memory:
        ticks = itertools.count()
        start = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
        mem = Memory.open(
            settings_for(tmp_path / name),
            embedder=embedder,
            clock=lambda: start + timedelta(seconds=next(ticks)),
        )
        opened.append(mem)
        return mem

    yield open_one
    for mem in opened:
        mem.close()


def _labels(memory: Memory) -> dict[str, str]:
    """Fact and entity ids -> their content or name: ids are random, the rest must match."""
    labels = {f.id: f"<{f.content}>" for f in memory.graph.all_facts()}
    labels.update({e.id: f"<{e.name}>" for e in memory.graph.all_entities()})
    return labels


def _relabel(text: str, labels: dict[str, str]) -> str:
    for node_id, label in labels.items():
        text = text.replace(node_id, label)
    return text


def _state(memory: Memory, outs: Sequence[RememberOut]) -> dict[str, Any]:
    """Everything the store holds and answers, ids replaced by content: graph, index, replies."""
    labels = _labels(memory)
    dump = io.StringIO()
    export(memory.stores, dump)
    _, *records = dump.getvalue().splitlines()
    vector_rows = memory.vectors.ids("facts")
    return {
        "graph": sorted(_relabel(line, labels) for line in records),
        "indexed": sorted((labels[fid], status) for fid, status in vector_rows.items()),
        "entities": sorted(
            (e.name, e.mention_count)
            for e in map(memory.entities.get, [e.id for e in memory.graph.all_entities()])
            if e is not None
        ),
        "replies": [_relabel(out.model_dump_json(), labels) for out in outs],
        # Every active fact, by score: equal scores fall back to the (random) ids, so by content.
        "answers": {
            q: sorted((-round(h.score, 5), h.content) for h in memory.search(q, limit=20).results)
            for q in QUESTIONS
        },
    }


@pytest.mark.parametrize("batch_size", [256, 3], ids=["one-batch", "batches-of-3"])
def test_remember_many_stores_what_remember_in_turn_would(
    open_store: Any, monkeypatch: pytest.MonkeyPatch, batch_size: int
) -> None:
    monkeypatch.setattr(writes, "_WRITE_BATCH", batch_size)
    one_by_one, bulk = open_store("one-by-one"), open_store("bulk")
    for mem in (one_by_one, bulk):
        for item in BEFORE:
            mem.remember(**item)

    outs_one = [one_by_one.remember(**item) for item in BATCH]
    outs_bulk = bulk.remember_many(BATCH)

    expected = _state(one_by_one, outs_one)
    assert _state(bulk, outs_bulk) == expected
    # The workload did what it is meant to exercise.
    by_content = {out.content: out for out in outs_bulk}
    assert by_content["Alice lives in Paris"].superseded == [by_content["Alice lives in Berlin"].id]
    assert by_content["Bob works at Globex"].contradicts == [by_content["Bob works at Acme"].id]
    assert len(by_content["Carol lives in Oslo"].superseded) == 1
    assert by_content["JÖRG WEISS lives in Linz"].superseded == [by_content["Jörg Weiß lives in Graz"].id]
    mentioned = {
        e.name: e.created for e in by_content["Alice presented Project Apollo to Bob"].linked_entities
    }
    assert mentioned == {"Alice": False, "Project Apollo": False, "Bob": False}
    notes = by_content["Dana keeps her notes in Obsidian"]
    assert [o.corroborated for o in outs_bulk if o.id == notes.id] == [False, True, True]
    assert [o.corroborations for o in outs_bulk if o.id == notes.id] == [1, 2, 3]
    carol = by_content["Carol lives in Rome"]
    assert not carol.corroborated and carol.status == "staged"
    assert [(s.content, s.conflict) for s in carol.similar] == [("Carol lives in Oslo", "name")]
    assert [(s.id, s.conflict) for s in by_content["Dana keeps her notes in Notion"].similar][:1] == [
        (notes.id, "name")
    ]
    assert by_content["Dana does not keep her notes in Obsidian"].contradicts == [notes.id]
    next_edges = [line for line in expected["graph"] if '"edge": "NEXT"' in line]
    assert len(next_edges) == 4
    assert any(
        "<Standup: release moved to Thursday>" in line and "<Standup: the build is green again>" in line
        for line in next_edges
    )
    assert any(
        "<Retro: the build is flaky>" in line and "<Retro: the flaky test is fixed>" in line
        for line in next_edges
    )


@pytest.mark.parametrize(
    ("bad", "error", "message"),
    [
        ({"content": "   "}, InvalidInput, "items[2]: content is empty"),
        (
            {"content": "Dana likes tea", "colour": "red"},
            InvalidInput,
            "items[2] has unknown field(s) colour",
        ),
        ({"content": "Dana likes tea", "kind": "rumour"}, InvalidInput, "items[2]: kind"),
        ("Dana likes tea", InvalidInput, "items[2] must be an object"),
        (
            {"content": "the key is AKIAME61CVTPRRNCZQMH"},
            SecretDetected,
            "refused: items[2].content contains",
        ),
    ],
    ids=["empty", "unknown-field", "bad-kind", "not-an-object", "secret"],
)
def test_a_bad_item_is_named_and_nothing_is_written(
    memory: Memory, bad: Any, error: type[Exception], message: str
) -> None:
    memory.remember("Dana lives in Lisbon", subject="Dana", predicate="lives_in", object="Lisbon")
    before = (memory.graph.census.counts(), memory.vectors.count("facts"), memory.vectors.count("entities"))
    items = [
        {"content": "Dana lives in Porto", "subject": "Dana", "predicate": "lives_in", "object": "Porto"},
        {"content": "Dana met Eve at the conference", "entities": ["Eve"]},
        bad,
    ]

    with pytest.raises(error) as raised:
        memory.remember_many(items)

    assert message in str(raised.value)
    assert "AKIAME61CVTPRRNCZQMH" not in str(raised.value)
    assert (
        memory.graph.census.counts(),
        memory.vectors.count("facts"),
        memory.vectors.count("entities"),
    ) == before
    assert memory.entities.resolve("Eve", "global") is None
    assert memory.search("where does Dana live").results[0].content == "Dana lives in Lisbon"


def test_every_fact_of_a_bulk_write_is_found_after_a_restart(
    settings: Settings, embedder: FastEmbedder
) -> None:
    topics = ["tea", "chess", "sailing", "opera", "pottery", "rust", "jazz", "hiking", "origami", "curling"]
    items = [
        {
            "content": f"Person {i} took up {topic} in {2010 + i}",
            "entities": [f"Person {i}"],
            "session_id": "intro",
        }
        for i, topic in enumerate(topics)
    ]
    mem = Memory.open(settings, embedder=embedder)
    try:
        stored = mem.remember_many(items)
    finally:
        mem.close()

    reopened = Memory.open(settings, embedder=embedder)
    try:
        assert reopened.reconcile() == upkeep.ReconcileReport(added=0, removed=0, restatused=0)
        for item, out in zip(items, stored, strict=True):
            assert reopened.search(item["content"], limit=1).results[0].id == out.id
        assert reopened.graph.census.counts()["facts"] == len(items)
    finally:
        reopened.close()


class CountingEmbedder:
    """The real model, recording what each call embedded."""

    def __init__(self, model: FastEmbedder) -> None:
        self.name, self.dim, self._model = model.name, model.dim, model
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self._model.embed(texts)

    def count_tokens(self, text: str) -> int:
        return self._model.count_tokens(text)


def test_each_batch_is_embedded_in_one_call(
    settings: Settings, embedder: FastEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writes, "_WRITE_BATCH", 4)
    counting = CountingEmbedder(embedder)
    mem = Memory.open(settings, embedder=counting)
    try:
        items = [{"content": f"Fact number {i} about the garden"} for i in range(10)]
        counting.calls.clear()
        mem.remember_many(items)
        contents = {item["content"] for item in items}
        fact_calls = [len(texts) for texts in counting.calls if set(texts) <= contents]
        assert fact_calls == [4, 4, 2]
    finally:
        mem.close()


def test_a_failed_batch_writes_nothing_of_itself_and_says_how_far_it_got(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writes, "_WRITE_BATCH", 2)
    # The last two facts get one id: the second batch fails inside its graph transaction.
    ids = iter(["f_00000000000000a1", "f_00000000000000a2", "f_00000000000000a3", "f_00000000000000a3"])
    make_id = intake.new_id
    monkeypatch.setattr(intake, "new_id", lambda prefix: next(ids) if prefix == "f" else make_id(prefix))

    with pytest.raises(StoreError, match=r"primary key|duplicate key") as raised:
        memory.remember_many(
            [{"content": f"Fact {i} about Oslo", "entities": [f"Desk {i}"]} for i in range(4)]
        )

    assert "the first 2 items were stored" in " ".join(raised.value.__notes__)
    assert memory.graph.census.counts()["facts"] == memory.vectors.count("facts") == 2
    assert memory.entities.resolve("Desk 2", "global") is None
    assert memory.graph.check_mirror(repair=False) == []
