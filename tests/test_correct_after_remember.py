"""The save prompt's loop: remember a new value, see the conflict in the reply, correct the old
fact with the new words. One fact then holds the value, about what the old one was about: the
correction supersedes the old fact and the copy the remember stored. Only a fact of the corrected
fact's scope counts."""

from __future__ import annotations

from hippograph.service.memory import Memory

OLD = "Our staging database runs Postgres 14."
NEW = "Staging database is now on Postgres 16."
QUESTION = "Which Postgres version is staging on?"


def _active(memory: Memory, scope: str) -> list[str]:
    return sorted(f.content for f in memory.graph.active_facts() if f.scope == scope)


def test_correcting_with_words_already_remembered_leaves_one_fact_about_what_the_old_was(
    memory: Memory,
) -> None:
    old = memory.remember(OLD, scope="project:infra", entities=["staging"])
    copy = memory.remember(NEW, scope="project:infra")
    assert [(s.id, s.conflict) for s in copy.similar] == [(old.id, "number")]

    fixed = memory.correct(NEW, fact_id=old.id, scope="project:infra")

    # The correction holds the value and what the old fact was about; the copy is history.
    assert (fixed.corrected, fixed.superseded, fixed.content) == (old.id, [copy.id], NEW)
    assert "staging" in fixed.entities
    assert _active(memory, "project:infra") == [NEW]
    [hit] = memory.search(QUESTION, scope="project:infra").results
    assert hit.id == fixed.id
    history = memory.explain(old.id, scope="project:infra")
    assert (history.fact.status, history.status_reason) == ("superseded", f"corrected by {fixed.id}")
    assert history.believed_until is not None
    was_copy = memory.explain(copy.id, scope="project:infra")
    assert (was_copy.fact.status, was_copy.status_reason) == (
        "superseded",
        f"restated by its correction {fixed.id}",
    )
    assert {f.id for f in memory.explain(fixed.id, scope="project:infra").supersedes} == {old.id, copy.id}


def test_a_fact_of_another_scope_saying_the_same_is_not_the_correction(memory: Memory) -> None:
    elsewhere = memory.remember(NEW, scope="project:other")
    old = memory.remember(OLD, scope="project:infra")

    fixed = memory.correct(NEW, fact_id=old.id, scope="project:infra")

    assert (fixed.id != elsewhere.id, fixed.corrected, fixed.superseded) == (True, old.id, [])
    assert _active(memory, "project:infra") == [NEW]
    assert _active(memory, "project:other") == [NEW]
    assert memory.explain(elsewhere.id, scope="project:other").fact.corroborations == 1


def test_a_correction_in_new_words_is_stored_as_before(memory: Memory) -> None:
    old = memory.remember(OLD, scope="project:infra")
    counts = memory.stats()["facts"]

    fixed = memory.correct(
        "The staging database was upgraded to Postgres 17.", fact_id=old.id, scope="project:infra"
    )

    assert (fixed.corroborated, fixed.corrected) == (False, old.id)
    assert memory.stats()["facts"] == counts + 1
    assert _active(memory, "project:infra") == ["The staging database was upgraded to Postgres 17."]


def test_correcting_a_confirmed_fact_gives_a_confirmed_one(memory: Memory) -> None:
    old = memory.remember(OLD, scope="project:infra")
    memory.confirm(old.id, scope="project:infra")
    fixed = memory.correct("The staging database runs Postgres 17.", fact_id=old.id, scope="project:infra")
    assert fixed.status == "confirmed"
    assert memory.explain(fixed.id, scope="project:infra").pinned
