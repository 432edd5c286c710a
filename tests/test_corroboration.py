"""remember corroborates a stored statement; the reply shows close facts; conflicts are marked."""

from __future__ import annotations

from pathlib import Path

import ladybug
import pytest
from mcp import Client

from hippograph.config import Settings
from hippograph.domain.errors import InvalidInput
from hippograph.mcp_app import build_server
from hippograph.service.memory import Memory
from hippograph.sharing.proxy import SharedMemory
from hippograph.store.embed import FastEmbedder
from hippograph.store.schema import kuzu_migrations

PREFERENCE = "The user likes concise answers without emojis"


def active(memory: Memory) -> list[str]:
    return sorted(f.content for f in memory.graph.active_facts())


def test_a_preference_stated_three_times_is_one_fact_stated_three_times(memory: Memory) -> None:
    first = memory.remember(PREFERENCE)
    again = memory.remember(PREFERENCE, evidence="session 2")
    reworded = memory.remember("The user prefers concise answers with no emojis", source="user_edit")

    assert active(memory) == [PREFERENCE]
    assert again.id == reworded.id == first.id
    assert (first.corroborated, again.corroborated, reworded.corroborated) == (False, True, True)
    assert (again.corroborations, reworded.corroborations) == (2, 3)
    stored = memory.graph.get_fact(first.id)
    assert stored is not None
    assert stored.status.value == "confirmed" and not stored.pinned
    assert stored.confidence == pytest.approx(1.0)  # a user statement is certain
    assert [s.value for s in stored.sources] == ["conversation", "user_edit"]
    assert stored.evidence == "session 2"
    explained = memory.explain(first.id)
    assert explained.sources == ["conversation", "user_edit"] and explained.last_stated is not None
    # One search slot, not three; the count shows only where it says something.
    hits = memory.search("how should answers look").results
    assert [h.id for h in hits].count(first.id) == 1
    assert hits[0].model_dump()["corroborations"] == 3
    assert "corroborations" not in first.model_dump() and "similar" not in first.model_dump()


def test_a_restatement_after_a_restart_corroborates_too(settings: Settings, embedder: FastEmbedder) -> None:
    memory = Memory.open(settings, embedder=embedder)
    try:
        first = memory.remember(PREFERENCE)
    finally:
        memory.close()
    memory = Memory.open(settings, embedder=embedder)
    try:
        again = memory.remember(PREFERENCE)
        assert (again.id, again.corroborated) == (first.id, True)
        assert memory.vectors.count("facts") == 1
    finally:
        memory.close()


def test_what_is_not_the_same_statement_is_stored_and_shown(memory: Memory) -> None:
    tea = memory.remember("Alice drinks tea every morning")
    other_scope = memory.remember("Alice drinks tea every morning", scope="project:cafe")
    coffee = memory.remember("Alice drinks coffee every morning")
    denial = memory.remember("Alice doesn't drink tea in the morning")

    assert len({tea.id, other_scope.id, coffee.id, denial.id}) == 4
    assert not (other_scope.corroborated or coffee.corroborated or denial.corroborated)
    assert other_scope.similar == []  # another scope is another memory
    # Tea or coffee: the words cannot tell a synonym from a new value, so the caller is asked.
    assert [(s.id, s.conflict, s.note) for s in coffee.similar] == [(tea.id, None, "reworded or changed?")]
    # An exact denial is linked; a changed value is only shown.
    assert denial.contradicts == [tea.id] and coffee.contradicts == []
    assert {s.id: s.conflict for s in denial.similar}[tea.id] == "negation"
    hits = {h.id: h for h in memory.search("what does Alice drink in the morning").results}
    assert hits[tea.id].contested_by == [denial.id]
    assert hits[denial.id].contested_by == [tea.id]
    assert hits[coffee.id].contested_by == []
    assert "contested_by" not in hits[coffee.id].model_dump()
    # Once the denial is forgotten, nothing contests the fact any more.
    memory.forget(denial.id)
    hits = {h.id: h for h in memory.search("what does Alice drink in the morning").results}
    assert hits[tea.id].contested_by == []


def test_a_user_restating_a_value_supersedes_the_one_in_between(memory: Memory) -> None:
    claim = {"subject": "Alice", "predicate": "lives_in"}
    berlin = memory.remember("Alice lives in Berlin", object="Berlin", **claim)
    paris = memory.remember("Alice lives in Paris", object="Paris", **claim)
    assert paris.contradicts == [berlin.id]
    again = memory.remember("Alice lives in Berlin", object="Berlin", source="user_edit", **claim)
    assert (again.id, again.corroborated, again.superseded) == (berlin.id, True, [paris.id])
    assert active(memory) == ["Alice lives in Berlin"]


def test_correct_by_query_acts_only_on_a_clear_match(memory: Memory) -> None:
    berlin = memory.remember("Alice lives in Berlin")
    memory.remember("Bob works at Acme")
    memory.remember("Alice works at Globex")
    before = sorted((f.id, f.status) for f in memory.graph.all_facts())

    with pytest.raises(InvalidInput) as unclear:
        memory.correct("Alice lives in Paris", query="zzqx quantum llama")
    assert "nothing was corrected" in str(unclear.value) and berlin.id in str(unclear.value)
    with pytest.raises(InvalidInput) as ambiguous:
        memory.correct("Alice works at Initech", query="Alice")
    assert "2 facts match 'Alice'" in str(ambiguous.value)
    assert sorted((f.id, f.status) for f in memory.graph.all_facts()) == before
    for town in ("Lyon", "Graz", "Oslo", "Cork", "Turku"):
        memory.remember(f"Alice visited {town} last year")
    with pytest.raises(InvalidInput, match="at least 5 facts match 'Alice'"):  # the candidates read
        memory.correct("Alice works at Initech", query="Alice")

    fixed = memory.correct("Alice lives in Paris", query="where does Alice live")
    assert fixed.corrected == berlin.id


@pytest.mark.embedded
def test_an_old_data_dir_opens_with_every_fact_stated_once(
    settings: Settings, embedder: FastEmbedder
) -> None:
    # A graph at schema version 1, as hippograph wrote it before corroboration.
    settings.data_dir.mkdir(parents=True)
    db = ladybug.Database(str(settings.data_dir / "graph.kuzu"))
    conn = ladybug.Connection(db)
    for statement in kuzu_migrations()[0].statements:
        conn.execute(statement)
    conn.execute("CREATE (:Meta {key: 'schema_version', value: '1'})")
    conn.execute(
        "CREATE (:Fact {id: 'f_00000000000000aa', content: $c, kind: 'fact', status: 'staged', "
        "confidence: 0.8, source: 'conversation', provenance: 'observed', scope: 'global', "
        "created_at: timestamp('2024-01-01 10:00:00'), valid_from: timestamp('2024-01-01 10:00:00'), "
        "access_count: 0, pinned: false, ttl_policy: 'decay', tags: []})",
        {"c": PREFERENCE},
    )
    conn.close()
    db.close()

    memory = Memory.open(settings, embedder=embedder)
    try:
        assert memory.graph.schema_version() == len(kuzu_migrations())
        old = memory.graph.get_fact("f_00000000000000aa")
        assert old is not None and (old.corroborations, old.sources, old.last_stated) == (1, (), None)
        again = memory.remember(PREFERENCE)
        assert (again.id, again.corroborations) == ("f_00000000000000aa", 2)
    finally:
        memory.close()


@pytest.mark.anyio
async def test_the_second_of_two_favourite_foods_names_the_first_over_mcp(
    tmp_path: Path, models_dir: Path, embedder: FastEmbedder
) -> None:
    memory = SharedMemory.open(Settings(data_dir=tmp_path / "data", models_dir=models_dir), embedder=embedder)
    try:
        async with Client(build_server(memory)) as client:
            sushi = await client.call_tool("remember", {"content": "Rosa's favourite food is sushi"})
            pizza = await client.call_tool("remember", {"content": "Rosa's favourite food is pizza"})
            first, second = sushi.structured_content, pizza.structured_content
            assert first is not None and second is not None
            assert "similar" not in first
            assert second["similar"][0]["id"] == first["id"]
            assert (
                second["similar"][0]["note"] == "reworded or changed?"
                and "conflict" not in second["similar"][0]
            )
            assert second["id"] != first["id"] and "contradicts" not in second  # nothing to say: left out
    finally:
        memory.close()


def test_a_long_similar_fact_is_shown_in_part(memory: Memory) -> None:
    steps = "; ".join(
        f"step {word}: check the {word} dashboard" for word in ("alpha", "beta", "gamma", "delta")
    )
    long = memory.remember(f"To deploy Atlas, {steps}, then page the on-call engineer in the morning")
    other = memory.remember(f"To deploy Atlas, {steps}, then page the on-call engineer in the evening")
    assert len(long.content) > 200
    shown = {s.id: s.content for s in other.similar}[long.id]
    assert len(shown) == 200 and shown.endswith("…") and long.content.startswith(shown[:-1])


def test_a_restatement_is_found_wherever_the_index_holds_the_first(memory: Memory) -> None:
    first = memory.remember(PREFERENCE)
    buffered = memory.remember(PREFERENCE)
    memory.vectors.flush()  # written after the version remember's neighbour search pinned
    written = memory.remember(PREFERENCE)
    memory.vectors.optimize()  # folded into the indexes; the pin is renewed
    indexed = memory.remember(PREFERENCE)
    assert [o.id for o in (buffered, written, indexed)] == [first.id] * 3
    assert indexed.corroborations == 4 and active(memory) == [PREFERENCE]


def test_a_correction_is_no_longer_about_the_name_it_replaced(memory: Memory) -> None:
    old = memory.remember("Mara leads the Atlas team", entities=["Mara", "Atlas"])
    new = memory.correct("Mara leads the Orion team", fact_id=old.id)
    names = {e.name for e in new.linked_entities}
    assert "Mara" in names and "Atlas" not in names
    # A correction that rewords more than one slot keeps what the old fact was about.
    told = memory.remember("Alice lives in Berlin", entities=["Alice"])
    moved = memory.correct("She moved to Lisbon last spring", fact_id=told.id)
    assert "Alice" in {e.name for e in moved.linked_entities}


def test_a_correction_that_names_another_value_is_not_about_the_names_it_dropped(memory: Memory) -> None:
    # A name the old text wrote and the correction no longer mentions, when the correction names
    # something else: the replaced value. What the old fact was about otherwise stays: the user
    # ("my"), the subject the old text opens with.
    job = memory.remember("I work as a tax adviser at Fernhill Partners in Dundee.")
    moved = memory.correct("I work as a senior tax adviser at Quayside Audit in Perth.", fact_id=job.id)
    assert {"Fernhill Partners", "Dundee"}.isdisjoint(moved.entities)
    assert {"the user", "Quayside Audit", "Perth"} <= set(moved.entities)
    sister = memory.remember("My sister Ilse teaches in Utrecht.")
    told = memory.correct("Ilse teaches in Leiden these days.", fact_id=sister.id)
    assert "Utrecht" not in told.entities and {"the user", "Ilse", "Leiden"} <= set(told.entities)
    lead = memory.remember("Tomasz leads the Kestrel team.")
    led = memory.correct("He leads the Osprey team now.", fact_id=lead.id)
    assert "Tomasz" in led.entities and "Kestrel" not in led.entities


def test_a_correction_supersedes_the_copies_of_the_fact_it_corrects(memory: Memory) -> None:
    first = memory.remember("Our landlord is Fraser Doig.", event_time="2026-09-01")
    again = memory.remember("Our landlord is Fraser Doig.", event_time="2026-10-01")
    other = memory.remember("Our landlord is Fraser Doig.", event_time="2026-10-01", scope="project:flat")
    assert again.id != first.id  # a dated repeat is its own fact
    fixed = memory.correct("Our landlord is Moira Doig.", fact_id=first.id)
    assert fixed.superseded == [again.id]
    active = {f.id for f in memory.graph.active_facts()}
    assert {first.id, again.id}.isdisjoint(active) and {fixed.id, other.id} <= active
    [hit, *_] = memory.search("Who is our landlord?").results
    assert hit.id == fixed.id
