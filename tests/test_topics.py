"""Topics (issue 26): consolidate groups facts that belong together, labels them without names,
keeps their ids, lets new facts join and forgotten ones leave, and shows them only to their scope."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

import hippograph.store.worker_process as worker_process
from hippograph.config import Settings
from hippograph.domain.errors import NotFound
from hippograph.domain.topics import MAX_TOPIC, MIN_TOPIC, stable_ids, topic_id
from hippograph.mcp_app import build_server
from hippograph.service.consolidation import ENTITIES
from hippograph.service.fact_columns import FactColumns
from hippograph.service.memory import Memory
from hippograph.service.topic_graph import FactGraph
from hippograph.sharing.proxy import SharedMemory
from hippograph.store.embed import FastEmbedder
from hippograph.store.fact_times import UNKNOWN, aligned, from_rows
from hippograph.text.topic_labels import labels, still_shared
from testkit.prebuilt import Prebuilt

THEMES = {
    "bread": [
        "Priya feeds the sourdough starter every morning before work.",
        "The sourdough loaf needs a long cold proof in the fridge overnight.",
        "Priya bought a cast iron dutch oven to bake sourdough bread.",
        "Rye flour makes the sourdough starter bubble faster.",
        "The bread came out dense because the sourdough dough was underproofed.",
        "Priya scores the sourdough loaf with a razor before baking.",
        "A sourdough starter smells sour when it is hungry.",
        "Baking sourdough bread at 250 degrees gives a dark crust.",
    ],
    "running": [
        "Tomasz is training for the Berlin marathon in September.",
        "The marathon training plan has a long run every Sunday.",
        "Tomasz bought new running shoes with more cushioning for the marathon.",
        "Interval running on the track builds speed for the marathon.",
        "Tomasz ran a half marathon in one hour and forty minutes.",
        "Marathon runners eat pasta the night before the race.",
        "The long run this Sunday is thirty kilometres at an easy pace.",
        "Tomasz stretches his calves after every running session.",
    ],
    "cluster": [
        "The kubernetes cluster upgrade to version 1.30 is planned for Friday.",
        "Ingrid drains each kubernetes node before the cluster upgrade.",
        "The cluster autoscaler adds kubernetes nodes when pods are pending.",
        "Ingrid found a deprecated API in the helm charts before the kubernetes upgrade.",
        "The kubernetes control plane is upgraded before the worker nodes.",
        "Pods restart on another kubernetes node while a node is drained.",
        "The cluster upgrade needs a backup of etcd first.",
        "Ingrid watches the kubernetes pods during the cluster upgrade.",
    ],
}


def _remember_themes(memory: Memory, scope: str | None = None) -> dict[str, str]:
    """fact id -> theme, the themes' facts interleaved as a conversation would mix them."""
    theme_of = {}
    for i in range(8):
        for theme, sentences in THEMES.items():
            theme_of[memory.remember(sentences[i], scope=scope).id] = theme
    return theme_of


def _themes(memory: Memory) -> dict[str, str]:
    return _remember_themes(memory)


PREBUILT = {"themes": _themes}  # conftest: the memory of a test asking for themes


@pytest.fixture
def themes(memory: Memory, prebuilt: Prebuilt) -> dict[str, str]:
    """fact id -> theme of the facts ``memory`` (a copy of ``_themes``' memory) holds."""
    theme_of: dict[str, str] = prebuilt(_themes)[1]
    return theme_of


def _topic_of(memory: Memory, scope: str | None = None) -> dict[str, str]:
    return {fid: t.id for t in memory.topics(scope).topics for fid in memory.topic(t.id, scope).fact_ids}


def test_a_topics_entities_are_those_most_of_its_facts_name_ties_in_id_order(memory: Memory) -> None:
    linked: dict[str, list[tuple[str, str]]] = {}
    jobs = ["repaint", "reroof", "insulate", "clear out", "rewire", "fix the door of"]
    when = ["in May", "before winter", "this autumn", "on Saturday", "next month", "today"]
    # Two names in every sentence: a tie for the shed topic's entities.
    shed = [f"Orla and Bram {job} the garden shed {at}." for job, at in zip(jobs, when, strict=True)]
    for i in range(6):
        for sentences in (*THEMES.values(), shed):
            out = memory.remember(sentences[i])
            linked[out.id] = [(e.id, e.name) for e in out.linked_entities]
    memory.consolidate()
    tied = 0
    for topic in memory.topics().topics:
        members = memory.topic(topic.id).fact_ids
        named = Counter(eid for fid in members for eid in {e for e, _ in linked[fid]})
        name = {e: n for fid in members for e, n in linked[fid]}
        ranked = sorted(named.items(), key=lambda kv: (-kv[1], kv[0]))[:ENTITIES]
        assert topic.entities == [name[e] for e, n in ranked if n >= 2]
        tied += len({n for _, n in ranked if n >= 2}) < len([n for _, n in ranked if n >= 2])
    assert tied  # the shed's topic: Orla and Bram named equally often, in the order of their ids


def test_consolidate_groups_each_subjects_facts_into_topics_labelled_without_names(
    memory: Memory, themes: dict[str, str]
) -> None:
    theme_of = themes
    report = memory.consolidate()
    [scope] = report.scopes
    assert (scope.scope, scope.facts, scope.added, scope.removed) == ("global", 24, scope.topics, 0)
    topic_of = _topic_of(memory)
    assert scope.in_topics == len(topic_of) >= 20
    for theme in THEMES:  # each subject's facts mostly in one topic, of that subject alone
        held = Counter(topic_of[fid] for fid, t in theme_of.items() if t == theme and fid in topic_of)
        tid, count = held.most_common(1)[0]
        assert count >= 6, (theme, held)
        assert {theme_of[fid] for fid, t in topic_of.items() if t == tid} == {theme}
    listed = memory.topics().topics
    for topic in listed:
        words = topic.label.split(", ")
        assert 1 <= len(words) <= 4 and not {"priya", "tomasz", "ingrid"} & set(words), topic.label
        assert topic.size == len(memory.topic(topic.id).fact_ids) and topic.first <= topic.last
        assert set(topic.fact_ids) <= set(memory.topic(topic.id).fact_ids)
    labelled = {theme_of[t.fact_ids[0]]: t.label for t in listed}
    assert "sourdough" in labelled["bread"] and "kubernetes" in labelled["cluster"], labelled
    names = {n for t in listed for n in t.entities}
    assert {"Priya", "Tomasz", "Ingrid"} <= names  # a topic names who its facts are about


def test_consolidate_again_changes_nothing_and_a_few_new_facts_keep_every_id(
    memory: Memory, themes: dict[str, str]
) -> None:
    memory.consolidate()
    before = _topic_of(memory)
    again = memory.consolidate().scopes[0]
    assert (again.added, again.changed, again.removed) == (0, 0, 0)
    assert _topic_of(memory) == before

    more = memory.remember("Priya tried a sourdough starter made with spelt flour.").id
    joined = _topic_of(memory)
    assert more in joined  # joined on the write path, before any consolidate
    bread = Counter(before.values()).most_common()  # (a topic of the bread facts is among them)
    assert joined[more] in {tid for tid, _ in bread}
    memory.consolidate()
    assert set(_topic_of(memory).values()) == set(before.values())  # the same ids


def test_a_dry_run_reports_the_topics_and_keeps_none(memory: Memory, themes: dict[str, str]) -> None:
    report = memory.consolidate(dry_run=True)
    assert report.dry_run and report.scopes[0].topics >= 3 and report.scopes[0].added >= 3
    assert memory.topics().topics == [] and memory.topics().more == 0


def test_a_forgotten_or_purged_fact_leaves_its_topic_and_the_topics_file(
    memory: Memory, themes: dict[str, str]
) -> None:
    theme_of = themes
    memory.consolidate()
    topic_of = _topic_of(memory)
    retracted, purged = [fid for fid in topic_of if theme_of[fid] == "running"][:2]
    purged_text = memory.graph.get_fact(purged).content  # type: ignore[union-attr]
    memory.forget(retracted)
    memory.forget(purged, purge=True)
    after = _topic_of(memory)
    assert retracted not in after and purged not in after
    for topic in memory.topics().topics:
        assert purged not in topic.fact_ids and topic.size == len(memory.topic(topic.id).fact_ids)
    memory.close()
    if memory.settings.store_url is None:  # the embedded topics file (PostgreSQL's: test_pg_store)
        stored = (memory.settings.data_dir / "topics.sqlite").read_bytes()
        assert purged.encode() not in stored and purged_text.encode() not in stored


def test_a_scope_sees_its_own_topics_and_globals_never_another_scopes(memory: Memory) -> None:
    _remember_themes(memory, scope="project:a")
    memory.consolidate(scope="project:a")
    mine = memory.topics("project:a").topics
    assert mine and memory.topics("project:b").topics == [] and memory.topics().topics == []
    with pytest.raises(NotFound, match="memory://topics"):
        memory.topic(mine[0].id, "project:b")
    assert memory.topic(mine[0].id, "project:a").scope == "project:a"


@pytest.fixture
async def served(
    tmp_path: Path, models_dir: Path, embedder: FastEmbedder
) -> AsyncIterator[tuple[Client, SharedMemory]]:
    memory = SharedMemory.open(Settings(data_dir=tmp_path / "data", models_dir=models_dir), embedder=embedder)
    try:
        async with Client(build_server(memory)) as client:
            yield client, memory
    finally:
        memory.close()


@pytest.mark.anyio
async def test_the_topic_resources_list_topics_and_one_topics_facts_over_mcp(
    served: tuple[Client, SharedMemory],
) -> None:
    client, memory = served
    for sentences in THEMES.values():
        for sentence in sentences:
            result = await client.call_tool("remember", {"content": sentence})
            assert not result.is_error
    memory.consolidate()
    listed = json.loads((await client.read_resource("memory://topics")).contents[0].text)  # type: ignore[union-attr]
    assert listed["topics"] and set(listed["topics"][0]) == {
        "id", "label", "size", "entities", "fact_ids", "first", "last"
    }  # fmt: skip
    first = listed["topics"][0]
    one = json.loads((await client.read_resource(f"memory://topic/{first['id']}")).contents[0].text)  # type: ignore[union-attr]
    assert one["fact_ids"][: len(first["fact_ids"])] == first["fact_ids"]
    assert [f["id"] for f in one["central"]] == first["fact_ids"] and all(
        f["content"] for f in one["central"]
    )
    other = json.loads((await client.read_resource("memory://topics?scope=project:other")).contents[0].text)  # type: ignore[union-attr]
    assert other["topics"] == listed["topics"]  # a project's caller sees global's topics too


# ---- the pure parts


def _clique(first: int, size: int) -> list[tuple[int, int, float]]:
    return [(first + i, first + j, 1.0) for i in range(size) for j in range(i + 1, size)]


def _communities(size: int, edges: list[tuple[int, int, float]]) -> list[list[int]]:
    graph = FactGraph(size)
    graph.add([a for a, _, _ in edges], [b for _, b, _ in edges], [w for _, _, w in edges])
    return [group.tolist() for group in graph.communities()]


def test_two_groups_joined_by_one_weak_edge_are_two_topics_and_a_pair_is_none() -> None:
    edges = [*_clique(0, 6), *_clique(6, 6), (0, 6, 0.1), (12, 13, 1.0), (12, 13, 0.5)]
    found = _communities(15, edges)  # node 14 has no edge
    assert sorted(sorted(g) for g in found) == [list(range(6)), list(range(6, 12))]
    assert MIN_TOPIC > 2  # the pair 12, 13 is too small to be a topic


def test_a_graph_with_no_group_large_enough_has_no_topic() -> None:
    assert _communities(5, [(0, 1, 1.0), (2, 3, 1.0)]) == []


def test_a_failing_topic_worker_is_reported_with_its_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker_process.sys, "executable", "/bin/false")
    with pytest.raises(RuntimeError, match="topic worker failed \\(exit 1\\)"):
        _communities(6, _clique(0, 6))


def test_fact_columns_link_each_fact_to_the_next_in_its_session_and_about_the_same_entity() -> None:
    def day(n: int | None) -> datetime | None:
        return None if n is None else datetime(2024, 1, n, tzinfo=UTC)

    read = [  # (id, happened, session, stored) as the vector store holds them, in no given order
        ("f_b", day(2), "s2", day(1)),
        ("f_a", day(1), "s1", day(1)),
        ("f_z", day(5), "s1", day(1)),  # not asked for
        ("f_d", None, "s1", day(3)),
        ("f_c", day(3), "s1", day(2)),
    ]
    times = aligned(from_rows(read), ["f_c", "f_a", "f_b", "f_d", "f_gone"])
    assert times.session.tolist()[-1] == -1 and times.time.tolist()[-1] == UNKNOWN  # not found
    columns = FactColumns(
        ["f_c", "f_a", "f_b", "f_d"], aligned(from_rows(read), ["f_c", "f_a", "f_b", "f_d"])
    )
    assert [list(side) for side in columns.session_turns()] == [[1, 0], [0, 3]]  # s1 by when stored
    columns.add_about([0, 1, 1, 2, 3], ["e_x", "e_x", "e_x", "e_x", "e_y"])  # f_a names e_x twice: once
    src, dst, weight = columns.shared_entities(typical=1.0)
    assert (src.tolist(), dst.tolist()) == ([1, 2], [2, 0])  # e_x's facts in time order: f_a, f_b, f_c
    assert weight.tolist() == pytest.approx([math.log(4 / 3) / math.log(4)] * 2)
    assert columns.named_in([0, 1, 3]) == Counter({"e_x": 2, "e_y": 1})
    assert columns.span([0, 2]) == ("2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z")
    assert columns.span([3]) == ("", "")  # no time known
    assert columns.rows(["f_b", "f_z", "f_c"]).tolist() == [2, -1, 0]


def test_a_community_larger_than_a_topic_is_split_and_its_most_central_fact_comes_first() -> None:
    # A ring of 100 facts, each tied to its neighbours: one community to modularity at this size.
    edges = [(i, (i + 1) % 100, 1.0) for i in range(100)]
    found = _communities(100, edges)
    assert all(MIN_TOPIC <= len(g) <= MAX_TOPIC for g in found)
    assert sum(map(len, found)) >= 90
    heavy = [(0, 1, 1.0), (0, 2, 2.0), (0, 3, 1.0), (1, 2, 2.0), (1, 3, 1.0), (2, 3, 2.0)]
    assert _communities(4, heavy) == [[2, 0, 1, 3]]  # the most weight inside first, then by number


def test_a_topic_keeps_its_id_while_most_of_it_stays_together() -> None:
    old = {"t_old": ["a", "b", "c", "d"]}
    assert stable_ids([["a", "b", "c", "e"]], old) == ["t_old"]
    assert stable_ids([["a", "b", "x", "y", "z"]], old) == [topic_id(["a", "b", "x", "y", "z"])]
    assert stable_ids([["a", "b", "c"], ["d", "e", "f"]], old) == ["t_old", topic_id(["d", "e", "f"])]


def test_a_label_is_the_words_a_topic_shares_and_others_do_not_never_a_name_or_filler() -> None:
    topics = [
        ["Maya: yeah the pottery class was awesome", "Maya glazed a pottery bowl", "pottery kiln and glaze"],
        ["Maya: yeah we went hiking", "hiking boots for the trail", "the trail was muddy after hiking"],
    ]
    found = labels(lambda: topics)
    assert found[0][0] == "pottery" and found[1][0] in {"hiking", "trail"}
    assert not {"maya", "yeah", "awesome"} & {w for words in found for w in words}
    assert still_shared(["pottery", "glaze"], ["a pottery bowl", "pottery kiln glaze"]) == ["pottery"]


@pytest.mark.embedded  # closes the SQLite files under the server
def test_a_write_or_a_read_never_fails_for_the_derived_topic_and_gap_files(
    memory: Memory, themes: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    memory.consolidate()
    memory.stores.topics.close()  # as if the file had gone bad under the server
    memory.stores.gaps.close()
    stored = memory.remember("Priya keeps a second sourdough starter in the fridge.")
    assert memory.graph.get_fact(stored.id) is not None
    memory.forget(stored.id)
    assert memory.search("Which bank handles our payroll?").notes
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "topics" in logged and "question" in logged


def test_a_fact_forgotten_while_consolidate_runs_stays_out_of_its_topics(
    memory: Memory, themes: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    theme_of = themes
    victim = next(iter(theme_of))
    read = memory.consolidator._read

    def read_then_forget(scope: str) -> Any:
        found = read(scope)
        memory.forget(victim, purge=True)  # between reading the facts and storing the topics
        return found

    monkeypatch.setattr(memory.consolidator, "_read", read_then_forget)
    memory.consolidate()
    assert victim not in _topic_of(memory)
    for topic in memory.topics().topics:
        assert topic.size == len(memory.topic(topic.id).fact_ids) and victim not in topic.fact_ids


def test_stats_say_when_every_scope_was_last_consolidated(memory: Memory) -> None:
    memory.remember("Kofi flies to Accra every spring.")
    assert memory.stats()["last_consolidation"] is None
    memory.consolidate(dry_run=True)
    memory.consolidate(scope="global")
    assert memory.stats()["last_consolidation"] is None  # a dry run or one scope: not every scope
    memory.consolidate()
    assert memory.stats()["last_consolidation"].startswith(str(datetime.now(UTC).year))
