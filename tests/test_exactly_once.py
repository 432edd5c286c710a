"""A proxied write runs once: a retry with its request id gets the first reply, after a crash too.

(Across owners killed -9 under proxies, in real processes: tests/e2e/test_exactly_once.py.)"""

from __future__ import annotations

import pytest

from hippograph.config import Settings
from hippograph.domain.errors import NotFound, StoreError
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder


def test_a_retried_remember_is_answered_with_the_first_reply(memory: Memory) -> None:
    args = {"content": "Standup: Noor will demo the search page", "kind": "episode", "session_id": "d1"}
    first = memory.call_once("remember", args, "req-1")
    again = memory.call_once("remember", args, "req-1")
    assert again == first
    assert memory.stats()["facts"] == 1
    # A new request with the same words is a new turn of the conversation.
    assert memory.call_once("remember", args, "req-2").id != first.id


def test_a_retried_correct_is_not_reported_as_already_superseded(memory: Memory) -> None:
    old = memory.remember("Lena lives in Graz")
    args = {"content": "Lena lives in Linz", "fact_id": old.id}
    first = memory.call_once("correct", args, "req-c")
    assert memory.call_once("correct", args, "req-c") == first
    assert [f.id for f in memory.search("Where does Lena live?").results][:1] == [first.id]


def test_a_failed_write_leaves_no_receipt_for_the_next_one(memory: Memory) -> None:
    with pytest.raises(NotFound):
        memory.call_once("correct", {"content": "x", "fact_id": "f_0123456789abcdef"}, "req-bad")
    assert memory.graph.receipts.get("req-bad") is None
    memory.remember("Ada writes Haskell on weekends")  # commits a transaction: no stray receipt rides on it
    assert memory.graph.receipts.get("req-bad") is None


def test_a_write_whose_reply_was_lost_in_a_crash_is_not_run_again(
    settings: Settings, embedder: FastEmbedder
) -> None:
    memory = Memory.open(settings, embedder=embedder)
    try:
        # The write and its receipt commit together; the process dies before keeping the reply.
        memory.graph.receipts.commit_with_next_write("req-lost", "remember", memory.stores.clock())
        memory.remember("Omar moved the standup to 9:30")
    finally:
        memory.close()
    memory = Memory.open(settings, embedder=embedder)
    try:
        with pytest.raises(StoreError, match="was applied"):
            memory.call_once("remember", {"content": "Omar moved the standup to 9:30"}, "req-lost")
        assert memory.stats()["facts"] == 1
    finally:
        memory.close()


def test_a_receipt_is_kept_a_day(memory: Memory) -> None:
    memory.call_once("remember", {"content": "Iris reviews the budget in March"}, "req-d")
    memory.maintain()
    assert memory.graph.receipts.get("req-d") is not None
    memory.graph.receipts.drop_before(memory.stores.clock())
    assert memory.graph.receipts.get("req-d") is None
