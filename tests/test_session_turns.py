"""Overlapping writes to one conversation agree on its order: each turn's NEXT predecessor is the
turn it was indexed with, and the turns form one chain."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from hippograph.domain.models import EdgeType
from hippograph.service import stores
from hippograph.service.memory import Memory
from hippograph.service.shaping import index_text
from hippograph.store.seam import EVERYWHERE
from testkit.indexed import indexed_texts


def test_overlapping_turns_of_one_session_form_one_chain_indexed_with_their_predecessors(
    memory: Memory,
) -> None:
    def turn(i: int) -> str:
        return memory.remember(f"Turn {i}: we talked about item {i}", kind="episode", session_id="call-7").id

    with ThreadPoolExecutor(max_workers=6) as pool:
        ids = list(pool.map(turn, range(24)))

    edges = memory.graph.view(EVERYWHERE).fact_edges(ids, [EdgeType.NEXT])
    before = {e.dst: e.src for e in edges}
    after = {e.src: e.dst for e in edges}
    assert len(before) == len(after) == len(ids) - 1  # one predecessor and one successor each
    first = [fid for fid in ids if fid not in before]
    assert len(first) == 1
    chain, fid = [first[0]], first[0]
    while fid in after:
        fid = after[fid]
        chain.append(fid)
    assert sorted(chain) == sorted(ids)

    facts = memory.graph.get_facts(ids)
    indexed = indexed_texts(memory.vectors)
    for fid in ids:
        previous = facts[before[fid]].content if fid in before else None
        assert indexed[fid] == index_text(facts[fid], previous)


@pytest.mark.embedded  # what a process holds of a graph no other server writes
def test_a_session_links_to_its_last_turn_after_many_other_sessions_were_written(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stores, "_HELD", 2)  # the held tails: the latest two sessions'
    first = memory.remember("Turn 1: we planned the garden", kind="episode", session_id="garden")
    for other in ("a", "b", "c"):
        memory.remember(f"Turn 1 of {other}: an unrelated chat", kind="episode", session_id=other)
    assert len(memory.stores.sessions._tail) == 2  # the garden's tail was let go

    second = memory.remember("Turn 2: we bought tomato seeds", kind="episode", session_id="garden")

    edges = memory.graph.view(EVERYWHERE).fact_edges([second.id], [EdgeType.NEXT])
    assert [(e.src, e.dst) for e in edges] == [(first.id, second.id)]
