"""forget(purge=True): no file of the data dir keeps the fact's text; a tombstone keeps its chains.

(``hippograph forget --purge`` run as a process: tests/e2e/test_purge.py.)"""

from __future__ import annotations

import pytest

from hippograph.config import Settings
from hippograph.domain.models import EdgeType
from hippograph.service import curation
from hippograph.service.memory import Memory
from hippograph.service.upkeep import Upkeep
from hippograph.store.embed import FastEmbedder
from hippograph.store.seam import EVERYWHERE
from testkit.stored import analyze, stored_files

# Each appears once, in the purged fact only: its content, evidence, entity, tag and claim.
TOKENS = ("xylophonequark", "evidencequark", "Quarkzilla", "quarktag", "quarkvalue")


def files_holding(settings: Settings, tokens: tuple[str, ...] = TOKENS) -> dict[str, list[str]]:
    """token -> the memory's files whose bytes hold it (any case), as paths from the data dir;
    on PostgreSQL, the database's files but not the server's write-ahead log (docs/postgres.md:
    what a purge there cannot reach)."""
    found: dict[str, list[str]] = {}
    for path in stored_files(settings, log=False):
        data = path.read_bytes().lower()
        for token in tokens:
            if token.lower().encode() in data:
                shown = (
                    path.relative_to(settings.data_dir) if path.is_relative_to(settings.data_dir) else path
                )
                found.setdefault(token, []).append(str(shown))
    return found


def fill(memory: Memory) -> tuple[str, str, str]:
    """A store where the secret turn sits in a session chain and a supersedes chain:
    (before it, it, after it)."""
    for i in range(30):
        memory.remember(f"Filler fact {i}: the garden has {i} rose bushes", tags=["garden"])
    memory.remember("Bob reviewed the garden plan", entities=["Bob"])
    first = memory.remember("Standup: we talked about the release", kind="episode", session_id="s1")
    # As a proxy sends it: the owner keeps the reply, which quotes the fact, for a retry.
    secret = memory.call_once(
        "remember",
        {
            "content": "Standup: the launch codeword is xylophonequark",
            "kind": "episode",
            "session_id": "s1",
            "entities": ["Quarkzilla", "quarkvalue"],
            "tags": ["quarktag"],
            "evidence": "evidencequark was said aloud",
            "subject": "launch",
            "predicate": "codeword",
            "object": "quarkvalue",
        },
        "request-1",
    )
    after = memory.remember("Standup: next we fix the build", kind="episode", session_id="s1")
    memory.remember("Standup: next we fix the build", kind="episode", session_id="s1")
    assert memory.search("what is the launch codeword").results[0].id == secret.id  # logged access
    return first.id, secret.id, after.id


def test_a_purged_fact_leaves_no_file_holding_its_text(settings: Settings, embedder: FastEmbedder) -> None:
    memory = Memory.open(settings, embedder=embedder)
    try:
        before, secret, after = fill(memory)
        newer = memory.correct("Standup: the launch codeword changed", fact_id=secret, tags=[], entities=[])
        memory.vectors.optimize()
        analyze(settings)  # as PostgreSQL's autovacuum may at any time
        assert set(files_holding(settings)) >= {"xylophonequark", "quarktag"}

        tomb = memory.forget(secret, reason="delete xylophonequark", purge=True)

        assert (tomb.id, tomb.status, tomb.content, tomb.entities, tomb.tags) == (
            secret,
            "purged",
            "",
            [],
            [],
        )
        assert memory.forget(secret, purge=True) == tomb  # idempotent
        # Only a database server keeps what a purge cannot reach, and the reply says where.
        shown = tomb.model_dump(mode="json")
        if memory.graph.file is None:
            assert "write-ahead log" in shown["note"]
        else:
            assert "note" not in shown
        # The chains keep their place: the session's turns and the correction go through it.
        edges = {(e.type, e.src, e.dst) for e in memory.graph.view(EVERYWHERE).fact_edges([secret])}
        assert edges == {
            (EdgeType.NEXT, before, secret),
            (EdgeType.NEXT, secret, after),
            (EdgeType.SUPERSEDES, newer.id, secret),
        }
        assert [(f.id, f.content) for f in memory.explain(newer.id).supersedes] == [(secret, "")]
        everything = memory.search("launch codeword xylophonequark", include_history=True, limit=50)
        assert secret not in {h.id for h in everything.results}
        assert "xylophonequark" not in memory.recall("the launch codeword").narrative
        exported = memory.export()
        assert secret not in exported["jsonl"]
        assert not any(t.lower() in exported["jsonl"].lower() for t in TOKENS)
        assert memory.graph.check_mirror(repair=False) == []
        # Quarkzilla named only the purged fact; the tag and the claim were its alone too.
        assert memory.entities.resolve("Quarkzilla", "global") is None
        assert memory.entities.resolve("Bob", "global") is not None
    finally:
        memory.close()

    assert files_holding(settings) == {}
    reopened = Memory.open(settings, embedder=embedder)
    try:
        assert reopened.reconcile().added == 0 and reopened.graph.check_mirror(repair=False) == []
        # The next turn was indexed with the purged one as context; it is found by its own words.
        assert reopened.search("what will we fix").results[0].content == "Standup: next we fix the build"
        assert reopened.graph.get_fact(secret).status.value == "purged"  # type: ignore[union-attr]
    finally:
        reopened.close()
    assert files_holding(settings) == {}


@pytest.mark.embedded  # interrupts the Kùzu store's purge
def test_an_interrupted_purge_is_finished_by_the_next_open(
    settings: Settings, embedder: FastEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = Memory.open(settings, embedder=embedder)
    try:
        _, secret, _ = fill(memory)
        # The process dies after the graph committed the purge, before the stores are rewritten
        # (and so does not rewrite the graph compactly at close either).
        monkeypatch.setattr(curation, "finish_purge", lambda stores: None)
        monkeypatch.setattr(Upkeep, "compact_graph", lambda self, most_bytes=None: False)
        memory.forget(secret, purge=True)
    finally:
        memory.close()
    # What the rewrite is for: Kùzu keeps overwritten strings in its file's free pages (the
    # purged fact's entity, deleted with it, is still there).
    assert "graph.kuzu" in files_holding(settings).get("Quarkzilla", [])

    monkeypatch.undo()
    reopened = Memory.open(settings, embedder=embedder)
    try:
        assert reopened.graph.get_meta(curation.PURGE_PENDING) == ""
        assert reopened.graph.get_fact(secret).status.value == "purged"  # type: ignore[union-attr]
    finally:
        reopened.close()
    assert files_holding(settings) == {}


def test_a_forgotten_fact_is_found_by_a_search_that_asks_for_history(memory: Memory) -> None:
    # Ranked by what it says, below what memory still holds: its status weighed it 0, so it came
    # after every unrelated fact and fell out of a short list.
    others = [
        "Biscuit's vet is Larchfield Vets.",
        "We walk Biscuit at 7am.",
        "Biscuit chewed a slipper.",
        "Biscuit is a whippet.",
        "The allotment rent is 62 pounds.",
        "I'm vegetarian.",
        "Our landlord is Fraser Doig.",
        "I live in Glasgow.",
    ]
    for text in others:
        memory.remember(text)
    dog = memory.remember("Biscuit is our dog.").id
    memory.forget(dog, reason="the user asked")
    assert dog not in [h.id for h in memory.search("Biscuit is our dog", limit=5).results]
    history = memory.search("Biscuit is our dog", limit=5, include_history=True).results
    assert {h.id: h.status for h in history}.get(dog) == "retracted"


def test_forgetting_twice_says_nothing_changed_the_second_time(memory: Memory) -> None:
    fact = memory.remember("Odile's locker code changes every term").id
    first = memory.forget(fact, reason="moved lockers")
    assert first.status == "retracted" and first.note is None
    again = memory.forget(fact, reason="typo")
    assert again.note == "already forgotten: nothing changed"
    assert memory.explain(fact).status_reason == "moved lockers"  # the first reason stands
    memory.forget(fact, purge=True)
    assert memory.forget(fact).note == "already erased: nothing changed"
